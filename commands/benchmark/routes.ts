/**
 * The write side of benchmarks under /factory/{factory_uid}/benchmarks: suites (create, PATCH,
 * DELETE), their tasks (add, PATCH, DELETE), and runs (launch, cancel); with the hosted SDK's
 * forms of create and launch under `.../benchmarks/suites`. The rules are the deciders'; the
 * checks that read other streams (the factory, its agents, the catalogue, the runs a task comes
 * from, the scorers) are made here, all before anything is written.
 */
import type { FastifyRequest } from 'fastify';
import { v5 as uuidv5 } from 'uuid';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import { Conflict, type FieldError, Forbidden, InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Runtime } from '../../src/runtime.js';
import { benchmarkRunsProjection } from '../../projections/benchmark/benchmark-runs.js';
import { benchmarkSuitesProjection, suiteKey } from '../../projections/benchmark/benchmark-suites.js';
import { identitiesProjection, identityDecider } from '../identity/public.js';
import { scorersProjection, scorerDecider, inScope } from '../scorer/public.js';
import { type LiveFactory, liveFactory } from '../factory/public.js';
import { identityStream } from '../identity/events.js';
import { assertUsableModel, modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { canView, runState } from '../run/public.js';
import { scorerStream } from '../scorer/events.js';
import { foremanOf } from '../task/public.js';
import { type SuiteCommand, suiteDecider, titleKey, visibleSuite } from './suite-decider.js';
import {
  benchmarkRunStream,
  type Configuration,
  type RunConfiguration,
  type RunScorer,
  type SuiteTask,
  suiteStream,
  type TaskContent,
  type TrialPlan,
} from './events.js';
import {
  configurationOf,
  createSuiteBody,
  createTaskBody,
  type CreateTaskBody,
  DEFAULT_MAX_ATTEMPTS,
  factoryParams,
  launchBody,
  type LaunchBody,
  MAX_PROMPT,
  MAX_TRIALS,
  patchSuiteBody,
  patchTaskBody,
  runParams,
  runResource,
  suiteParams,
  suiteWithTasks,
  taskParams,
  taskResource,
  toRunResource,
  toSuiteResource,
  toTaskResource,
} from './resource.js';
import { benchmarkRunDecider } from './benchmark-run-decider.js';

const NAMESPACE = '0d3f8e4a-6b2c-4c1e-9f57-8a1b2c3d4e5f';

/** The built-in correctness scorer of a factory: one, with a uid derived from the factory. */
const correctnessScorerUid = (factoryUid: string) => uuidv5(`correctness:${factoryUid}`, NAMESPACE);

const CORRECTNESS_RUBRIC = [
  "You grade one trial of a benchmark: an agent run given a task. The task's success criteria follow this rubric;",
  "they are the authoritative requirements (the task prompt is context only). Read the run's conversation and answer",
  '`pass` when the run meets every success criterion, `fail` otherwise.',
].join(' ');

const invalid = (errors: FieldError[]) =>
  new InvalidRequest(errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors);

export default function benchmarkRoutes(api: Api, rt: Runtime): void {
  const tags = ['benchmarks'];
  const suites = rt.readModel(benchmarkSuitesProjection);
  const suiteTasks = rt.readTable(benchmarkSuitesProjection, 'tasks');
  const runs = rt.readModel(benchmarkRunsProjection);
  const identities = rt.readModel(identitiesProjection);

  /** The factory, for the people of its team (its agents read benchmarks only). */
  async function managedFactory(req: FastifyRequest, uid: string) {
    const context = commandContext(req);
    const factory = await liveFactory(rt, uid, context);
    if (context.actor.type !== 'user') throw new Forbidden('only people of the team manage benchmarks');
    return { factory, context };
  }

  const liveSuite = async (factoryUid: string, suiteUid: string, context: CommandContext) =>
    visibleSuite(await rt.state(suiteDecider, suiteStream(factoryUid, suiteUid)), suiteUid, context);

  /** The suite with its tasks, as the read model shows it now that the command's events are projected. */
  async function suiteAnswer(factoryUid: string, suiteUid: string) {
    const key = suiteKey(factoryUid, suiteUid);
    const doc = await suites.get(key);
    if (!doc) throw new NotFound('suite', suiteUid);
    const tasks = await findAll(suiteTasks, { filter: { suite_key: key }, sort: [['number', 'asc']], limit: 100 });
    return { ...toSuiteResource(doc), tasks: tasks.map(toTaskResource), spawnable_descendant_agent_uids: [] };
  }

  /** The agent trials run as: live, of the factory and its team; its type must match when given. */
  async function agentOf(factory: LiveFactory, uid: string, type: string | undefined) {
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
  async function checkConfigurations(configurations: Configuration[], at: string) {
    const catalogue = await rt.state(modelDecider, MODELS_STREAM);
    for (const [i, c] of configurations.entries()) {
      assertUsableModel(catalogue, c.model ?? undefined, `${at}[${i}].model`);
      for (const [j, a] of c.agent_configs.entries())
        assertUsableModel(catalogue, a.model, `${at}[${i}].agent_configs[${j}].model`);
    }
  }

  /** A task's content from a body: the prompt filled from `source_run_id`'s run when omitted. */
  async function taskContent(body: CreateTaskBody, context: CommandContext, at: string): Promise<TaskContent> {
    let prompt = body.prompt;
    if (body.source_run_id) {
      const run = await runState(rt, body.source_run_id);
      if (!run || !canView(run, context))
        throw invalid([{ path: `${at}.source_run_id`, message: `no run ${body.source_run_id} you may read` }]);
      if (prompt === undefined) {
        prompt = run.created.prompt.trim();
        if (!prompt || prompt.length > MAX_PROMPT)
          throw invalid([
            {
              path: `${at}.prompt`,
              message: `the source run's prompt is ${prompt ? `longer than ${MAX_PROMPT} characters` : 'empty'}: give a prompt`,
            },
          ]);
      }
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

  const executeSuite = (factoryUid: string, suiteUid: string, command: SuiteCommand, context: CommandContext) =>
    rt.execute(suiteStream(factoryUid, suiteUid), suiteDecider, command, context);

  // ---- suites ------------------------------------------------------------------------------------

  async function createSuite(req: FastifyRequest, factoryUid: string, body: z.infer<typeof createSuiteBody>) {
    const { factory, context } = await managedFactory(req, factoryUid);
    let agentUid = body.agent_uid;
    if (!agentUid) {
      const foreman = await foremanOf(rt, identities, factory);
      if (!foreman)
        throw invalid([
          { path: 'body.agent_uid', message: 'the factory has no foreman: name the agent trials run as' },
        ]);
      agentUid = foreman.uid;
    }
    const agent = await agentOf(factory, agentUid, body.factory_agent_type);
    const configurations = (body.configurations ?? []).map(configurationOf);
    await checkConfigurations(configurations, 'body.configurations');
    const tasks: SuiteTask[] = [];
    for (const [i, t] of (body.tasks ?? []).entries())
      tasks.push({ ...(await taskContent(t, context, `body.tasks[${i}]`)), uid: timeOrderedId(), id: i + 1 });
    const uid = body.uid ?? timeOrderedId();
    await executeSuite(
      factory.uid,
      uid,
      {
        type: 'CreateSuite',
        data: {
          uid,
          factory_uid: factory.uid,
          team_uid: factory.team_uid,
          name: body.name,
          description: body.description ?? null,
          agent_uid: agent.uid,
          factory_agent_type: agent.type,
          configurations,
          tasks,
        },
      },
      context,
    );
    return suiteAnswer(factory.uid, uid);
  }

  const createSchema = { params: factoryParams, body: createSuiteBody, response: { 201: suiteWithTasks }, tags };
  for (const path of ['/factory/:factory_uid/benchmarks', '/factory/:factory_uid/benchmarks/suites'])
    api.post(path, { schema: createSchema, config: { idempotent: true } }, async (req, reply) =>
      reply.code(201).send(await createSuite(req, req.params.factory_uid, req.body)),
    );

  api.patch(
    '/factory/:factory_uid/benchmarks/:suite_uid',
    { schema: { params: suiteParams, body: patchSuiteBody, response: { 200: suiteWithTasks }, tags } },
    async (req) => {
      const { factory, context } = await managedFactory(req, req.params.factory_uid);
      const suite = await liveSuite(factory.uid, req.params.suite_uid, context);
      const b = req.body;
      let agent: { uid: string; type: string } | null = null;
      if (b.agent_uid !== undefined || b.factory_agent_type !== undefined)
        agent = await agentOf(factory, b.agent_uid ?? suite.agent_uid, b.factory_agent_type);
      const configurations = b.configurations === undefined ? undefined : (b.configurations ?? []).map(configurationOf);
      if (configurations) await checkConfigurations(configurations, 'body.configurations');
      await executeSuite(
        factory.uid,
        suite.uid,
        {
          type: 'UpdateSuite',
          data: {
            changes: {
              ...(b.name !== undefined ? { name: b.name } : {}),
              ...(b.description !== undefined ? { description: b.description || null } : {}),
              ...(agent ? { agent_uid: agent.uid, factory_agent_type: agent.type } : {}),
              ...(configurations ? { configurations } : {}),
            },
          },
        },
        context,
      );
      return suiteAnswer(factory.uid, suite.uid);
    },
  );

  api.delete(
    '/factory/:factory_uid/benchmarks/:suite_uid',
    { schema: { params: suiteParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const { factory, context } = await managedFactory(req, req.params.factory_uid);
      const suite = await liveSuite(factory.uid, req.params.suite_uid, context);
      await executeSuite(factory.uid, suite.uid, { type: 'DeleteSuite', data: {} }, context);
      return reply.code(204).send(null);
    },
  );

  // ---- tasks -------------------------------------------------------------------------------------

  const taskAnswer = async (uid: string) => {
    const doc = await suiteTasks.get(uid);
    if (!doc) throw new NotFound('task', uid);
    return toTaskResource(doc);
  };

  api.post(
    '/factory/:factory_uid/benchmarks/:suite_uid/tasks',
    {
      schema: { params: suiteParams, body: createTaskBody, response: { 200: taskResource, 201: taskResource }, tags },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const { factory, context } = await managedFactory(req, req.params.factory_uid);
      const suite = await liveSuite(factory.uid, req.params.suite_uid, context);
      const content = await taskContent(req.body, context, 'body');
      const { events, state } = await executeSuite(
        factory.uid,
        suite.uid,
        { type: 'AddTask', data: { task: { ...content, uid: timeOrderedId(), id: 0 } } },
        context,
      );
      if (events.length) {
        const added = events[0]!;
        return reply.code(201).send(await taskAnswer(added.type === 'BenchmarkTaskAdded' ? added.data.task.uid : ''));
      }
      // An identical task: the existing one.
      const existing =
        state.status === 'live' ? state.tasks.find((t) => titleKey(t.title) === titleKey(content.title)) : null;
      return reply.code(200).send(await taskAnswer(existing?.uid ?? ''));
    },
  );

  api.patch(
    '/factory/:factory_uid/benchmarks/:suite_uid/tasks/:task_uid',
    { schema: { params: taskParams, body: patchTaskBody, response: { 200: taskResource }, tags } },
    async (req) => {
      const { factory, context } = await managedFactory(req, req.params.factory_uid);
      const suite = await liveSuite(factory.uid, req.params.suite_uid, context);
      const { task_uid } = req.params;
      if (!suite.tasks.some((t) => t.uid === task_uid)) throw new NotFound('task', task_uid);
      const b = req.body;
      if (b.source_run_id) {
        const run = await runState(rt, b.source_run_id);
        if (!run || !canView(run, context))
          throw invalid([{ path: 'body.source_run_id', message: `no run ${b.source_run_id} you may read` }]);
      }
      const changes: Partial<TaskContent> = Object.fromEntries(
        Object.entries({
          title: b.title,
          prompt: b.prompt,
          success_criteria: b.success_criteria,
          source_run_id: b.source_run_id,
          starting_repo_refs: b.starting_repo_refs,
          tags: b.tags,
          labels: b.labels,
        }).filter(([, v]) => v !== undefined),
      );
      await executeSuite(factory.uid, suite.uid, { type: 'EditTask', data: { task_uid, changes } }, context);
      return taskAnswer(task_uid);
    },
  );

  api.delete(
    '/factory/:factory_uid/benchmarks/:suite_uid/tasks/:task_uid',
    { schema: { params: taskParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const { factory, context } = await managedFactory(req, req.params.factory_uid);
      const suite = await liveSuite(factory.uid, req.params.suite_uid, context);
      await executeSuite(
        factory.uid,
        suite.uid,
        { type: 'DeleteTask', data: { task_uid: req.params.task_uid } },
        context,
      );
      return reply.code(204).send(null);
    },
  );

  // ---- runs --------------------------------------------------------------------------------------

  /** The factory's correctness scorer, made the first time a benchmark needs it. */
  async function correctnessScorer(factory: LiveFactory, context: CommandContext): Promise<RunScorer> {
    const uid = correctnessScorerUid(factory.uid);
    const state = await rt.state(scorerDecider, scorerStream(uid));
    if (state.status === 'live') return { uid, name: state.name, kind: 'benchmark_task_correctness' };
    const catalogue = await rt.state(modelDecider, MODELS_STREAM);
    const model_id = catalogue.catalogue?.default_model_id ?? catalogue.catalogue?.models[0]?.id ?? 'auto';
    const name = 'Correctness';
    try {
      await rt.execute(
        scorerStream(uid),
        scorerDecider,
        {
          type: 'CreateScorer',
          data: {
            uid,
            factory_uid: factory.uid,
            team_uid: factory.team_uid,
            scorer_kind: 'benchmark_task_correctness',
            name,
            description: "Built in: grades each benchmark trial against its task's success criteria",
            scoring_prompt: CORRECTNESS_RUBRIC,
            model_id,
            threshold: 1,
            allowed_classifications: [
              { value: 'pass', score: 1, description: 'Meets every success criterion' },
              { value: 'fail', score: 0, description: 'Misses at least one success criterion' },
            ],
            scope_mode: 'all_agents',
            agents: [],
            sampling_rate: 0,
            agent_config: { default_runner_uid: null, mcp_servers: null, secrets: null },
            self_improvement: { enabled: false, failed_run_threshold: 25 },
          },
        },
        { ...context, actor: { type: 'system', uid: 'benchmarks' } },
      );
    } catch (error) {
      if (!(error instanceof Conflict)) throw error; // made meanwhile by another request
    }
    return { uid, name, kind: 'benchmark_task_correctness' };
  }

  /** The scorers that judge every trial: the correctness scorer, then the selection (or every applicable one). */
  async function scorersOf(factory: LiveFactory, agentUid: string, selection: string[], context: CommandContext) {
    const chosen: RunScorer[] = [await correctnessScorer(factory, context)];
    const errors: FieldError[] = [];
    const candidates = selection.length
      ? selection.map((uid, i) => ({ uid, path: `body.scorer_selection[${i}]` }))
      : (
          await findAll(rt.readModel(scorersProjection), {
            filter: { factory_uid: factory.uid },
            sort: [
              ['created_at', 'asc'],
              ['id', 'asc'],
            ],
            limit: 100,
          })
        ).map((d) => ({ uid: d.uid, path: null }));
    for (const { uid, path } of candidates) {
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

  async function launch(req: FastifyRequest, params: { factory_uid: string; suite_uid: string }, body: LaunchBody) {
    const { factory, context } = await managedFactory(req, params.factory_uid);
    const suite = await liveSuite(factory.uid, params.suite_uid, context);
    const configurations = body.configurations ? body.configurations.map(configurationOf) : suite.configurations;
    if (!configurations.length)
      throw invalid([
        { path: 'body.configurations', message: 'the suite has no launch defaults: give the configurations to try' },
      ]);
    await checkConfigurations(configurations, 'body.configurations');
    const agent = await rt.state(identityDecider, identityStream(suite.agent_uid));
    if (agent.status !== 'live' || agent.profile.factory_uid !== factory.uid)
      throw new Conflict(`the suite's agent ${suite.agent_uid} is gone: PATCH the suite with another`, 'agent_gone');
    const errors: FieldError[] = [];
    const tasks = body.tasks
      ? body.tasks.flatMap((uid, i) => {
          const task = suite.tasks.find((t) => t.uid === uid);
          if (!task) errors.push({ path: `body.tasks[${i}]`, message: `no task ${uid} in the suite` });
          return task ? [task] : [];
        })
      : suite.tasks;
    if (errors.length) throw invalid(errors);
    if (!tasks.length) throw invalid([{ path: 'body.tasks', message: 'the suite has no tasks to run' }]);
    const count = tasks.length * configurations.length * body.repetition_count;
    if (count > MAX_TRIALS)
      throw invalid([
        {
          path: 'body.repetition_count',
          message: `${tasks.length} tasks × ${configurations.length} configurations × ${body.repetition_count} repetitions is ${count} trials; a run has at most ${MAX_TRIALS}`,
        },
      ]);
    const scorers = await scorersOf(factory, suite.agent_uid, body.scorer_selection ?? [], context);
    const uid = timeOrderedId();
    const runConfigurations: RunConfiguration[] = configurations.map((c, i) => ({
      ...c,
      uid: timeOrderedId(),
      id: i + 1,
    }));
    const trials: TrialPlan[] = [];
    for (const task of tasks)
      for (const c of runConfigurations)
        for (let rep = 1; rep <= body.repetition_count; rep++)
          trials.push({
            uid: timeOrderedId(),
            id: trials.length + 1,
            task_uid: task.uid,
            configuration_uid: c.uid,
            rep_index: rep,
            run_id: timeOrderedId(),
          });
    await rt.execute(
      benchmarkRunStream(uid),
      benchmarkRunDecider,
      {
        type: 'LaunchRun',
        data: {
          uid,
          factory_uid: factory.uid,
          team_uid: factory.team_uid,
          suite_uid: suite.uid,
          suite_name: suite.name,
          suite_version: suite.version,
          agent_uid: suite.agent_uid,
          agent_name: agent.profile.name,
          repetition_count: body.repetition_count,
          max_attempts: body.max_attempts ?? DEFAULT_MAX_ATTEMPTS,
          configurations: runConfigurations,
          scorer_selection: body.scorer_selection ?? [],
          scorers,
          tasks: tasks.map((t) => ({ uid: t.uid, id: t.id, title: t.title, tags: t.tags })),
          trials,
        },
      },
      context,
    );
    return runAnswer(uid, req);
  }

  async function runAnswer(uid: string, req: FastifyRequest) {
    const doc = await runs.get(uid);
    if (!doc) throw new NotFound('benchmark run', uid);
    return toRunResource(doc, req.now ?? rt.clock.now().toISOString(), new Set(['launch_settings', 'results']));
  }

  // Not idempotent, as the spec says: every request launches a run (no Idempotency-Key).
  for (const path of [
    '/factory/:factory_uid/benchmarks/:suite_uid/runs',
    '/factory/:factory_uid/benchmarks/suites/:suite_uid/runs',
  ])
    api.post(
      path,
      { schema: { params: suiteParams, body: launchBody, response: { 201: runResource }, tags } },
      async (req, reply) => reply.code(201).send(await launch(req, req.params, req.body)),
    );

  api.post(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs/:run_uid/cancel',
    {
      schema: {
        params: runParams,
        body: z
          .object({ reason: z.string().trim().min(1).max(500).optional() })
          .strict()
          .nullish(),
        response: { 200: runResource },
        tags,
      },
    },
    async (req) => {
      const { factory, context } = await managedFactory(req, req.params.factory_uid);
      const { suite_uid, run_uid } = req.params;
      const run = await rt.state(benchmarkRunDecider, benchmarkRunStream(run_uid));
      if (run.status !== 'live' || run.factory_uid !== factory.uid || run.launch.suite_uid !== suite_uid)
        throw new NotFound('benchmark run', run_uid);
      await rt.execute(
        benchmarkRunStream(run_uid),
        benchmarkRunDecider,
        { type: 'CancelRun', data: { reason: req.body?.reason ?? 'cancelled through the API' } },
        context,
      );
      return runAnswer(run_uid, req);
    },
  );
}
