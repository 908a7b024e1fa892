import { describe, expect, it } from 'vitest';
import { webhooksDecider, MAX_WEBHOOKS_PER_FACTORY } from '../../../commands/webhook/webhooks-decider.js';
import type { WebhookCreated, WebhookEvent } from '../../../commands/webhook/events.js';
import { Conflict, Forbidden, LimitExceeded, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';
import { sealer } from '../../../src/sealing.js';
import { deliveryIdHeaderError } from '../../../commands/webhook/secrets.js';

const spec = deciderSpec(webhooksDecider);

const created = (uid: string, over: Partial<WebhookCreated['data']> = {}): WebhookEvent => ({
  type: 'WebhookCreated',
  data: {
    uid,
    factory_uid: 'f-1',
    team_uid: 't-1',
    name: uid,
    auth_mode: 'token',
    signature_scheme: null,
    delivery_id_header: null,
    enabled: true,
    secret: { sealed: 'v1.x.y.z' },
    ...over,
  },
});
const createCommand = (uid: string, over: Partial<WebhookCreated['data']> = {}) => ({
  type: 'CreateWebhook' as const,
  data: created(uid, over).data as WebhookCreated['data'],
});
const twenty = Array.from({ length: MAX_WEBHOOKS_PER_FACTORY }, (_, i) => created(`w${i}`));

describe('webhooks decider', () => {
  it('creates a webhook', () =>
    spec
      .given([])
      .when(createCommand('w'))
      .then([{ type: 'WebhookCreated', data: { uid: 'w', enabled: true } }]));

  it('creates a webhook awaiting its provider secret disabled', () =>
    spec
      .given([])
      .when(createCommand('w', { auth_mode: 'signature', signature_scheme: 'stripe', secret: null }))
      .then([{ type: 'WebhookCreated', data: { enabled: false, secret: null } }]));

  it('refuses the 21st webhook of a factory; a deleted one frees its place', () => {
    spec.given(twenty).when(createCommand('w21')).thenThrows(LimitExceeded);
    spec
      .given([...twenty, { type: 'WebhookDeleted', data: { uid: 'w0', factory_uid: 'f-1', name: 'w0' } }])
      .when(createCommand('w21'))
      .then([{ type: 'WebhookCreated' }]);
  });

  it('refuses agents and other teams', () => {
    spec
      .given([])
      .when(createCommand('w'), { ...userContext(), actor: { type: 'agent', uid: 'a' } })
      .thenThrows(Forbidden);
    spec
      .given([])
      .when(createCommand('w'), userContext('u-2', { 't-2': 'admin' }))
      .thenThrows(NotFound);
    spec
      .given([created('w')])
      .when({ type: 'DeleteWebhook', data: { uid: 'w' } }, userContext('u-2', { 't-2': 'admin' }))
      .thenThrows(NotFound);
  });

  it('updates only what changes; enabling without a secret is refused; giving the secret enables', () => {
    spec
      .given([created('w')])
      .when({ type: 'UpdateWebhook', data: { uid: 'w', changes: { name: 'w' } } })
      .thenNothingHappened();
    const awaiting = created('w', { auth_mode: 'signature', signature_scheme: 'vercel', secret: null, enabled: false });
    spec
      .given([awaiting])
      .when({ type: 'UpdateWebhook', data: { uid: 'w', changes: { enabled: true } } })
      .thenThrows(Conflict);
    spec
      .given([awaiting])
      .when({ type: 'UpdateWebhook', data: { uid: 'w', changes: {}, secret: { sealed: 's' } } })
      .then([
        { type: 'WebhookSecretRotated', data: { secret: { sealed: 's' } } },
        { type: 'WebhookUpdated', data: { changes: { enabled: true } } },
      ]);
  });

  it('rotates, deletes, and treats a deleted webhook as missing', () => {
    spec
      .given([created('w')])
      .when({ type: 'RotateWebhookSecret', data: { uid: 'w', secret: { sealed: 'new' } } })
      .then([{ type: 'WebhookSecretRotated', data: { secret: { sealed: 'new' } } }]);
    const deleted: WebhookEvent = { type: 'WebhookDeleted', data: { uid: 'w', factory_uid: 'f-1', name: 'w' } };
    spec
      .given([created('w'), deleted])
      .when({ type: 'DeleteWebhook', data: { uid: 'w' } })
      .thenThrows(NotFound);
    spec
      .given([created('w')])
      .when(createCommand('w'))
      .thenThrows(Conflict);
  });
});

describe('secret sealing and header rules', () => {
  it('seals with AES-256-GCM: opens with the key, not with another, never equal twice', () => {
    const s = sealer(Buffer.alloc(32, 1));
    const a = s.seal('top secret');
    expect(a).not.toContain('top secret');
    expect(s.seal('top secret')).not.toBe(a);
    expect(s.open(a)).toBe('top secret');
    expect(sealer(Buffer.alloc(32, 2)).open(a)).toBeNull();
    expect(s.open(`${a.slice(0, -2)}AA`)).toBeNull();
    expect(s.open('garbage')).toBeNull();
  });

  it('delivery ID headers: valid names only, never credentials', () => {
    expect(deliveryIdHeaderError('X-Event-Id')).toBeNull();
    expect(deliveryIdHeaderError('X-GitHub-Delivery')).toBeNull();
    for (const bad of [
      '',
      'has space',
      'x:y',
      'Authorization',
      'COOKIE',
      'Stripe-Signature',
      'X-Hub-Signature-256',
      'webhook-signature',
      'X-Api-Key',
      'x-gitlab-token',
      'a'.repeat(101),
    ]) {
      expect(deliveryIdHeaderError(bad), bad).not.toBeNull();
    }
  });
});
