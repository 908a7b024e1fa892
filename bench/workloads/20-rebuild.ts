/**
 * 2. Projection rebuild: every read model rebuilt with `rebuildProjection` from a mixed history,
 * against the raw speed of reading the same events (the port's readAll loop, and bare SQL).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteEventStore } from '../../src/eventstore/sqlite.js';
import { rebuildProjections } from '../../src/projector/rebuild.js';
import { openSqliteDocumentStore } from '../../src/readstore/sqlite.js';
import { projectionsOf } from '../../src/feature.js';
import { features } from '../../src/features.js';

const projections = projectionsOf(features);
import { params } from '../lib/config.js';
import { fmt, log, pct, perSecond, timed } from '../lib/measure.js';
import { cachedHistory, copyHistory } from '../lib/seed.js';
import { timeReadAll } from '../lib/read-all.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

/** The page size of src/projector/rebuild.ts, so that the raw reads do the same round trips. */
const PAGE = 5000;

const workload: Workload = {
  title: '2. Projection rebuild',
  async run() {
    const { file, info } = await cachedHistory('mixed', params.rebuildEvents);
    const dir = tempDir('rebuild');
    const eventsFile = copyHistory(file, dir);
    const total = info.events;

    // The copy is in the page cache now; one untimed scan makes sure of it for every case alike.
    const db = new Database(eventsFile, { readonly: true });
    db.prepare('SELECT count(*), sum(length(data) + length(metadata)) FROM events').get();
    const perType = new Map(
      (
        db.prepare('SELECT type, count(*) AS n FROM events GROUP BY type').all() as Array<{ type: string; n: number }>
      ).map((r) => [r.type, r.n]),
    );

    log('raw SQL: SELECT * in pages, no parsing');
    const page = db.prepare<[number, number], { position: number }>(
      'SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?',
    );
    const rawSql = await timed(() => {
      let n = 0;
      for (let after = 0; ; ) {
        const rows = page.all(after, PAGE);
        if (rows.length === 0) return n;
        n += rows.length;
        after = rows[rows.length - 1]!.position;
      }
    });
    db.close();

    const events = openSqliteEventStore(eventsFile);
    log('readAll loop through the EventStore port');
    const readAll = await timeReadAll(events, PAGE);

    const docs = openSqliteDocumentStore(path.join(dir, 'read.db'));
    const rebuilt: Array<{ name: string; count: number; ms: number; handled: number }> = [];
    const chosen = projections.filter((p) => !params.rebuildProjections || params.rebuildProjections.includes(p.name));
    for (const p of chosen) {
      log(`rebuildProjection ${p.name}`);
      const { result: count, ms } = await timed(() => rebuildProjections(events, docs, [p]));
      const handled = Object.keys(p.on).reduce((sum, type) => sum + (perType.get(type) ?? 0), 0);
      if (count !== handled)
        throw new Error(`${p.name}: rebuilt from ${count} events, but the log has ${handled} of its types`);
      rebuilt.push({ name: p.name, count, ms, handled });
    }
    log('rebuildProjections of every read model in one pass (`projections rebuild all`)');
    const onePass = await timed(() => rebuildProjections(events, docs, chosen));
    const documents = await Promise.all(
      chosen.map(async (p) => `${p.name} ${fmt(await docs.collection(`${p.name}_v${p.version}`).count())}`),
    );
    await docs.close();
    await events.close();
    log('write floor: the rebuilt documents written again into a fresh file');
    const floor = await writeFloor(path.join(dir, 'read.db'), path.join(dir, 'floor.db'));

    const readAllRate = perSecond(readAll.result, readAll.ms);
    const n = (type: string) => perType.get(type) ?? 0;
    const runsAndTasks = [...perType]
      .filter(([type]) => /^(Run|Task|Conversation)/.test(type))
      .reduce((sum, [, count]) => sum + count, 0);
    const skipped = rebuilt.filter((r) => r.handled === 0).map((r) => r.name);
    const floorSeconds = total / readAllRate + floor.ms / 1000;
    const figures: Figure[] = [
      {
        name: 'Raw SQL read (SELECT * in pages of 5,000, rows only)',
        value: perSecond(rawSql.result, rawSql.ms),
        unit: 'events/s',
      },
      {
        name: 'readAll loop (the port: rows → RecordedEvent, JSON parsed)',
        value: readAllRate,
        unit: 'events/s',
        ceiling: { name: 'raw SQL read', value: perSecond(rawSql.result, rawSql.ms) },
      },
      ...rebuilt.map(
        (r): Figure => ({
          name: `rebuildProjection ${r.name}`,
          value: perSecond(total, r.ms),
          unit: 'log events/s',
          detail:
            `${fmt(r.ms / 1000, 1)} s; reads and handles the ${fmt(r.handled)} events of its types` +
            (r.handled === 0
              ? ': none in this history, so no target'
              : ` (${fmt(perSecond(r.handled, r.ms))} handled/s)`),
          ceiling: { name: 'readAll loop', value: readAllRate },
          ...(r.handled > 0 ? { target: { text: '≥ 100,000 events/s', met: perSecond(total, r.ms) >= 100_000 } } : {}),
        }),
      ),
      {
        name: `All ${chosen.length} read models in one pass (\`projections rebuild all\`)`,
        value: perSecond(total, onePass.ms),
        unit: 'log events/s',
        detail: `${fmt(onePass.ms / 1000, 1)} s; reads and handles the ${fmt(onePass.result)} events of their types`,
        ceiling: { name: 'readAll loop', value: readAllRate },
        target: { text: '≥ 60% of the readAll loop', met: perSecond(total, onePass.ms) >= 0.6 * readAllRate },
      },
      {
        name: 'Write floor: the rebuilt documents written again, table by table (no events read, no handler run)',
        value: perSecond(floor.documents, floor.ms),
        unit: 'documents/s',
        detail:
          `${fmt(floor.documents)} documents in ${fmt(floor.ms / 1000, 1)} s; the log read (${fmt(total / readAllRate, 1)} s) plus this ` +
          `is ${fmt(total / readAllRate + floor.ms / 1000, 1)} s, against the ${fmt(total / (0.6 * readAllRate), 1)} s that 60% of the readAll loop allows`,
      },
      {
        name: '`projections rebuild all` against its floor (issue #34)',
        value: onePass.ms / 1000,
        unit: 's',
        ceiling: { name: 'its floor (the log read plus the write floor), in s', value: floorSeconds },
        target: { text: '≤ 1.5× its floor', met: onePass.ms / 1000 <= 1.5 * floorSeconds },
      },
    ];
    return {
      figures,
      notes: [
        `History: ${fmt(total)} events of the \`mixed\` kind (bench/lib/history.ts), streams interleaved in time as in production. ` +
          `${pct(runsAndTasks / total)} of them are agent runs and factory tasks: ${fmt(n('RunCreated'))} runs (created through the API, some ` +
          `orchestrating sub-runs, or dispatched to a factory's foreman), each leased, claimed and started by a worker of its team, recording ` +
          `timeline entries, messages, usage and artifacts until it finishes (some cancelled, resumed, or lost with their worker; a few hundred ` +
          `still under way at the end); ${fmt(n('TaskCreated'))} tasks, which move through their stages with a run of their conversation per stage. ` +
          `The rest: ${fmt(n('FactoryCreated'))} factories, updated ${fmt(n('FactoryUpdated') / n('FactoryCreated'), 1)} times each on average, ` +
          `${pct(n('FactoryDeleted') / n('FactoryCreated'))} deleted; ${fmt(n('AgentIdentityCreated'))} agent identities (half of them foremen of a factory) ` +
          `with keys, updates and deletions; ${fmt(n('UserRegistered'))} users joining teams. Generated once into bench/.cache and copied per run.` +
          (skipped.length ? ` No events of ${skipped.join(', ')}: their rebuilds only skip events.` : ''),
        `Events by type: ${[...perType]
          .sort((a, b) => b[1] - a[1])
          .map(([type, count]) => `${type} ${fmt(count)}`)
          .join(', ')}.`,
        `A rebuild reads only the events of the types its read models handle (the type filter runs inside SQLite), so its rate is ` +
          `given over the whole log: the ${fmt(total)} events it rebuilds from, divided by the time taken. The time includes dropping the ` +
          `shadow collection, loading it, building its indexes after the load, and swapping it in. The target is judged per read model ` +
          `(\`shopfloor projections rebuild <name>\`) and for all of them in one pass (\`rebuild all\`).`,
        `Documents after the rebuild: ${documents.join(', ')}.`,
      ],
    };
  },
};
export default workload;

