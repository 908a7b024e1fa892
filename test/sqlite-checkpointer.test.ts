import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointFromThread } from '../src/sqlite-checkpointer.js';

const MiB = 1024 * 1024;
let dir: string;

afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('checkpointFromThread', () => {
  it('keeps the log short under a steady stream of commits, where PASSIVE checkpoints alone let it grow without end', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-wal-'));
    const file = path.join(dir, 'db.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const checkpointer = checkpointFromThread(db, file);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const deleteOld = db.prepare('DELETE FROM t WHERE id < ?');

    // A busy server's pace, never a pause long enough for a checkpoint to catch up: six commits
    // every 5 ms, each an 8 KiB row in and an old one out (about 30 KiB of log), for 4 s: some
    // 150 MiB of log. Without restarts the log would hold all of it.
    const body = randomBytes(8 * 1024);
    let longest = 0;
    for (let burst = 0; burst < 800; burst++) {
      for (let n = 0; n < 6; n++) {
        const { lastInsertRowid } = insert.run(body);
        deleteOld.run(Number(lastInsertRowid) - 100);
      }
      longest = Math.max(longest, fs.statSync(`${file}-wal`).size);
      await sleep(5);
    }
    await checkpointer.stop();
    db.close();
    expect(longest).toBeGreaterThan(0);
    expect(longest).toBeLessThanOrEqual(64 * MiB);
  }, 60_000);
});
