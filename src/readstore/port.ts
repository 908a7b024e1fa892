/** The document store port: read models as named collections of JSON documents. */
import type { EventMetadata, Position } from '../eventstore/port.js';

export type Doc = Record<string, unknown>;
export type Scalar = string | number | boolean | null;

/**
 * A condition on one field (dot paths reach nested fields). The subset of MongoDB's query
 * language that both adapters implement; `$contains` is a case-insensitive substring match.
 */
export type Condition =
  | Scalar
  | {
      $eq?: Scalar;
      $ne?: Scalar;
      $in?: readonly Scalar[];
      $nin?: readonly Scalar[];
      $gt?: Scalar;
      $gte?: Scalar;
      $lt?: Scalar;
      $lte?: Scalar;
      $exists?: boolean;
      $contains?: string;
      /** The field is an array holding this value. */
      $has?: Scalar;
      /** The field is an array holding at least one of these values. */
      $hasAny?: readonly Scalar[];
    };

/** Every field must match; `$or` / `$and` combine sub-filters. Undefined conditions are ignored. */
export type Filter = { readonly [field: string]: Condition | readonly Filter[] | undefined };

type SortOrder = 'asc' | 'desc';
/** The last sort key must be unique (usually `id`) so that keyset paging is total. */
export type Sort = ReadonlyArray<readonly [field: string, order: SortOrder]>;

export interface FindQuery {
  filter?: Filter;
  sort: Sort;
  limit: number;
  /** The sort-key values of the last item of the previous page. */
  after?: readonly Scalar[];
  /**
   * The most documents the store may walk for this page, for a filter with conditions the index
   * it reads through does not serve (`index-choice.ts`: those are checked on each document the
   * seek walks, matching or not). When the walk reaches the bound before the page is full, `next`
   * is the sort keys of the last document walked: the page holds fewer items than `limit`, maybe
   * none, and more may follow. So a request's work is bounded whatever its filter, not by how
   * rare its matches are. Unset: no bound.
   */
  maxScan?: number;
}

export interface Page<T> {
  items: T[];
  /** Where the next page starts, when more items may follow: the sort-key values of the last item (or, with `maxScan`, of the last document walked). */
  next: Scalar[] | null;
}

export interface Collection<T extends Doc = Doc> {
  get(id: string): Promise<T | null>;
  getMany(ids: readonly string[]): Promise<Map<string, T>>;
  find(query: FindQuery): Promise<Page<T>>;
  count(filter?: Filter): Promise<number>;
  /**
   * How the store would answer `query`: SQLite's `EXPLAIN QUERY PLAN` lines, MongoDB's winning
   * plan stages. For tests that every list seeks an index instead of scanning its collection.
   */
  explain(query: FindQuery): Promise<string[]>;
  /** Every document with its id, in id order (for verification and exports). */
  scan(): AsyncIterable<[string, T]>;
}

/** An index over one or more fields, declared by the projection that owns the collection. */
export type IndexSpec = readonly string[];

/** The final state of one document after a batch: `doc: null` deletes it. */
export interface DocWrite {
  collection: string;
  id: string;
  doc: Doc | null;
  /** Position of the last event that touched the document. */
  position: Position;
}

/**
 * An event a read model could not apply (its handler threw, or the store refused the documents
 * it made). The read model skips it and goes on; the record stays beside its checkpoint for an
 * operator, until a rebuild of that read model applies it (see projector/isolate).
 */
export interface SetAsideEvent {
  position: Position;
  stream: string;
  revision: bigint;
  event_id: string;
  event_type: string;
  /** The event's metadata: which team, actor and request made it. */
  metadata: EventMetadata;
  error: string;
  /** When it was set aside (ISO 8601). */
  at: string;
}

/** A set-aside event with the checkpoint (read model collection) that skipped it. */
export interface SetAside extends SetAsideEvent {
  checkpoint: string;
}

/** One read model's part of a commit: its document writes and where its checkpoint moves. */
export interface CheckpointedWrites {
  writes: readonly DocWrite[];
  checkpoint: string;
  position: Position;
  /** As for `commit`: the checkpoint this writer last read (null: none yet). */
  expected?: Position | null;
  /** Events this read model skipped, recorded under its checkpoint in the same commit. */
  setAside?: readonly SetAsideEvent[];
}

/**
 * A conditional write of one document, outside any read model: state that the processes of one
 * store share and that no event records (ownership leases, webhook budgets, worker presence).
 * Such collections are made with `ensureCollection` like any other and read through
 * `collection()`; only `update` and `remove` write them.
 */
