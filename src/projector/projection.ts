/** A projection builds one read model (one collection) from the events it handles. */
import type { NewEvent, RecordedEvent } from '../eventstore/port.js';
import type { Doc, IndexSpec } from '../readstore/port.js';

/** The documents of the projection's own collection, as seen inside one batch. */
export interface Docs {
  get(id: string): Promise<Doc | null>;
  put(id: string, doc: Doc): void;
  /** Shallow-merges fields into an existing document; a missing document stays missing. */
  patch(id: string, fields: Doc): void;
  delete(id: string): void;
}

type Handler<E extends NewEvent> = (event: RecordedEvent<E>, docs: Docs) => void | Promise<void>;

export interface Projection<E extends NewEvent = NewEvent> {
  name: string;
  /** Bump to rebuild blue/green: the new version builds a new collection beside the old one. */
  version: number;
  indexes: readonly IndexSpec[];
  on: { [K in E['type']]?: Handler<Extract<E, { type: K }>> };
}

// Projections are registered side by side whatever their event types.
// biome-ignore lint/suspicious/noExplicitAny: a list of projections of different event types
export type AnyProjection = Projection<any>;

export const projection = <E extends NewEvent>(p: Projection<E>): Projection<E> => p;

/** The physical collection that holds the current version of a read model. */
export const collectionOf = (p: Pick<AnyProjection, 'name' | 'version'>): string => `${p.name}_v${p.version}`;
