/**
 * 3b. Where serialization goes: the answers of the HTTP workload's queries (a run by id, a page
 * of 50 runs, a task by id, a page of 50 tasks) encoded by their route's response schema three
 * ways, in one process, rounds interleaved so each pair shares the machine's moment:
 * - zod: `safeEncode` then `JSON.stringify` (src/http/serializer.ts, `encodeAnswer`), what every
 *   answer cost before;
 * - fast-json-stringify compiled from the schema's JSON Schema (what Shopfloor now uses outside
 *   strict mode, src/http/serializer.ts);
 * - `JSON.stringify` alone: the floor, which keeps no guarantee about undeclared fields.
 * The documents are the read models' own, projected from a generated `tasks-runs` history.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { runItem, toRunItem } from '../../commands/run/resource.js';
import { taskDetail, taskListItem, taskResource } from '../../commands/task/resource.js';
import { type RunDoc, runsProjection } from '../../projections/run/runs.js';
import { type TaskDoc, tasksProjection } from '../../projections/task/tasks.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { pageInfoSchema } from '../../src/http/schemas.js';
import { compileAnswerEncoder, encodeAnswer } from '../../src/http/serializer.js';
import { applyEvents } from '../../src/projector/batch.js';
import { type AnyProjection, collectionOf, collectionsOf } from '../../src/projector/projection.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';
import type { Doc } from '../../src/readstore/port.js';
import { generateHistory } from '../lib/history.js';
import { QUICK } from '../lib/config.js';
import { fmt, log, now } from '../lib/measure.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

const ROUNDS = QUICK ? 3 : 15;
const RUNS = QUICK ? 400 : 3_000;

/** Every document of `projection` after `events`, by id. */
async function documents(projection: AnyProjection, events: RecordedEvent[], dir: string): Promise<Doc[]> {
  const store = openSqliteDocumentStore(path.join(dir, `${projection.name}.db`));
  const collection = collectionOf(projection);
  for (const { name, indexes } of collectionsOf(projection, collection)) await store.ensureCollection(name, indexes);
  for (let i = 0; i < events.length; i += 5_000) {
    const batch = events.slice(i, i + 5_000);
    await store.commit(
      await applyEvents(projection, collection, (name) => store.collection(name), batch),
      collection,
      batch.at(-1)!.position,
    );
  }
  const docs: Doc[] = [];
  for await (const [, doc] of store.collection(collection).scan()) docs.push(doc);
  await store.close();
  return docs;
}

/** JSON with every object's keys sorted, to compare answers whatever their field order. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );

/** The median of `xs`, and its smallest and largest. */
const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, min: s[0]!, max: s.at(-1)! };
};

