/**
 * Automations: what starts factory runs. The automations of one factory share one stream
 * (`automations-<factory_uid>`), so that the reactor reads every automation of a factory, as it
 * stands, from one stream on each delivery, and the per-factory limit is decided on one revision.
 * A replay of a delivery is its own stream (`replay-<replay_id>`): its event is what the runs it
 * starts derive their ids from, so each replay starts runs once.
 */
import type { DeliveryAccepted } from '../webhook/events.js';

/** A trigger as stored: the validated request (webhook_ids normalised to a list of one uid). */
export interface Trigger {
  provider: string;
  event: string;
  filter: Record<string, unknown> | null;
  schedule?: { name?: string; cron: string };
}

export interface AutomationFields {
  name: string;
  prompt: string;
  /** An agent identity uid of the factory's team, or null. */
  agent: string | null;
  enabled: boolean;
  triggers: Trigger[];
}

export type AutomationEvent =
  | { type: 'AutomationCreated'; data: AutomationFields & { id: string; factory_uid: string; team_uid: string } }
  | { type: 'AutomationUpdated'; data: { id: string; factory_uid: string; changes: Partial<AutomationFields> } }
  | { type: 'AutomationDeleted'; data: { id: string; factory_uid: string } };

/** A user asked to evaluate an accepted delivery again against the automations of today. */
export type DeliveryReplayed = {
  type: 'DeliveryReplayed';
  data: DeliveryAccepted['data'] & { replay_id: string };
};

export const automationsStream = (factoryUid: string) => `automations-${factoryUid}`;
export const replayStream = (replayId: string) => `replay-${replayId}`;

/** The webhook a trigger listens to, or null for a trigger of another provider. */
export const webhookOf = (t: Trigger): string | null =>
  t.provider === 'webhook' ? ((t.filter?.webhook_ids as string[] | undefined)?.[0] ?? null) : null;
