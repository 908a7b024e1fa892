/** Self-hosted workers: presence, claims and leases, and the reports of the runs they execute. */
import { feature } from '../../src/feature.js';
import workerQueries from './connected.js';
import { startWorkers } from './presence.js';
import workerRoutes from './routes.js';

export const workerFeature = feature({
  name: 'worker',
  routes: [workerRoutes, workerQueries],
  services: [startWorkers],
});
