/**
 * The automations of one factory, decided on one stream. The webhooks a trigger may name come
 * in with the command, folded from the factory's webhook stream by the caller: a trigger names a
 * live webhook of the same factory, or one it already named (a deleted webhook's trigger stays).
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import {
  Conflict,
  type FieldError,
  Forbidden,
  InvalidRequest,
  LimitExceeded,
  NotFound,
} from '../../src/kernel/errors.js';
import { recurrenceProblem } from '../schedule/public.js';
import type { AutomationEvent, AutomationFields, Trigger } from './events.js';
import { webhookOf } from './events.js';
import { MAX_AUTOMATIONS_PER_FACTORY } from './resource.js';
import { own, ownsKey, putOwn } from '../../src/own-keys.js';

/** The factory's webhooks as its stream says: live or deleted; an unknown uid is absent. */
export type WebhookStatuses = Readonly<Record<string, 'live' | 'deleted'>>;

type Target = { id: string; factory_uid: string; team_uid: string };

export type AutomationCommand =
  | { type: 'CreateAutomation'; data: Target & AutomationFields; webhooks: WebhookStatuses }
  | { type: 'UpdateAutomation'; data: Target & { changes: Partial<AutomationFields> }; webhooks: WebhookStatuses }
  | { type: 'DeleteAutomation'; data: Target };

export type Automation = AutomationFields & { id: string; factory_uid: string; team_uid: string };

export type AutomationsState = { automations: Record<string, Automation>; deleted: string[] };

function authorize(team_uid: string, factory_uid: string, context: DecideContext): void {
  if (!ownsKey(context.teams, team_uid)) throw new NotFound('factory', factory_uid);
  if (context.actor.type !== 'user') throw new Forbidden('only users can manage automations');
}

function live(state: AutomationsState, id: string): Automation {
  const automation = own(state.automations, id);
  if (!automation) throw new NotFound('automation', id);
  return automation;
}

/** A webhook trigger must name a live webhook of this factory, unless the automation already named it. */
function checkWebhooks(
  fields: Partial<AutomationFields>,
  webhooks: WebhookStatuses,
  already: ReadonlySet<string>,
): void {
  const errors: FieldError[] = [];
  (fields.triggers ?? []).forEach((t, i) => {
    const uid = webhookOf(t);
    if (uid !== null && own(webhooks, uid) !== 'live' && !already.has(uid)) {
      errors.push({ path: `body.triggers.${i}.filter.webhook_ids.0`, message: `no webhook ${uid} in this factory` });
    }
  });
  if (errors.length) throw new InvalidRequest('a webhook trigger names a webhook this factory does not have', errors);
}

/**
 * An inline schedule's cron being set must fall due within five years, as a scheduled agent's
 * must (its schedule decider refuses it otherwise); a trigger kept as it was is not asked again.
 */
function checkSchedules(fields: Partial<AutomationFields>, before: readonly Trigger[], now: string): void {
  const kept = new Set(before.map((t) => JSON.stringify(t.schedule ?? null)));
  const errors: FieldError[] = [];
  (fields.triggers ?? []).forEach((t, i) => {
    if (!t.schedule || kept.has(JSON.stringify(t.schedule))) return;
    const problem = recurrenceProblem({ cron: t.schedule.cron }, new Date(now));
    if (problem) errors.push({ path: `body.triggers.${i}.schedule.cron`, message: problem });
  });
  if (errors.length) throw new InvalidRequest('a schedule trigger is not valid', errors);
}

export const automationsDecider: Decider<AutomationCommand, AutomationEvent, AutomationsState> = {
  initialState: () => ({ automations: {}, deleted: [] }),

  evolve: (state, event) => {
    const automations = { ...state.automations };
    switch (event.type) {
      case 'AutomationCreated':
        putOwn(automations, event.data.id, event.data);
        return { ...state, automations };
      case 'AutomationUpdated': {
        const current = own(automations, event.data.id);
        if (current) putOwn(automations, event.data.id, { ...current, ...event.data.changes });
        return { ...state, automations };
      }
      case 'AutomationDeleted':
        delete automations[event.data.id];
        return { automations, deleted: [...state.deleted, event.data.id] };
    }
  },

  decide: (command, state, context) => {
    const { id, factory_uid, team_uid } = command.data;
    authorize(team_uid, factory_uid, context);
    switch (command.type) {
      case 'CreateAutomation': {
        if (ownsKey(state.automations, id) || state.deleted.includes(id)) throw new Conflict(`automation ${id} exists`);
        if (Object.keys(state.automations).length >= MAX_AUTOMATIONS_PER_FACTORY) {
          throw new LimitExceeded(`a factory has at most ${MAX_AUTOMATIONS_PER_FACTORY} automations`);
        }
        checkWebhooks(command.data, command.webhooks, new Set());
        checkSchedules(command.data, [], context.now);
        return [{ type: 'AutomationCreated', data: command.data }];
      }
      case 'UpdateAutomation': {
        const automation = live(state, id);
        checkWebhooks(
          command.data.changes,
          command.webhooks,
          new Set(automation.triggers.map(webhookOf).filter((u) => u !== null)),
        );
        checkSchedules(command.data.changes, automation.triggers, context.now);
        const changes = Object.fromEntries(
          Object.entries(command.data.changes).filter(
            ([k, v]) =>
              v !== undefined && JSON.stringify(v) !== JSON.stringify(automation[k as keyof AutomationFields]),
          ),
        );
        return Object.keys(changes).length ? [{ type: 'AutomationUpdated', data: { id, factory_uid, changes } }] : [];
      }
      case 'DeleteAutomation':
        live(state, id);
        return [{ type: 'AutomationDeleted', data: { id, factory_uid } }];
    }
  },
};
