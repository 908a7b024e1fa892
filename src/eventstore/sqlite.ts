/**
 * The embedded event store: one SQLite table, a global position (the row id) and
 * UNIQUE(stream, revision). SQLite has one writer, so the order of positions is the order of
 * commits and a subscriber never skips an event that commits late.
 */
import { type EventMetadata, type EventStore, type Position, type ReadStreamOptions, START } from './port.js';
import { checkpointFromThread } from '../sqlite-checkpointer.js';
import { turnSnapshot } from '../sqlite-snapshot.js';
import { at, eventStatements, openEventsDatabase, toRecorded } from './sqlite-events-table.js';
import { groupCommit } from './sqlite-group-commit.js';
import { appendWatch } from './sqlite-append-watch.js';
import { sharedTail } from './sqlite-shared-tail.js';

export function openSqliteEventStore(file: string): EventStore {
  const db = openEventsDatabase(file);
  const statements = eventStatements(db);
  const { read, writing, end: endRead } = turnSnapshot(db);
  // A commit never copies the log back into the file (and fsyncs it): a thread does.
  const checkpointer = checkpointFromThread(db, file, endRead);
  const watch = appendWatch(db, endRead);
  const commits = groupCommit(db, statements, writing, watch.appended);
  const tail = sharedTail((position, max) => read(() => statements.readAfter.all(position, max)).map(toRecorded));

  async function* subscribe(after: Position, signal: AbortSignal, batchSize = 1000) {
    let position = Number(after.commit);
    watch.subscribed(true);
    try {
      while (!signal.aborted) {
        const events = tail.after(position, batchSize);
        if (events.length > 0) {
          position = Number(events[events.length - 1]!.position.commit);
          yield events;
          continue;
        }
        await watch.next(signal);
      }
    } finally {
      watch.subscribed(false);
    }
  }

  return {
    append: commits.append,
    async readStream(stream, { direction, fromRevision, maxCount }: ReadStreamOptions = {}) {
      const backwards = direction === 'backwards';
      const from = Number(fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0));
      const { readBackwards, readForwards, readBackwardsLimited, readForwardsLimited } = statements;
      const rows = read(() =>
        maxCount === undefined
          ? (backwards ? readBackwards : readForwards).all(stream, from)
          : (backwards ? readBackwardsLimited : readForwardsLimited).all(stream, from, maxCount),
      );
      return rows.map(toRecorded);
    },
    async readAll(after, maxCount, types) {
      const rows = read(() =>
        types
          ? statements.readAfterOfTypes.all(Number(after.commit), JSON.stringify(types), maxCount)
          : statements.readAfter.all(Number(after.commit), maxCount),
      );
      return rows.map(toRecorded);
    },
    subscribe,
    async headPosition() {
      const position = read(() => statements.head.get())?.position;
      return position == null ? START : at(position);
    },
    async beforeLastReaction(reactor) {
      const row = read(() => statements.lastReaction.get(reactor));
      const reaction = row && (JSON.parse(row.metadata) as EventMetadata).reaction;
      return reaction ? at(Number(reaction.commit) - 1) : null;
    },
    async close() {
      await commits.drain();
      watch.stop();
      endRead();
      await checkpointer.stop();
      db.close();
    },
  };
}