/**
 * What writing the rebuilt read models costs by itself: every document read back, then
 * stringified and inserted into a fresh table as the rebuild's commits do (`jsonb(?)`, upsert, the
 * same pragmas, transactions of 20,000), each table's documents together (the kindest order).
 */
async function writeFloor(readFile: string, floorFile: string): Promise<{ documents: number; ms: number }> {
  const src = new Database(readFile, { readonly: true });
  const dst = new Database(floorFile);
  dst.pragma('journal_mode = WAL');
  dst.pragma('synchronous = NORMAL');
  dst.pragma('cache_size = -65536');
  const tables = src
    .prepare(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('checkpoints', 'set_aside') AND name NOT LIKE 'sqlite_%'`,
    )
    .pluck()
    .all() as string[];
  const rows = tables.flatMap((t) =>
    (src.prepare(`SELECT id, json(doc) AS doc FROM "${t}"`).all() as Array<{ id: string; doc: string }>).map(
      (r) => [t, r.id, JSON.parse(r.doc) as unknown] as const,
    ),
  );
  src.close();
  const insert = new Map(
    tables.map((t) => {
      dst.exec(`CREATE TABLE "${t}" (id TEXT PRIMARY KEY, doc BLOB NOT NULL)`);
      return [
        t,
        dst.prepare(
          `INSERT INTO "${t}" (id, doc) VALUES (?, jsonb(?)) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
        ),
      ];
    }),
  );
  const commit = dst.transaction((part: typeof rows) => {
    for (const [t, id, doc] of part) insert.get(t)!.run(id, JSON.stringify(doc));
  });
  const { ms } = await timed(() => {
    for (let i = 0; i < rows.length; i += 20_000) commit(rows.slice(i, i + 20_000));
  });
  dst.close();
  return { documents: rows.length, ms };
}
