/**
 * Manual dispatch: of one run to several scorers (POST /factory/{factory_uid}/runs/{run_id}/
 * scorer_dispatch), or of several runs to one scorer (POST .../scorers/{scorer_uid}/dispatch).
 * The whole selection is checked first (every rule of the spec: nothing is dispatched when one
 * item is refused); then one manual attempt starts per scorer and run, and an attempt that cannot
 * start is an outcome of its own.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { uidParam } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import { DomainError, type FieldError, Forbidden, NotFound } from '../../src/kernel/errors.js';
import { type CommandContext, metadataOf } from '../../src/kernel/handle.js';
import { comparePositions, type Position } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { type LiveFactory, liveFactory } from '../factory/public.js';
import { assertUsableModel, modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { canView, runState } from '../run/public.js';
import { type LiveScorer, scorerDecider } from './scorer-decider.js';
import { scorerStream, scoringStream } from './events.js';
import { conversationReader } from './judge.js';
import { inScope, judgedRunOf } from './scorer-reactor.js';
import { scorerParams, uuid } from './request-schemas.js';
import { scoringDecider } from './scoring-decider.js';
import { scorerOfFactory } from './scorer-access.js';

const MAX_DISPATCH = 100;

const tags = ['scorers'];

/** A selection the dispatch rules refuse as a whole: 422, naming each refused item. */
const refusedSelection = (errors: FieldError[]) =>
  new DomainError(
    422,
    'invalid_selection',
    'Invalid selection',
    `nothing was dispatched: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
    errors,
  );

/** 1–100 UUIDs, deduplicated in order. */
const uuids = (what: string) =>
  z
    .array(uuid)
    .min(1)
    .max(MAX_DISPATCH, `at most ${MAX_DISPATCH} ${what}`)
    .transform((l) => [...new Set(l)]);

const outcome = z.object({
  scorer_uid: z.string(),
  run_id: z.string(),
  status: z.enum(['dispatched', 'failed']),
  attempt_id: z.string().nullable(),
  scoring_run_id: z.string().nullable().describe('The judge run the attempt starts'),
  error: z.string().nullable(),
});
const dispatchAnswer = z.object({
  outcomes: z.array(outcome).describe('One per scorer and run, in request order: dispatch outcomes, not scores'),
});
type Outcome = z.infer<typeof outcome>;

type RunItem = { run_id: string; path: string };
type ScorerItem = { scorer_uid: string; path: string };
type JudgedRun = NonNullable<Awaited<ReturnType<typeof judgedRunOf>>> & { path: string };
type Pair = { run: JudgedRun; scorer: LiveScorer; agent: NonNullable<ReturnType<typeof inScope>> };

/** The runs to judge: each one the caller may read, of the factory, run by its agent, with a conversation. */
async function runsToJudge(rt: Runtime, factory: LiveFactory, items: RunItem[], context: CommandContext) {
  const conversations = conversationReader(rt);
  const errors: FieldError[] = [];
  const runs: JudgedRun[] = [];
  for (const { run_id, path } of items) {
    const view = await runState(rt, run_id);
    if (!view || !canView(view, context)) {
      errors.push({ path, message: `no run ${run_id}` });
      continue;
    }
    const judged = await judgedRunOf(rt, run_id);
    if (view.created.source === 'RUN_SCORER') errors.push({ path, message: 'a scoring job is not judged' });
    else if (view.created.factory_uid !== factory.uid || view.created.team_uid !== factory.team_uid)
      errors.push({ path, message: 'the run is not of this factory and its team' });
    else if (!judged) errors.push({ path, message: 'the run was not executed by an agent of the factory' });
    else if (!(await conversations.hasConversation(run_id)))
      errors.push({ path, message: 'the run has no conversation to judge' });
    else runs.push({ ...judged, path });
  }
  return { runs, errors };
}

/** The scorers to dispatch: live user scorers of the factory (benchmarks dispatch their own). */
async function scorersToDispatch(rt: Runtime, factory: LiveFactory, items: ScorerItem[]) {
  const errors: FieldError[] = [];
  const chosen: Array<{ scorer: LiveScorer; path: string }> = [];
  for (const { scorer_uid, path } of items) {
    const s = await rt.state(scorerDecider, scorerStream(scorer_uid));
    if (s.status !== 'live' || s.factory_uid !== factory.uid)
      errors.push({ path, message: `no scorer ${scorer_uid} in the factory` });
    else if ((s.scorer_kind ?? 'user') !== 'user')
      errors.push({ path, message: `the scorer ${scorer_uid} is benchmark-managed: its benchmarks dispatch it` });
    else chosen.push({ scorer: s, path });
  }
  return { chosen, errors };
}

/** Checks the whole selection; answers each pair of run and scorer whose scope holds the run's agent. */
async function selection(
  rt: Runtime,
  req: FastifyRequest,
  factoryUid: string,
  runIds: RunItem[],
  scorerUids: ScorerItem[],
) {
  const context = commandContext(req);
  const factory = await liveFactory(rt, factoryUid, context);
  if (context.actor.type !== 'user')
    throw new Forbidden('dispatching scorers needs manage access: a person of the team');
  const { runs, errors } = await runsToJudge(rt, factory, runIds, context);
  const scorers = await scorersToDispatch(rt, factory, scorerUids);
  errors.push(...scorers.errors);
  const pairs: Pair[] = [];
  for (const run of runs)
    for (const { scorer, path } of scorers.chosen) {
      const agent = inScope(scorer, run.agent_uid);
      if (!agent)
        errors.push({
          path: scorerUids.length > 1 ? path : run.path,
          message: `the scorer ${scorer.uid} is not configured for the run's agent ${run.agent_uid}`,
        });
      else pairs.push({ run, scorer, agent });
    }
  if (errors.length) throw refusedSelection(errors);
  return { pairs, context };
}

