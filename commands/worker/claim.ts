/**
 * POST /agent/workers/{worker_id}/claim: a worker claims the oldest queued run of its team, waiting
 * up to `wait_seconds` for one (a long poll). The wait ends at once when the worker hangs up, the
 * server shuts down, or the key it was admitted with stops opening its agent (revoked, expired,
 * the agent deleted): then it answers that 401 and hands out nothing. Before leasing a run it asks
 * the account read models again (past the principal cache), so a run queued after a revocation is
 * never leased to the revoked key, whichever process the claim waits in.
 */
import type { FastifyRequest } from 'fastify';
import { recheckAdmission, watchAdmission } from '../../src/http/auth.js';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import { timeOrderedId } from '../../src/ids.js';
import { Conflict } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import { isTerminal, type RunDoc, runsProjection, runDecider } from '../run/public.js';
import { fairOrder, freeSlots, takeSlots } from '../guardrail/public.js';
import { runStream } from '../run/events.js';
import { type Assignment, assignmentOf } from './assignment.js';
import type { PresenceDoc } from './presence-store.js';
import type { Workers } from './presence.js';
import { presentWorker, workersReady } from './principal.js';
import { claimAnswer } from './answers.js';
import { claimQuery, workerParams } from './schema.js';

/** Oldest first; the id breaks ties. */
const QUEUE_ORDER: Sort = [
  ['created_at', 'asc'],
  ['id', 'asc'],
];
const QUEUE_PAGE = 20;
/** Rounds of looking again when other workers took every run seen (the read model lags a little). */
const MAX_CLAIM_ROUNDS = 10;

export function claimRoute(api: Api, rt: Runtime): void {
  api.post(
    '/agent/workers/:worker_id/claim',
    {
      schema: {
        params: workerParams,
        querystring: claimQuery,
        response: { 200: claimAnswer, 204: noContent('No run came within wait_seconds') },
        tags: ['workers'],
      },
    },
    async (req, reply) => {
      const workers = await workersReady(rt);
      const worker = await presentWorker(workers, req, req.params.worker_id);
      // The worker hung up, or its key stopped opening its agent: stop waiting, and hand it nothing.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const admission = watchAdmission(req);
      const stop = AbortSignal.any([gone.signal, admission.signal]);
      try {
        const run = await claimWithin(rt, workers, { req, worker, stop }, req.query.wait_seconds * 1000);
        // Lapsed even after a lease: the run goes back to the queue when its unacknowledged lease expires.
        if (admission.signal.aborted) throw admission.signal.reason;
        return run ? { run } : reply.code(204).send(null);
      } finally {
        admission.stop();
      }
    },
  );
}

interface Claim {
  req: FastifyRequest;
  worker: PresenceDoc;
  /** Aborted when the claim must hand out nothing more. */
  stop: AbortSignal;
}

/** A run leased within `ms`, or null when none came (or the claim stopped). */
async function claimWithin(rt: Runtime, workers: Workers, claim: Claim, ms: number): Promise<Assignment | null> {
  const { registry, presences } = workers;
  const { team_uid, worker_id } = claim.worker;
  const deadline = Date.now() + ms;
  for (;;) {
    const version = registry.queuedVersion(team_uid);
    const run = await leaseNext(rt, workers, claim);
    if (run) return run;
    const left = deadline - Date.now();
    if (left <= 0 || claim.stop.aborted || registry.closed) return null;
    await registry.waitForQueued(team_uid, version, left, claim.stop);
    presences.touch(team_uid, worker_id);
  }
}

/**
 * Leases the oldest queued run this worker may take (fair between factories under a team limit,
 * and only with a place free under the concurrency limits); null when there is none.
 */
async function leaseNext(rt: Runtime, workers: Workers, claim: Claim): Promise<Assignment | null> {
  const { worker } = claim;
  const runs = rt.readModel(runsProjection);
  for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
    const page = await runs.find({
      filter: {
        executing_team_uid: worker.team_uid,
        state: 'QUEUED',
        'config.worker_host': { $in: [null, 'warp', worker.worker_id] },
        // Waiting for an admin's approval: never handed out.
        approval_pending: { $in: [null, false] },
      },
      sort: QUEUE_ORDER,
      limit: QUEUE_PAGE,
    });
    if (!page.items.length) return null;
    // Read after the runs: a revocation logged before any of them shows here too.
    await recheckAdmission(claim.req);
    let raced = false;
    for (const run of await fairOrder(rt, worker.team_uid, page.items)) {
      if (claim.stop.aborted || workers.registry.closed) return null;
      const leased = await leaseOne(rt, workers, claim, run);
      if (leased === 'raced') raced = true;
      else if (leased) return leased;
    }
    // Every run was over a limit: looking again finds the same.
    if (!raced) return null;
  }
  return null;
}

/** Whether a run holding a place under a limit has ended (its place is free again). */
async function hasEnded(rt: Runtime, runId: string): Promise<boolean> {
  const run = await rt.state(runDecider, runStream(runId));
  return run.status !== 'live' || isTerminal(run.state);
}

/** Leases `run` to the worker: the assignment, null when a limit holds it back, 'raced' when another took it. */
async function leaseOne(
  rt: Runtime,
  { registry }: Workers,
  { req, worker }: Claim,
  run: RunDoc,
): Promise<Assignment | null | 'raced'> {
  const context = commandContext(req);
  if (!(await takeSlots(rt, run, context, (id) => hasEnded(rt, id)))) return null;
  const expires = Date.now() + rt.config.WORKER_LEASE_SECONDS * 1000;
  const held = { run_id: run.run_id, worker_id: worker.worker_id, execution_id: timeOrderedId() };
  try {
    const lease = { ...held, lease_expires_at: new Date(expires).toISOString() };
    const { position } = await rt.execute(
      runStream(run.run_id),
      runDecider,
      { type: 'LeaseRun', data: lease },
      context,
    );
    registry.hold({
      ...held,
      team_uid: worker.team_uid,
      state: 'PENDING',
      lease_expires_ms: expires,
      since: position!,
    });
    return await assignmentOf(rt, run.run_id);
  } catch (error) {
    // Another worker leased it first (the write side lets only one through): next one.
    if (!(error instanceof Conflict)) throw error;
    // Its place is the other lease's now, unless no one holds the run.
    const now = await rt.state(runDecider, runStream(run.run_id));
    if (now.status === 'live' && now.state === 'QUEUED') await freeSlots(rt, run, context);
    return 'raced';
  }
}
