/**
 * Reading agent runs: the list with every filter, one run (now or `as_of` a moment), its
 * timeline, harness usage and handoff attachments, and the run behind an external reference.
 *
 * Who may read a run is one rule (commands/run/run-access.ts), shared with the event streams: one
 * run by id in any of the caller's teams, the list (and a team's stream) within the active team.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { runStream } from '../../commands/run/events.js';
import { factoriesProjection } from '../../commands/factory/public.js';
import { runTimelineProjection } from '../../projections/run/run-timeline.js';
import { type RunDoc, runsProjection } from '../../projections/run/runs.js';
import { activeTeam } from '../../src/http/auth.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { dateTimeParam, pageInfoSchema } from '../../src/http/schemas.js';
import { DomainError, NotFound } from '../../src/kernel/errors.js';
import { eventsAsOf, projectAsOf } from '../../src/projector/as-of.js';
import type { Runtime } from '../../src/runtime.js';
import {
  canReadRun,
  ownerOfRun,
  readableRunsFilter,
  readableRunsIn,
  requestUsageSchema,
  runItem,
  runParams as params,
  timelineEntrySchema,
  toRunItem,
} from '../../commands/run/public.js';
import { listRunsQuery, metadataPairs, runsFilters, runsSort } from './run-list.js';
import { findMerged } from '../../src/readstore/paging.js';
import { signedBlobUrl } from '../../src/blobs/routes.js';
import type { Api } from '../../src/http/api.js';

const listResponse = z.object({ runs: z.array(runItem), page_info: pageInfoSchema });

const timelineResponse = z.object({ events: z.array(timelineEntrySchema) });

const harnessUsageResponse = z.discriminatedUnion('status', [
  z.object({
    run_id: z.string(),
    status: z.literal('available'),
    reported_at: z.string(),
    usage: requestUsageSchema.describe('The latest cumulative snapshot reported'),
  }),
  z.object({
    run_id: z.string(),
    status: z.literal('unavailable'),
    reason: z.string(),
    reported_at: z.null(),
    usage: z.null(),
  }),
]);

const handoffResponse = z.object({
  attachments: z.array(
    z.object({
      attachment_id: z.string(),
      download_url: z.string().describe('A time-limited signed URL'),
      filename: z.string(),
      mime_type: z.string(),
    }),
  ),
});

/** What the run queries share: the read models, the answer of a run, and who may read one. */
function runReading(rt: Runtime) {
  const runs = rt.readModel(runsProjection);
  const factories = rt.readModel(factoriesProjection);
  return {
    rt,
    runs,
    timelines: rt.readModel(runTimelineProjection),
    item: (run: RunDoc, now = new Date().toISOString(), queue_position?: number | null) =>
      toRunItem(run, { baseUrl: rt.config.publicBaseUrl, now, queue_position }),
    /**
     * A queued run's place in its queue (guardrails): its factory's, or its team's for runs without
     * one, first in first out; a run waiting for approval is in no queue yet.
     */
    queuePosition: async (run: RunDoc): Promise<number | null> => {
      if (run.state !== 'QUEUED' || run.approval_pending) return null;
      const ahead = await runs.count({
        executing_team_uid: run.executing_team_uid,
        factory_uid: run.factory_uid,
        state: 'QUEUED',
        approval_pending: { $in: [null, false] },
        created_at: { $lt: run.created_at },
      });
      return ahead + 1;
    },
    /** The run if the caller may read it; any other answers 404, existing or not. */
    visibleRun: async (req: FastifyRequest, runId: string): Promise<RunDoc> => {
      const run = await runs.get(runId);
      if (!run || !canReadRun(ownerOfRun(run), req.principal!)) throw new NotFound('run', runId);
      return run;
    },
    /** The requested factories the caller's teams own: any other matches nothing. */
    accessibleFactories: async (req: FastifyRequest, uids: string[] | undefined): Promise<string[] | undefined> => {
      if (!uids) return undefined;
      const found = await factories.getMany(uids);
      return uids.filter((uid) => {
        const factory = found.get(uid);
        return factory !== undefined && req.principal!.teams.has(factory.team_uid);
      });
    },
  };
}

type RunReading = ReturnType<typeof runReading>;

const tags = ['runs'];

export default function runQueries(api: Api, rt: Runtime): void {
  const reading = runReading(rt);
  listRunsRoute(api, reading);
  runRoute(api, reading);
  timelineRoute(api, reading);
  harnessUsageRoute(api, reading);
  handoffRoute(api, reading);
  runByExternalReferenceRoute(api, reading);
}

