/**
 * Benchmark runs under /factory/{factory_uid}/benchmarks/{suite_uid}/runs: launch (also in the
 * hosted SDK's form under `.../benchmarks/suites`) and cancel. A launch checks everything it reads
 * (configurations, the suite's agent, the tasks, the scorers) before its run is written.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { timeOrderedId } from '../../src/ids.js';
import { Conflict, type FieldError, NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { benchmarkRunsProjection } from '../../projections/benchmark/benchmark-runs.js';
import { identityDecider } from '../identity/public.js';
import { identityStream } from '../identity/events.js';
import {
  benchmarkRunStream,
  type Configuration,
  type RunConfiguration,
  type SuiteTask,
  type TrialPlan,
} from './events.js';
import { benchmarkRunDecider } from './benchmark-run-decider.js';
import {
  configurationOf,
  DEFAULT_MAX_ATTEMPTS,
  launchBody,
  type LaunchBody,
  MAX_TRIALS,
  runParams,
  suiteParams,
} from './request-schemas.js';
import { runResource, toRunResource } from './run-resource.js';
import { scorersOf } from './run-scorers.js';
import { invalid, liveSuite, managedFactory } from './suite-access.js';
import { checkConfigurations } from './suite-checks.js';
import type { LiveSuite } from './suite-decider.js';

const tags = ['benchmarks'];

async function runAnswer(rt: Runtime, uid: string, req: FastifyRequest) {
  const doc = await rt.readModel(benchmarkRunsProjection).get(uid);
  if (!doc) throw new NotFound('benchmark run', uid);
  return toRunResource(doc, req.now ?? rt.clock.now().toISOString(), new Set(['launch_settings', 'results']));
}

/** The configurations to try: the body's, else the suite's launch defaults. */
async function configurationsOf(rt: Runtime, suite: LiveSuite, body: LaunchBody) {
  const configurations = body.configurations ? body.configurations.map(configurationOf) : suite.configurations;
  if (!configurations.length)
    throw invalid([
      { path: 'body.configurations', message: 'the suite has no launch defaults: give the configurations to try' },
    ]);
  await checkConfigurations(rt, configurations, 'body.configurations');
  return configurations;
}

/** The tasks to run: those named, else every task of the suite. */
function tasksOf(suite: LiveSuite, body: LaunchBody) {
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
  return tasks;
}

function checkTrialCount(tasks: SuiteTask[], configurations: Configuration[], repetitions: number) {
  const count = tasks.length * configurations.length * repetitions;
  if (count > MAX_TRIALS)
    throw invalid([
      {
        path: 'body.repetition_count',
        message: `${tasks.length} tasks × ${configurations.length} configurations × ${repetitions} repetitions is ${count} trials; a run has at most ${MAX_TRIALS}`,
      },
    ]);
}

/** Every trial of the run: each task, with each configuration, `repetitions` times. */
function trialPlansOf(tasks: SuiteTask[], configurations: RunConfiguration[], repetitions: number) {
  const trials: TrialPlan[] = [];
  for (const task of tasks)
    for (const c of configurations)
      for (let rep = 1; rep <= repetitions; rep++)
        trials.push({
          uid: timeOrderedId(),
          id: trials.length + 1,
          task_uid: task.uid,
          configuration_uid: c.uid,
          rep_index: rep,
          run_id: timeOrderedId(),
        });
  return trials;
}

async function launch(rt: Runtime, req: FastifyRequest, params: z.infer<typeof suiteParams>, body: LaunchBody) {
  const { factory, context } = await managedFactory(rt, req, params.factory_uid);
  const suite = await liveSuite(rt, factory.uid, params.suite_uid, context);
  const configurations = await configurationsOf(rt, suite, body);
  const agent = await rt.state(identityDecider, identityStream(suite.agent_uid));
  if (agent.status !== 'live' || agent.profile.factory_uid !== factory.uid)
    throw new Conflict(`the suite's agent ${suite.agent_uid} is gone: PATCH the suite with another`, 'agent_gone');
  const tasks = tasksOf(suite, body);
  checkTrialCount(tasks, configurations, body.repetition_count);
  const scorers = await scorersOf(rt, factory, suite.agent_uid, body.scorer_selection ?? [], context);
  const uid = timeOrderedId();
  const runConfigurations: RunConfiguration[] = configurations.map((c, i) => ({
    ...c,
    uid: timeOrderedId(),
    id: i + 1,
  }));
  const data = {
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
    trials: trialPlansOf(tasks, runConfigurations, body.repetition_count),
  };
  await rt.execute(benchmarkRunStream(uid), benchmarkRunDecider, { type: 'LaunchRun', data }, context);
  return runAnswer(rt, uid, req);
}

async function cancel(rt: Runtime, req: FastifyRequest, params: z.infer<typeof runParams>, reason: string | undefined) {
  const { factory, context } = await managedFactory(rt, req, params.factory_uid);
  const { suite_uid, run_uid } = params;
  const run = await rt.state(benchmarkRunDecider, benchmarkRunStream(run_uid));
  if (run.status !== 'live' || run.factory_uid !== factory.uid || run.launch.suite_uid !== suite_uid)
    throw new NotFound('benchmark run', run_uid);
  await rt.execute(
    benchmarkRunStream(run_uid),
    benchmarkRunDecider,
    { type: 'CancelRun', data: { reason: reason ?? 'cancelled through the API' } },
    context,
  );
  return runAnswer(rt, run_uid, req);
}

const cancelBody = z
  .object({ reason: z.string().trim().min(1).max(500).optional() })
  .strict()
  .nullish();

export default function runRoutes(api: Api, rt: Runtime): void {
  // Not idempotent, as the spec says: every request launches a run (no Idempotency-Key).
  for (const path of [
    '/factory/:factory_uid/benchmarks/:suite_uid/runs',
    '/factory/:factory_uid/benchmarks/suites/:suite_uid/runs',
  ])
    api.post(
      path,
      { schema: { params: suiteParams, body: launchBody, response: { 201: runResource }, tags } },
      async (req, reply) => reply.code(201).send(await launch(rt, req, req.params, req.body)),
    );
  api.post(
    '/factory/:factory_uid/benchmarks/:suite_uid/runs/:run_uid/cancel',
    { schema: { params: runParams, body: cancelBody, response: { 200: runResource }, tags } },
    (req) => cancel(rt, req, req.params, req.body?.reason),
  );
}
