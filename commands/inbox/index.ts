/** The factory inbox: notifications raised and cleared from events, read and unread by their recipients. */
import { inboxStreamEvents } from './stream-events.js';
import { feature } from '../../src/feature.js';
import { inboxEntriesProjection } from '../../projections/inbox/inbox-entries.js';
import { inboxNotificationsProjection } from '../../projections/inbox/inbox-notifications.js';
import { inboxRoutesProjection } from '../../projections/inbox/inbox-routes.js';
import inboxQueries from '../../queries/inbox/inbox.js';
import { inboxReactor } from './inbox-reactor.js';
import inboxRoutesOf from './routes.js';

export const inboxFeature = feature({
  name: 'inbox',
  streamEvents: [inboxStreamEvents],
  routes: [inboxRoutesOf, inboxQueries],
  projections: [inboxNotificationsProjection, inboxEntriesProjection, inboxRoutesProjection],
  reactors: [inboxReactor],
});
