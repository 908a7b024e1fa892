/** The event store port: what every adapter (SQLite, EventStoreDB) must provide. */

/** A place in the global log. SQLite uses the row position for both; EventStoreDB has two. */
export interface Position {
  commit: bigint;
  prepare: bigint;
}

export const START: Position = { commit: -1n, prepare: -1n };

export const comparePositions = (a: Position, b: Position): number =>
  a.commit === b.commit ? Number(a.prepare - b.prepare) : a.commit < b.commit ? -1 : 1;

/** A position as text that sorts as the log does, for read models that remember one. */
export const positionKey = (p: Position): string =>
  `${p.commit.toString().padStart(20, '0')}:${p.prepare.toString().padStart(20, '0')}`;

/** The position a reaction recorded for its cause. */
export const causeOf = (r: Reaction): Position => ({ commit: BigInt(r.commit), prepare: BigInt(r.prepare) });

/** `revision` is the revision of the last event the caller saw (0-based). */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export interface EventMetadata {
  actor: { type: 'user' | 'agent' | 'system'; uid: string };
  team_uid: string | null;
  correlation_id: string;
  causation_id: string | null;
  request_id: string | null;
  occurred_at: string;
  /** On the events a reactor's reaction appended: the reactor, and where its cause is in the log. */
  reaction?: Reaction;
}

/** Which reactor appended an event, reacting to the event at `commit`/`prepare` (decimal strings). */
export interface Reaction {
  reactor: string;
  commit: string;
  prepare: string;
}

/** What a decider returns: a type and plain JSON data. */
export interface NewEvent {
  type: string;
  // Any JSON object: interfaces without index signatures are welcome.
  data: object;
}

export interface EventToAppend extends NewEvent {
  id: string;
  metadata: EventMetadata;
}

export interface RecordedEvent<E extends NewEvent = NewEvent> {
  id: string;
  stream: string;
  revision: bigint;
  position: Position;
  type: E['type'];
  data: E['data'];
  metadata: EventMetadata;
}

export interface AppendResult {
  /** Revision of the last event written: pass it as the next expected revision. */
  nextRevision: bigint;
  /** Position of the last event written (START when none was). */
  position: Position;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive revision to start from (forwards: lowest, backwards: highest). */
  fromRevision?: bigint;
  maxCount?: number;
}

export interface EventStore {
  append(stream: string, events: EventToAppend[], expected: ExpectedRevision): Promise<AppendResult>;
  /** Events of one stream; an unknown stream reads as empty. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * Up to `maxCount` events after `after` (exclusive), in global order; with `types`, only
   * events of those types (a rebuild skips the rest of the log without reading it).
   */
  readAll(after: Position, maxCount: number, types?: readonly string[]): Promise<RecordedEvent[]>;
  /**
   * Batches of events after `after`: first the stored ones, then live appends as they commit.
   * Ends when `signal` aborts.
   */
  subscribe(after: Position, signal: AbortSignal, batchSize?: number): AsyncIterable<RecordedEvent[]>;
  /** Position of the newest event, or START on an empty store. */
  headPosition(): Promise<Position>;
  /**
   * The position just before the cause of the newest event reactor `reactor` appended
   * (`metadata.reaction`), so that reading after it starts with that cause; null when it appended
   * none. A reactor without a checkpoint may skip the log up to there.
   */
  beforeLastReaction(reactor: string): Promise<Position | null>;
  close(): Promise<void>;
}

/** The expected revision did not hold: somebody else wrote to the stream first. */
export class ConcurrencyError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'ConcurrencyError';
  }
}
