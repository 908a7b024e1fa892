/** Scheduled agents: runs started on a cron line or an RFC 5545 recurrence, each due time once. */
import { scheduleStreamEvents } from './stream-events.js';
import { feature } from '../../src/feature.js';
import { schedulesProjection } from '../../projections/schedule/schedules.js';
import scheduleQueries from '../../queries/schedule/schedules.js';
import { scheduledRunsReactor } from './scheduled-runs-reactor.js';
import scheduleRoutes from './routes.js';
import { startScheduler } from './scheduler.js';

export const scheduleFeature = feature({
  name: 'schedule',
  streamEvents: [scheduleStreamEvents],
  routes: [scheduleRoutes, scheduleQueries],
  projections: [schedulesProjection],
  reactors: [scheduledRunsReactor],
  services: [startScheduler],
});
