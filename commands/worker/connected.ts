/** GET /agent/connected-self-hosted-workers: the live workers of the caller's team. */
import { z } from 'zod';
import { activeTeam } from '../../src/http/auth.js';
import type { Runtime } from '../../src/runtime.js';
import { workersOf } from './presence.js';
import type { Api } from '../../src/http/api.js';

const connectedWorker = z.object({
  worker_id: z.string(),
  host: z.string(),
  capabilities: z.array(z.string()),
  agent_uid: z.string().describe('The agent whose API key announced the worker'),
  connected_at: z.string(),
  last_heartbeat_at: z.string().describe('Its last request of any kind'),
  runs: z
    .array(
      z.object({ run_id: z.string(), execution_id: z.string(), state: z.enum(['PENDING', 'CLAIMED', 'INPROGRESS']) }),
    )
    .describe('The runs it holds'),
});

const connectedWorkers = z.object({
  workers: z.array(connectedWorker).describe('Oldest connection first'),
});

export default function workerQueries(api: Api, rt: Runtime): void {
  const schema = { response: { 200: connectedWorkers }, tags: ['workers'] };
  api.get('/agent/connected-self-hosted-workers', { schema }, async (req) => {
    const team = activeTeam(req).uid;
    const { registry, presences, ready } = workersOf(rt);
    await ready;
    // Presence is the store's: workers connected through any process are listed.
    const workers = (await presences.live(team)).map(
      (w): z.infer<typeof connectedWorker> => ({
        worker_id: w.worker_id,
        host: w.host,
        capabilities: w.capabilities,
        agent_uid: w.agent_uid,
        connected_at: w.connected_at,
        last_heartbeat_at: w.last_heartbeat_at,
        runs: registry
          .heldBy(team, w.worker_id)
          .map(({ run_id, execution_id, state }) => ({ run_id, execution_id, state })),
      }),
    );
    return { workers };
  });
}
