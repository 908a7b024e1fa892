/** GET /factory/{uid}/automations and GET /factory/{uid}/automations/{id}. */
import { z } from 'zod';
import type { Api } from '../src/http/app.js';
import { uidParam } from '../src/http/schemas.js';
import { NotFound } from '../src/kernel/errors.js';
import type { Collection } from '../src/readstore/port.js';
import type { Runtime } from '../src/runtime.js';
import { MAX_AUTOMATIONS_PER_FACTORY } from '../commands/automation/decider.js';
import { type AutomationDoc, automationsProjection } from '../projections/automations.js';
import { factoriesProjection, type FactoryDoc } from '../projections/factories.js';
import { visibleFactory } from './factories.js';

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
export async function automationOf(automations: Collection<AutomationDoc>, factoryUid: string, id: string): Promise<AutomationDoc> {
  const automation = await automations.get(id);
  if (!automation || automation.kind !== 'automation' || automation.factory_uid !== factoryUid) throw new NotFound('automation', id);
  return automation;
}

export const automationParams = z.object({ uid: uidParam, id: uidParam });

export default function automationQueries(api: Api, rt: Runtime): void {
  const factories = rt.readModel<FactoryDoc>(factoriesProjection);
  const automations = rt.readModel<AutomationDoc>(automationsProjection);

  api.get('/factory/:uid/automations', { schema: { params: z.object({ uid: uidParam }), tags: ['automations'] } }, async (req) => {
    const factory = await visibleFactory(factories, req, req.params.uid);
    // A factory has at most MAX_AUTOMATIONS_PER_FACTORY automations: one page holds them all.
    const page = await automations.find({
      filter: { kind: 'automation', factory_uid: factory.uid },
      sort: [['name', 'asc'], ['id', 'asc']],
      limit: MAX_AUTOMATIONS_PER_FACTORY,
    });
    return { automations: page.items.map(toAutomationResource) };
  });

  api.get('/factory/:uid/automations/:id', { schema: { params: automationParams, tags: ['automations'] } }, async (req) => {
    const factory = await visibleFactory(factories, req, req.params.uid);
    return toAutomationResource(await automationOf(automations, factory.uid, req.params.id));
  });
}
