import type { FastifyRequest } from 'fastify';
import type { CommandContext } from '../kernel/handle.js';
import { Unauthorized } from '../kernel/errors.js';
import './principal.js';

/** The event metadata and decision context of a command sent by this request. */
export function commandContext(req: FastifyRequest): CommandContext {
  const principal = req.principal;
  if (!principal) throw new Unauthorized();
  const correlation = req.headers['x-correlation-id'];
  return {
    now: req.now,
    actor: { type: principal.type, uid: principal.uid },
    teams: Object.fromEntries(principal.teams),
    team_uid: req.team?.uid ?? null,
    correlation_id: typeof correlation === 'string' && correlation ? correlation.slice(0, 128) : req.id,
    causation_id: null,
    request_id: req.id,
  };
}
