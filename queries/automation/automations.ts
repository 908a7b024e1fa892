/** GET /factory/{factory_uid}/automations and GET /factory/{factory_uid}/automations/{automation_id}. */
import { z } from 'zod';
import { uidParam } from '../../src/http/schemas.js';
import type { Runtime } from '../../src/runtime.js';
import { type AutomationDoc, automationsProjection } from '../../projections/automation/automations.js';
import { factoriesProjection, visibleFactory } from '../../commands/factory/public.js';
import {
  MAX_AUTOMATIONS_PER_FACTORY,
  automationOf,
  automationParams,
  automationResource,
  toAutomationResource,
} from '../../commands/automation/public.js';
import type { Api } from '../../src/http/api.js';

const automationsResponse = z.object({ automations: z.array(automationResource).describe('By name') });

export default function automationQueries(api: Api, rt: Runtime): void {
  const factories = rt.readModel(factoriesProjection);
  const automations = rt.readModel<AutomationDoc>(automationsProjection);
  const tags = ['automations'];

  api.get(
    '/factory/:factory_uid/automations',
    { schema: { params: z.object({ factory_uid: uidParam }), response: { 200: automationsResponse }, tags } },
    async (req) => {
      const factory = await visibleFactory(factories, req, req.params.factory_uid);
      // A factory has at most MAX_AUTOMATIONS_PER_FACTORY automations: one page holds them all.
      const page = await automations.find({
        filter: { factory_uid: factory.uid },
        sort: [
          ['name', 'asc'],
          ['id', 'asc'],
        ],
        limit: MAX_AUTOMATIONS_PER_FACTORY,
      });
      return { automations: page.items.map(toAutomationResource) };
    },
  );

  api.get(
    '/factory/:factory_uid/automations/:automation_id',
    { schema: { params: automationParams, response: { 200: automationResource }, tags } },
    async (req) => {
      const factory = await visibleFactory(factories, req, req.params.factory_uid);
      return toAutomationResource(await automationOf(automations, factory.uid, req.params.automation_id));
    },
  );
}
