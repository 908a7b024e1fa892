/**
 * A projection builds one read model from the events it handles: a collection of documents of
 * one shape, and, when it needs documents of other shapes to build it (which task a conversation
 * is bound to), tables of its own beside it, each of one shape too, written in the same commit.
 */
import type { NewEvent, RecordedEvent } from '../eventstore/port.js';
import type { Doc, IndexSpec } from '../readstore/port.js';

/** The documents of one collection of the projection, as seen inside one batch. */
export interface Docs<D extends Doc = Doc> {
  get(id: string): Promise<D | null>;
  put(id: string, doc: D): void;
  /** Shallow-merges fields into an existing document; a missing document stays missing. */
  patch(id: string, fields: Partial<D>): void;
  delete(id: string): void;
}

/** The document shape of each of a projection's tables, by table name. */
export type Tables = Record<string, Doc>;

/** The projection's own documents, and its tables by name. */
export interface ProjectionDocs<D extends Doc, T extends Tables> extends Docs<D> {
  in<K extends keyof T & string>(table: K): Docs<T[K]>;
}

type Handler<E extends NewEvent, D extends Doc, T extends Tables> = (
  event: RecordedEvent<E>,
  docs: ProjectionDocs<D, T>,
) => void | Promise<void>;

/** Builds the collection of documents `D` (and the tables `T`) from the events `E`. */
export interface Projection<E extends NewEvent = NewEvent, D extends Doc = Doc, T extends Tables = Record<never, Doc>> {
  name: string;
  /** Bump to rebuild blue/green: the new version builds new collections beside the old ones. */
  version: number;
  indexes: readonly IndexSpec[];
  /** Further tables, each with its indexes. */
  tables?: { readonly [K in keyof T]: readonly IndexSpec[] };
  on: { [K in E['type']]?: Handler<Extract<E, { type: K }>, D, T> };
}

// Projections are registered side by side whatever their event and document types.
// biome-ignore lint/suspicious/noExplicitAny: a list of projections of different event types
export type AnyProjection = Projection<any, any, any>;

/** Suffixes of the collections rebuilds and checks write beside the live ones. */
const RESERVED = new Set(['rebuild', 'verify']);

export const projection = <E extends NewEvent, D extends Doc, T extends Tables = Record<never, Doc>>(
  p: Projection<E, D, T>,
): Projection<E, D, T> => {
  for (const table of Object.keys(p.tables ?? {}))
    if (RESERVED.has(table) || !/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/.test(table))
      throw new Error(`${p.name}: bad table name ${table}`);
  return p;
};

/** The physical collection that holds the current version of a read model. */
export const collectionOf = (p: Pick<AnyProjection, 'name' | 'version'>): string => `${p.name}_v${p.version}`;

/** The collection of table `table` of the read model kept in `collection`. */
export const tableOf = (collection: string, table: string): string => `${collection}__${table}`;

/** Every collection of `projection` kept under `collection` (its own, then its tables'), with its indexes. */
export const collectionsOf = (
  projection: AnyProjection,
  collection: string,
): Array<{ name: string; indexes: readonly IndexSpec[] }> => [
  { name: collection, indexes: projection.indexes },
  ...Object.entries(projection.tables ?? {}).map(([table, indexes]) => ({
    name: tableOf(collection, table),
    indexes: indexes as readonly IndexSpec[],
  })),
];
