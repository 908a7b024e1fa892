/** Agent identities of every team, as the identity endpoints return them. */
import { projection } from '../../src/projector/projection.js';
import type { AgentProfile, IdentityEvent } from '../../commands/identity/events.js';

/** The agent's profile as last set (fields never set are absent), with its team and times. */
export interface IdentityDoc extends AgentProfile {
  [field: string]: unknown;
  uid: string;
  team_uid: string;
  factory_uid: string | null;
  created_at: string;
  updated_at: string;
}

export const identitiesProjection = projection<IdentityEvent, IdentityDoc>({
  name: 'identities',
  version: 1,
  indexes: [['team_uid', 'created_at'], ['factory_uid']],
  on: {
    AgentIdentityCreated: (e, docs) =>
      docs.put(e.data.uid, {
        factory_uid: null,
        ...e.data.profile,
        uid: e.data.uid,
        team_uid: e.data.team_uid,
        created_at: e.metadata.occurred_at,
        updated_at: e.metadata.occurred_at,
      } satisfies IdentityDoc),
    AgentIdentityUpdated: (e, docs) =>
      docs.patch(e.data.uid, { ...e.data.changes, updated_at: e.metadata.occurred_at }),
    AgentIdentityDeleted: (e, docs) => docs.delete(e.data.uid),
  },
});
