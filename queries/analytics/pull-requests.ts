/**
 * GET /factory/{factory_uid}/pull-requests: the pull requests the factory's runs produced, newest
 * opened first (opened on the code host, else first seen), keyset paged; `Accept: text/csv`
 * answers the page as CSV.
 */
import { z } from 'zod';
import { pullRequestResource, toPullRequestRecord, factoryScope } from '../../commands/analytics/public.js';
import { factoryParams, type FactoryDoc } from '../../commands/factory/public.js';
import type { Api } from '../../src/http/api.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { dateTimeParam, limitParam, pageInfoSchema } from '../../src/http/schemas.js';
import type { Filter, Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import { answerCache, sendCsv, toCsv, wantsCsv } from './analytics-answers.js';

/** Bounds are exclusive RFC 3339 times, compared as stored (UTC). */
const instant = dateTimeParam.transform((s) => new Date(s).toISOString());

const listQuery = z
  .object({
    limit: limitParam(500, 50),
    cursor: z.string().max(1000).optional(),
    repo: z
      .string()
      .max(201)
      .regex(/^[\w.-]{1,100}\/[\w.-]{1,100}$/, 'owner/repo')
      .optional()
      .describe('owner/repo, case-insensitive'),
    state: z.preprocess(
      (v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]),
      z
        .array(z.enum(['open', 'draft', 'merged', 'closed']))
        .max(10)
        .optional(),
    ),
    opened_after: instant.optional(),
    opened_before: instant.optional(),
    merged_after: instant.optional(),
    merged_before: instant.optional(),
    updated_after: instant.optional(),
  })
  .strict();

const listResponse = z.object({
  ...factoryScope,
  pull_requests: z.array(pullRequestResource),
  page_info: pageInfoSchema,
});

const NEWEST_OPENED_FIRST: Sort = [
  ['opened_key', 'desc'],
  ['id', 'desc'],
];

const range = (after?: string, before?: string) =>
  after || before ? { ...(after ? { $gt: after } : {}), ...(before ? { $lt: before } : {}) } : undefined;

const CSV_COLUMNS = [
  'url',
  'provider',
  'repo_full_name',
  'pr_number',
  'title',
  'author_login',
  'state',
  'opened_at',
  'first_human_review_at',
  'merged_at',
  'closed_at',
  'updated_at',
  'first_seen_at',
  'additions',
  'deletions',
  'changed_files',
  'num_commits',
  'human_interactions_total',
  'human_code_change',
  'history_complete',
  'kickoff_at',
  'kickoff_to_pr',
  'pr_to_first_review',
  'first_review_to_merge',
  'kickoff_to_merge',
  'run_ids',
] as const;

export default function pullRequestQueries(api: Api, rt: Runtime): void {
  const prs = rt.readModel(pullRequestsProjection);
  const answers = answerCache(rt);

  api.get(
    '/factory/:factory_uid/pull-requests',
    {
      schema: {
        params: factoryParams,
        querystring: listQuery,
        response: { 200: listResponse },
        tags: ['pull requests'],
        description: 'The factory’s pull requests, newest opened first; `Accept: text/csv` answers the page as CSV.',
      },
    },
    async (req, reply) => {
      const uid = req.params.factory_uid;
      const q = req.query;
      const filter: Filter = {
        factory_uid: uid,
        listed: true,
        repo_key: q.repo?.toLowerCase(),
        state: q.state && { $in: q.state },
        opened_at: range(q.opened_after, q.opened_before),
        merged_at: range(q.merged_after, q.merged_before),
        updated_at: q.updated_after && { $gt: q.updated_after },
      };
      const after = decodeCursor(q.cursor, NEWEST_OPENED_FIRST);
      const make = async (factory: FactoryDoc) => {
        const page = await prs.find({
          filter,
          sort: NEWEST_OPENED_FIRST,
          limit: q.limit,
          after,
          maxScan: rt.config.LIST_MAX_SCAN,
        });
        return {
          team_uid: factory.team_uid,
          factory_uid: factory.uid,
          pull_requests: page.items.map(toPullRequestRecord),
          page_info: pageInfo(NEWEST_OPENED_FIRST, page.next),
        };
      };
      const key = `pull-requests:${uid}:${JSON.stringify(q)}`;
      if (!wantsCsv(req)) return answers.send(req, reply, uid, key, listResponse, make);
      const body = await answers.get(req, uid, key, make);
      const records = body.pull_requests;
      if (body.page_info.next_cursor) reply.header('x-next-cursor', body.page_info.next_cursor);
      return sendCsv(
        reply,
        'pull-requests',
        toCsv(
          CSV_COLUMNS,
          records.map((pr) => [
            pr.url,
            pr.provider,
            pr.repo_full_name,
            pr.pr_number,
            pr.title,
            pr.author_login,
            pr.state,
            pr.opened_at,
            pr.first_human_review_at,
            pr.merged_at,
            pr.closed_at,
            pr.updated_at,
            pr.first_seen_at,
            pr.additions,
            pr.deletions,
            pr.changed_files,
            pr.num_commits,
            pr.human_interactions.total,
            pr.human_code_change,
            pr.history_complete,
            pr.kickoff_at,
            pr.cycle_time.kickoff_to_pr,
            pr.cycle_time.pr_to_first_review,
            pr.cycle_time.first_review_to_merge,
            pr.cycle_time.kickoff_to_merge,
            pr.runs.map((r) => r.run_id).join(' '),
          ]),
        ),
      );
    },
  );
}