export interface Update {
  /** A condition on the stored document: nothing is written unless it holds. */
  when?: Filter;
  /** Top-level fields to set. */
  set?: Doc;
  /** Top-level numeric fields to add to (a missing field counts as 0). */
  inc?: Readonly<Record<string, number>>;
  /** Creates the document from `set` and `inc` when there is none, whatever `when` says. */
  upsert?: boolean;
}

/**
 * A commit made only while one document matches a condition: the holder of an ownership lease
 * writes only while its fencing token is still the stored one. Checked in the commit's own
 * transaction on SQLite; on MongoDB just before it (its writes are guarded by position anyway).
 */
export interface Fence {
  collection: string;
  id: string;
  when: Filter;
}

export interface DocumentStore {
  /**
   * Applies `update` to document `id` of `collection` atomically (one conditional statement, across
   * processes too); returns the document as written, or null when `when` did not hold or there
   * was no document to update.
   */
  update<T extends Doc = Doc>(collection: string, id: string, update: Update): Promise<T | null>;
  /** Deletes document `id` when it exists and matches `when`; says whether it did. */
  remove(collection: string, id: string, when?: Filter): Promise<boolean>;
  ensureCollection(name: string, indexes: readonly IndexSpec[]): Promise<void>;
  collection<T extends Doc = Doc>(name: string): Collection<T>;
  /**
   * Writes documents and moves the checkpoint `checkpointName` to `position`, as one unit: in
   * one transaction on SQLite; on MongoDB each document write is guarded by its position.
   * With `expected` (null: no checkpoint yet), throws CheckpointMoved and writes nothing when
   * the stored checkpoint is another: somebody else (a rebuild) moved it since it was read.
   */
  commit(
    writes: readonly DocWrite[],
    checkpointName: string,
    position: Position,
    expected?: Position | null,
  ): Promise<void>;
  /**
   * Several read models' commits as one: one transaction on SQLite (all or nothing); on MongoDB
   * one after the other, each as `commit`. CheckpointMoved names the first checkpoint that moved.
   * With `fence`, throws FenceLost and writes nothing when its document no longer matches.
   */
  commitAll(parts: readonly CheckpointedWrites[], fence?: Fence): Promise<void>;
  readCheckpoint(name: string): Promise<Position | null>;
  listCheckpoints(): Promise<Array<{ name: string; position: Position }>>;
  /** Events set aside under `checkpoint` (every checkpoint when omitted), by checkpoint and position. */
  listSetAside(checkpoint?: string, limit?: number): Promise<SetAside[]>;
  /** How many events are set aside under each checkpoint that has any. */
  countSetAside(): Promise<Map<string, number>>;
  /** Forgets the event set aside under `checkpoint` at `position` (a reactor's retry did it); says whether there was one. */
  clearSetAside(checkpoint: string, position: Position): Promise<boolean>;
  /**
   * Replaces collection `target` (its checkpoint and set-aside events too) by `source`,
   * atomically where possible.
   */
  promote(source: string, target: string): Promise<void>;
  /** Drops a collection, its checkpoint and its set-aside events. */
  drop(name: string): Promise<void>;
  listCollections(): Promise<string[]>;
  close(): Promise<void>;
}

export class CheckpointMoved extends Error {
  constructor(readonly checkpointName: string) {
    super(`checkpoint ${checkpointName} was moved by another writer`);
    this.name = 'CheckpointMoved';
  }
}

/** A fenced commit found its fence gone: the writer lost the lease it wrote under. */
export class FenceLost extends Error {
  constructor(readonly fence: Fence) {
    super(`${fence.collection}/${fence.id} no longer holds: the lease was lost, nothing was written`);
    this.name = 'FenceLost';
  }
}

const STORE_FAULT_CODES =
  /^SQLITE_(BUSY|LOCKED|FULL|IOERR|NOMEM|READONLY|CANTOPEN|CORRUPT|NOTADB|INTERRUPT|PROTOCOL|AUTH|PERM|ABORT)/;

/**
 * Whether an error is the store's own trouble (busy, full, unreachable) rather than a refusal of
 * the documents written: such a failure says nothing about the events, none is set aside for it.
 */
export const isStoreFault = (error: unknown): boolean => {
  const e = error as { code?: unknown; name?: unknown; errorLabels?: unknown } | null;
  if (typeof e?.code === 'string' && STORE_FAULT_CODES.test(e.code)) return true;
  if (
    typeof e?.name === 'string' &&
    /^Mongo(Network|ServerSelection|NotConnected|TopologyClosed|PoolClosed)/.test(e.name)
  )
    return true;
  return Array.isArray(e?.errorLabels) && e.errorLabels.some((l) => /Retryable|Transient/.test(String(l)));
};
export const samePosition = (a: Position | null, b: Position | null): boolean =>
  a === b || (a !== null && b !== null && a.commit === b.commit && a.prepare === b.prepare);
