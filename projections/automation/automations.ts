/**
 * Automations by id, each trigger marked `active` (a webhook trigger is inactive once its webhook
 * is deleted). Two tables beside them: `webhooks`, per webhook (is it deleted, which automations
 * name it) so a deletion can mark their triggers, and `deliveries`, per accepted delivery, naming
 * the stream that holds it, for test-filter and replay.
 */
import { projection, type Docs } from '../../src/projector/projection.js';
import type { AutomationEvent, Trigger } from '../../commands/automation/events.js';
import type { DeliveryEvent, WebhookEvent } from '../../commands/webhook/events.js';
import { scheduleIdsOf, webhookOf } from '../../commands/automation/events.js';

export type TriggerDoc = Trigger & { active: boolean };

export interface AutomationDoc {
  [field: string]: unknown;
  id: string;
  factory_uid: string;
  team_uid: string;
  name: string;
  prompt: string;
  agent: string | null;
  enabled: boolean;
  requires_approval?: boolean;
  triggers: TriggerDoc[];
  /** The schedules its `schedule/cron_fired` triggers fire on (inline ones and `schedule_ids`). */
  schedule_ids: string[];
  creator: { uid: string };
  created_at: string;
  updated_at: string;
}

interface WebhookDoc {
  [field: string]: unknown;
  uid: string;
  deleted: boolean;
  automation_ids: string[];
}

export interface DeliveryDoc {
  [field: string]: unknown;
  delivery_id: string;
  webhook_uid: string;
  factory_uid: string;
  /** The stream holding the DeliveryAccepted event: the write side reads the delivery from there. */
  stream: string;
  received_at: string;
}

type Tables = { webhooks: WebhookDoc; deliveries: DeliveryDoc };

const webhooksOf = (triggers: readonly Trigger[]) => new Set(triggers.map(webhookOf).filter((u) => u !== null));

async function marked(webhooks: Docs<WebhookDoc>, triggers: readonly Trigger[]): Promise<TriggerDoc[]> {
  const result: TriggerDoc[] = [];
  for (const t of triggers) {
    const uid = webhookOf(t);
    const webhook = uid === null ? null : await webhooks.get(uid);
    result.push({ ...t, active: uid === null || (webhook !== null && !webhook.deleted) });
  }
  return result;
}

/** Moves automation `id` from the webhooks it named to the ones it names now. */
async function relink(
  webhooks: Docs<WebhookDoc>,
  id: string,
  before: ReadonlySet<string>,
  after: ReadonlySet<string>,
): Promise<void> {
  for (const uid of new Set([...before, ...after])) {
    if (before.has(uid) === after.has(uid)) continue;
    const webhook = await webhooks.get(uid);
    if (!webhook) continue;
    const ids = webhook.automation_ids.filter((a) => a !== id);
    webhooks.patch(uid, { automation_ids: after.has(uid) ? [...ids, id] : ids });
  }
}

export const automationsProjection = projection<AutomationEvent | WebhookEvent | DeliveryEvent, AutomationDoc, Tables>({
  name: 'automations',
  version: 3,
  indexes: [['factory_uid', 'name']],
  tables: { webhooks: [], deliveries: [] },
  on: {
    WebhookCreated: (e, docs) =>
      docs.in('webhooks').put(e.data.uid, { uid: e.data.uid, deleted: false, automation_ids: [] }),
    WebhookDeleted: async (e, docs) => {
      const webhook = await docs.in('webhooks').get(e.data.uid);
      if (!webhook) return;
      docs.in('webhooks').patch(e.data.uid, { deleted: true });
      for (const id of webhook.automation_ids) {
        const automation = await docs.get(id);
        if (!automation) continue;
        const triggers = automation.triggers.map((t) => (webhookOf(t) === e.data.uid ? { ...t, active: false } : t));
        docs.patch(id, { triggers });
      }
    },
    DeliveryAccepted: (e, docs) =>
      docs.in('deliveries').put(e.data.delivery_id, {
        delivery_id: e.data.delivery_id,
        webhook_uid: e.data.webhook_uid,
        factory_uid: e.data.factory_uid,
        stream: e.stream,
        received_at: e.data.received_at,
      }),
    AutomationCreated: async (e, docs) => {
      const { triggers, ...fields } = e.data;
      docs.put(fields.id, {
        ...fields,
        triggers: await marked(docs.in('webhooks'), triggers),
        schedule_ids: triggers.flatMap((t) => scheduleIdsOf(fields.id, t)),
        creator: { uid: e.metadata.actor.uid },
        created_at: e.metadata.occurred_at,
        updated_at: e.metadata.occurred_at,
      } satisfies AutomationDoc);
      await relink(docs.in('webhooks'), fields.id, new Set(), webhooksOf(triggers));
    },
    AutomationUpdated: async (e, docs) => {
      const automation = await docs.get(e.data.id);
      if (!automation) return;
      const { triggers, ...changes } = e.data.changes;
      docs.patch(e.data.id, {
        ...changes,
        ...(triggers
          ? {
              triggers: await marked(docs.in('webhooks'), triggers),
              schedule_ids: triggers.flatMap((t) => scheduleIdsOf(e.data.id, t)),
            }
          : {}),
        updated_at: e.metadata.occurred_at,
      });
      if (triggers) await relink(docs.in('webhooks'), e.data.id, webhooksOf(automation.triggers), webhooksOf(triggers));
    },
    AutomationDeleted: async (e, docs) => {
      const automation = await docs.get(e.data.id);
      if (!automation) return;
      docs.delete(e.data.id);
      await relink(docs.in('webhooks'), e.data.id, webhooksOf(automation.triggers), new Set());
    },
  },
});
