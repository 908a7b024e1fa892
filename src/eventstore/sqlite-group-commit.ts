/**
 * Group commit for the embedded event store: appends that arrive in the same turn of the event
 * loop share one transaction (one fsync); each runs in its own savepoint so a conflict fails that
 * append alone. While another process holds the write lock, the group waits for it without
 * stalling the event loop, gathering what comes meanwhile.
 */
import type Database from 'better-sqlite3';
import { type AppendResult, ConcurrencyError, type EventToAppend, type ExpectedRevision, START } from './port.js';
import { isLockBusy, lockRetryPause, mayRetryLock, type TurnSnapshot } from '../sqlite-snapshot.js';
import { at, type EventStatements } from './sqlite-events-table.js';

interface PendingAppend {
  stream: string;
  events: EventToAppend[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

export interface GroupCommit {
  append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult>;
  /** Commits what is pending, waiting out a write lock held elsewhere: before the connection closes. */
  drain(): Promise<void>;
}

function appendOne(
  { currentRevision, insert }: EventStatements,
  { stream, events, expected }: PendingAppend,
): AppendResult {
  const current = currentRevision.get(stream)?.revision ?? null;
  const actual = current === null ? 'no_stream' : BigInt(current);
  const holds =
    expected === 'any' ||
    (expected === 'no_stream' && current === null) ||
    (expected === 'stream_exists' && current !== null) ||
    (typeof expected === 'bigint' && current !== null && BigInt(current) === expected);
  if (!holds) throw new ConcurrencyError(stream, expected, actual);
  let revision = current ?? -1;
  let position = 0;
  for (const e of events) {
    revision += 1;
    const info = insert.run(e.id, stream, revision, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata));
    position = Number(info.lastInsertRowid);
  }
  return { nextRevision: BigInt(revision), position: events.length ? at(position) : START };
}

/** One transaction of a group's appends, each in its own savepoint: the outcome of each. */
function groupTransaction(db: Database.Database, statements: EventStatements, writing: TurnSnapshot['writing']) {
  const appendSavepoint = db.transaction((p: PendingAppend) => appendOne(statements, p));
  return writing(
    db.transaction((group: PendingAppend[]) =>
      group.map((p) => {
        try {
          return { ok: true as const, result: appendSavepoint(p) };
        } catch (error) {
          return { ok: false as const, error };
        }
      }),
    ),
  );
}

/** `committed` is called after each group committed. */
export function groupCommit(
  db: Database.Database,
  statements: EventStatements,
  writing: TurnSnapshot['writing'],
  committed: () => void,
): GroupCommit {
  const commitGroup = groupTransaction(db, statements, writing);
  let pending: PendingAppend[] = [];
  /** Since when the group waiting to commit has found the write lock taken (null: it has not). */
  let busySince: number | null = null;
  let busyTries = 0;
  let retry: NodeJS.Timeout | undefined;

  function flush(): void {
    retry = undefined;
    const group = pending;
    pending = [];
    let outcomes: ReturnType<typeof commitGroup>;
    try {
      outcomes = commitGroup(group);
    } catch (error) {
      busySince ??= performance.now();
      if (isLockBusy(error) && mayRetryLock(busySince)) {
        // Another process is writing: wait for the lock without stalling, gathering what comes meanwhile.
        pending = group.concat(pending);
        retry = setTimeout(flush, lockRetryPause(busyTries++));
        return;
      }
      [busySince, busyTries] = [null, 0];
      for (const p of group) p.reject(error);
      return;
    }
    [busySince, busyTries] = [null, 0];
    for (const [i, o] of outcomes.entries()) {
      if (o.ok) group[i]!.resolve(o.result);
      else group[i]!.reject(o.error);
    }
    committed();
  }

  return {
    append(stream, events, expected) {
      return new Promise((resolve, reject) => {
        if (pending.length === 0 && !retry) setImmediate(flush);
        pending.push({ stream, events, expected, resolve, reject });
      });
    },
    async drain() {
      clearTimeout(retry);
      retry = undefined;
      while (pending.length) {
        flush();
        if (retry) {
          clearTimeout(retry);
          retry = undefined;
          await new Promise((r) => setTimeout(r, lockRetryPause(busyTries)));
        }
      }
    },
  };
}
