/**
 * POST, PATCH and DELETE of scorers, manual dispatch (of one run to several scorers, or of several
 * runs to one scorer), the self-improvement "run now", and the worker's judgement report. The rules
 * of a scorer are its decider's; the checks that read other streams (the factory, its agents, the
 * model catalogue, the runs judged) are made here, all before anything is written.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { noContent, uidParam } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import { DomainError, type FieldError, Forbidden, InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { metadataOf } from '../../src/kernel/handle.js';
import { keyringFor } from '../../src/keyring.js';
import type { Position } from '../../src/eventstore/port.js';
import { comparePositions } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection, identityDecider } from '../identity/public.js';
import { scorersProjection } from '../../projections/scorer/scorers.js';
import { liveFactory } from '../factory/public.js';
import { identityStream } from '../identity/events.js';
import { assertUsableModel, modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { canView, runState, runDecider } from '../run/public.js';
import { runStream } from '../run/events.js';
import { workerPrincipal, executionHeader, runParams as workerRunParams } from '../worker/public.js';
import { type LiveScorer, type ScorerCommand, scorerDecider, scorerProblems, visibleScorer } from './scorer-decider.js';
import { type ScopeAgent, type ScorerFields, scorerKey, scorerStream, scoringStream } from './events.js';
import { checkSelfImprovement } from './improvement-check.js';
import { conversationReader } from './judge.js';
import { inScope, judgedRunOf } from './scorer-reactor.js';
import {
  createScorerBody,
  createScorerBodyWithFactory,
  judgeConfigOf,
  MAX_REASON_BYTES,
  patchScorerBody,
  type PatchScorerBody,
  scopeAgentsOf,
  scorerParams,
  scorerResource,
  toScorerResource,
  uuid,
  type CreateScorerBody,
} from './resource.js';
import { scoringDecider } from './scoring-decider.js';

const DEFAULT_FAILED_RUN_THRESHOLD = 25;
const MAX_DISPATCH = 100;

const invalid = (errors: FieldError[]) =>
  new InvalidRequest(errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors);

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

const judgementBody = z
  .object({
    classification: z.string().trim().min(1).max(200),
    reasoning: z
      .string()
      .max(64 * 1024)
      .optional(),
  })
  .strict();

const judgementAnswer = z.object({
  run_id: z.string(),
  attempt_id: z.string(),
  status: z.enum(['scored', 'failed']).describe('failed: the classification is not one the scorer allows'),
  classification: z.string(),
  score: z.number().nullable(),
  error: z.string().nullable(),
});

/** The first `max` bytes of `text` in UTF-8, never splitting a character. */
export function truncateUtf8(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  return bytes
    .subarray(0, max)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}

