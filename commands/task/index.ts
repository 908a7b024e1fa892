/** Factory tasks: the work items bound to conversations, dispatch to a foreman, cancel, history. */
import { taskStreamEvents } from './stream-events.js';
import { feature } from '../../src/feature.js';
import { tasksProjection } from '../../projections/task/tasks.js';
import { taskHistoryRoutes } from '../../queries/task/history.js';
import { historyCommand } from '../../queries/task/history-cli.js';
import taskQueries from '../../queries/task/tasks.js';
import { dispatchedTaskReactor, taskCancelReactor } from './task-reactor.js';
import taskRoutes from './routes.js';

export const taskFeature = feature({
  name: 'task',
  streamEvents: [taskStreamEvents],
  routes: [taskRoutes, taskQueries, taskHistoryRoutes],
  projections: [tasksProjection],
  reactors: [dispatchedTaskReactor, taskCancelReactor],
  cli: [historyCommand],
});
