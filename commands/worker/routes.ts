/**
 * The worker protocol, part one: a worker announces itself, heartbeats (and hears its signals),
 * and claims queued runs of its team by long poll. Part two, the reports a worker makes on a run
 * it holds, is in reports.ts. Every route takes an agent API key: workers act for their team.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { timeOrderedId } from '../../src/ids.js';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import { Conflict, LimitExceeded, NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { MAX_WORKERS_PER_TEAM, MISSED_HEARTBEATS, type Signal } from './registry.js';
import type { PresenceDoc } from './presence-store.js';
import { runningWorkers, type Workers, workersOf } from './presence.js';
import { runsProjection } from '../../projections/runs.js';
import { skillDecider } from '../skill/decider.js';
import { skillsStream } from '../skill/events.js';
import type { Sort } from '../../src/readstore/port.js';
import { runDecider } from '../run/decider.js';
import { runStream } from '../run/events.js';
import { type Assignment, assignmentOf, preparedAttachments } from './assignment.js';
import { workerPrincipal } from './principal.js';
import { reportRoutes } from './reports.js';
import {
  announceBody,
  announced,
  claimAnswer,
  claimQuery,
  heartbeatAnswer,
  heartbeatBody,
  type WorkerSignal,
  workerParams,
  skillsBody,
} from './schema.js';
import type { Api } from '../../src/http/api.js';

/** Oldest first; the id breaks ties. */
const QUEUE_ORDER: Sort = [
  ['created_at', 'asc'],
  ['id', 'asc'],
];
const QUEUE_PAGE = 20;
/** Rounds of looking again when other workers took every run seen (the read model lags a little). */
const MAX_CLAIM_ROUNDS = 10;

export default function workerRoutes(api: Api, rt: Runtime): void {
  // In a scope of their own, so that raw uploads are accepted by these routes only.
  api.register(async (scope) => {
    const workerApi = scope as unknown as Api;
    workerApi.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) =>
      done(null, body),
    );
    // A long poll must not hold up a shutdown.
    workerApi.addHook('preClose', async () => runningWorkers(rt)?.registry.close());
    presenceRoutes(workerApi, rt);
    reportRoutes(workerApi, rt);
  });
}

async function workersReady(rt: Runtime): Promise<Workers> {
  const workers = workersOf(rt);
  await workers.ready;
  return workers;
}

/**
 * The announced worker of the caller's team, or 404 (announce again). Announced through any
 * process of the store: presence is kept in the read store.
 */
async function presentWorker(workers: Workers, req: FastifyRequest, workerId: string): Promise<PresenceDoc> {
  const { team_uid } = workerPrincipal(req);
  const worker = await workers.presences.get(team_uid, workerId);
  if (!worker || workers.presences.isGone(worker)) throw new NotFound('worker', workerId);
  workers.presences.touch(team_uid, workerId);
  return worker;
}

