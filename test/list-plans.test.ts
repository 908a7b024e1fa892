/**
 * Lists cost what their page costs: every list the API pages (runs with each filter and sort of
 * the spec, tasks, webhook deliveries, a run's artifacts, a conversation's messages) reads its
 * first and its next page by seeking an index, never by scanning its collection or sorting its
 * matches. Checked with SQLite's EXPLAIN QUERY PLAN always, and with MongoDB's explain when
 * MONGODB_URL is set.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactsProjection } from '../projections/run/artifacts.js';
import { conversationMessagesProjection } from '../projections/conversation/conversation-messages.js';
import { runsProjection } from '../projections/run/runs.js';
import { tasksProjection } from '../projections/task/tasks.js';
import { webhookDeliveriesProjection } from '../projections/webhook/webhook-deliveries.js';
import { listRunsQuery, metadataPairs, runsFilters, runsSort } from '../queries/run/run-list.js';
import { readableRunsIn } from '../commands/run/public.js';
import { taskListFilters, taskListSort } from '../queries/task/tasks.js';
import type { Principal } from '../src/http/principal.js';
import { type AnyProjection, collectionOf, collectionsOf, tableOf } from '../src/projector/projection.js';
import { openMongoDocumentStore } from '../src/readstore/mongo.js';
import type { DocumentStore, Filter, FindQuery, Scalar, Sort } from '../src/readstore/port.js';
import { openSqliteDocumentStore } from '../src/readstore/sqlite.js';

const TEAM = '0190a000-0000-7000-8000-000000000001';
const FACTORY = '0190a000-0000-7000-8000-000000000002';
const USER = '0190a000-0000-7000-8000-000000000003';
const RUN = '0190a000-0000-7000-8000-000000000004';
const AT = '2026-06-01T00:00:00.000Z';

const principal = (type: 'user' | 'agent') => ({ type, uid: USER }) as Principal;

/** A made-up last item of a first page, for each key of the sort: the next page's `after`. */
const afterFor = (sort: Sort): Scalar[] =>
  sort.map(([field]) =>
    field === 'id' ? RUN : field.endsWith('_at') ? AT : field === 'agent_missing' ? 0 : 'some title',
  );

/** Every filter of `GET /agent/runs` (one value each, and two where repeatable), as query strings. */
const RUN_FILTERS: Record<string, Record<string, unknown>> = {
  none: {},
  state: { state: 'FAILED' },
  'state (two)': { state: ['FAILED', 'ERROR'] },
  task_status: { task_status: 'running' },
  name: { name: 'fixer' },
  model_id: { model_id: 'gpt-5' },
  creator: { creator: USER },
  executor: { executor: USER },
  source: { source: ['API', 'SLACK'] },
  execution_location: { execution_location: 'REMOTE' },
  created_after: { created_after: AT, created_before: AT },
  updated_after: { updated_after: AT },
  environment_id: { environment_id: 'empty-environment' },
  skill: { skill: 'owner/repo:skill' },
  schedule_id: { schedule_id: RUN },
  factory_uid: { factory_uid: FACTORY },
  'factory_uid and state': { factory_uid: FACTORY, state: 'FAILED' },
  ancestor_run_id: { ancestor_run_id: RUN },
  artifact_type: { artifact_type: 'PULL_REQUEST' },
  metadata: { 'metadata[delivery_id]': 'd-1' },
  automation_id: { automation_id: 'a-1' },
  q: { q: 'flaky test' },
  'q (a run id)': { q: RUN },
};

function runListQueries(query: Record<string, unknown>, sortBy: string, order: string, type: 'user' | 'agent') {
  const q = listRunsQuery.parse({ ...query, sort_by: sortBy, sort_order: order });
  const sort = runsSort(q.sort_by, q.sort_order);
  const filters = runsFilters(q, {
    visible: readableRunsIn(principal(type), TEAM),
    factories: q.factory_uid,
    metadata: metadataPairs(q),
    baseUrl: 'http://127.0.0.1:8080',
  });
  return { sort, filters };
}

interface Store {
  name: string;
  open(): Promise<DocumentStore>;
  /** The plan lines that show a scan of the collection, or a sort of every match. */
  badLines(plan: string[], collection: string): string[];
}

const sqlite: Store = {
  name: 'sqlite',
  async open() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-plans-'));
    return openSqliteDocumentStore(path.join(dir, 'read.db'));
  },
  badLines: (plan, collection) =>
    plan.filter(
      (line) =>
        line.startsWith(`SCAN ${collection}`) || line.includes('USE TEMP B-TREE') || !/SEARCH|SCAN j\b/.test(line),
    ),
};