export default function scorerRoutes(api: Api, rt: Runtime): void {
  const tags = ['scorers'];
  const scorers = rt.readModel(scorersProjection);
  const identities = rt.readModel(identitiesProjection);
  const conversations = conversationReader(rt);

  /** The scorer as the read model shows it now that the command's events are projected. */
  const current = async (uid: string) => {
    const doc = await scorers.get(uid);
    if (!doc) throw new NotFound('scorer', uid);
    const agents = await identities.getMany(doc.agents.map((a) => a.uid));
    return toScorerResource(doc, new Map([...agents].map(([k, a]) => [k, a.name])));
  };

  /** Each scope agent must be a live agent of the factory; refusals name the field the body used. */
  const assertAgents = async (agents: ScopeAgent[], factory: { uid: string; team_uid: string }, form: string) => {
    const errors: FieldError[] = [];
    for (const [i, a] of agents.entries()) {
      const agent = await rt.state(identityDecider, identityStream(a.uid));
      if (agent.status !== 'live' || agent.team_uid !== factory.team_uid || agent.profile.factory_uid !== factory.uid)
        errors.push({
          path: form === 'agents' ? `body.agents[${i}].uid` : `body.agent_uids[${i}]`,
          message: `no agent ${a.uid} of the factory`,
        });
    }
    if (errors.length) throw invalid(errors);
  };

  const assertModel = async (model: string) =>
    assertUsableModel(await rt.state(modelDecider, MODELS_STREAM), model, 'body.model_id');

  async function create(req: FastifyRequest, factoryUid: string, body: CreateScorerBody) {
    const context = commandContext(req);
    const factory = await liveFactory(rt, factoryUid, context);
    const agents = scopeAgentsOf(body) ?? [];
    const uid = timeOrderedId();
    const fields: ScorerFields = {
      name: body.name,
      description: body.description ?? '',
      scoring_prompt: body.scoring_prompt,
      model_id: body.model_id,
      threshold: body.threshold,
      allowed_classifications: body.allowed_classifications.map((c) => ({
        ...c,
        description: c.description ?? null,
      })),
      scope_mode: body.scope_mode,
      agents,
      sampling_rate: body.sampling_rate ?? null,
      agent_config: judgeConfigOf(body.agent_config),
      self_improvement: {
        enabled: body.self_improvement_enabled ?? false,
        failed_run_threshold: body.failed_run_threshold ?? DEFAULT_FAILED_RUN_THRESHOLD,
      },
    };
    // The scorer's own rules first (their messages say more than an unknown agent's would).
    const problems = scorerProblems(fields);
    if (problems.length) throw invalid(problems);
    await assertAgents(agents, factory, body.agents?.length ? 'agents' : 'agent_uids');
    await assertModel(body.model_id);
    const command: ScorerCommand = {
      type: 'CreateScorer',
      data: { ...fields, uid, factory_uid: factory.uid, team_uid: factory.team_uid },
    };
    await rt.execute(scorerStream(uid), scorerDecider, command, context);
    return current(uid);
  }

  const createSchema = { body: createScorerBody, response: { 201: scorerResource }, tags };
  api.post(
    '/factory/:factory_uid/scorers',
    {
      schema: { ...createSchema, params: z.object({ factory_uid: uidParam }) },
      config: { idempotent: true },
    },
    async (req, reply) => reply.code(201).send(await create(req, req.params.factory_uid, req.body)),
  );
  // The hosted SDK's form: the factory in the body.
  api.post(
    '/factory/scorers',
    { schema: { ...createSchema, body: createScorerBodyWithFactory }, config: { idempotent: true } },
    async (req, reply) => {
      const { factory_uid, ...body } = req.body;
      return reply.code(201).send(await create(req, factory_uid, body));
    },
  );

  /** The changes a PATCH makes: a scope given (its mode or its agents) replaces the scope in full. */
  function changesOf(b: PatchScorerBody, s: LiveScorer): Partial<ScorerFields> {
    const agents = scopeAgentsOf(b);
    const scopeGiven = b.scope_mode !== undefined || agents !== undefined;
    const self =
      b.self_improvement_enabled !== undefined || b.failed_run_threshold !== undefined
        ? {
            self_improvement: {
              enabled: b.self_improvement_enabled ?? s.self_improvement.enabled,
              failed_run_threshold: b.failed_run_threshold ?? s.self_improvement.failed_run_threshold,
            },
          }
        : {};
    return {
      ...(b.name !== undefined ? { name: b.name } : {}),
      ...(b.description !== undefined ? { description: b.description ?? '' } : {}),
      ...(b.scoring_prompt !== undefined ? { scoring_prompt: b.scoring_prompt } : {}),
      ...(b.model_id !== undefined ? { model_id: b.model_id } : {}),
      ...(b.threshold !== undefined ? { threshold: b.threshold } : {}),
      ...(b.allowed_classifications !== undefined
        ? {
            allowed_classifications: b.allowed_classifications.map((c) => ({
              ...c,
              description: c.description ?? null,
            })),
          }
        : {}),
      ...(scopeGiven ? { scope_mode: b.scope_mode ?? s.scope_mode, agents: agents ?? [] } : {}),
      ...(b.sampling_rate !== undefined ? { sampling_rate: b.sampling_rate } : {}),
      ...(b.agent_config !== undefined ? { agent_config: judgeConfigOf(b.agent_config) } : {}),
      ...self,
    };
  }

  const execute = (uid: string, command: ScorerCommand, context: CommandContext) =>
    rt.execute(scorerStream(uid), scorerDecider, command, context);

  api.patch(
    '/factory/:factory_uid/scorers/:scorer_uid',
    { schema: { params: scorerParams, body: patchScorerBody, response: { 200: scorerResource }, tags } },
    async (req) => {
      const { factory_uid, scorer_uid } = req.params;
      const context = commandContext(req);
      const state = await rt.state(scorerDecider, scorerStream(scorer_uid));
      const s = visibleScorer(state, scorer_uid, context);
      if (s.factory_uid !== factory_uid) throw new NotFound('scorer', scorer_uid);
      const changes = changesOf(req.body, s);
      if (changes.agents)
        await assertAgents(
          changes.agents,
          { uid: s.factory_uid, team_uid: s.team_uid },
          req.body.agents ? 'agents' : 'agent_uids',
        );
      if (changes.model_id) await assertModel(changes.model_id);
      await execute(scorer_uid, { type: 'UpdateScorer', data: { uid: scorer_uid, changes } }, context);
      return current(scorer_uid);
    },
  );

  api.delete(
    '/factory/:factory_uid/scorers/:scorer_uid',
    { schema: { params: scorerParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const { factory_uid, scorer_uid } = req.params;
      const context = commandContext(req);
      const s = visibleScorer(await rt.state(scorerDecider, scorerStream(scorer_uid)), scorer_uid, context);
      if (s.factory_uid !== factory_uid) throw new NotFound('scorer', scorer_uid);
      await execute(scorer_uid, { type: 'DeleteScorer', data: { uid: scorer_uid } }, context);
      // The reasons go with the key, before the answer (a reactor destroys it too, should this process die here).
      keyringFor(rt.config).destroy(scorerKey(scorer_uid));
      return reply.code(204).send(null);
    },
  );

  // ---- manual dispatch -------------------------------------------------------------------------

  /**
   * Checks the whole selection (every rule of the spec), then starts one manual attempt per
   * scorer and run; an attempt that cannot start is an outcome of its own.
   */
  async function dispatch(
    req: FastifyRequest,
    factoryUid: string,
    runIds: Array<{ run_id: string; path: string }>,
    scorerUids: Array<{ scorer_uid: string; path: string }>,
  ): Promise<{ outcomes: Outcome[] }> {
    const context = commandContext(req);
    const factory = await liveFactory(rt, factoryUid, context);
    if (context.actor.type !== 'user')
      throw new Forbidden('dispatching scorers needs manage access: a person of the team');
    const errors: FieldError[] = [];
    const runs = [];
    for (const { run_id, path } of runIds) {
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
    const chosen: Array<{ scorer: LiveScorer; path: string }> = [];
    for (const { scorer_uid, path } of scorerUids) {
      const s = await rt.state(scorerDecider, scorerStream(scorer_uid));
      if (s.status !== 'live' || s.factory_uid !== factory.uid)
        errors.push({ path, message: `no scorer ${scorer_uid} in the factory` });
      else if ((s.scorer_kind ?? 'user') !== 'user')
        errors.push({ path, message: `the scorer ${scorer_uid} is benchmark-managed: its benchmarks dispatch it` });
      else chosen.push({ scorer: s, path });
    }
    const pairs = [];
    for (const run of runs)
      for (const { scorer, path } of chosen) {
        const agent = inScope(scorer, run.agent_uid);
        if (!agent)
          errors.push({
            path: scorerUids.length > 1 ? path : run.path,
            message: `the scorer ${scorer.uid} is not configured for the run's agent ${run.agent_uid}`,
          });
        else pairs.push({ run, scorer, agent });
      }
    if (errors.length) throw refusedSelection(errors);

    const catalogue = await rt.state(modelDecider, MODELS_STREAM);
    const outcomes: Outcome[] = [];
    let last: Position | null = null;
    for (const { run, scorer, agent } of pairs) {
      const base = { scorer_uid: scorer.uid, run_id: run.run_id };
      try {
        assertUsableModel(catalogue, scorer.model_id, 'model_id');
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
      return dispatch(
        req,
        factory_uid,
        [{ run_id, path: 'params.run_id' }],
        req.body.scorer_uids.map((scorer_uid, i) => ({ scorer_uid, path: `body.scorer_uids[${i}]` })),
      );
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
      const s = await rt.state(scorerDecider, scorerStream(scorer_uid));
      const context = commandContext(req);
      if (visibleScorer(s, scorer_uid, context).factory_uid !== factory_uid) throw new NotFound('scorer', scorer_uid);
      return dispatch(
        req,
        factory_uid,
        req.body.run_ids.map((run_id, i) => ({ run_id, path: `body.run_ids[${i}]` })),
        [{ scorer_uid, path: 'params.scorer_uid' }],
      );
    },
  );

  api.post(
    '/factory/:factory_uid/scorers/:scorer_uid/self-improvement/run',
    {
      schema: {
        params: scorerParams,
        response: {
          200: z.object({ started: z.int().describe('Self-improvement runs started, one per agent at most') }),
        },
        tags,
      },
    },
    async (req) => {
      const { factory_uid, scorer_uid } = req.params;
      const context = commandContext(req);
      const s = visibleScorer(await rt.state(scorerDecider, scorerStream(scorer_uid)), scorer_uid, context);
      if (s.factory_uid !== factory_uid) throw new NotFound('scorer', scorer_uid);
      if (context.actor.type !== 'user') throw new Forbidden('only people of the team start self-improvement');
      if (!s.self_improvement.enabled)
        throw new DomainError(
          409,
          'self_improvement_disabled',
          'Conflict',
          'self-improvement is not enabled for this scorer',
        );
      return { started: await checkSelfImprovement(rt, { scorer_uid, run_now: true }) };
    },
  );

  // ---- the worker's judgement ------------------------------------------------------------------

  api.post(
    '/agent/workers/:worker_id/runs/:run_id/judgement',
    {
      schema: {
        params: workerRunParams,
        headers: executionHeader,
        body: judgementBody,
        response: { 201: judgementAnswer },
        tags: ['workers'],
      },
    },
    async (req, reply) => {
      workerPrincipal(req);
      const { worker_id, run_id } = req.params;
      const context = commandContext(req);
      const run = await rt.state(runDecider, runStream(run_id));
      if (run.status !== 'live' || !canView(run, context)) throw new NotFound('run', run_id);
      const held = run.held;
      if (
        !held ||
        held.worker_id !== worker_id ||
        held.execution_id !== req.headers['x-execution-id'] ||
        run.state !== 'INPROGRESS'
      )
        throw new DomainError(
          409,
          'not_claimed',
          'Conflict',
          `run ${run_id} is not held by this execution (state ${run.state})`,
        );
      const m = run.created.metadata;
      if (run.created.source !== 'RUN_SCORER' || !m.scorer_uid || !m.scored_run_id || !m.scoring_attempt_id)
        throw new DomainError(409, 'not_a_judge', 'Conflict', `run ${run_id} is not a judge run`);
      const scorer = await rt.state(scorerDecider, scorerStream(m.scorer_uid));
      if (scorer.status !== 'live') throw new NotFound('scorer', m.scorer_uid);
      const reasoning = req.body.reasoning?.trim() ? truncateUtf8(req.body.reasoning, MAX_REASON_BYTES) : null;
      const sealed = reasoning === null ? null : keyringFor(rt.config).seal(scorerKey(m.scorer_uid), reasoning);
      if (reasoning !== null && sealed === null) throw new NotFound('scorer', m.scorer_uid);
      const { events } = await rt.execute(
        scoringStream(m.scorer_uid, m.scored_run_id),
        scoringDecider,
        {
          type: 'RecordJudgement',
          data: {
            attempt_id: m.scoring_attempt_id,
            judge_run_id: run_id,
            classification: req.body.classification,
            reason_sealed: sealed,
          },
        },
        context,
      );
      const recorded = events[0]!;
      return reply.code(201).send({
        run_id,
        attempt_id: m.scoring_attempt_id,
        ...(recorded.type === 'ScoringJudgementRecorded'
          ? {
              status: 'scored' as const,
              classification: recorded.data.classification,
              score: recorded.data.score,
              error: null,
            }
          : {
              status: 'failed' as const,
              classification: req.body.classification,
              score: null,
              error: recorded.type === 'ScoringAttemptFailed' ? recorded.data.error : 'not recorded',
            }),
      });
    },
  );
}
