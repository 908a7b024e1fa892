/** A projection builds one read model (one collection) from the events it handles. */
import type { NewEvent, RecordedEvent } from '../eventstore/port.js';
import type { Doc, IndexSpec } from '../readstore/port.js';

/** The documents of the projection's own collection, as seen inside one batch. */
export interface Docs<D extends Doc = Doc> {
  get(id: string): Promise<D | null>;
  put(id: string, doc: D): void;
  /** Shallow-merges fields into an existing document; a missing document stays missing. */
  patch(id: string, fields: Partial<D>): void;
  delete(id: string): void;
}

type Handler<E extends NewEvent, D extends Doc> = (event: RecordedEvent<E>, docs: Docs<D>) => void | Promise<void>;

/** Builds the collection of documents `D` from the events `E`. */
export interface Projection<E extends NewEvent = NewEvent, D extends Doc = Doc> {
  name: string;
  /** Bump to rebuild blue/green: the new version builds a new collection beside the old one. */
  version: number;
  indexes: readonly IndexSpec[];
  on: { [K in E['type']]?: Handler<Extract<E, { type: K }>, D> };
}

// Projections are registered side by side whatever their event and document types.
// biome-ignore lint/suspicious/noExplicitAny: a list of projections of different event types
export type AnyProjection = Projection<any, any>;

export const projection = <E extends NewEvent, D extends Doc>(p: Projection<E, D>): Projection<E, D> => p;

/** The physical collection that holds the current version of a read model. */
export const collectionOf = (p: Pick<AnyProjection, 'name' | 'version'>): string => `${p.name}_v${p.version}`;
