/** GET /agent/models: the catalogue's models, its default, and what each costs. */
import type { Api } from '../../src/http/api.js';
import type { Runtime } from '../../src/runtime.js';
import { modelListResource } from '../../commands/model/public.js';
import { CATALOGUE_ID, modelsProjection } from '../../projections/model/models.js';

export default function modelQueries(api: Api, rt: Runtime): void {
  const models = rt.readModel(modelsProjection);
  api.get('/agent/models', { schema: { response: { 200: modelListResource }, tags: ['models'] } }, async () => {
    const catalogue = (await models.get(CATALOGUE_ID))!;
    return {
      default_model_id: catalogue.default_model_id,
      models: catalogue.models,
      ...(catalogue.rates ? { rates: catalogue.rates } : {}),
    };
  });
}
