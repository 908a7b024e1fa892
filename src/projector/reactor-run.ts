/**
 * Runs one reactor (see reactor.ts): from its checkpoint, or where its replay rule says when it
 * has none, through the stored log (only the event types it reacts to), then every append as it
 * commits. A reaction that throws is tried again after a pause that doubles each time; after
 * `attempts` tries its event is set aside for this reactor (recorded beside its checkpoint, as a
 * read model's are) and the reactor goes on, so one event never stalls it for ever
 * (`shopfloor projections retry <reactor>` runs that reaction once more). The store's own
 * trouble (busy, unreachable) is nobody's fault: the reactor resumes from its checkpoint later.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { comparePositions, type EventStore, type Position, type RecordedEvent, START } from '../eventstore/port.js';
import { type DocumentStore, type Fence, FenceLost, isStoreFault, type SetAsideEvent } from '../readstore/port.js';
import { own } from '../own-keys.js';
import { setAsideOf } from './isolate.js';
import { type AnyReactor, asReactor, reactorCheckpoint } from './reactor.js';

const RETRY_AFTER_FAILURE_MS = 1000;
const BATCH_SIZE = 1000;

interface ReactorSettings {
  /** Tries of a reaction that throws before its event is set aside. */
  attempts: number;
  /** The pause before the second try; doubled before each next one. */
  backoffMs: number;
}

/** Where a reactor stands in this process: what `/readyz` and the metrics report. */
export interface ReactorProgress {
  /** `waiting`: not running here (another process holds its lease, or it stopped). */
  phase: 'waiting' | 'catching-up' | 'following';
  /** Events up to here are done: reacted to, passed by the replay rule, or set aside. */
  position: Position;
}

export interface ReactorRun<Deps> {
  reactor: AnyReactor<Deps>;
  deps: Deps;
  events: EventStore;
  docs: DocumentStore;
  log: Logger;
  signal: AbortSignal;
  /** Runs ahead of each reaction (the read models reach the event). */
  before: (event: RecordedEvent) => Promise<void>;
  fence?: Fence;
  settings: ReactorSettings;
  progress?: ReactorProgress;
}

type ReactorStart = {
  reactor: Pick<AnyReactor<never>, 'name' | 'replay'>;
  events: EventStore;
  docs: DocumentStore;
  log: Logger;
};

/** The stored checkpoint, else where the reactor's replay rule lets it start. */
async function startOf({ reactor, events, docs, log }: ReactorStart): Promise<Position> {
  const stored = await docs.readCheckpoint(reactorCheckpoint(reactor));
  if (stored || reactor.replay === 'all') return stored ?? START;
  const before = await events.beforeLastReaction(reactor.name);
  if (before)
    log.info(
      { reactor: reactor.name, after: before.commit.toString() },
      'reactor starts at the cause of its last recorded effect',
    );
  return before ?? START;
}

/** Waits `ms`, or less when `signal` aborts. */
const pause = (ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }).catch(() => undefined);

/** Not the event's fault: the caller resumes from the checkpoint instead of setting it aside. */
const nobodysFault = (error: unknown, signal: AbortSignal) =>
  signal.aborted || error instanceof FenceLost || isStoreFault(error);

/**
 * Reacts to `event` (tried again with back-off); returns the record to set aside when every try
 * threw, else null.
 */
export async function reactTo<Deps>(run: ReactorRun<Deps>, event: RecordedEvent): Promise<SetAsideEvent | null> {
  const handler = own(run.reactor.on, event.type);
  if (!handler) return null;
  await run.before(event);
  const { attempts, backoffMs } = run.settings;
  for (let attempt = 1; ; attempt++) {
    try {
      await asReactor(run.reactor.name, event, (own) => handler(own, run.deps));
      return null;
    } catch (error) {
      if (nobodysFault(error, run.signal)) throw error;
      const where = { err: error, reactor: run.reactor.name, event: event.id, type: event.type, attempt };
      if (attempt >= attempts) {
        run.log.error(where, 'reaction failed every try; its event is set aside for this reactor');
        return setAsideOf(event, error);
      }
      run.log.warn(where, 'reaction failed; trying again');
      await pause(backoffMs * 2 ** (attempt - 1), run.signal);
    }
  }
}

/** Reacts to `batch` in order, committing the checkpoint after it (and at each event set aside). */
async function reactToBatch<Deps>(run: ReactorRun<Deps>, batch: readonly RecordedEvent[], end: Position) {
  const checkpoint = reactorCheckpoint(run.reactor);
  const save = async (position: Position, setAside: SetAsideEvent[] = []) => {
    await run.docs.commitAll([{ writes: [], checkpoint, position, setAside }], run.fence);
    if (run.progress) run.progress.position = position;
  };
  for (const event of batch) {
    const failed = await reactTo(run, event);
    if (failed) await save(event.position, [failed]);
  }
  await save(end);
}

/** One pass: the stored log up to its head at the start, then live appends until aborted. */
async function pass<Deps>(run: ReactorRun<Deps>, progress: ReactorProgress) {
  const { events, signal } = run;
  let position = await startOf(run);
  progress.position = position;
  progress.phase = 'catching-up';
  const types = Object.keys(run.reactor.on);
  const head = await events.headPosition();
  while (comparePositions(position, head) < 0 && !signal.aborted) {
    const read = await events.readAll(position, BATCH_SIZE, types);
    const batch = read.filter((e) => comparePositions(e.position, head) <= 0);
    position = read.length === BATCH_SIZE ? read[read.length - 1]!.position : head;
    await reactToBatch(run, batch, position);
  }
  progress.phase = 'following';
  for await (const batch of events.subscribe(position, signal, BATCH_SIZE)) {
    await reactToBatch(run, batch, batch[batch.length - 1]!.position);
  }
}

/** Runs one reactor until `signal` aborts, or its `fence` no longer holds. */
export async function runReactor<Deps>(run: ReactorRun<Deps>): Promise<void> {
  const progress = run.progress ?? { phase: 'waiting', position: START };
  const full = { ...run, progress };
  try {
    while (!run.signal.aborted) {
      try {
        await pass(full, progress);
      } catch (error) {
        if (run.signal.aborted) return;
        if (error instanceof FenceLost) {
          run.log.warn({ reactor: run.reactor.name }, 'reactor lease taken over; leaving it to the new owner');
          return;
        }
        run.log.error({ err: error, reactor: run.reactor.name }, 'reactor failed; resuming from its checkpoint');
        await pause(RETRY_AFTER_FAILURE_MS, run.signal);
      }
    }
  } finally {
    progress.phase = 'waiting';
  }
}
