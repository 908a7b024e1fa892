/** What the ingress knows of a webhook: folded from its factory's webhook stream, so a rotation or a disable counts at once. */
import type { Runtime } from '../../../src/runtime.js';
import { type WebhookState, webhooksDecider } from '../webhooks-decider.js';
import { webhooksStream } from '../events.js';
import { sealerFor } from '../../../src/sealing.js';
import { teamSecretsDecider } from '../../secret/public.js';
import { teamSecretsStream } from '../../secret/events.js';
import { own } from '../../../src/own-keys.js';

export async function webhookState(rt: Runtime, factoryUid: string, uid: string): Promise<WebhookState | null> {
  const { webhooks } = await rt.state(webhooksDecider, webhooksStream(factoryUid));
  return own(webhooks, uid) ?? null;
}

/** The clear secret, or null when there is none (awaiting the provider's, or a deleted team secret). */
export async function resolveWebhookSecret(rt: Runtime, webhook: WebhookState): Promise<string | null> {
  const ref = webhook.secret;
  if (ref === null) return null;
  const sealer = sealerFor(rt.config);
  if ('sealed' in ref) return sealer.open(ref.sealed);
  const secrets = await rt.state(teamSecretsDecider, teamSecretsStream(webhook.team_uid));
  const stored = own(secrets.secrets, ref.team_secret);
  return stored ? sealer.open(stored.sealed) : null;
}
