/** GET /agent/connected-self-hosted-workers: the live workers of the caller's team. */
import { activeTeam } from '../../src/http/auth.js';
import type { Runtime } from '../../src/runtime.js';
import { workersOf } from './presence.js';
import type { Api } from '../../src/http/api.js';

export default function workerQueries(api: Api, rt: Runtime): void {
  api.get('/agent/connected-self-hosted-workers', { schema: { tags: ['workers'] } }, async (req) => {
    const team = activeTeam(req).uid;
    const { registry, ready } = workersOf(rt);
    await ready;
    const workers = registry
      .liveWorkers(team)
      .sort((a, b) => a.connected_at.localeCompare(b.connected_at) || a.worker_id.localeCompare(b.worker_id))
      .map((w) => ({
        worker_id: w.worker_id,
        host: w.host,
        capabilities: w.capabilities,
        agent_uid: w.agent_uid,
        connected_at: w.connected_at,
        last_heartbeat_at: w.last_heartbeat_at,
        runs: registry
          .heldBy(team, w.worker_id)
          .map(({ run_id, execution_id, state }) => ({ run_id, execution_id, state })),
      }));
    return { workers };
  });
}
