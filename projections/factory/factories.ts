/** Live factories with their foreman; a deleted factory leaves the list at once. */
import { projection } from '../../src/projector/projection.js';
import type { FactoryEvent, Repository } from '../../commands/factory/events.js';
import type { IdentityEvent } from '../../commands/identity/events.js';
import type { DefinitionEvent } from '../../commands/branch/events.js';

export interface FactoryDoc {
  [field: string]: unknown;
  uid: string;
  team_uid: string;
  name: string;
  alias: string | null;
  description: string | null;
  repositories: Repository[];
  /** The newest FOREMAN agent linked to the factory, if any. */
  foreman_uid: string | null;
  creator: { uid: string };
  /** The definition version in force, when one was applied (absent on documents made before). */
  definition?: { version: number; state: 'applying' | 'applied'; branch_uid: string; applied_at: string };
  created_at: string;
  updated_at: string;
}

export const factoriesProjection = projection<FactoryEvent | IdentityEvent | DefinitionEvent, FactoryDoc>({
  name: 'factories',
  version: 1,
  indexes: [['team_uid', 'name']],
  on: {
    FactoryCreated: (e, docs) =>
      docs.put(e.data.uid, {
        ...e.data,
        foreman_uid: null,
        creator: { uid: e.metadata.actor.uid },
        created_at: e.metadata.occurred_at,
        updated_at: e.metadata.occurred_at,
      } satisfies FactoryDoc),
    FactoryUpdated: (e, docs) => docs.patch(e.data.uid, { ...e.data.changes, updated_at: e.metadata.occurred_at }),
    FactoryDeleted: (e, docs) => docs.delete(e.data.uid),
    AgentIdentityCreated: (e, docs) => {
      const { profile } = e.data;
      if (profile.agent_type === 'FOREMAN' && profile.factory_uid)
        docs.patch(profile.factory_uid, { foreman_uid: e.data.uid });
    },
    FactoryDefinitionApplied: (e, docs) =>
      docs.patch(e.data.factory_uid, {
        definition: {
          version: e.data.version,
          state: 'applying',
          branch_uid: e.data.branch_uid,
          applied_at: e.metadata.occurred_at,
        },
      }),
    FactoryDefinitionCompleted: async (e, docs) => {
      const factory = await docs.get(e.data.factory_uid);
      if (factory?.definition?.version === e.data.version)
        docs.patch(e.data.factory_uid, { definition: { ...factory.definition, state: 'applied' } });
    },
  },
});
