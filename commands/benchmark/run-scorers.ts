/**
 * The scorers that judge every trial of a run: the factory's built-in correctness scorer (made
 * the first time a benchmark needs it), then the scorers selected, or every applicable one.
 */
import { v5 as uuidv5 } from 'uuid';
import { Conflict, type FieldError } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Runtime } from '../../src/runtime.js';
import { scorersProjection, scorerDecider, inScope } from '../scorer/public.js';
import type { LiveFactory } from '../factory/public.js';
import { modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { scorerStream } from '../scorer/events.js';
import type { RunScorer } from './events.js';
import { invalid } from './suite-access.js';

const NAMESPACE = '0d3f8e4a-6b2c-4c1e-9f57-8a1b2c3d4e5f';

/** The built-in correctness scorer of a factory: one, with a uid derived from the factory. */
const correctnessScorerUid = (factoryUid: string) => uuidv5(`correctness:${factoryUid}`, NAMESPACE);

const CORRECTNESS_RUBRIC = [
  "You grade one trial of a benchmark: an agent run given a task. The task's success criteria follow this rubric;",
  "they are the authoritative requirements (the task prompt is context only). Read the run's conversation and answer",
  '`pass` when the run meets every success criterion, `fail` otherwise.',
].join(' ');

const CORRECTNESS_NAME = 'Correctness';

/** What the correctness scorer of a factory is made with (its model: the catalogue's default). */
const correctnessScorerData = (uid: string, factory: LiveFactory, model_id: string) => ({
  uid,
  factory_uid: factory.uid,
  team_uid: factory.team_uid,
  scorer_kind: 'benchmark_task_correctness' as const,
  name: CORRECTNESS_NAME,
  description: "Built in: grades each benchmark trial against its task's success criteria",
  scoring_prompt: CORRECTNESS_RUBRIC,
  model_id,
  threshold: 1,
  allowed_classifications: [
    { value: 'pass', score: 1, description: 'Meets every success criterion' },
    { value: 'fail', score: 0, description: 'Misses at least one success criterion' },
  ],
  scope_mode: 'all_agents' as const,
  agents: [],
  sampling_rate: 0,
  agent_config: { default_runner_uid: null, mcp_servers: null, secrets: null },
  self_improvement: { enabled: false, failed_run_threshold: 25 },
});

/** The factory's correctness scorer, made the first time a benchmark needs it. */
async function correctnessScorer(rt: Runtime, factory: LiveFactory, context: CommandContext): Promise<RunScorer> {
  const uid = correctnessScorerUid(factory.uid);
  const state = await rt.state(scorerDecider, scorerStream(uid));
  if (state.status === 'live') return { uid, name: state.name, kind: 'benchmark_task_correctness' };
  const catalogue = await rt.state(modelDecider, MODELS_STREAM);
  const model_id = catalogue.catalogue?.default_model_id ?? catalogue.catalogue?.models[0]?.id ?? 'auto';
  try {
    await rt.execute(
      scorerStream(uid),
      scorerDecider,
      { type: 'CreateScorer', data: correctnessScorerData(uid, factory, model_id) },
      { ...context, actor: { type: 'system', uid: 'benchmarks' } },
    );
  } catch (error) {
    if (!(error instanceof Conflict)) throw error; // made meanwhile by another request
  }
  return { uid, name: CORRECTNESS_NAME, kind: 'benchmark_task_correctness' };
}

/** The scorers to consider: those selected (each named by its field), else every scorer of the factory. */
async function candidatesOf(rt: Runtime, factory: LiveFactory, selection: string[]) {
  if (selection.length) return selection.map((uid, i) => ({ uid, path: `body.scorer_selection[${i}]` }));
  const all = await findAll(rt.readModel(scorersProjection), {
    filter: { factory_uid: factory.uid },
    sort: [
      ['created_at', 'asc'],
      ['id', 'asc'],
    ],
    limit: 100,
  });
  return all.map((d) => ({ uid: d.uid, path: null }));
}

/** The scorers that judge every trial: the correctness scorer, then the selection (or every applicable one). */
export async function scorersOf(
  rt: Runtime,
  factory: LiveFactory,
  agentUid: string,
  selection: string[],
  context: CommandContext,
) {
  const chosen: RunScorer[] = [await correctnessScorer(rt, factory, context)];
  const errors: FieldError[] = [];
  for (const { uid, path } of await candidatesOf(rt, factory, selection)) {
    if (uid === chosen[0]!.uid) continue;
    const s = await rt.state(scorerDecider, scorerStream(uid));
    const usable = s.status === 'live' && s.factory_uid === factory.uid && (s.scorer_kind ?? 'user') === 'user';
    if (path && !usable) errors.push({ path, message: `no scorer ${uid} of the factory to select` });
    // Every applicable scorer: the factory's scorers whose scope holds the suite's agent.
    else if (usable && (path || inScope(s, agentUid))) chosen.push({ uid, name: s.name, kind: 'user' });
  }
  if (errors.length) throw invalid(errors);
  return chosen;
}
