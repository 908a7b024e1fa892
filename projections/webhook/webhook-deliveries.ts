/**
 * The delivery log of each webhook. A webhook's deliveries form a queue in log order: its head (in
 * the table `heads`) knows the oldest, the newest and how many, and each delivery names the one
 * after it.
 * Entries leave from the oldest end once they are both beyond the newest 50 and more than 7 days
 * older than the newest delivery (event time, so a rebuild prunes the same entries). So a delivery
 * costs a few document writes however long the log grows (at the rate limit, 7 days hold about
 * 600k entries).
 */
import { positionKey, type RecordedEvent } from '../../src/eventstore/port.js';
import { type ProjectionDocs, projection } from '../../src/projector/projection.js';
import type { DeliveryEvent } from '../../commands/webhook/events.js';
import type { AutomationRunRefused } from '../../commands/automation/events.js';

export type DeliveryStatus =
  | 'accepted'
  | 'duplicate'
  | 'rejected_auth'
  | 'rejected_invalid_json'
  | 'rejected_too_large';

export const deliveryLabels: Record<DeliveryStatus, string> = {
  accepted: 'Accepted',
  duplicate: 'Duplicate',
  rejected_auth: 'Rejected (auth)',
  rejected_invalid_json: 'Rejected (invalid JSON)',
  rejected_too_large: 'Rejected (too large)',
};

export interface DeliveryDoc {
  [field: string]: unknown;
  webhook_uid: string;
  factory_uid: string;
  team_uid: string;
  delivery_id: string;
  status: DeliveryStatus;
  size_bytes: number;
  received_at: string;
  identity: string | null;
  /** The blob of the raw body: accepted deliveries only. */
  payload_blob: string | null;
  duplicate_of: string | null;
  /** How many rejections this entry stands for, when counted rather than logged one by one. */
  count?: number;
  /** The delivery logged after this one. */
  next: string | null;
  /** Automations whose runs this delivery (or a replay of it) fired and that could not start: the newest 100. */
  refused_runs?: RefusedRun[];
}

interface RefusedRun {
  run_id: string;
  automation_id: string;
  automation_name: string;
  replay_id: string | null;
  status: number;
  code: string;
  detail: string;
  refused_at: string;
}

interface LogHeadDoc {
  [field: string]: unknown;
  webhook_uid: string;
  oldest: string;
  newest: string;
  /** The latest receipt time logged. */
  newest_at: string;
  count: number;
  /** The position of the last event applied, so that an event applied again changes nothing. */
  applied: string;
}

const DELIVERY_LOG_KEEP_COUNT = 50;
const DELIVERY_LOG_KEEP_MS = 7 * 24 * 3600 * 1000;
/** At most one per automation of the factory (100) for each replay: the newest are kept. */
const REFUSALS_KEPT = 100;

async function record(
  e: RecordedEvent<DeliveryEvent>,
  docs: ProjectionDocs<DeliveryDoc, { heads: LogHeadDoc }>,
  fields: Pick<DeliveryDoc, 'status' | 'identity' | 'payload_blob' | 'duplicate_of' | 'count'>,
) {
  const { webhook_uid, factory_uid, team_uid, delivery_id, size_bytes, received_at } = e.data;
  const heads = docs.in('heads');
  const head = await heads.get(webhook_uid);
  const applied = positionKey(e.position);
  if (head && head.applied >= applied) return;
  docs.put(delivery_id, {
    webhook_uid,
    factory_uid,
    team_uid,
    delivery_id,
    size_bytes,
    received_at,
    ...fields,
    next: null,
  });
  if (head) docs.patch(head.newest, { next: delivery_id });

  const newestAt = head && head.newest_at > received_at ? head.newest_at : received_at;
  let oldest = head?.oldest ?? delivery_id;
  let count = (head?.count ?? 0) + 1;
  while (count > DELIVERY_LOG_KEEP_COUNT) {
    const entry = (await docs.get(oldest))!;
    if (Date.parse(newestAt) - Date.parse(entry.received_at) <= DELIVERY_LOG_KEEP_MS) break;
    docs.delete(oldest);
    oldest = entry.next!;
    count--;
  }
  heads.put(webhook_uid, {
    webhook_uid,
    oldest,
    newest: delivery_id,
    newest_at: newestAt,
    count,
    applied,
  });
}

/** Names the refused run on its delivery's entry, unless the entry has left the log or names it already. */
async function recordRefusal(
  e: RecordedEvent<AutomationRunRefused>,
  docs: ProjectionDocs<DeliveryDoc, { heads: LogHeadDoc }>,
) {
  if (!('delivery' in e.data)) return; // a schedule fired it
  const { delivery, run_id, automation_id, automation_name, status, code, detail } = e.data;
  const entry = await docs.get(delivery.delivery_id);
  if (!entry || entry.webhook_uid !== delivery.webhook_uid) return;
  const refused = entry.refused_runs ?? [];
  if (refused.some((r) => r.run_id === run_id)) return;
  const refusal: RefusedRun = {
    run_id,
    automation_id,
    automation_name,
    replay_id: delivery.replay_id ?? null,
    status,
    code,
    detail,
    refused_at: e.metadata.occurred_at,
  };
  docs.patch(delivery.delivery_id, { refused_runs: [...refused, refusal].slice(-REFUSALS_KEPT) });
}

export const webhookDeliveriesProjection = projection<
  DeliveryEvent | AutomationRunRefused,
  DeliveryDoc,
  { heads: LogHeadDoc }
>({
  name: 'webhook_deliveries',
  version: 3,
  indexes: [['webhook_uid', 'received_at']],
  tables: { heads: [] },
  on: {
    DeliveryAccepted: (e, docs) =>
      record(e, docs, {
        status: 'accepted',
        identity: e.data.identity,
        payload_blob: e.data.payload_blob,
        duplicate_of: null,
      }),
    DeliveryDuplicated: (e, docs) =>
      record(e, docs, {
        status: 'duplicate',
        identity: e.data.identity,
        payload_blob: null,
        duplicate_of: e.data.duplicate_of,
      }),
    DeliveryRejected: (e, docs) =>
      record(e, docs, {
        status: `rejected_${e.data.reason}`,
        identity: null,
        payload_blob: null,
        duplicate_of: null,
        ...(e.data.count !== undefined ? { count: e.data.count } : {}),
      }),
    AutomationRunRefused: recordRefusal,
  },
});
