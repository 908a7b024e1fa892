/**
 * The delivery log of each webhook. Every webhook has one index document listing its entries
 * oldest first; an entry is pruned once it is both beyond the newest 50 and more than 7 days older
 * than the newest delivery (event time, so a rebuild prunes the same entries).
 */
import { projection, type Docs } from '../src/projector/projection.js';
import type { RecordedEvent } from '../src/eventstore/port.js';
import type { DeliveryEvent } from '../commands/webhook/events.js';

export type DeliveryStatus = 'accepted' | 'duplicate' | 'rejected_auth' | 'rejected_invalid_json' | 'rejected_too_large';

export const deliveryLabels: Record<DeliveryStatus, string> = {
  accepted: 'Accepted',
  duplicate: 'Duplicate',
  rejected_auth: 'Rejected (auth)',
  rejected_invalid_json: 'Rejected (invalid JSON)',
  rejected_too_large: 'Rejected (too large)',
};

export interface DeliveryDoc {
  [field: string]: unknown;
  kind: 'delivery';
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
}

interface LogIndexDoc {
  [field: string]: unknown;
  kind: 'index';
  webhook_uid: string;
  /** [received_at, delivery_id], oldest first. */
  entries: Array<[string, string]>;
}

export const DELIVERY_LOG_KEEP_COUNT = 50;
export const DELIVERY_LOG_KEEP_MS = 7 * 24 * 3600 * 1000;

const indexId = (webhookUid: string) => `index:${webhookUid}`;

async function record(e: RecordedEvent<DeliveryEvent>, docs: Docs, fields: Pick<DeliveryDoc, 'status' | 'identity' | 'payload_blob' | 'duplicate_of'>) {
  const { webhook_uid, factory_uid, team_uid, delivery_id, size_bytes, received_at } = e.data;
  docs.put(delivery_id, { kind: 'delivery', webhook_uid, factory_uid, team_uid, delivery_id, size_bytes, received_at, ...fields } satisfies DeliveryDoc);

  const index = ((await docs.get(indexId(webhook_uid))) as LogIndexDoc | null) ?? { kind: 'index', webhook_uid, entries: [] };
  if (index.entries.some(([, id]) => id === delivery_id)) return; // applied again: nothing new
  const entries = [...index.entries, [received_at, delivery_id] as [string, string]].sort((a, b) => (a[0] === b[0] ? a[1].localeCompare(b[1]) : a[0].localeCompare(b[0])));
  const newest = Date.parse(entries.at(-1)![0]);
  let prune = 0;
  while (entries.length - prune > DELIVERY_LOG_KEEP_COUNT && newest - Date.parse(entries[prune]![0]) > DELIVERY_LOG_KEEP_MS) prune++;
  for (const [, id] of entries.slice(0, prune)) docs.delete(id);
  docs.put(indexId(webhook_uid), { ...index, entries: entries.slice(prune) } satisfies LogIndexDoc);
}

export const webhookDeliveriesProjection = projection<DeliveryEvent>({
  name: 'webhook_deliveries',
  version: 1,
  indexes: [['webhook_uid', 'kind', 'received_at']],
  on: {
    DeliveryAccepted: (e, docs) => record(e, docs, { status: 'accepted', identity: e.data.identity, payload_blob: e.data.payload_blob, duplicate_of: null }),
    DeliveryDuplicated: (e, docs) => record(e, docs, { status: 'duplicate', identity: e.data.identity, payload_blob: null, duplicate_of: e.data.duplicate_of }),
    DeliveryRejected: (e, docs) => record(e, docs, { status: `rejected_${e.data.reason}`, identity: null, payload_blob: null, duplicate_of: null }),
  },
});
