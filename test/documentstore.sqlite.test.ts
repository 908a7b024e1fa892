import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertCollectionName,
  compileAfter,
  compileFilter,
  compileLeadingRange,
  compileOrderBy,
  indexColumns,
} from '../src/readstore/sqlite-filter.js';
import { findAll } from '../src/readstore/paging.js';
import { openSqliteDocumentStore } from '../src/readstore/sqlite.js';
import { openSqliteConnection } from '../src/readstore/sqlite-connection.js';
import type { Filter } from '../src/readstore/port.js';
import { documentStoreContract } from './contract/documentstore-contract.js';
import { holdWriteLock } from './helpers/sqlite-lock.js';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-'));

{
  const dir = tempDir();
  documentStoreContract(
    'sqlite',
    async () => openSqliteDocumentStore(path.join(dir, 'read.db')),
    async () => fs.rmSync(dir, { recursive: true, force: true }),
  );
}

describe('sqlite-filter', () => {
  const hostile = `x' OR 1=1; DROP TABLE t; --`;

  it('binds values instead of inlining them', () => {
    const { sql, params } = compileFilter({
      name: hostile,
      tag: { $in: [hostile, 'b'], $ne: hostile },
      text: { $contains: hostile },
      $or: [{ n: { $gt: 5 } }, { n: { $lte: -1 } }],
    });
    expect(sql).not.toContain(hostile);
    expect(sql).not.toContain('5');
    expect(params).toEqual([hostile, hostile, 'b', hostile, hostile.toLowerCase(), 5, -1]);
  });

  it('binds booleans as 1 and 0 and compares null with IS NULL', () => {
    expect(compileFilter({ on: true }).params).toEqual([1]);
    expect(compileFilter({ on: false }).params).toEqual([0]);
    const isNull = compileFilter({ gone: null });
    expect(isNull.sql).toContain('IS NULL');
    expect(isNull.params).toEqual([]);
  });

  it('binds cursor values too', () => {
    const { sql, params } = compileAfter(
      [
        ['name', 'desc'],
        ['id', 'asc'],
      ],
      [hostile, hostile],
    );
    expect(sql).not.toContain(hostile);
    expect(params).toEqual([hostile, hostile, hostile]);
  });

  it('refuses malicious field paths everywhere they can appear', () => {
    const paths = [`a') OR 1=1 --`, 'a.b;', "a'", 'a..b', '', 'a b', '$where', 'a.$x'];
    for (const p of paths) {
      expect(() => compileFilter({ [p]: 1 } as Filter)).toThrow(/invalid field path/);
      expect(() => compileOrderBy([[p, 'asc']])).toThrow(/invalid field path/);
      expect(() => indexColumns([p])).toThrow(/invalid field path/);
    }
  });

  it('refuses malicious or reserved collection names', () => {
    for (const name of ['t"; DROP TABLE x; --', 'T', '_x', 'a.b', 'checkpoints', 'set_aside', 'sqlite_master', '']) {
      expect(() => assertCollectionName(name)).toThrow(/invalid collection name/);
    }
    expect(() => assertCollectionName('runs_v2')).not.toThrow();
  });

  it('refuses unknown operators and malformed arguments', () => {
    const bad: unknown[] = [
      { a: { $regex: 'x' } },
      { a: { $in: 'x' } },
      { a: { $exists: 1 } },
      { a: { $contains: 3 } },
      { a: { $gt: { b: 1 } } },
      { a: [1] },
      { $or: { a: 1 } },
      { $nor: [] },
    ];
    for (const filter of bad) expect(() => compileFilter(filter as Filter)).toThrow();
  });

  it('compiles empty sets to constants', () => {
    expect(compileFilter({ a: { $in: [] } }).sql).toBe('0');
    expect(compileFilter({}).sql).toBe('1');
  });
});

