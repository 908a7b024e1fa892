/**
 * History for auditors, straight from the event log (history is the events; no read model holds
 * it): GET /agent/runs/{run_id}/history, the run's stream (src/http/history.ts: the entries and
 * their pages). The `shopfloor history` command prints the same entries.
 */
import type { FastifyRequest } from 'fastify';
import { type RunCreatedData, runStream } from '../../commands/run/events.js';
import { cursorNumbers, historyPage, historyQuery, historyResponse } from '../../src/http/history.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { canView, runParams, viewerOf } from '../../commands/run/public.js';
import type { Api } from '../../src/http/api.js';

// Cursors: a run's history pages by revision.
const RUN_ORDER: Sort = [['revision', 'asc']];

const viewer = (req: FastifyRequest) => viewerOf(req.principal!);

/** GET /agent/runs/{run_id}/history */
export function runHistoryRoutes(api: Api, rt: Runtime): void {
  api.get(
    '/agent/runs/:run_id/history',
    { schema: { params: runParams, querystring: historyQuery, response: { 200: historyResponse }, tags: ['history'] } },
    async (req) => {
      const { run_id: runId } = req.params;
      const [first] = await rt.events.readStream(runStream(runId), { maxCount: 1 });
      const run = first?.type === 'RunCreated' ? (first.data as RunCreatedData) : null;
      if (!run || !canView({ ...run, creator_uid: run.creator.uid }, viewer(req))) throw new NotFound('run', runId);
      const after = cursorNumbers(req.query.cursor, RUN_ORDER);
      const fromRevision = after ? after[0]! + 1n : 0n;
      const events = await rt.events.readStream(runStream(runId), { fromRevision, maxCount: req.query.limit + 1 });
      return historyPage(events, req.query.limit, RUN_ORDER, (e) => [Number(e.revision)]);
    },
  );
}
