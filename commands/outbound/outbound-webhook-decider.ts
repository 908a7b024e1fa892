/**
 * The rules of a team's outbound webhook endpoints: team admins manage them (at most 20 a team);
 * the dispatcher reports each endpoint's health, and one that failed every attempt for the
 * disable window is disabled.
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Forbidden, LimitExceeded, NotFound } from '../../src/kernel/errors.js';
import { MAX_ENDPOINTS_PER_TEAM, type OutboundWebhookEvent, type OutboundWebhookFields } from './events.js';
import { own } from '../../src/own-keys.js';

interface Endpoint extends OutboundWebhookFields {
  uid: string;
  team_uid: string;
  secret: string;
  owner_uid: string;
  created_at: string;
  failing_since: string | null;
  /** Why the server disabled it; null while enabled, or when a person disabled it. */
  disabled_reason: string | null;
}

export type OutboundWebhooksState = { endpoints: Record<string, Endpoint> };

export type OutboundWebhookCommand =
  | {
      type: 'CreateOutboundWebhook';
      data: OutboundWebhookFields & { uid: string; team_uid: string; secret: string };
    }
  | { type: 'UpdateOutboundWebhook'; data: { uid: string; team_uid: string; changes: Partial<OutboundWebhookFields> } }
  | { type: 'RotateOutboundWebhookSecret'; data: { uid: string; team_uid: string; secret: string } }
  | { type: 'DeleteOutboundWebhook'; data: { uid: string; team_uid: string } }
  /**
   * The dispatcher's report of one attempt (made `at`); `disable_after_ms` is the configured
   * disable window; `gave_up_since` is set when the attempt was a delivery's last (its retries ran
   * out), to when that delivery was first attempted.
   */
  | {
      type: 'RecordEndpointHealth';
      data: {
        uid: string;
        team_uid: string;
        ok: boolean;
        at: string;
        disable_after_ms: number;
        gave_up_since: string | null;
      };
    };

/** A user admin of the team manages its endpoints; other members see them; others do not know them. */
export function assertAdmin(team: string, context: DecideContext): void {
  const role = own(context.teams, team);
  if (!role) throw new NotFound('team', team);
  if (context.actor.type !== 'user' || role !== 'admin')
    throw new Forbidden('only team admins manage outbound webhooks');
}

function endpointOf(state: OutboundWebhooksState, uid: string): Endpoint {
  const e = own(state.endpoints, uid);
  if (!e) throw new NotFound('outbound webhook', uid);
  return e;
}

export const outboundWebhookDecider: Decider<OutboundWebhookCommand, OutboundWebhookEvent, OutboundWebhooksState> = {
  initialState: () => ({ endpoints: {} }),

  evolve: (state, event) => {
    const d = event.data;
    const e = own(state.endpoints, d.uid);
    const set = (endpoint: Endpoint | null) => {
      const { [d.uid]: _gone, ...rest } = state.endpoints;
      return { endpoints: endpoint ? { ...rest, [d.uid]: endpoint } : rest };
    };
    switch (event.type) {
      case 'OutboundWebhookCreated': {
        const { uid, team_uid, url, description, event_types, enabled, secret, owner_uid, created_at } = event.data;
        return set({
          uid,
          team_uid,
          url,
          description,
          event_types,
          enabled,
          secret,
          owner_uid,
          created_at,
          failing_since: null,
          disabled_reason: null,
        });
      }
      case 'OutboundWebhookUpdated': {
        if (!e) return state;
        const { changes } = event.data;
        const reenabled = changes.enabled === true && !e.enabled;
        return set({
          ...e,
          ...changes,
          ...(reenabled ? { failing_since: null } : {}),
          ...(changes.enabled !== undefined ? { disabled_reason: null } : {}),
        });
      }
      case 'OutboundWebhookSecretRotated':
        return e ? set({ ...e, secret: event.data.secret }) : state;
      case 'OutboundWebhookDeleted':
        return set(null);
      case 'OutboundWebhookFailing':
        return e ? set({ ...e, failing_since: event.data.since }) : state;
      case 'OutboundWebhookRecovered':
        return e ? set({ ...e, failing_since: null }) : state;
      case 'OutboundWebhookDisabled':
        return e ? set({ ...e, enabled: false, disabled_reason: event.data.reason }) : state;
    }
  },

  decide: (command, state, context) => {
    const { uid, team_uid } = command.data;
    switch (command.type) {
      case 'CreateOutboundWebhook': {
        assertAdmin(team_uid, context);
        if (Object.keys(state.endpoints).length >= MAX_ENDPOINTS_PER_TEAM)
          throw new LimitExceeded(`a team has at most ${MAX_ENDPOINTS_PER_TEAM} outbound webhooks`);
        return [
          {
            type: 'OutboundWebhookCreated',
            data: { ...command.data, owner_uid: context.actor.uid, created_at: context.now },
          },
        ];
      }
      case 'UpdateOutboundWebhook': {
        assertAdmin(team_uid, context);
        const e = endpointOf(state, uid);
        const current: Record<string, unknown> = { ...e };
        const changes = Object.fromEntries(
          Object.entries(command.data.changes).filter(
            ([k, v]) => JSON.stringify(v) !== JSON.stringify(own(current, k)),
          ),
        );
        return Object.keys(changes).length
          ? [{ type: 'OutboundWebhookUpdated', data: { uid, team_uid, changes } }]
          : [];
      }
      case 'RotateOutboundWebhookSecret':
        assertAdmin(team_uid, context);
        endpointOf(state, uid);
        return [{ type: 'OutboundWebhookSecretRotated', data: { uid, team_uid, secret: command.data.secret } }];
      case 'DeleteOutboundWebhook':
        assertAdmin(team_uid, context);
        endpointOf(state, uid);
        return [{ type: 'OutboundWebhookDeleted', data: { uid, team_uid } }];
      case 'RecordEndpointHealth': {
        const e = own(state.endpoints, uid);
        if (!e) return [];

        const { ok, at, disable_after_ms, gave_up_since } = command.data;
        if (ok) return e.failing_since ? [{ type: 'OutboundWebhookRecovered', data: { uid, team_uid } }] : [];
        if (!e.failing_since) return [{ type: 'OutboundWebhookFailing', data: { uid, team_uid, since: at } }];
        const failedFor = Date.parse(at) - Date.parse(e.failing_since);
        // Failing all along: for the whole window, or for every retry of a delivery that gave up.
        const throughout =
          failedFor >= disable_after_ms || (gave_up_since !== null && e.failing_since <= gave_up_since);
        if (!e.enabled || !throughout) return [];
        const hours = Math.round((failedFor / 3_600_000) * 10) / 10;
        return [
          {
            type: 'OutboundWebhookDisabled',
            data: {
              uid,
              team_uid,
              failing_since: e.failing_since,
              reason: `every delivery attempt failed for ${hours} hours`,
            },
          },
        ];
      }
    }
  },
};
