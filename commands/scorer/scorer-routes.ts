/**
 * POST, PATCH and DELETE of scorers (POST also in the hosted SDK's form, the factory in the
 * body). The rules of a scorer are its decider's; the checks that read other streams (the
 * factory, its agents, the model catalogue) are made here, all before anything is written.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { noContent, uidParam } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import { type FieldError, InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import { keyringFor } from '../../src/keyring.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection, identityDecider } from '../identity/public.js';
import { scorersProjection } from '../../projections/scorer/scorers.js';
import { liveFactory } from '../factory/public.js';
import { identityStream } from '../identity/events.js';
import { assertUsableModel, modelDecider } from '../model/public.js';
import { MODELS_STREAM } from '../model/events.js';
import { type LiveScorer, type ScorerCommand, scorerDecider, scorerProblems } from './scorer-decider.js';
import { type ScopeAgent, type ScorerFields, scorerKey, scorerStream } from './events.js';
import {
  createScorerBody,
  createScorerBodyWithFactory,
  judgeConfigOf,
  patchScorerBody,
  type PatchScorerBody,
  scopeAgentsOf,
  scorerParams,
  type CreateScorerBody,
} from './request-schemas.js';
import { scorerResource, toScorerResource } from './resource.js';
import { scorerOfFactory } from './scorer-access.js';

const DEFAULT_FAILED_RUN_THRESHOLD = 25;

const tags = ['scorers'];

const invalid = (errors: FieldError[]) =>
  new InvalidRequest(errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors);

/** The scorer as the read model shows it now that the command's events are projected. */
async function current(rt: Runtime, uid: string) {
  const doc = await rt.readModel(scorersProjection).get(uid);
  if (!doc) throw new NotFound('scorer', uid);
  const agents = await rt.readModel(identitiesProjection).getMany(doc.agents.map((a) => a.uid));
  return toScorerResource(doc, new Map([...agents].map(([k, a]) => [k, a.name])));
}

/** Each scope agent must be a live agent of the factory; refusals name the field the body used. */
async function assertAgents(
  rt: Runtime,
  agents: ScopeAgent[],
  factory: { uid: string; team_uid: string },
  form: 'agents' | 'agent_uids',
) {
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
}

const assertModel = async (rt: Runtime, model: string) =>
  assertUsableModel(await rt.state(modelDecider, MODELS_STREAM), model, 'body.model_id');

const classificationsOf = (list: CreateScorerBody['allowed_classifications']) =>
  list.map((c) => ({ ...c, description: c.description ?? null }));

const fieldsOf = (body: CreateScorerBody, agents: ScopeAgent[]): ScorerFields => ({
  name: body.name,
  description: body.description ?? '',
  scoring_prompt: body.scoring_prompt,
  model_id: body.model_id,
  threshold: body.threshold,
  allowed_classifications: classificationsOf(body.allowed_classifications),
  scope_mode: body.scope_mode,
  agents,
  sampling_rate: body.sampling_rate ?? null,
  agent_config: judgeConfigOf(body.agent_config),
  self_improvement: {
    enabled: body.self_improvement_enabled ?? false,
    failed_run_threshold: body.failed_run_threshold ?? DEFAULT_FAILED_RUN_THRESHOLD,
  },
});

async function create(rt: Runtime, req: FastifyRequest, factoryUid: string, body: CreateScorerBody) {
  const context = commandContext(req);
  const factory = await liveFactory(rt, factoryUid, context);
  const agents = scopeAgentsOf(body) ?? [];
  const uid = timeOrderedId();
  const fields = fieldsOf(body, agents);
  // The scorer's own rules first (their messages say more than an unknown agent's would).
  const problems = scorerProblems(fields);
  if (problems.length) throw invalid(problems);
  await assertAgents(rt, agents, factory, body.agents?.length ? 'agents' : 'agent_uids');
  await assertModel(rt, body.model_id);
  const command: ScorerCommand = {
    type: 'CreateScorer',
    data: { ...fields, uid, factory_uid: factory.uid, team_uid: factory.team_uid },
  };
  await rt.execute(scorerStream(uid), scorerDecider, command, context);
  return current(rt, uid);
}

