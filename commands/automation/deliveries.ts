/**
 * Beyond the hosted service: POST /factory/{factory_uid}/automations/{automation_id}/test-filter
 * says whether a stored accepted delivery would trigger an automation and, if not, why; POST
 * /factory/{factory_uid}/webhooks/{webhook_uid}/deliveries/{delivery_id}/replay evaluates an accepted
 * delivery again against the automations of today and starts the runs that match.
 */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { commandContext } from '../../src/http/context.js';
import { uidParam } from '../../src/http/schemas.js';
import { Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { type FilterFailure, matchFilter } from './filter.js';
import {
  type AutomationDoc,
  automationsProjection,
  type DeliveryDoc,
} from '../../projections/automation/automations.js';
import { factoriesProjection, liveFactory, visibleFactory as visibleFactoryDoc } from '../factory/public.js';
import type { DeliveryAccepted } from '../webhook/events.js';
import { type DeliveryReplayed, replayStream, webhookOf } from './events.js';
import { liveWebhook, payloadFilterOf, startAutomationRuns } from './automation-runs-reactor.js';
import { replayDecider } from './delivery-replay-decider.js';
import { automationOf, automationParams } from './resource.js';
import type { Api } from '../../src/http/api.js';

const deliveryBody = z.object({ delivery_id: uidParam }).strict();
const replayParams = z.object({ factory_uid: uidParam, webhook_uid: uidParam, delivery_id: uidParam });

const filterFailure = z.object({
  path: z.string().describe('The filter path whose condition failed, such as triggers.0.filter.payload.action'),
  reason: z.string(),
}) satisfies z.ZodType<FilterFailure>;

const triggerCheck = z.object({
  trigger_index: z.int(),
  provider: z.string(),
  event: z.string(),
  webhook: z
    .object({ matched: z.boolean(), active: z.boolean() })
    .describe("Whether the trigger listens to the delivery's webhook, and whether that trigger is active"),
  payload: z
    .object({ matched: z.boolean(), failures: z.array(filterFailure) })
    .nullable()
    .describe("The payload filter's outcome; null when the webhook check already failed"),
});

const filterVerdict = z.object({
  automation_id: z.string(),
  delivery_id: z.string(),
  webhook_uid: z.string(),
  would_trigger: z.boolean(),
  reason: z.string().nullable().describe('Why it would not trigger; null when it would'),
  checks: z.array(triggerCheck).describe('One per trigger, in order'),
});

const replayed = z.object({
  replay_id: z.string(),
  delivery_id: z.string(),
  webhook_uid: z.string(),
  runs: z
    .array(z.object({ automation_id: z.string(), run_id: z.string() }))
    .describe('The runs the automations of today start for the delivery, one per matching automation'),
});

/** The accepted delivery, read from the stream the read model names; 404 for any other. */
async function acceptedDelivery(
  rt: Runtime,
  doc: DeliveryDoc | null,
  factoryUid: string,
  deliveryId: string,
): Promise<RecordedEvent<DeliveryAccepted>> {
  const events = doc && doc.factory_uid === factoryUid ? await rt.events.readStream(doc.stream) : [];
  const accepted = events.find(
    (e) => e.type === 'DeliveryAccepted' && (e.data as DeliveryAccepted['data']).delivery_id === deliveryId,
  );
  if (!accepted) throw new NotFound('accepted delivery', deliveryId);
  return accepted as RecordedEvent<DeliveryAccepted>;
}

async function payloadOf(rt: Runtime, delivery: DeliveryAccepted['data']): Promise<unknown> {
  const bytes = await rt.blobs.read(delivery.payload_blob);
  if (!bytes) throw new NotFound('payload of delivery', delivery.delivery_id);
  return JSON.parse(bytes.toString('utf8'));
}

type TriggerCheck = z.infer<typeof triggerCheck>;

function verdict(automation: AutomationDoc, webhookUid: string, body: unknown) {
  const checks: TriggerCheck[] = automation.triggers.map((t, trigger_index) => {
    const listens = webhookOf(t) === webhookUid;
    const outcome = listens ? matchFilter(payloadFilterOf(t), body, `triggers.${trigger_index}.filter.payload`) : null;
    return {
      trigger_index,
      provider: t.provider,
      event: t.event,
      webhook: { matched: listens, active: t.active },
      payload: outcome && { matched: outcome.matched, failures: outcome.matched ? [] : outcome.failures },
    };
  });
  const listening = checks.filter((c) => c.webhook.matched);
  const firing = listening.filter((c) => c.webhook.active && c.payload?.matched);
  const reason = !listening.length
    ? `no trigger listens to webhook ${webhookUid}`
    : !listening.some((c) => c.webhook.active)
      ? `webhook ${webhookUid} was deleted: its triggers are inactive`
      : !firing.length
        ? 'the payload filter does not match'
        : !automation.enabled
          ? 'the automation is disabled'
          : null;
  return { would_trigger: reason === null, reason, checks };
}

export default function automationDeliveryRoutes(api: Api, rt: Runtime): void {
  const factories = rt.readModel(factoriesProjection);
  const automations = rt.readModel(automationsProjection);
  const deliveries = rt.readTable(automationsProjection, 'deliveries');
  const deliveryDoc = (id: string) => deliveries.get(id);

  const tags = ['automations'];
  api.post(
    '/factory/:factory_uid/automations/:automation_id/test-filter',
    { schema: { params: automationParams, body: deliveryBody, response: { 200: filterVerdict }, tags } },
    async (req) => {
      const factory = await visibleFactoryDoc(factories, req, req.params.factory_uid);
      const automation = await automationOf(automations, factory.uid, req.params.automation_id);
      const { delivery_id } = req.body;
      const delivery = (await acceptedDelivery(rt, await deliveryDoc(delivery_id), factory.uid, delivery_id)).data;
      const body = await payloadOf(rt, delivery);
      return {
        automation_id: automation.id,
        delivery_id,
        webhook_uid: delivery.webhook_uid,
        ...verdict(automation, delivery.webhook_uid, body),
      };
    },
  );

  api.post(
    '/factory/:factory_uid/webhooks/:webhook_uid/deliveries/:delivery_id/replay',
    { schema: { params: replayParams, response: { 201: replayed }, tags }, config: { idempotent: true } },
    async (req, reply) => {
      const context = commandContext(req);
      const factory = await liveFactory(rt, req.params.factory_uid, context);
      if (context.actor.type !== 'user') throw new Forbidden('only users can replay deliveries');
      const webhook = await liveWebhook(rt, factory.uid, req.params.webhook_uid);
      if (!webhook) throw new NotFound('webhook', req.params.webhook_uid);
      const accepted = await acceptedDelivery(
        rt,
        await deliveryDoc(req.params.delivery_id),
        factory.uid,
        req.params.delivery_id,
      );
      if (accepted.data.webhook_uid !== webhook.uid) throw new NotFound('accepted delivery', req.params.delivery_id);

      const replay_id = timeOrderedId();
      await rt.execute(
        replayStream(replay_id),
        replayDecider,
        { type: 'ReplayDelivery', data: { ...accepted.data, replay_id } },
        context,
      );
      const [replayed] = (await rt.events.readStream(replayStream(replay_id))) as RecordedEvent<DeliveryReplayed>[];
      // The reactor reacts to the same event too; run ids derived from it make that a no-op.
      const runs = await startAutomationRuns(rt, replayed!);
      return reply
        .code(201)
        .send({ replay_id, delivery_id: accepted.data.delivery_id, webhook_uid: webhook.uid, runs });
    },
  );
}
