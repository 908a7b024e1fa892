import { projection } from '../../src/projector/projection.js';
import type { TeamEvent } from '../../commands/team/events.js';

export interface TeamDoc {
  [field: string]: unknown;
  uid: string;
  name: string;
  created_at: string;
}

export const teamsProjection = projection<TeamEvent, TeamDoc>({
  name: 'teams',
  version: 1,
  indexes: [],
  on: {
    TeamCreated: (e, docs) => docs.put(e.data.uid, { ...e.data, created_at: e.metadata.occurred_at } satisfies TeamDoc),
  },
});
