/**
 * `GET /agent/runs/{run_id}/events`: the run and the runs below it as an event stream, from the
 * beginning (or after `Last-Event-ID` / `?after=`) and then live: state changes, timeline entries,
 * messages, questions, artifacts and usage. It ends once every run of the tree is terminal and
 * everything before has been sent; a follow-up that resumes the run is followed by reconnecting
 * with the last id; reconnecting to an ended tree with nothing new answers 204, which tells an
 * EventSource to stop. Readable as the run is (`canReadRun`, by id: any of the caller's teams).
 */
import { z } from 'zod';
import { TERMINAL_STATES } from '../../commands/run/events.js';
import { canReadRun, ownerOfRun, runParams as params, runsProjection } from '../../commands/run/public.js';
import { runStream } from '../../commands/run/events.js';
import { comparePositions, type Position, START } from '../../src/eventstore/port.js';
import type { Api } from '../../src/http/api.js';
import { noContent } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import type { Filter, Sort } from '../../src/readstore/port.js';
import { resumeFrom } from '../../src/streams/event-id.js';
import { streamsOf } from '../../src/streams/live-streams.js';
import { feedTypes, streamHeaders } from '../../src/streams/routes.js';

/** The most runs of one tree a stream replays; a tree is far smaller in practice. */
const MAX_TREE_RUNS = 10_000;

const query = z
  .object({ after: z.string().max(64).optional().describe('Resume after this event id (Last-Event-ID wins)') })
  .strict();

/** The run and every run below it. */
const treeFilter = (runId: string): Filter => ({ $or: [{ run_id: runId }, { ancestors: { $has: runId } }] });
const byId: Sort = [['id', 'asc']];

export default function runEventRoutes(api: Api, rt: Runtime): void {
  const types = feedTypes(rt, 'run');
  const runs = rt.readModel(runsProjection);
  const domainTypes = new Set(streamsOf(rt).hub.domainTypes);

  /** The events of the tree's runs in (after, upTo], in log order. */
  async function replayTree(runId: string, after: Position, upTo: Position) {
    const tree = await runs.find({ filter: treeFilter(runId), sort: byId, limit: MAX_TREE_RUNS });
    const read = await Promise.all(tree.items.map((r) => rt.events.readStream(runStream(r.run_id))));
    return read
      .flat()
      .filter(
        (e) =>
          domainTypes.has(e.type) && comparePositions(e.position, after) > 0 && comparePositions(e.position, upTo) <= 0,
      )
      .sort((a, b) => comparePositions(a.position, b.position));
  }

  /** Where the read models stood when they showed every run of the tree terminal; null while one is not. */
  async function completeAt(runId: string): Promise<Position | null> {
    const working = await runs.find({
      filter: { $and: [treeFilter(runId), { state: { $nin: TERMINAL_STATES } }] },
      sort: byId,
      limit: 1,
    });
    return working.items.length ? null : rt.projector.position;
  }

  api.get(
    '/agent/runs/:run_id/events',
    {
      config: { eventStream: types },
      schema: {
        params,
        querystring: query,
        headers: streamHeaders,
        response: { 204: noContent('The tree has ended and nothing is left to send: stop reconnecting') },
        tags: ['runs', 'events'],
      },
    },
    async (req, reply) => {
      const runId = req.params.run_id;
      const run = await runs.get(runId);
      if (!run || !canReadRun(ownerOfRun(run), req.principal!)) throw new NotFound('run', runId);
      const viewer = { principal: req.principal!, team: null };
      const after = resumeFrom(req) ?? START;
      // An ended tree with nothing left to send: 204 tells an EventSource to stop reconnecting.
      if ((await completeAt(runId)) && !(await replayTree(runId, after, rt.projector.position)).length)
        return reply.code(204).send(null);
      await streamsOf(rt).open(req, reply, {
        after,
        takes: (item) =>
          types.has(item.type) &&
          item.run !== null &&
          (item.run.run_id === runId || item.run.ancestors.includes(runId)) &&
          item.readable(viewer),
        replay: (after, upTo) => replayTree(runId, after, upTo),
        completeAt: () => completeAt(runId),
      });
    },
  );
}