describe('sqlite document store', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps at most 16 MiB of pages in memory: the page cache counts in the server RSS (docs/operations.md#memory)', async () => {
    const conn = openSqliteConnection(path.join(dir, 'cache.db'));
    try {
      // Negative: a size in KiB, whatever the page size.
      expect(conn.db.pragma('cache_size', { simple: true })).toBe(-16 * 1024);
    } finally {
      await conn.close();
    }
  });

  it('lets the event loop turn between the pages of a long listing (its reads are synchronous)', async () => {
    const store = openSqliteDocumentStore(path.join(dir, 'pages.db'));
    const position = { commit: 1n, prepare: 1n };
    await store.ensureCollection('items', []);
    const writes = Array.from({ length: 25 }, (_, n) => ({ collection: 'items', id: `i${n}`, doc: { n }, position }));
    await store.commit(writes, 'items', position);
    const items = store.collection<{ n: number }>('items');
    // Counts the turns of the event loop while the listing runs (a timer might not be due yet).
    let turned = 0;
    let counting = true;
    const count = () => {
      if (!counting) return;
      turned++;
      setImmediate(count);
    };
    setImmediate(count);
    const all = await findAll(items, { sort: [['n', 'asc']], limit: 10 });
    counting = false;
    await store.close();
    expect(all.map((d) => d.n)).toEqual(Array.from({ length: 25 }, (_, n) => n));
    expect(turned).toBeGreaterThan(0);
  });

  it('answers an indexed filter from its expression index', async () => {
    const file = path.join(dir, 'plan.db');
    const store = openSqliteDocumentStore(file);
    await store.ensureCollection('runs', [['status', 'id']]);
    await store.close();

    const db = new Database(file);
    const where = compileFilter({ status: 'open' });
    const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT id FROM runs WHERE ${where.sql}`).all(...where.params) as {
      detail: string;
    }[];
    db.close();
    expect(plan.map((p) => p.detail).join('\n')).toContain('USING INDEX runs:status,id (<expr>=?)');
  });

  it('seeks a keyset page to its cursor through the index, both ways', async () => {
    const file = path.join(dir, 'keyset.db');
    const store = openSqliteDocumentStore(file);
    await store.ensureCollection('tasks', [['factory_uid', 'created_at']]);
    await store.close();

    const db = new Database(file);
    const where = compileFilter({ factory_uid: 'f1' });
    for (const order of ['asc', 'desc'] as const) {
      const sort = [
        ['created_at', order],
        ['id', order],
      ] as const;
      const after = ['2026-01-01T00:00:00.000Z', 'x'];
      const conditions = [where, compileAfter(sort, after), compileLeadingRange(sort, after)!];
      const plan = db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT id FROM tasks WHERE ${conditions.map((c) => `(${c.sql})`).join(' AND ')} ORDER BY ${compileOrderBy(sort)}`,
        )
        .all(...conditions.flatMap((c) => c.params)) as { detail: string }[];
      expect(plan.map((p) => p.detail).join('\n')).toContain(
        `USING INDEX tasks:factory_uid,created_at (<expr>=? AND <expr>${order === 'asc' ? '>' : '<'}?)`,
      );
    }
    db.close();
  });

  it('commits the parts of commitAll all or nothing', async () => {
    const store = openSqliteDocumentStore(path.join(dir, 'all.db'));
    await store.ensureCollection('a', []);
    await store.ensureCollection('b', []);
    const at = (n: bigint) => ({ commit: n, prepare: n });
    await expect(
      store.commitAll([
        {
          writes: [{ collection: 'a', id: '1', doc: { x: 1 }, position: at(1n) }],
          checkpoint: 'a',
          position: at(1n),
          expected: null,
        },
        {
          writes: [{ collection: 'b', id: '1', doc: { y: 1 }, position: at(1n) }],
          checkpoint: 'b',
          position: at(1n),
          expected: at(7n),
        },
      ]),
    ).rejects.toMatchObject({ checkpointName: 'b' });
    expect(await store.collection('a').get('1')).toBeNull();
    expect(await store.readCheckpoint('a')).toBeNull();
    await store.close();
  });

  it('records set-aside events in the transaction of their checkpoint: a refused document writes neither', async () => {
    const store = openSqliteDocumentStore(path.join(dir, 'set-aside.db'));
    await store.ensureCollection('a', []);
    const at = (n: bigint) => ({ commit: n, prepare: n });
    let deep: unknown = [];
    for (let i = 0; i < 1000; i++) deep = [deep];
    const skipped = {
      position: at(1n),
      stream: 's',
      revision: 0n,
      event_id: 'e1',
      event_type: 'T',
      metadata: {
        actor: { type: 'system' as const, uid: 'x' },
        team_uid: null,
        correlation_id: 'c',
        causation_id: null,
        request_id: null,
        occurred_at: '2026-01-01T00:00:00.000Z',
      },
      error: 'boom',
      at: '2026-01-01T00:00:00.000Z',
    };
    await expect(
      store.commitAll([
        {
          writes: [{ collection: 'a', id: '1', doc: { deep }, position: at(2n) }],
          checkpoint: 'a',
          position: at(2n),
          setAside: [skipped],
        },
      ]),
    ).rejects.toThrow(/malformed JSON/);
    expect(await store.listSetAside()).toEqual([]);
    expect(await store.readCheckpoint('a')).toBeNull();
    await store.close();
  });

  it('a commit that reads its checkpoint first waits for a write lock another connection holds, instead of failing at once', async () => {
    const file = path.join(dir, 'locked.db');
    const store = openSqliteDocumentStore(file);
    await store.ensureCollection('a', []);
    const at = (n: bigint) => ({ commit: n, prepare: n });
    await store.commit([{ collection: 'a', id: '1', doc: { x: 1 }, position: at(1n) }], 'a', at(1n));
    const lock = await holdWriteLock(file, 200);
    await store.commitAll([
      {
        writes: [{ collection: 'a', id: '1', doc: { x: 2 }, position: at(2n) }],
        checkpoint: 'a',
        position: at(2n),
        expected: at(1n),
      },
    ]);
    await lock.released;
    expect(await store.collection('a').get('1')).toEqual({ x: 2 });
    await store.close();
  });

  it('copies the log into the file from its own thread, while commits never do', async () => {
    const file = path.join(dir, 'checkpoint.db');
    const store = openSqliteDocumentStore(file);
    await store.ensureCollection('docs', [['n']]);
    const before = fs.statSync(file).size;
    const at = (n: bigint) => ({ commit: n, prepare: n });
    for (let n = 1; n <= 20; n++) {
      const writes = Array.from({ length: 100 }, (_, i) => ({
        collection: 'docs',
        id: `${n}-${i}`,
        doc: { n, text: 'x'.repeat(1000) },
        position: at(BigInt(n)),
      }));
      await store.commit(writes, 'docs', at(BigInt(n)));
    }
    // 2,000 documents of 1 KB: in the log at first, in the file once the thread has copied them.
    await expect
      .poll(() => fs.statSync(file).size, { timeout: 5000, interval: 100 })
      .toBeGreaterThan(before + 2_000_000);
    await store.close();
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT count(*) FROM docs').pluck().get()).toBe(2000);
    db.close();
  });

  it('lets a process that has closed the store exit normally', () => {
    const file = path.join(dir, 'exit.db');
    const script = `import { openSqliteDocumentStore } from ${JSON.stringify(path.resolve('src/readstore/sqlite.ts'))};
      const store = openSqliteDocumentStore(${JSON.stringify(file)});
      await store.ensureCollection('docs', []);
      await store.close();
      console.log('closed');`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect([run.status, run.stdout.trim()]).toEqual([0, 'closed']);
  });

  it('stores documents as JSONB and still reads, filters and updates those an earlier version wrote as text', async () => {
    const file = path.join(dir, 'jsonb.db');
    const old = new Database(file);
    old.exec(`CREATE TABLE runs (id TEXT PRIMARY KEY, doc TEXT NOT NULL)`);
    old
      .prepare('INSERT INTO runs VALUES (?, ?)')
      .run('old', JSON.stringify({ state: 'open', text: 'é "quoted" \u2028', n: 1.5 }));
    old.close();

    const store = openSqliteDocumentStore(file);
    await store.ensureCollection('runs', [['state']]);
    const at = { commit: 1n, prepare: 1n };
    await store.commit(
      [{ collection: 'runs', id: 'new', doc: { state: 'open', text: 'ü', n: 2 }, position: at }],
      'runs',
      at,
    );
    const runs = store.collection('runs');
    expect(await runs.get('old')).toEqual({ state: 'open', text: 'é "quoted" \u2028', n: 1.5 });
    const page = await runs.find({ filter: { state: 'open' }, sort: [['n', 'asc']], limit: 10 });
    expect(page.items.map((d) => d.n)).toEqual([1.5, 2]);
    await store.commit(
      [{ collection: 'runs', id: 'old', doc: { state: 'closed', text: 'é', n: 1.5 }, position: at }],
      'runs',
      at,
    );
    expect(await runs.count({ state: 'open' })).toBe(1);
    await store.close();

    const db = new Database(file, { readonly: true });
    expect(db.prepare(`SELECT id, typeof(doc) AS type FROM runs ORDER BY id`).all()).toEqual([
      { id: 'new', type: 'blob' },
      { id: 'old', type: 'blob' },
    ]);
    db.close();
  });

  it('keeps the indexes a shadow was built with when promoting it, and finds them by their columns', async () => {
    const file = path.join(dir, 'promote.db');
    const store = openSqliteDocumentStore(file);
    const wanted = [['status'], ['a.b', 'id']];
    const at = (n: bigint) => ({ commit: n, prepare: n });
    const indexes = () => {
      const db = new Database(file, { readonly: true });
      const rows = db
        .prepare(`SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name`)
        .all();
      db.close();
      return rows;
    };
    await store.ensureCollection('runs', [['status']]);
    for (const _rebuild of [1, 2]) {
      await store.ensureCollection('runs_next', wanted);
      await store.commit(
        [{ collection: 'runs_next', id: 'x', doc: { status: 'open', a: { b: 1 } }, position: at(1n) }],
        'runs_next',
        at(1n),
      );
      await store.promote('runs_next', 'runs');
      await store.ensureCollection('runs', wanted); // already there: nothing built
    }
    await store.close();

    // Not built again under the target's name: the second shadow took a free name beside the first's.
    expect(indexes()).toEqual([
      { name: 'runs_next:a.b,id#2', tbl_name: 'runs' },
      { name: 'runs_next:status#2', tbl_name: 'runs' },
    ]);
    const reopened = openSqliteDocumentStore(file);
    expect(await reopened.collection('runs').count({ status: 'open', 'a.b': 1 })).toBe(1);
    await reopened.close();
  });

  it("reads of one turn share a snapshot: its own writes show at once, another connection's from the next turn", async () => {
    const file = path.join(dir, 'snapshot.db');
    const store = openSqliteDocumentStore(file);
    await store.ensureCollection('docs', []);
    const docs = store.collection('docs');
    const at = { commit: 1n, prepare: 1n };
    expect(await docs.get('a')).toBeNull();
    await store.commit([{ collection: 'docs', id: 'a', doc: { v: 1 }, position: at }], 'docs', at);
    expect(await docs.get('a')).toEqual({ v: 1 }); // same turn: the write closed the read first

    const other = new Database(file);
    other.prepare(`UPDATE docs SET doc = jsonb('{"v":2}') WHERE id = 'a'`).run();
    expect(await docs.get('a')).toEqual({ v: 1 }); // still this turn's snapshot
    await new Promise((resolve) => setImmediate(resolve));
    expect(await docs.get('a')).toEqual({ v: 2 });
    other.close();

    // A turn that never ends (only settled promises awaited) still sees others after 100 ms.
    await docs.get('a');
    const writer = new Database(file);
    writer.prepare(`UPDATE docs SET doc = jsonb('{"v":3}') WHERE id = 'a'`).run();
    writer.close();
    expect(await docs.get('a')).toEqual({ v: 2 });
    const until = performance.now() + 120;
    while (performance.now() < until); // no turn boundary
    expect(await docs.get('a')).toEqual({ v: 3 });

    // No read transaction outlives its turn: a checkpoint can copy the whole log.
    await new Promise((resolve) => setImmediate(resolve));
    const probe = new Database(file);
    expect(probe.pragma('wal_checkpoint(TRUNCATE)')).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
    probe.close();
    await store.close();
  });

  it('lets writes through while a scan is being consumed', async () => {
    const store = openSqliteDocumentStore(path.join(dir, 'scan.db'));
    await store.ensureCollection('items', []);
    await store.commit(
      Array.from({ length: 1200 }, (_, i) => ({
        collection: 'items',
        id: `i${String(i).padStart(4, '0')}`,
        doc: { i },
        position: { commit: 1n, prepare: 1n },
      })),
      'items',
      { commit: 1n, prepare: 1n },
    );
    let seen = 0;
    for await (const [id] of store.collection('items').scan()) {
      if (seen++ === 10) {
        await store.commit([{ collection: 'items', id, doc: null, position: { commit: 2n, prepare: 2n } }], 'items', {
          commit: 2n,
          prepare: 2n,
        });
      }
    }
    expect(seen).toBe(1200);
    expect(await store.collection('items').count()).toBe(1199);
    await store.close();
  });
});
