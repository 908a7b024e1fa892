/**
 * The checks of a suite's content that read other streams, made before anything is written: the
 * agent trials run as, the models of its configurations, and the runs its tasks come from.
 */
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { identityDecider } from '../identity/public.js';
import type { LiveFactory } from '../factory/public.js';
import { identityStream } from '../identity/events.js';
import { assertUsableModel, modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { canView, runState, type RunView } from '../run/public.js';
import type { Configuration, TaskContent } from './events.js';
import { type CreateTaskBody, MAX_PROMPT } from './request-schemas.js';
import { invalid } from './suite-access.js';

/** The agent trials run as: live, of the factory and its team; its type must match when given. */
export async function agentOf(rt: Runtime, factory: LiveFactory, uid: string, type: string | undefined) {
  const agent = await rt.state(identityDecider, identityStream(uid));
  if (agent.status !== 'live' || agent.team_uid !== factory.team_uid || agent.profile.factory_uid !== factory.uid)
    throw invalid([{ path: 'body.agent_uid', message: `no agent ${uid} of the factory` }]);
  if (type !== undefined && type !== agent.profile.agent_type)
    throw invalid([
      { path: 'body.factory_agent_type', message: `the agent is a ${agent.profile.agent_type}, not a ${type}` },
    ]);
  return { uid, name: agent.profile.name, type: agent.profile.agent_type };
}

/** Each configuration's model must be an enabled model of the catalogue. */
export async function checkConfigurations(rt: Runtime, configurations: Configuration[], at: string) {
  const catalogue = await rt.state(modelDecider, MODELS_STREAM);
  for (const [i, c] of configurations.entries()) {
    assertUsableModel(catalogue, c.model ?? undefined, `${at}[${i}].model`);
    for (const [j, a] of c.agent_configs.entries())
      assertUsableModel(catalogue, a.model, `${at}[${i}].agent_configs[${j}].model`);
  }
}

/** The run a task comes from: one the caller may read. */
export async function sourceRun(rt: Runtime, runId: string, context: CommandContext, at: string) {
  const run = await runState(rt, runId);
  if (!run || !canView(run, context)) throw invalid([{ path: at, message: `no run ${runId} you may read` }]);
  return run;
}

/** The source run's prompt, for a task that gives none. */
function promptOfRun(run: RunView, at: string) {
  const prompt = run.created.prompt.trim();
  if (!prompt || prompt.length > MAX_PROMPT)
    throw invalid([
      {
        path: `${at}.prompt`,
        message: `the source run's prompt is ${prompt ? `longer than ${MAX_PROMPT} characters` : 'empty'}: give a prompt`,
      },
    ]);
  return prompt;
}

/** A task's content from a body: the prompt filled from `source_run_id`'s run when omitted. */
export async function taskContent(
  rt: Runtime,
  body: CreateTaskBody,
  context: CommandContext,
  at: string,
): Promise<TaskContent> {
  let prompt = body.prompt;
  if (body.source_run_id) {
    const run = await sourceRun(rt, body.source_run_id, context, `${at}.source_run_id`);
    if (prompt === undefined) prompt = promptOfRun(run, at);
  }
  if (prompt === undefined)
    throw invalid([{ path: `${at}.prompt`, message: 'give a prompt, or a source_run_id to take it from' }]);
  return {
    title: body.title,
    prompt,
    success_criteria: body.success_criteria,
    source_run_id: body.source_run_id ?? null,
    starting_repo_refs: body.starting_repo_refs ?? [],
    tags: body.tags ?? [],
    labels: body.labels ?? {},
  };
}
