/** Who a worker's request comes from: its team and agent, its announced worker, the worker side. */
import type { FastifyRequest } from 'fastify';
import { activeTeam } from '../../src/http/auth.js';
import { Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import type { PresenceDoc } from './presence-store.js';
import { type Workers, workersOf } from './presence.js';

/** The team and agent of a worker's request: workers act for their team, so user keys are refused. */
export function workerPrincipal(req: FastifyRequest): { team_uid: string; agent_uid: string } {
  if (req.principal?.type !== 'agent') throw new Forbidden('the worker API takes an agent API key');
  return { team_uid: activeTeam(req).uid, agent_uid: req.principal.uid };
}

export async function workersReady(rt: Runtime): Promise<Workers> {
  const workers = workersOf(rt);
  await workers.ready;
  return workers;
}

/**
 * The announced worker of the caller's team, or 404 (announce again). Announced through any
 * process of the store: presence is kept in the read store.
 */
export async function presentWorker(workers: Workers, req: FastifyRequest, workerId: string): Promise<PresenceDoc> {
  const { team_uid } = workerPrincipal(req);
  const worker = await workers.presences.get(team_uid, workerId);
  if (!worker || workers.presences.isGone(worker)) throw new NotFound('worker', workerId);
  workers.presences.touch(team_uid, workerId);
  return worker;
}
