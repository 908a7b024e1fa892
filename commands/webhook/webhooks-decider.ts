/**
 * The webhooks of one factory, decided together on one stream: the 20-per-factory limit holds
 * because every creation appends with the revision it counted on.
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Conflict, Forbidden, LimitExceeded, NotFound } from '../../src/kernel/errors.js';
import type { WebhookCreated, WebhookEvent, WebhookFields, WebhookSecretRef } from './events.js';
import { own, ownsKey, putOwn } from '../../src/own-keys.js';

export const MAX_WEBHOOKS_PER_FACTORY = 20;

export type WebhookCommand =
  | { type: 'CreateWebhook'; data: WebhookCreated['data'] }
  | {
      type: 'UpdateWebhook';
      data: { uid: string; changes: Partial<WebhookFields>; secret?: Exclude<WebhookSecretRef, null> };
    }
  | { type: 'RotateWebhookSecret'; data: { uid: string; secret: Exclude<WebhookSecretRef, null> } }
  | { type: 'DeleteWebhook'; data: { uid: string } };

export type WebhookState = WebhookCreated['data'] & { deleted: boolean };

export type WebhooksState = { webhooks: Record<string, WebhookState>; live: number };

/** A webhook of a team the caller is not in, or a deleted one, does not exist for the caller. */
function visible(state: WebhooksState, uid: string, context: DecideContext): WebhookState {
  const webhook = own(state.webhooks, uid);
  if (!webhook || webhook.deleted || !ownsKey(context.teams, webhook.team_uid)) throw new NotFound('webhook', uid);
  if (context.actor.type !== 'user') throw new Forbidden('only users can manage webhooks');
  return webhook;
}

const changed = (webhook: WebhookState, changes: Partial<WebhookFields>): Partial<WebhookFields> =>
  Object.fromEntries(
    Object.entries(changes).filter(([k, v]) => v !== undefined && webhook[k as keyof WebhookFields] !== v),
  );

export const webhooksDecider: Decider<WebhookCommand, WebhookEvent, WebhooksState> = {
  initialState: () => ({ webhooks: {}, live: 0 }),

  evolve: (state, event) => {
    const webhooks = { ...state.webhooks };
    const current = own(webhooks, event.data.uid);
    switch (event.type) {
      case 'WebhookCreated':
        putOwn(webhooks, event.data.uid, { ...event.data, deleted: false });
        return { webhooks, live: state.live + 1 };
      case 'WebhookUpdated':
        if (current) putOwn(webhooks, event.data.uid, { ...current, ...event.data.changes });
        return { webhooks, live: state.live };
      case 'WebhookSecretRotated':
        if (current) putOwn(webhooks, event.data.uid, { ...current, secret: event.data.secret });
        return { webhooks, live: state.live };
      case 'WebhookDeleted':
        if (current) putOwn(webhooks, event.data.uid, { ...current, deleted: true, enabled: false });
        return { webhooks, live: state.live - 1 };
    }
  },

  decide: (command, state, context) => {
    switch (command.type) {
      case 'CreateWebhook': {
        const data = command.data;
        if (!ownsKey(context.teams, data.team_uid)) throw new NotFound('factory', data.factory_uid);
        if (context.actor.type !== 'user') throw new Forbidden('only users can manage webhooks');
        if (ownsKey(state.webhooks, data.uid)) throw new Conflict(`webhook ${data.uid} exists`);
        if (state.live >= MAX_WEBHOOKS_PER_FACTORY)
          throw new LimitExceeded(`a factory has at most ${MAX_WEBHOOKS_PER_FACTORY} webhooks`);
        // A webhook waiting for its provider's secret cannot take deliveries yet.
        return [{ type: 'WebhookCreated', data: { ...data, enabled: data.enabled && data.secret !== null } }];
      }
      case 'UpdateWebhook': {
        const webhook = visible(state, command.data.uid, context);
        const { secret } = command.data;
        const events: WebhookEvent[] = [];
        const meta = { uid: webhook.uid, factory_uid: webhook.factory_uid };
        if (secret) events.push({ type: 'WebhookSecretRotated', data: { ...meta, name: webhook.name, secret } });
        const hasSecret = secret !== undefined || webhook.secret !== null;
        // Giving the awaited secret finishes the setup: the webhook is enabled unless told otherwise.
        const finishing = webhook.secret === null && secret !== undefined && command.data.changes.enabled === undefined;
        const changes = changed(webhook, finishing ? { ...command.data.changes, enabled: true } : command.data.changes);
        if (changes.enabled && !hasSecret)
          throw new Conflict(
            "this webhook has no secret yet: give the provider's signing secret to enable it",
            'secret_required',
          );
        if (Object.keys(changes).length)
          events.push({ type: 'WebhookUpdated', data: { ...meta, name: changes.name ?? webhook.name, changes } });
        return events;
      }
      case 'RotateWebhookSecret': {
        const webhook = visible(state, command.data.uid, context);
        const meta = { uid: webhook.uid, factory_uid: webhook.factory_uid, name: webhook.name };
        const events: WebhookEvent[] = [
          { type: 'WebhookSecretRotated', data: { ...meta, secret: command.data.secret } },
        ];
        if (webhook.secret === null && !webhook.enabled)
          events.push({ type: 'WebhookUpdated', data: { ...meta, changes: { enabled: true } } });
        return events;
      }
      case 'DeleteWebhook': {
        const webhook = visible(state, command.data.uid, context);
        return [
          { type: 'WebhookDeleted', data: { uid: webhook.uid, factory_uid: webhook.factory_uid, name: webhook.name } },
        ];
      }
    }
  },
};
