/** The model catalogue: which models runs may use, the default, and their prices. */
import { feature } from '../../src/feature.js';
import { timeOrderedId } from '../../src/ids.js';
import { modelsProjection } from '../../projections/model/models.js';
import modelQueries from '../../queries/model/models.js';
import { loadCatalogue, SHIPPED_CATALOGUE } from './catalogue-file.js';
import { modelDecider } from './model-decider.js';
import { MODELS_STREAM } from './events.js';

export const modelFeature = feature({
  name: 'model',
  routes: [modelQueries],
  projections: [modelsProjection],
  /** The configured catalogue becomes the one in force (an event, only when it changed). */
  async start(rt) {
    const catalogue = loadCatalogue(rt.config.MODELS_FILE ?? SHIPPED_CATALOGUE);
    await rt.execute(
      MODELS_STREAM,
      modelDecider,
      { type: 'ConfigureCatalogue', data: catalogue },
      {
        now: rt.clock.now().toISOString(),
        actor: { type: 'system', uid: 'models-file' },
        teams: {},
        team_uid: null,
        correlation_id: timeOrderedId(),
        causation_id: null,
        request_id: null,
      },
    );
  },
});
