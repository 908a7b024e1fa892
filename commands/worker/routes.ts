/**
 * The worker protocol, part one: a worker announces itself, heartbeats (and hears its signals),
 * and claims queued runs of its team by long poll (claim.ts). Part two, the reports a worker makes
 * on a run it holds, is in reports.ts. Every route takes an agent API key: workers act for their team.
 */
import { z } from 'zod';
import { timeOrderedId } from '../../src/ids.js';
import { commandContext } from '../../src/http/context.js';
import { LimitExceeded } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { MAX_WORKERS_PER_TEAM, MISSED_HEARTBEATS, type Signal } from './registry.js';
import { runningWorkers } from './presence.js';
import { skillDecider } from '../skill/public.js';
import { skillsStream } from '../skill/events.js';
import { preparedAttachments } from './assignment.js';
import { claimRoute } from './claim.js';
import { presentWorker, workerPrincipal, workersReady } from './principal.js';
import { reportRoutes } from './reports.js';
import { announced, heartbeatAnswer, type WorkerSignal } from './answers.js';
import { announceBody, heartbeatBody, workerParams, skillsBody } from './schema.js';
import type { Api } from '../../src/http/api.js';

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

function presenceRoutes(api: Api, rt: Runtime): void {
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

  claimRoute(api, rt);
}

/** A signal as the worker receives it: follow-up attachments come with download links. */
async function render(rt: Runtime, signal: Signal): Promise<WorkerSignal> {
  if (signal.type !== 'followup') return signal;
  return { ...signal, attachments: await preparedAttachments(rt, signal.run_id, signal.attachments) };
}