const mongo: Store = {
  name: 'mongodb',
  async open() {
    return openMongoDocumentStore(process.env.MONGODB_URL!, process.env.MONGODB_DB ?? 'shopfloor_test');
  },
  badLines: (plan) => plan.filter((stage) => stage === 'COLLSCAN' || stage === 'SORT'),
};

for (const store of [sqlite, ...(process.env.MONGODB_URL ? [mongo] : [])]) {
  describe(`list plans (${store.name})`, () => {
    let docs: DocumentStore;
    const models: AnyProjection[] = [
      runsProjection,
      tasksProjection,
      webhookDeliveriesProjection,
      artifactsProjection,
      conversationMessagesProjection,
    ];
    beforeAll(async () => {
      docs = await store.open();
      for (const p of models)
        for (const { name, indexes } of collectionsOf(p, collectionOf(p))) await docs.ensureCollection(name, indexes);
    });
    afterAll(async () => docs?.close());

    /** The plans of the first page and of the next one, for each filter of one list request. */
    async function plans(collection: string, filters: readonly Filter[], sort: Sort, limit = 50) {
      const out: string[][] = [];
      for (const filter of filters) {
        const first: FindQuery = { filter, sort, limit };
        out.push(await docs.collection(collection).explain(first));
        out.push(await docs.collection(collection).explain({ ...first, after: afterFor(sort) }));
      }
      return out;
    }

    async function expectSeeks(collection: string, filters: readonly Filter[], sort: Sort, limit?: number) {
      for (const plan of await plans(collection, filters, sort, limit)) {
        expect(plan.length, 'a plan').toBeGreaterThan(0);
        expect(store.badLines(plan, collection), plan.join('\n')).toEqual([]);
      }
    }

    for (const sortBy of ['updated_at', 'created_at', 'title', 'agent'])
      for (const order of ['desc', 'asc'])
        for (const type of ['user', 'agent'] as const)
          it(`GET /agent/runs sorted by ${sortBy} ${order}, as a ${type}: every filter seeks an index`, async () => {
            for (const [name, query] of Object.entries(RUN_FILTERS)) {
              const { sort, filters } = runListQueries(query, sortBy, order, type);
              expect(filters.length, name).toBe(type === 'agent' ? 3 : 2);
              for (const plan of await plans(collectionOf(runsProjection), filters, sort, 20)) {
                expect(store.badLines(plan, collectionOf(runsProjection)), `${name}:\n${plan.join('\n')}`).toEqual([]);
              }
            }
          });

    for (const sortBy of ['created_at', 'updated_at'] as const)
      for (const order of ['desc', 'asc'] as const)
        it(`GET /factory/{uid}/tasks sorted by ${sortBy} ${order}: every filter seeks an index`, async () => {
          const cases = {
            none: {},
            stage: { stage: ['IMPLEMENT'] },
            'stages (three)': { stage: ['TRIAGE', 'SPEC', 'REVIEW'] },
            q: { q: 'login' },
            created: { created_after: AT, created_before: AT },
            updated_after: { updated_after: AT },
          };
          for (const [name, q] of Object.entries(cases)) {
            const filters = taskListFilters(
              q as Parameters<typeof taskListFilters>[0],
              FACTORY,
              name === 'none' ? [USER] : undefined,
            );
            for (const plan of await plans(
              collectionOf(tasksProjection),
              filters,
              taskListSort({ sort_by: sortBy, sort_order: order }),
            ))
              expect(store.badLines(plan, collectionOf(tasksProjection)), `${name}:\n${plan.join('\n')}`).toEqual([]);
          }
        });

    it("GET /factory/{uid}/webhooks/{webhook_uid}/deliveries seeks the webhook's index", async () => {
      await expectSeeks(
        collectionOf(webhookDeliveriesProjection),
        [{ webhook_uid: RUN }],
        [
          ['received_at', 'desc'],
          ['id', 'desc'],
        ],
      );
    });

    it("a run's artifacts seek the run's index", async () => {
      await expectSeeks(collectionOf(artifactsProjection), [{ run_id: RUN }], [['id', 'asc']]);
    });

    it("a conversation's messages and turns, and a run's, seek their index in log order", async () => {
      const order: Sort = [
        ['seq', 'asc'],
        ['id', 'asc'],
      ];
      const messages = collectionOf(conversationMessagesProjection);
      for (const collection of [messages, tableOf(messages, 'turns')])
        for (const filter of [{ conversation_id: RUN }, { run_id: RUN }])
          await expectSeeks(collection, [filter], order, 500);
    });
  });
}
