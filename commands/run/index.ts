/** Agent runs: creation, follow-ups, cancellation, their records, timelines, artifacts and history. */
import { commandGroup, feature } from '../../src/feature.js';
import { artifactsProjection } from '../../projections/run/artifacts.js';
import { runTimelineProjection } from '../../projections/run/run-timeline.js';
import { runsProjection } from '../../projections/run/runs.js';
import artifactQueries from '../../queries/run/artifacts.js';
import { runHistoryRoutes } from '../../queries/run/history.js';
import runQueries from '../../queries/run/runs.js';
import { runTraceRoutes } from '../../queries/run/trace.js';
import { runsTraceCommand } from '../../queries/run/trace-cli.js';
import runEventRoutes from '../../queries/run/run-events.js';
import { runDetailEvents } from './run-detail-events.js';
import { runApprovalEvents } from './approval-stream-events.js';
import { runStateEvents } from './stream-events.js';
import { runsFollowCommand } from './follow-cli.js';
import runAttachmentRoutes from './attachments.js';
import runRoutes from './routes.js';

export const runFeature = feature({
  name: 'run',
  routes: [
    runAttachmentRoutes,
    runRoutes,
    runQueries,
    artifactQueries,
    runHistoryRoutes,
    runTraceRoutes,
    runEventRoutes,
  ],
  projections: [runsProjection, runTimelineProjection, artifactsProjection],
  streamEvents: [runStateEvents, runDetailEvents, runApprovalEvents],
  cli: [commandGroup('runs', { trace: runsTraceCommand, follow: runsFollowCommand })],
});