function presenceRoutes(api: Api, rt: Runtime): void {
  const runs = rt.readModel(runsProjection);
  const timings = () => ({
    heartbeat_interval_seconds: rt.config.WORKER_HEARTBEAT_SECONDS,
    lease_seconds: rt.config.WORKER_LEASE_SECONDS,
    max_missed_heartbeats: MISSED_HEARTBEATS,
  });
  const tags = ['workers'];

  api.post(
    '/agent/workers',
    { schema: { body: announceBody, response: { 201: announced }, tags } },
    async (req, reply) => {
      const { team_uid, agent_uid } = workerPrincipal(req);
      const { presences } = await workersReady(rt);
      // A worker id names a worker within its team: another team's worker of the same id is another worker.
      const worker_id = req.body.worker_id ?? timeOrderedId();
      const known = await presences.get(team_uid, worker_id);
      const live = known && !presences.isGone(known, Date.now(), 0);
      if (!live && (await presences.countLive(team_uid)) >= MAX_WORKERS_PER_TEAM) {
        throw new LimitExceeded(`a team has at most ${MAX_WORKERS_PER_TEAM} connected workers`);
      }
      await presences.announce({
        worker_id,
        team_uid,
        agent_uid,
        host: req.body.host,
        capabilities: req.body.capabilities,
      });
      return reply.code(201).send({ worker_id, ...timings() });
    },
  );

  api.put(
    '/agent/workers/:worker_id/skills',
    {
      schema: {
        params: workerParams,
        body: skillsBody,
        response: { 200: z.object({ skills: z.number().int().describe('Skills known of these repositories') }) },
        tags,
      },
    },
    async (req) => {
      const { team_uid, worker_id } = await presentWorker(await workersReady(rt), req, req.params.worker_id);
      const { repos, skills } = req.body;
      const command = { type: 'ReportSkills' as const, data: { team_uid, worker_id, repos, skills } };
      await rt.execute(skillsStream(team_uid), skillDecider, command, commandContext(req));
      return { skills: skills.length };
    },
  );

  api.post(
    '/agent/workers/:worker_id/heartbeat',
    { schema: { params: workerParams, body: heartbeatBody, response: { 200: heartbeatAnswer }, tags } },
    async (req) => {
      const workers = await workersReady(rt);
      const { registry, presences } = workers;
      const presence = await presentWorker(workers, req, req.params.worker_id);
      const { team_uid, worker_id } = presence;
      const { runs, acks } = req.body;
      // Before telling a worker it does not hold a run, make sure this process has read every
      // event so far: the lease may have been taken through another process a moment ago.
      if (!registry.holdsAll(team_uid, worker_id, runs)) await workers.synced();
      // Acknowledged through any process (stored with the presence), or in this heartbeat.
      const acknowledged = new Set([...(presence.acks ?? []).map((a) => a.signal_id), ...acks]);
      const { signals, runOf } = registry.signalsFor(team_uid, worker_id, runs, acknowledged);
      const held = new Set(registry.heldBy(team_uid, worker_id).map((h) => h.run_id));
      await presences.heartbeat(presence, acks, (ack) => {
        const run = ack.run_id ?? runOf.get(ack.signal_id) ?? null;
        if (run !== null) ack.run_id = run;
        return run !== null && (held.has(run) || runs.includes(run));
      });
      return { signals: await Promise.all(signals.map((s) => render(rt, s))), ...timings() };
    },
  );

  api.post(
    '/agent/workers/:worker_id/claim',
    {
      schema: {
        params: workerParams,
        querystring: claimQuery,
        response: { 200: claimAnswer, 204: noContent('No run came within wait_seconds') },
        tags,
      },
    },
    async (req, reply) => {
      const workers = await workersReady(rt);
      const { registry } = workers;
      const worker = await presentWorker(workers, req, req.params.worker_id);
      // The worker hung up: stop waiting, and hand it nothing.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const deadline = Date.now() + req.query.wait_seconds * 1000;

      /** Leases the oldest queued run this worker may take; null when there is none. */
      async function leaseNext(): Promise<Assignment | null> {
        for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
          const page = await runs.find({
            filter: {
              executing_team_uid: worker.team_uid,
              state: 'QUEUED',
              'config.worker_host': { $in: [null, 'warp', worker.worker_id] },
            },
            sort: QUEUE_ORDER,
            limit: QUEUE_PAGE,
          });
          if (!page.items.length) return null;
          for (const run of page.items) {
            if (gone.signal.aborted || registry.closed) return null;
            const expires = Date.now() + rt.config.WORKER_LEASE_SECONDS * 1000;
            const held = { run_id: run.run_id, worker_id: worker.worker_id, execution_id: timeOrderedId() };
            try {
              const lease = { ...held, lease_expires_at: new Date(expires).toISOString() };
              const { position } = await rt.execute(
                runStream(run.run_id),
                runDecider,
                { type: 'LeaseRun', data: lease },
                commandContext(req),
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
            }
          }
        }
        return null;
      }

      for (;;) {
        const version = registry.queuedVersion(worker.team_uid);
        const run = await leaseNext();
        if (run) return { run };
        const left = deadline - Date.now();
        if (left <= 0 || gone.signal.aborted || registry.closed) return reply.code(204).send(null);
        await registry.waitForQueued(worker.team_uid, version, left, gone.signal);
        workers.presences.touch(worker.team_uid, worker.worker_id);
      }
    },
  );
}

/** A signal as the worker receives it: follow-up attachments come with download links. */
async function render(rt: Runtime, signal: Signal): Promise<WorkerSignal> {
  if (signal.type !== 'followup') return signal;
  return { ...signal, attachments: await preparedAttachments(rt, signal.run_id, signal.attachments) };
}
