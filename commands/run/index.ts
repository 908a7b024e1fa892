/** Agent runs: creation, follow-ups, cancellation, their records, timelines, artifacts and history. */
import { feature } from '../../src/feature.js';
import { artifactsProjection } from '../../projections/artifacts.js';
import { runTimelineProjection } from '../../projections/run-timeline.js';
import { runsProjection } from '../../projections/runs.js';
import artifactQueries from '../../queries/artifacts.js';
import { runHistoryRoutes } from '../../queries/history.js';
import runQueries from '../../queries/runs.js';
import runAttachmentRoutes from './attachments.js';
import runRoutes from './routes.js';

export const runFeature = feature({
  name: 'run',
  routes: [runAttachmentRoutes, runRoutes, runQueries, artifactQueries, runHistoryRoutes],
  projections: [runsProjection, runTimelineProjection, artifactsProjection],
});
