/**
 * Wakes the embedded event store's subscribers when events are appended. Our own appends wake them
 * at once; another process's are seen by watching the database's `data_version` (it changes when
 * another connection commits), every few milliseconds while anyone subscribes: a command answered
 * by another process waits on our projector seeing it.
 */
import { EventEmitter } from 'node:events';
import type Database from 'better-sqlite3';

const FOREIGN_WRITER_POLL_MS = 4;
/** Subscribers look again this often whatever the watch says. */
const SUBSCRIBER_FALLBACK_MS = 1000;

export interface AppendWatch {
  /** Our own appends committed. */
  appended(): void;
  /** A subscriber starts (true) or stops (false) watching; the foreign writers are watched while any does. */
  subscribed(on: boolean): void;
  /** Resolves at the next append, on abort, or after a while in any case. */
  next(signal: AbortSignal): Promise<void>;
  stop(): void;
}

/** `endRead` ends the turn's read snapshot, which would show the version it began with. */
export function appendWatch(db: Database.Database, endRead: () => void): AppendWatch {
  const appended = new EventEmitter();
  appended.setMaxListeners(0);
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let watchers = 0;
  let watch: NodeJS.Timeout | undefined;
  let seenVersion: unknown;
  return {
    appended: () => appended.emit('appended'),
    subscribed(on) {
      watchers += on ? 1 : -1;
      if (watchers > 0 && !watch) {
        watch = setInterval(() => {
          // A read transaction still open would show the version it began with.
          endRead();
          const version = dataVersion.get();
          if (version !== seenVersion) {
            seenVersion = version;
            appended.emit('appended');
          }
        }, FOREIGN_WRITER_POLL_MS);
        watch.unref();
      } else if (watchers === 0 && watch) {
        clearInterval(watch);
        watch = undefined;
      }
    },
    next: (signal) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          appended.off('appended', done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, SUBSCRIBER_FALLBACK_MS);
        appended.on('appended', done);
        signal.addEventListener('abort', done);
      }),
    stop: () => clearInterval(watch),
  };
}