const workload: Workload = {
  title: '3c. Serializing answers',
  async run() {
    const rows = [...generateHistory('tasks-runs', RUNS, {}, Math.round(RUNS * 0.75))];
    const events: RecordedEvent[] = rows.map((r, i) => ({
      id: r.id,
      stream: r.stream,
      revision: BigInt(r.revision),
      position: { commit: BigInt(i + 1), prepare: BigInt(i + 1) },
      type: r.type,
      data: JSON.parse(r.data),
      metadata: JSON.parse(r.metadata),
    }));
    const dir = tempDir('serialize');
    const runs = (await documents(runsProjection, events, dir)) as RunDoc[];
    const tasks = (await documents(tasksProjection, events, dir)) as TaskDoc[];
    fs.rmSync(dir, { recursive: true, force: true });
    const at = new Date().toISOString();
    const item = (r: RunDoc) => toRunItem(r, { baseUrl: 'http://127.0.0.1:8080', now: at });
    const pageInfo = { has_next_page: true, next_cursor: 'eyJzIjoidXBkYXRlZF9hdDpkZXNjLGlkOmRlc2MiLCJ2IjpbXX0' };
    const pages = <T>(xs: T[]) => Array.from({ length: 20 }, (_, i) => xs.slice(i * 50, i * 50 + 50));

    const cases = [
      { name: 'GET /agent/runs/{run_id}', schema: runItem, answers: runs.slice(0, 200).map(item) },
      {
        name: 'GET /agent/runs (50 runs)',
        schema: z.object({ runs: z.array(runItem), page_info: pageInfoSchema }),
        answers: pages(runs).map((p) => ({ runs: p.map(item), page_info: pageInfo })),
      },
      {
        name: 'GET /factory/{uid}/tasks/{task_uid}',
        schema: taskResource,
        answers: tasks.slice(0, 200).map(taskDetail),
      },
      {
        name: 'GET /factory/{uid}/tasks (50 tasks, full_list and include_current_run)',
        schema: z.object({ tasks: z.array(taskResource), page_info: pageInfoSchema }),
        answers: pages(tasks).map((p) => ({
          tasks: p.map((t) => taskListItem(t, { full_list: true, include_current_run: true })),
          page_info: pageInfo,
        })),
      },
    ];

    const figures: Figure[] = [];
    const notes: string[] = [];
    for (const c of cases) {
      const fjs = compileAnswerEncoder(c.schema);
      if (!fjs) throw new Error(`${c.name}: its schema does not compile to fast-json-stringify`);
      const encoders = {
        zod: (a: unknown) => encodeAnswer(c.schema, a, false),
        fjs,
        stringify: (a: unknown) => JSON.stringify(a),
      };
      // The same JSON, field for field (in another order), from zod and fast-json-stringify.
      for (const a of c.answers)
        if (canonical(JSON.parse(fjs(a))) !== canonical(JSON.parse(encoders.zod(a))))
          throw new Error(`${c.name}: fast-json-stringify and zod disagree:\n${fjs(a)}\n${encoders.zod(a)}`);
      const perAnswer: Record<keyof typeof encoders, number[]> = { zod: [], fjs: [], stringify: [] };
      const reps = Math.max(1, Math.round(2_000 / c.answers.length));
      for (let round = 0; round < ROUNDS; round++)
        for (const [name, encode] of Object.entries(encoders) as Array<
          [keyof typeof encoders, (a: unknown) => string]
        >) {
          let bytes = 0;
          const start = now();
          for (let rep = 0; rep < reps; rep++) for (const a of c.answers) bytes += encode(a).length;
          perAnswer[name].push(((now() - start) * 1000) / (reps * c.answers.length));
          if (bytes === 0) throw new Error('nothing encoded');
        }
      const ratios = perAnswer.zod.map((z, i) => z / perAnswer.fjs[i]!);
      const zod = spread(perAnswer.zod);
      const fast = spread(perAnswer.fjs);
      const floor = spread(perAnswer.stringify);
      const r = spread(ratios);
      const kib = c.answers.reduce((n: number, a) => n + JSON.stringify(a).length, 0) / c.answers.length / 1024;
      log(
        `${c.name}: zod ${fmt(zod.median, 1)} µs, fjs ${fmt(fast.median, 1)} µs, JSON.stringify ${fmt(floor.median, 1)} µs`,
      );
      figures.push(
        {
          name: `${c.name} (${fmt(kib, 1)} KiB): zod encode + JSON.stringify, per answer`,
          value: zod.median,
          unit: 'µs',
          detail: `rounds ${fmt(zod.min, 1)}–${fmt(zod.max, 1)}`,
        },
        {
          name: `↳ fast-json-stringify from its JSON Schema, per answer`,
          value: fast.median,
          unit: 'µs',
          detail: `rounds ${fmt(fast.min, 1)}–${fmt(fast.max, 1)}; zod / fast-json-stringify paired by round: median ${fmt(r.median, 2)}×, ${fmt(r.min, 2)}–${fmt(r.max, 2)}×`,
          ceiling: { name: 'zod encode', value: zod.median },
        },
        {
          name: `↳ JSON.stringify alone (no guarantee on undeclared fields), per answer`,
          value: floor.median,
          unit: 'µs',
          detail: `rounds ${fmt(floor.min, 1)}–${fmt(floor.max, 1)}`,
        },
      );
    }
    notes.push(
      `Documents projected in process from a generated \`tasks-runs\` history of ${fmt(RUNS)} runs (bench/lib/history.ts), rendered by the routes' own functions (toRunItem, taskDetail, taskListItem). ` +
        `${ROUNDS} rounds, each encoding every answer of a case with each encoder in turn (about 2,000 answers an encoder a round); a figure is the median round, with the smallest and largest. ` +
        'Before timing, every answer is checked to give the same JSON from zod and fast-json-stringify. The "↳ fast-json-stringify" row\'s ratio is its speed against zod\'s (zod time / its time), paired by round.',
    );
    return { figures, notes };
  },
};
export default workload;
