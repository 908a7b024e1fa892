/** Agent runs: creation, follow-ups, cancellation, their records, timelines, artifacts and history. */
import { feature } from '../../src/feature.js';
import { artifactsProjection } from '../../projections/run/artifacts.js';
import { runTimelineProjection } from '../../projections/run/run-timeline.js';
import { runsProjection } from '../../projections/run/runs.js';
import artifactQueries from '../../queries/run/artifacts.js';
import { runHistoryRoutes } from '../../queries/run/history.js';
import runQueries from '../../queries/run/runs.js';
import runEventRoutes from '../../queries/run/run-events.js';
import { runDetailEvents } from './run-detail-events.js';
import { runStateEvents } from './stream-events.js';
import { runsCommand } from './follow-cli.js';
import runAttachmentRoutes from './attachments.js';
import runRoutes from './routes.js';

export const runFeature = feature({
  name: 'run',
  routes: [runAttachmentRoutes, runRoutes, runQueries, artifactQueries, runHistoryRoutes, runEventRoutes],
  projections: [runsProjection, runTimelineProjection, artifactsProjection],
  streamEvents: [runStateEvents, runDetailEvents],
  cli: [runsCommand],
});
