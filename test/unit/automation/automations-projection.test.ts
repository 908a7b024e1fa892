import { describe, expect, it } from 'vitest';
import type { AutomationEvent, Trigger } from '../../../commands/automation/events.js';
import type { DeliveryEvent, WebhookEvent } from '../../../commands/webhook/events.js';
import { automationsProjection } from '../../../projections/automation/automations.js';
import { project, recorded } from '../../helpers/projection-spec.js';

const hook = (uid: string): Trigger => ({ provider: 'webhook', event: 'received', filter: { webhook_ids: [uid] } });
const webhook = (uid: string): WebhookEvent => ({
  type: 'WebhookCreated',
  data: {
    uid,
    factory_uid: 'f-1',
    team_uid: 't-1',
    name: uid,
    enabled: true,
    delivery_id_header: null,
    auth_mode: 'token',
    signature_scheme: null,
    secret: null,
  },
});
const fields = { factory_uid: 'f-1', team_uid: 't-1', name: 'A', prompt: 'p', agent: null, enabled: true };
const events: Array<AutomationEvent | WebhookEvent | DeliveryEvent> = [
  webhook('w-1'),
  webhook('w-2'),
  { type: 'AutomationCreated', data: { id: 'a-1', ...fields, triggers: [hook('w-1'), hook('w-2')] } },
  { type: 'AutomationCreated', data: { id: 'a-2', ...fields, triggers: [hook('w-2')] } },
  { type: 'AutomationUpdated', data: { id: 'a-2', factory_uid: 'f-1', changes: { triggers: [hook('w-1')] } } },
  { type: 'WebhookDeleted', data: { uid: 'w-1', factory_uid: 'f-1', name: 'w-1' } },
  {
    type: 'AutomationCreated',
    data: { id: 'a-3', ...fields, triggers: [hook('w-2'), { provider: 'slack', event: 'app_mention', filter: null }] },
  },
  { type: 'AutomationDeleted', data: { id: 'a-3', factory_uid: 'f-1' } },
  {
    type: 'DeliveryAccepted',
    data: {
      webhook_uid: 'w-2',
      factory_uid: 'f-1',
      team_uid: 't-1',
      delivery_id: 'd-1',
      identity: 'i',
      size_bytes: 2,
      payload_blob: 'b',
      received_at: '2026-01-01T00:00:00.000Z',
    },
  },
];

describe('automations projection', () => {
  it('marks the triggers of a deleted webhook inactive, follows trigger edits, and indexes accepted deliveries', async () => {
    const docs = await project(automationsProjection, recorded(events));
    const active = (id: string) => (docs[id]!.triggers as Array<{ active: boolean }>).map((t) => t.active);
    expect(active('a-1')).toEqual([false, true]);
    expect(active('a-2')).toEqual([false]);
    expect(docs['a-3']).toBeUndefined();
    expect(docs['webhooks/w-1']).toMatchObject({ deleted: true, automation_ids: ['a-1', 'a-2'] });
    expect(docs['webhooks/w-2']).toMatchObject({ deleted: false, automation_ids: ['a-1'] });
    expect(docs['deliveries/d-1']).toMatchObject({
      webhook_uid: 'w-2',
      factory_uid: 'f-1',
      stream: 's',
    });
  });

  it('gives the same documents when the events are applied twice, or one at a time', async () => {
    const once = await project(automationsProjection, recorded(events));
    expect(await project(automationsProjection, recorded(events), { times: 2 })).toEqual(once);
    expect(await project(automationsProjection, recorded(events), { batchSize: 1 })).toEqual(once);
  });
});
