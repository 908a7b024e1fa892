/** The automation as the API answers it, and how one is found under its factory. */
import { z } from 'zod';
import { uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Collection } from '../../src/readstore/port.js';
import type { AutomationDoc } from '../../projections/automation/automations.js';

const trigger = z.object({
  provider: z.string().describe('github, gitlab, linear, jira, slack, schedule, factory or webhook'),
  event: z.string().describe("One of the provider's events, such as received for webhook"),
  filter: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("Matchers by filter key (a webhook trigger's webhook_ids is a list of its one webhook UID); null: none"),
  schedule: z.object({ name: z.string().optional(), cron: z.string() }).optional().describe('An inline schedule'),
  active: z.boolean().describe('False once the webhook the trigger listens to is deleted'),
});

export const automationResource = z.object({
  id: z.string(),
  factory_uid: z.string(),
  name: z.string(),
  prompt: z.string(),
  agent: z.string().nullable().describe("The agent identity that runs it; null: the factory's foreman"),
  enabled: z.boolean(),
  requires_approval: z.boolean().describe('Extension (guardrails): its runs wait for a team admin’s approval'),
  triggers: z.array(trigger),
  creator: z.object({ uid: z.string() }),
  created_at: z.string(),
  updated_at: z.string(),
});

export const toAutomationResource = (a: AutomationDoc): z.infer<typeof automationResource> => ({
  id: a.id,
  factory_uid: a.factory_uid,
  name: a.name,
  prompt: a.prompt,
  agent: a.agent,
  enabled: a.enabled,
  requires_approval: a.requires_approval ?? false,
  triggers: a.triggers,
  creator: a.creator,
  created_at: a.created_at,
  updated_at: a.updated_at,
});

/** An automation of this factory, or 404 (also for one of another factory). */
export async function automationOf(
  automations: Collection<AutomationDoc>,
  factoryUid: string,
  id: string,
): Promise<AutomationDoc> {
  const automation = await automations.get(id);
  if (automation?.factory_uid !== factoryUid) throw new NotFound('automation', id);
  return automation;
}

export const automationParams = z.object({ factory_uid: uidParam, automation_id: uidParam });

export const MAX_AUTOMATIONS_PER_FACTORY = 100;
