/** The embedded store's checkpoints, and the events read models set aside beside them (`set_aside`). */
import type { Position } from '../eventstore/port.js';
import type { SetAside, SetAsideEvent } from './port.js';
import { decodeSetAside, encodeSetAside, SET_ASIDE, type StoredSetAside } from './set-aside.js';
import type { SqliteConnection } from './sqlite-connection.js';

interface CheckpointRow {
  name: string;
  commit_pos: string;
  prepare_pos: string;
}

const toPosition = (row: CheckpointRow): Position => ({
  commit: BigInt(row.commit_pos),
  prepare: BigInt(row.prepare_pos),
});

export interface SqliteCheckpoints {
  /** Moves checkpoint `name`, inside a write transaction. */
  save(name: string, position: Position): void;
  /** Checkpoint `name`, inside a transaction (a write's, or the turn's snapshot). */
  get(name: string): Position | null;
  /** Records events set aside under `checkpoint`, inside a write transaction. */
  setAside(checkpoint: string, events: readonly SetAsideEvent[]): void;
  list(): Array<{ name: string; position: Position }>;
  listSetAside(checkpoint?: string, limit?: number): SetAside[];
  countSetAside(): Map<string, number>;
}

export function sqliteCheckpoints({ stmt, read }: SqliteConnection): SqliteCheckpoints {
  const get = (name: string): Position | null => {
    const row = stmt('SELECT * FROM checkpoints WHERE name = ?').get(name) as CheckpointRow | undefined;
    return row ? toPosition(row) : null;
  };
  return {
    save(name, position) {
      stmt(
        `INSERT INTO checkpoints (name, commit_pos, prepare_pos) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET commit_pos = excluded.commit_pos, prepare_pos = excluded.prepare_pos`,
      ).run(name, position.commit.toString(), position.prepare.toString());
    },
    get,
    setAside(checkpoint, events) {
      for (const e of events) {
        const stored = encodeSetAside(e);
        stmt(
          `INSERT INTO ${SET_ASIDE} (checkpoint, position, event) VALUES (?, ?, ?)
           ON CONFLICT (checkpoint, position) DO UPDATE SET event = excluded.event`,
        ).run(checkpoint, stored.key, JSON.stringify(stored));
      }
    },
    list() {
      const rows = read(() => stmt('SELECT * FROM checkpoints ORDER BY name').all()) as CheckpointRow[];
      return rows.map((row) => ({ name: row.name, position: toPosition(row) }));
    },
    listSetAside(checkpoint, limit) {
      // A bound LIMIT would compile the statement anew on every run: the number is checked and inlined.
      if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
        throw new Error('limit must be a positive integer');
      const where = checkpoint === undefined ? '' : 'WHERE checkpoint = ?';
      const rows = read(() =>
        stmt(
          `SELECT checkpoint, event FROM ${SET_ASIDE} ${where} ORDER BY checkpoint, position LIMIT ${limit ?? -1}`,
        ).all(...(checkpoint === undefined ? [] : [checkpoint])),
      ) as { checkpoint: string; event: string }[];
      return rows.map((row) => decodeSetAside(row.checkpoint, JSON.parse(row.event) as StoredSetAside));
    },
    countSetAside() {
      const rows = read(() => stmt(`SELECT checkpoint, count(*) AS n FROM ${SET_ASIDE} GROUP BY checkpoint`).all()) as {
        checkpoint: string;
        n: number;
      }[];
      return new Map(rows.map((row) => [row.checkpoint, row.n]));
    },
  };
}