function listRunsRoute(api: Api, { rt, runs, item, visibleRun, accessibleFactories }: RunReading): void {
  const listSchema = { querystring: listRunsQuery, response: { 200: listResponse }, tags };
  api.get('/agent/runs', { schema: listSchema }, async (req) => {
    const q = req.query;
    const metadata = metadataPairs(q);
    if (metadata.length && !rt.config.RUN_METADATA_FILTERING) {
      throw new DomainError(
        403,
        'feature_not_available',
        'Forbidden',
        'filtering runs by metadata is not enabled on this server',
      );
    }
    if (q.ancestor_run_id) await visibleRun(req, q.ancestor_run_id);
    const sort = runsSort(q.sort_by, q.sort_order);
    const after = decodeCursor(q.cursor, sort);
    const filters = runsFilters(q, {
      visible: readableRunsIn(req.principal!, activeTeam(req).uid),
      factories: await accessibleFactories(req, q.factory_uid),
      metadata,
      baseUrl: rt.config.publicBaseUrl,
    });
    const page = await findMerged(
      runs,
      filters,
      { sort, limit: q.limit, after, maxScan: rt.config.LIST_MAX_SCAN },
      (run) => run.run_id,
    );
    const now = new Date().toISOString();
    return { runs: page.items.map((run) => item(run, now)), page_info: pageInfo(sort, page.next) };
  });
}

function runRoute(api: Api, { rt, item, visibleRun, queuePosition }: RunReading): void {
  api.get(
    '/agent/runs/:run_id',
    {
      schema: {
        params,
        querystring: z.object({ as_of: dateTimeParam.optional() }).strict(),
        response: { 200: runItem },
        tags,
      },
    },
    async (req) => {
      const run = await visibleRun(req, req.params.run_id);
      const asOf = req.query.as_of;
      if (asOf === undefined) return item(run, undefined, await queuePosition(run));
      // Who may read a run never changes, so today's check stands for any moment.
      const then = (await projectAsOf(
        runsProjection,
        await eventsAsOf(rt.events, [runStream(run.run_id)], asOf),
        run.run_id,
      )) as RunDoc | null;
      if (!then) throw new NotFound('run', `${run.run_id} as of ${asOf}`);
      return item(then, new Date(asOf).toISOString());
    },
  );
}

function timelineRoute(api: Api, { timelines, visibleRun }: RunReading): void {
  const timelineSchema = { params, response: { 200: timelineResponse }, tags };
  api.get('/agent/runs/:run_id/timeline', { schema: timelineSchema }, async (req) => {
    const run = await visibleRun(req, req.params.run_id);
    const timeline = await timelines.get(run.run_id);
    const events = (timeline?.entries ?? []).map(({ execution_id, ...entry }) => ({
      ...entry,
      ...(execution_id ? { execution_id } : {}),
    }));
    return { events };
  });
}

function harnessUsageRoute(api: Api, { visibleRun }: RunReading): void {
  const harnessUsageSchema = { params, response: { 200: harnessUsageResponse }, tags };
  api.get('/agent/runs/:run_id/harness-usage', { schema: harnessUsageSchema }, async (req) => {
    const run = await visibleRun(req, req.params.run_id);
    // A usage report sets both the snapshot and its time.
    return run.usage && run.usage_reported_at
      ? { run_id: run.run_id, status: 'available' as const, reported_at: run.usage_reported_at, usage: run.usage }
      : {
          run_id: run.run_id,
          status: 'unavailable' as const,
          reason: 'no usage has been reported for this run yet',
          reported_at: null,
          usage: null,
        };
  });
}

function handoffRoute(api: Api, { rt, visibleRun }: RunReading): void {
  const handoffSchema = { params, response: { 200: handoffResponse }, tags };
  api.get('/agent/runs/:run_id/handoff/attachments', { schema: handoffSchema }, async (req) => {
    const run = await visibleRun(req, req.params.run_id);
    const files = run.handoff_files.filter((f) => f.execution_id === run.ended_execution_id);
    return {
      attachments: files.map((f) => ({
        attachment_id: f.attachment_id,
        download_url: signedBlobUrl(rt, f.blob, f.file_name, f.mime_type).url,
        filename: f.file_name,
        mime_type: f.mime_type,
      })),
    };
  });
}

function runByExternalReferenceRoute(api: Api, { runs }: RunReading): void {
  api.get(
    '/agent/run-by-external-reference',
    {
      schema: {
        querystring: z.object({ url: z.string().min(1).max(2048) }).strict(),
        response: { 200: z.object({ run_id: z.string() }) },
        tags,
      },
    },
    async (req) => {
      const principal = req.principal!;
      const page = await runs.find({
        filter: {
          $and: [
            readableRunsFilter(principal, [...principal.teams.keys()]),
            { external_reference_urls: { $has: req.query.url } },
          ],
        },
        sort: [
          ['created_at', 'asc'],
          ['id', 'asc'],
        ],
        limit: 1,
      });
      const [run] = page.items;
      if (!run) throw new NotFound('run with external reference', req.query.url);
      return { run_id: run.run_id };
    },
  );
}
