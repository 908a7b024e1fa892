/** A team's outbound webhook endpoints, one document each (never the secret). */
import { projection } from '../../src/projector/projection.js';
import type { OutboundWebhookEvent } from '../../commands/outbound/events.js';

export interface OutboundWebhookDoc {
  [field: string]: unknown;
  uid: string;
  team_uid: string;
  url: string;
  description: string | null;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  owner_uid: string;
  created_at: string;
  updated_at: string;
}

export const outboundWebhooksProjection = projection<OutboundWebhookEvent, OutboundWebhookDoc>({
  name: 'outbound_webhooks',
  version: 1,
  indexes: [['team_uid', 'created_at']],
  on: {
    OutboundWebhookCreated: (e, docs) => {
      const { secret: _secret, ...d } = e.data;
      docs.put(d.uid, { ...d, disabled_reason: null, failing_since: null, updated_at: d.created_at });
    },
    OutboundWebhookUpdated: async (e, docs) => {
      const doc = await docs.get(e.data.uid);
      if (!doc) return;
      const { changes } = e.data;
      docs.put(doc.uid, {
        ...doc,
        ...changes,
        ...(changes.enabled === true && !doc.enabled ? { failing_since: null } : {}),
        ...(changes.enabled !== undefined ? { disabled_reason: null } : {}),
        updated_at: e.metadata.occurred_at,
      });
    },
    OutboundWebhookSecretRotated: (e, docs) => docs.patch(e.data.uid, { updated_at: e.metadata.occurred_at }),
    OutboundWebhookDeleted: (e, docs) => docs.delete(e.data.uid),
    OutboundWebhookFailing: (e, docs) => docs.patch(e.data.uid, { failing_since: e.data.since }),
    OutboundWebhookRecovered: (e, docs) => docs.patch(e.data.uid, { failing_since: null }),
    OutboundWebhookDisabled: (e, docs) =>
      docs.patch(e.data.uid, { enabled: false, disabled_reason: e.data.reason, updated_at: e.metadata.occurred_at }),
  },
});
