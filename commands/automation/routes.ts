/** POST /factory/{factory_uid}/automations, PATCH and DELETE /factory/{factory_uid}/automations/{automation_id}. */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { noContent, uidParam } from '../../src/http/schemas.js';
import { InvalidRequest } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { type AutomationDoc, automationsProjection } from '../../projections/automation/automations.js';
import { identityDecider } from '../identity/public.js';
import { identityStream } from '../identity/events.js';
import { type LiveFactory, liveFactory } from '../factory/public.js';
import { webhooksDecider } from '../webhook/public.js';
import { webhooksStream } from '../webhook/events.js';
import { automationsDecider, type WebhookStatuses } from './automations-decider.js';
import { automationsStream } from './events.js';
import { MAX_TRIGGERS, normalizeTrigger, triggerErrors, triggerSchema, type TriggerRequest } from './triggers.js';
import { automationOf, automationParams, automationResource, toAutomationResource } from './resource.js';
import type { Api } from '../../src/http/api.js';

const MAX_PROMPT_LENGTH = 100_000;

const fields = {
  name: z.string().trim().min(1).max(200),
  prompt: z
    .string()
    .max(MAX_PROMPT_LENGTH)
    .refine((p) => p.trim() !== '', 'the prompt must not be empty'),
  agent: uidParam.nullable(),
  enabled: z.boolean(),
  triggers: z.array(triggerSchema).min(1).max(MAX_TRIGGERS),
  requires_approval: z
    .boolean()
    .describe('Its runs wait for a team admin’s approval before they begin (default false)'),
};

const createBody = z
  .object({
    name: fields.name,
    prompt: fields.prompt,
    agent: fields.agent.optional(),
    enabled: fields.enabled.optional(),
    triggers: fields.triggers,
    requires_approval: fields.requires_approval.optional(),
  })
  .strict();

const patchBody = z
  .object({
    name: fields.name.optional(),
    prompt: fields.prompt.optional(),
    agent: fields.agent.optional(),
    enabled: fields.enabled.optional(),
    triggers: fields.triggers.optional(),
    requires_approval: fields.requires_approval.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one field to change' });

function checkTriggers(triggers: readonly TriggerRequest[] | undefined) {
  if (!triggers) return undefined;
  const errors = triggerErrors(triggers);
  if (errors.length) throw new InvalidRequest('a trigger is not valid', errors);
  return triggers.map(normalizeTrigger);
}

/** The factory's webhooks, folded from its webhook stream. */
async function webhookStatuses(rt: Runtime, factoryUid: string): Promise<WebhookStatuses> {
  const { webhooks } = await rt.state(webhooksDecider, webhooksStream(factoryUid));
  return Object.fromEntries(Object.values(webhooks).map((w) => [w.uid, w.deleted ? 'deleted' : 'live']));
}

/** An automation's agent is a live agent identity of the factory's team. */
async function checkAgent(rt: Runtime, agent: string | null | undefined, factory: LiveFactory): Promise<void> {
  if (!agent) return;
  const identity = await rt.state(identityDecider, identityStream(agent));
  if (identity.status !== 'live' || identity.team_uid !== factory.team_uid) {
    throw new InvalidRequest("no such agent in the factory's team", [
      { path: 'body.agent', message: "an agent identity UID of the factory's team" },
    ]);
  }
}

export default function automationRoutes(api: Api, rt: Runtime): void {
  const automations = rt.readModel<AutomationDoc>(automationsProjection);
  const current = async (factoryUid: string, id: string) =>
    toAutomationResource(await automationOf(automations, factoryUid, id));

  const tags = ['automations'];
  api.post(
    '/factory/:factory_uid/automations',
    {
      schema: {
        params: z.object({ factory_uid: uidParam }),
        body: createBody,
        response: { 201: automationResource },
        tags,
      },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const context = commandContext(req);
      const factory = await liveFactory(rt, req.params.factory_uid, context);
      const triggers = checkTriggers(req.body.triggers)!;
      await checkAgent(rt, req.body.agent, factory);
      const id = timeOrderedId();
      const { name, prompt, agent = null, enabled = true, requires_approval } = req.body;
      await rt.execute(
        automationsStream(factory.uid),
        automationsDecider,
        {
          type: 'CreateAutomation',
          data: {
            ...{ id, factory_uid: factory.uid, team_uid: factory.team_uid, name, prompt, agent, enabled, triggers },
            ...(requires_approval ? { requires_approval } : {}),
          },
          webhooks: await webhookStatuses(rt, factory.uid),
        },
        context,
      );
      return reply.code(201).send(await current(factory.uid, id));
    },
  );

  api.patch(
    '/factory/:factory_uid/automations/:automation_id',
    { schema: { params: automationParams, body: patchBody, response: { 200: automationResource }, tags } },
    async (req) => {
      const { factory_uid, automation_id: id } = req.params;
      const context = commandContext(req);
      const factory = await liveFactory(rt, factory_uid, context);
      const { triggers, ...rest } = req.body;
      const changes = { ...rest, ...(triggers ? { triggers: checkTriggers(triggers) } : {}) };
      await checkAgent(rt, req.body.agent, factory);
      await rt.execute(
        automationsStream(factory.uid),
        automationsDecider,
        {
          type: 'UpdateAutomation',
          data: { id, factory_uid: factory.uid, team_uid: factory.team_uid, changes },
          webhooks: await webhookStatuses(rt, factory.uid),
        },
        context,
      );
      return current(factory.uid, id);
    },
  );

  api.delete(
    '/factory/:factory_uid/automations/:automation_id',
    { schema: { params: automationParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const { factory_uid, automation_id: id } = req.params;
      const context = commandContext(req);
      const factory = await liveFactory(rt, factory_uid, context);
      await rt.execute(
        automationsStream(factory.uid),
        automationsDecider,
        {
          type: 'DeleteAutomation',
          data: { id, factory_uid: factory.uid, team_uid: factory.team_uid },
        },
        context,
      );
      return reply.code(204).send(null);
    },
  );
}