/** Starts one manual attempt; answers its position, and the attempt's and judge run's ids. */
async function startAttempt(rt: Runtime, { run, scorer, agent }: Pair, context: CommandContext) {
  const attempt_id = timeOrderedId();
  const scoring_run_id = timeOrderedId();
  const { source: _source, path: _path, ...judged } = run;
  const { position } = await rt.handle(
    scoringStream(scorer.uid, run.run_id),
    scoringDecider,
    {
      type: 'StartAttempt',
      data: {
        ...judged,
        include_descendants: agent.include_descendants,
        attempt_id,
        scorer_uid: scorer.uid,
        scorer_version: scorer.version,
        judge_run_id: scoring_run_id,
        trigger: 'manual',
        classifications: scorer.allowed_classifications,
      },
    },
    context,
  );
  return { position, attempt_id, scoring_run_id };
}

async function dispatch(
  rt: Runtime,
  req: FastifyRequest,
  factoryUid: string,
  runIds: RunItem[],
  scorerUids: ScorerItem[],
) {
  const { pairs, context } = await selection(rt, req, factoryUid, runIds, scorerUids);
  const catalogue = await rt.state(modelDecider, MODELS_STREAM);
  const outcomes: Outcome[] = [];
  let last: Position | null = null;
  for (const pair of pairs) {
    const base = { scorer_uid: pair.scorer.uid, run_id: pair.run.run_id };
    try {
      assertUsableModel(catalogue, pair.scorer.model_id, 'model_id');
      const { position, attempt_id, scoring_run_id } = await startAttempt(rt, pair, context);
      if (position && (!last || comparePositions(position, last) > 0)) last = position;
      outcomes.push({ ...base, status: 'dispatched', attempt_id, scoring_run_id, error: null });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      outcomes.push({ ...base, status: 'failed', attempt_id: null, scoring_run_id: null, error: error.message });
    }
  }
  await rt.projector.waitFor(last, metadataOf(context));
  return { outcomes };
}

export default function dispatchRoutes(api: Api, rt: Runtime): void {
  const dispatchConfig = { config: { idempotent: true } };
  api.post(
    '/factory/:factory_uid/runs/:run_id/scorer_dispatch',
    {
      schema: {
        params: z.object({ factory_uid: uidParam, run_id: uidParam }),
        body: z.object({ scorer_uids: uuids('scorers') }).strict(),
        response: { 200: dispatchAnswer },
        tags,
      },
      ...dispatchConfig,
    },
    async (req) => {
      const { factory_uid, run_id } = req.params;
      const view = await runState(rt, run_id);
      if (!view || !canView(view, commandContext(req))) throw new NotFound('run', run_id);
      const scorers = req.body.scorer_uids.map((scorer_uid, i) => ({ scorer_uid, path: `body.scorer_uids[${i}]` }));
      return dispatch(rt, req, factory_uid, [{ run_id, path: 'params.run_id' }], scorers);
    },
  );
  api.post(
    '/factory/:factory_uid/scorers/:scorer_uid/dispatch',
    {
      schema: {
        params: scorerParams,
        body: z.object({ run_ids: uuids('runs') }).strict(),
        response: { 200: dispatchAnswer },
        tags,
      },
      ...dispatchConfig,
    },
    async (req) => {
      const { factory_uid, scorer_uid } = req.params;
      await scorerOfFactory(rt, factory_uid, scorer_uid, commandContext(req));
      const runs = req.body.run_ids.map((run_id, i) => ({ run_id, path: `body.run_ids[${i}]` }));
      return dispatch(rt, req, factory_uid, runs, [{ scorer_uid, path: 'params.scorer_uid' }]);
    },
  );
}
