import type { FastifyRequest } from 'fastify';
import { activeTeam } from '../../src/http/auth.js';
import { Forbidden } from '../../src/kernel/errors.js';

/** The team and agent of a worker's request: workers act for their team, so user keys are refused. */
export function workerPrincipal(req: FastifyRequest): { team_uid: string; agent_uid: string } {
  if (req.principal?.type !== 'agent') throw new Forbidden('the worker API takes an agent API key');
  return { team_uid: activeTeam(req).uid, agent_uid: req.principal.uid };
}
