/** The catalogue changes only when the configured one differs from the one in force. */
import type { Decider } from '../../src/kernel/decider.js';
import { InvalidRequest } from '../../src/kernel/errors.js';
import type { Catalogue, ModelEvent } from './events.js';

export type ModelCommand = { type: 'ConfigureCatalogue'; data: Catalogue };

export type CatalogueState = { catalogue: Catalogue | null };

export const modelDecider: Decider<ModelCommand, ModelEvent, CatalogueState> = {
  initialState: () => ({ catalogue: null }),
  evolve: (_state, event) => ({ catalogue: event.data }),
  decide: (command, state) =>
    JSON.stringify(command.data) === JSON.stringify(state.catalogue)
      ? []
      : [{ type: 'ModelCatalogueChanged', data: command.data }],
};

/** A run or schedule may name only a model of the catalogue that is not disabled. */
export function assertUsableModel(state: CatalogueState, modelId: string | undefined, path: string): void {
  if (modelId === undefined || !state.catalogue) return;
  const model = state.catalogue.models.find((m) => m.id === modelId);
  const problem = !model
    ? `unknown model ${modelId} (GET /agent/models lists them)`
    : model.disable_reason
      ? `model ${modelId} is disabled (${model.disable_reason})`
      : null;
  if (problem) throw new InvalidRequest(problem, [{ path, message: problem }]);
}
