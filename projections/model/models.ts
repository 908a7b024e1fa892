/** The model catalogue in force: one document. */
import { projection } from '../../src/projector/projection.js';
import type { Catalogue, ModelEvent } from '../../commands/model/events.js';

export const CATALOGUE_ID = 'catalogue';

export type CatalogueDoc = Catalogue & { [field: string]: unknown; changed_at: string };

export const modelsProjection = projection<ModelEvent, CatalogueDoc>({
  name: 'models',
  version: 1,
  indexes: [],
  on: {
    ModelCatalogueChanged: (e, docs) => docs.put(CATALOGUE_ID, { ...e.data, changed_at: e.metadata.occurred_at }),
  },
});
