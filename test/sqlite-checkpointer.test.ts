import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointFromThread } from '../src/sqlite-checkpointer.js';

const MiB = 1024 * 1024;
let dir: string;

afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('checkpointFromThread', () => {
  it('keeps the log short under a steady stream of commits, where PASSIVE checkpoints from the thread alone let it grow without end', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-wal-'));
    const file = path.join(dir, 'db.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const checkpointer = checkpointFromThread(db, file, () => {});
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const deleteOld = db.prepare('DELETE FROM t WHERE id < ?');

    // A busy server's pace: a commit every half a millisecond or so for 3 s, each an 8 KiB
    // row in and an old one out (about 30 KiB of log), never a pause long enough for the thread to
    // copy the whole log between two commits. Without the writer's help the log would hold it all.
    const body = randomBytes(8 * 1024);
    let longest = 0;
    const end = performance.now() + 3000;
    for (let n = 1; performance.now() < end; n++) {
      const { lastInsertRowid } = insert.run(body);
      deleteOld.run(Number(lastInsertRowid) - 100);
      if (n % 20 === 0) longest = Math.max(longest, fs.statSync(`${file}-wal`).size);
      const busyUntil = performance.now() + 0.5;
      while (performance.now() < busyUntil);
      await nextTurn();
    }
    await checkpointer.stop();
    db.close();
    expect(longest).toBeGreaterThan(0);
    expect(longest).toBeLessThanOrEqual(64 * MiB);
  }, 60_000);
});
