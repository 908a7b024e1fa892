/** Each factory's notification routes, as last set. */
import { projection } from '../../src/projector/projection.js';
import type { InboxRoute, InboxRoutesEvent } from '../../commands/inbox/events.js';

export interface InboxRoutesDoc {
  [field: string]: unknown;
  factory_uid: string;
  team_uid: string;
  routes: InboxRoute[];
  updated_at: string;
}

export const inboxRoutesProjection = projection<InboxRoutesEvent, InboxRoutesDoc>({
  name: 'inbox_routes',
  version: 1,
  indexes: [],
  on: {
    InboxRoutesSet: (e, docs) => docs.put(e.data.factory_uid, { ...e.data, updated_at: e.metadata.occurred_at }),
  },
});