/** The self-improvement settings a PATCH gives, the others kept. */
const selfImprovementOf = (b: PatchScorerBody, s: LiveScorer) =>
  b.self_improvement_enabled !== undefined || b.failed_run_threshold !== undefined
    ? {
        self_improvement: {
          enabled: b.self_improvement_enabled ?? s.self_improvement.enabled,
          failed_run_threshold: b.failed_run_threshold ?? s.self_improvement.failed_run_threshold,
        },
      }
    : {};

/** The changes a PATCH makes: a scope given (its mode or its agents) replaces the scope in full. */
function changesOf(b: PatchScorerBody, s: LiveScorer): Partial<ScorerFields> {
  const agents = scopeAgentsOf(b);
  const scopeGiven = b.scope_mode !== undefined || agents !== undefined;
  return {
    ...(b.name !== undefined ? { name: b.name } : {}),
    ...(b.description !== undefined ? { description: b.description ?? '' } : {}),
    ...(b.scoring_prompt !== undefined ? { scoring_prompt: b.scoring_prompt } : {}),
    ...(b.model_id !== undefined ? { model_id: b.model_id } : {}),
    ...(b.threshold !== undefined ? { threshold: b.threshold } : {}),
    ...(b.allowed_classifications !== undefined
      ? { allowed_classifications: classificationsOf(b.allowed_classifications) }
      : {}),
    ...(scopeGiven ? { scope_mode: b.scope_mode ?? s.scope_mode, agents: agents ?? [] } : {}),
    ...(b.sampling_rate !== undefined ? { sampling_rate: b.sampling_rate } : {}),
    ...(b.agent_config !== undefined ? { agent_config: judgeConfigOf(b.agent_config) } : {}),
    ...selfImprovementOf(b, s),
  };
}

type ScorerParams = z.infer<typeof scorerParams>;

async function patch(rt: Runtime, req: FastifyRequest, params: ScorerParams, body: PatchScorerBody) {
  const { factory_uid, scorer_uid } = params;
  const context = commandContext(req);
  const s = await scorerOfFactory(rt, factory_uid, scorer_uid, context);
  const changes = changesOf(body, s);
  if (changes.agents)
    await assertAgents(
      rt,
      changes.agents,
      { uid: s.factory_uid, team_uid: s.team_uid },
      body.agents ? 'agents' : 'agent_uids',
    );
  if (changes.model_id) await assertModel(rt, changes.model_id);
  await rt.execute(
    scorerStream(scorer_uid),
    scorerDecider,
    { type: 'UpdateScorer', data: { uid: scorer_uid, changes } },
    context,
  );
  return current(rt, scorer_uid);
}

async function remove(rt: Runtime, req: FastifyRequest, params: ScorerParams) {
  const { factory_uid, scorer_uid } = params;
  const context = commandContext(req);
  await scorerOfFactory(rt, factory_uid, scorer_uid, context);
  await rt.execute(
    scorerStream(scorer_uid),
    scorerDecider,
    { type: 'DeleteScorer', data: { uid: scorer_uid } },
    context,
  );
  // The reasons go with the key, before the answer (a reactor destroys it too, should this process die here).
  keyringFor(rt.config).destroy(scorerKey(scorer_uid));
}

export default function scorerRoutes(api: Api, rt: Runtime): void {
  const createSchema = { body: createScorerBody, response: { 201: scorerResource }, tags };
  api.post(
    '/factory/:factory_uid/scorers',
    {
      schema: { ...createSchema, params: z.object({ factory_uid: uidParam }) },
      config: { idempotent: true },
    },
    async (req, reply) => reply.code(201).send(await create(rt, req, req.params.factory_uid, req.body)),
  );
  // The hosted SDK's form: the factory in the body.
  api.post(
    '/factory/scorers',
    { schema: { ...createSchema, body: createScorerBodyWithFactory }, config: { idempotent: true } },
    async (req, reply) => {
      const { factory_uid, ...body } = req.body;
      return reply.code(201).send(await create(rt, req, factory_uid, body));
    },
  );
  api.patch(
    '/factory/:factory_uid/scorers/:scorer_uid',
    { schema: { params: scorerParams, body: patchScorerBody, response: { 200: scorerResource }, tags } },
    (req) => patch(rt, req, req.params, req.body),
  );
  api.delete(
    '/factory/:factory_uid/scorers/:scorer_uid',
    { schema: { params: scorerParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      await remove(rt, req, req.params);
      return reply.code(204).send(null);
    },
  );
}
