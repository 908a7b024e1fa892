/** The automation as the API answers it, and how one is found under its factory. */
import { z } from 'zod';
import { uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Collection } from '../../src/readstore/port.js';
import type { AutomationDoc } from '../../projections/automations.js';

export const toAutomationResource = (a: AutomationDoc) => ({
  id: a.id,
  factory_uid: a.factory_uid,
  name: a.name,
  prompt: a.prompt,
  agent: a.agent,
  enabled: a.enabled,
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
  if (automation?.kind !== 'automation' || automation.factory_uid !== factoryUid) throw new NotFound('automation', id);
  return automation;
}

export const automationParams = z.object({ uid: uidParam, id: uidParam });

export const MAX_AUTOMATIONS_PER_FACTORY = 100;
