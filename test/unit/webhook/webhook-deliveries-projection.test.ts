import { describe, expect, it } from 'vitest';
import { webhookDeliveriesProjection } from '../../../projections/webhook/webhook-deliveries.js';
import type { DeliveryEvent } from '../../../commands/webhook/events.js';
import type { AutomationRunRefused } from '../../../commands/automation/events.js';
import { metadata, project, recorded } from '../../helpers/projection-spec.js';

const DAY = 24 * 3600 * 1000;
const base = Date.parse('2026-01-01T00:00:00.000Z');
const accepted = (n: number, at: number): DeliveryEvent => ({
  type: 'DeliveryAccepted',
  data: {
    webhook_uid: 'w',
    factory_uid: 'f',
    team_uid: 't',
    delivery_id: `d${String(n).padStart(4, '0')}`,
    identity: `id:${n}`,
    size_bytes: 2,
    payload_blob: 'b',
    received_at: new Date(at).toISOString(),
  },
});
const deliveries = (docs: Record<string, Record<string, unknown>>) =>
  Object.keys(docs)
    .filter((id) => !id.startsWith('heads/'))
    .sort();
const events = (list: DeliveryEvent[]) => recorded(list.map((e) => ({ ...e, metadata: metadata(e.data.received_at) })));

describe('webhook deliveries projection', () => {
  it('logs each status with its fields', async () => {
    const docs = await project(
      webhookDeliveriesProjection,
      events([
        accepted(1, base),
        { type: 'DeliveryDuplicated', data: { ...accepted(2, base).data, duplicate_of: 'd0001' } as never },
        {
          type: 'DeliveryRejected',
          data: {
            webhook_uid: 'w',
            factory_uid: 'f',
            team_uid: 't',
            delivery_id: 'd0003',
            size_bytes: 9,
            received_at: new Date(base).toISOString(),
            reason: 'too_large',
          },
        },
      ]),
    );
    expect(docs.d0001).toMatchObject({ status: 'accepted', payload_blob: 'b' });
    expect(docs.d0002).toMatchObject({ status: 'duplicate', duplicate_of: 'd0001', payload_blob: null });
    expect(docs.d0003).toMatchObject({ status: 'rejected_too_large', size_bytes: 9 });
    expect(docs.d0003).not.toHaveProperty('count');
  });

  it('logs rejections counted rather than logged as one entry with their count', async () => {
    const counted: DeliveryEvent = {
      type: 'DeliveryRejected',
      data: {
        webhook_uid: 'w',
        factory_uid: 'f',
        team_uid: 't',
        delivery_id: 'd0001',
        size_bytes: 700,
        received_at: new Date(base).toISOString(),
        reason: 'auth',
        count: 100,
      },
    };
    const docs = await project(webhookDeliveriesProjection, events([counted]));
    expect(docs.d0001).toMatchObject({ status: 'rejected_auth', size_bytes: 700, count: 100 });
    expect(docs['heads/w']).toMatchObject({ count: 1 });
  });

  it('keeps everything from the last 7 days, however many', async () => {
    const list = Array.from({ length: 80 }, (_, i) => accepted(i, base + i * 60_000));
    expect(deliveries(await project(webhookDeliveriesProjection, events(list)))).toHaveLength(80);
  });

  it('prunes entries both older than 7 days and beyond the newest 50', async () => {
    const old = Array.from({ length: 60 }, (_, i) => accepted(i, base + i * 1000));
    const fresh = Array.from({ length: 30 }, (_, i) => accepted(100 + i, base + 8 * DAY + i * 1000));
    const kept = deliveries(await project(webhookDeliveriesProjection, events([...old, ...fresh]), { batchSize: 7 }));
    expect(kept).toHaveLength(50);
    expect(kept[0]).toBe('d0040'); // the 20 newest old ones stay to make 50
  });

  it('keeps a head of constant size however long the log grows', async () => {
    const list = Array.from({ length: 2000 }, (_, i) => accepted(i, base + i * 1000));
    const docs = await project(webhookDeliveriesProjection, events(list), { batchSize: 300 });
    expect(deliveries(docs)).toHaveLength(2000);
    expect(docs['heads/w']).toMatchObject({ oldest: 'd0000', newest: 'd1999', count: 2000 });
    expect(JSON.stringify(docs['heads/w']).length).toBeLessThan(300);
  });

  it('is idempotent: the same events twice give the same documents', async () => {
    const list = events(Array.from({ length: 60 }, (_, i) => accepted(i, base + i * DAY)));
    expect(await project(webhookDeliveriesProjection, list, { times: 2 })).toEqual(
      await project(webhookDeliveriesProjection, list),
    );
  });
});

describe('automation runs refused on a delivery', () => {
  const refused = (run: string, fired: Record<string, unknown>) =>
    ({
      type: 'AutomationRunRefused',
      data: {
        run_id: run,
        automation_id: 'a',
        automation_name: 'Triage',
        factory_uid: 'f',
        team_uid: 't',
        status: 402,
        code: 'budget_exceeded',
        detail: 'no room',
        ...fired,
      },
    }) as AutomationRunRefused;
  const ofDelivery = (id: string, replay_id?: string) => ({
    delivery: { webhook_uid: 'w', delivery_id: id, ...(replay_id ? { replay_id } : {}) },
  });

  it('names each refused run once on its entry, applied again or not; a schedule firing or a pruned entry changes nothing', async () => {
    const docs = await project(
      webhookDeliveriesProjection,
      recorded([
        { ...accepted(1, base), metadata: metadata(new Date(base).toISOString()) },
        refused('r1', ofDelivery('d0001')),
        refused('r2', ofDelivery('d0001', 'rp')),
        refused('r3', ofDelivery('d0009')),
        refused('r4', { schedule: { schedule_id: 's', due_at: new Date(base).toISOString() } }),
      ]),
      { times: 2, batchSize: 1 },
    );
    expect(deliveries(docs)).toEqual(['d0001']);
    expect(docs.d0001!.refused_runs).toEqual([
      expect.objectContaining({ run_id: 'r1', replay_id: null, code: 'budget_exceeded', detail: 'no room' }),
      expect.objectContaining({ run_id: 'r2', replay_id: 'rp', status: 402 }),
    ]);
  });
});
