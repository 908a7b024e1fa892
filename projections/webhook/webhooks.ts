/** Webhooks as the API shows them: never their secret. Deleted ones stay, marked, so triggers can show them inactive. */
import { projection } from '../../src/projector/projection.js';
import type { SignatureScheme, WebhookAuthMode, WebhookEvent } from '../../commands/webhook/events.js';

export interface WebhookDoc {
  [field: string]: unknown;
  uid: string;
  factory_uid: string;
  team_uid: string;
  name: string;
  auth_mode: WebhookAuthMode;
  signature_scheme: SignatureScheme | null;
  delivery_id_header: string | null;
  enabled: boolean;
  secret_name: string | null;
  /** A provider that issues its secret later has not given it yet. */
  awaiting_secret: boolean;
  deleted: boolean;
  created_at: string;
  updated_at: string;
}

export const webhooksProjection = projection<WebhookEvent, WebhookDoc>({
  name: 'webhooks',
  version: 1,
  indexes: [['factory_uid', 'deleted', 'created_at']],
  on: {
    WebhookCreated: (e, docs) => {
      const { secret, ...fields } = e.data;
      docs.put(e.data.uid, {
        ...fields,
        secret_name: secret && 'team_secret' in secret ? secret.team_secret : null,
        awaiting_secret: secret === null,
        deleted: false,
        created_at: e.metadata.occurred_at,
        updated_at: e.metadata.occurred_at,
      } satisfies WebhookDoc);
    },
    WebhookUpdated: (e, docs) => docs.patch(e.data.uid, { ...e.data.changes, updated_at: e.metadata.occurred_at }),
    WebhookSecretRotated: (e, docs) =>
      docs.patch(e.data.uid, {
        secret_name: 'team_secret' in e.data.secret ? e.data.secret.team_secret : null,
        awaiting_secret: false,
        updated_at: e.metadata.occurred_at,
      }),
    WebhookDeleted: (e, docs) =>
      docs.patch(e.data.uid, { deleted: true, enabled: false, updated_at: e.metadata.occurred_at }),
  },
});
