/** What the ingress knows of a webhook: folded from its factory's webhook stream, so a rotation or a disable counts at once. */
import { fold } from '../kernel/decider.js';
import type { Runtime } from '../runtime.js';
import { type WebhookState, webhooksDecider } from '../../commands/webhook/decider.js';
import { type WebhookEvent, webhooksStream } from '../../commands/webhook/events.js';
import { sealerFor } from '../../commands/secret/sealing.js';
import { teamSecretsDecider } from '../../commands/secret/decider.js';
import { type TeamSecretEvent, teamSecretsStream } from '../../commands/secret/events.js';

export async function webhookState(rt: Runtime, factoryUid: string, uid: string): Promise<WebhookState | null> {
  const events = (await rt.events.readStream(webhooksStream(factoryUid))) as unknown as WebhookEvent[];
  return fold(webhooksDecider, events).webhooks[uid] ?? null;
}

/** The clear secret, or null when there is none (awaiting the provider's, or a deleted team secret). */
export async function resolveWebhookSecret(rt: Runtime, webhook: WebhookState): Promise<string | null> {
  const ref = webhook.secret;
  if (ref === null) return null;
  const sealer = sealerFor(rt.config);
  if ('sealed' in ref) return sealer.open(ref.sealed);
  const secrets = fold(teamSecretsDecider, (await rt.events.readStream(teamSecretsStream(webhook.team_uid))) as unknown as TeamSecretEvent[]);
  const stored = secrets.secrets[ref.team_secret];
  return stored ? sealer.open(stored.sealed) : null;
}
