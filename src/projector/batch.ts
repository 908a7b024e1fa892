/**
 * Applies a batch of events to one projection in memory and yields the final state of each
 * touched document, so that many events on one document cost one write. Documents that are only
 * patched are loaded together, once, when the batch is flushed.
 *
 * A handler that throws is the event's fault, not the batch's: the changes it made to the batch
 * are undone, the event is listed in `failed()`, and the batch goes on without it. A read of the
 * stored documents that fails is the store's fault: it fails the batch.
 */
import type { Position, RecordedEvent } from '../eventstore/port.js';
import type { Collection, Doc, DocWrite } from '../readstore/port.js';
import { type AnyProjection, type Docs, tableOf } from './projection.js';
import { own } from '../own-keys.js';

interface Entry {
  /** False while the stored document has not been read: `patches` wait to be applied to it. */
  known: boolean;
  doc: Doc | null;
  patches: Doc[];
  position: Position;
}

/** An entry as it was before a change of the current event (patches only ever grow). */
interface Saved {
  id: string;
  entry: Entry | undefined;
  known: boolean;
  doc: Doc | null;
  patches: number;
  position: Position;
}

/** An event whose handler threw, and what it threw. */
export interface Failed {
  event: RecordedEvent;
  error: unknown;
}

/** A read of stored documents failed inside a handler: the store's trouble, not the event's. */
class StoreReadFailed extends Error {
  constructor(readonly error: unknown) {
    super('reading the stored documents failed');
  }
}

class DocBatch implements Docs {
  readonly entries = new Map<string, Entry>();
  position!: Position;
  /** The entries the current event changed, as they were before each change (a list is cheapest). */
  private readonly saved: Saved[] = [];

  constructor(private readonly stored: Collection) {}

  /** Starts an event: what it changes from now on can be undone. */
  begin(position: Position): void {
    this.position = position;
    this.saved.length = 0;
  }

  /** Takes back every change of the current event, the last first. */
  undo(): void {
    for (const s of this.saved.reverse()) {
      if (!s.entry) this.entries.delete(s.id);
      else {
        Object.assign(s.entry, { known: s.known, doc: s.doc, position: s.position });
        s.entry.patches.length = s.patches;
        this.entries.set(s.id, s.entry);
      }
    }
    this.saved.length = 0;
  }

  private save(id: string): void {
    const entry = this.entries.get(id);
    this.saved.push(
      entry
        ? { id, entry, known: entry.known, doc: entry.doc, patches: entry.patches.length, position: entry.position }
        : { id, entry, known: false, doc: null, patches: 0, position: this.position },
    );
  }

  async get(id: string): Promise<Doc | null> {
    const entry = this.entries.get(id);
    if (entry?.known) return entry.doc;
    let doc: Doc | null;
    try {
      doc = await this.stored.get(id);
    } catch (error) {
      throw new StoreReadFailed(error);
    }
    const resolved = entry ? applyPatches(doc, entry.patches) : doc;
    this.entries.set(id, { known: true, doc: resolved, patches: [], position: entry?.position ?? this.position });
    return resolved;
  }

  put(id: string, doc: Doc): void {
    this.save(id);
    this.entries.set(id, { known: true, doc, patches: [], position: this.position });
  }

  patch(id: string, fields: Doc): void {
    this.save(id);
    const entry = this.entries.get(id);
    if (!entry) this.entries.set(id, { known: false, doc: null, patches: [fields], position: this.position });
    else {
      if (entry.known) entry.doc = entry.doc && { ...entry.doc, ...fields };
      else entry.patches.push(fields);
      entry.position = this.position;
    }
  }

  delete(id: string): void {
    this.save(id);
    this.entries.set(id, { known: true, doc: null, patches: [], position: this.position });
  }

  async writes(collection: string): Promise<DocWrite[]> {
    const unknown = [...this.entries].filter(([, e]) => !e.known).map(([id]) => id);
    const stored = unknown.length ? await this.stored.getMany(unknown) : new Map<string, Doc>();
    const writes: DocWrite[] = [];
    for (const [id, e] of this.entries) {
      if (!e.known && !stored.has(id)) continue; // patches of a document that never existed
      const doc = e.known ? e.doc : applyPatches(stored.get(id) ?? null, e.patches);
      writes.push({ collection, id, doc, position: e.position });
    }
    return writes;
  }
}

const applyPatches = (doc: Doc | null, patches: Doc[]): Doc | null =>
  doc && patches.reduce((d, p) => ({ ...d, ...p }), doc);

/**
 * A projection's pending changes over any number of events, applied a page at a time, until
 * `writes()` hands them over: events die with their page, only the touched documents stay.
 */
export function projectionBatch(projection: AnyProjection, collection: string, open: (name: string) => Collection) {
  const batch = new DocBatch(open(collection));
  // Its tables, each a batch of its own, opened when a handler first reaches for one.
  const tables = new Map<string, DocBatch>();
  const all = [batch];
  const docs = Object.assign(batch, {
    in(table: string): Docs {
      if (!own(projection.tables ?? {}, table)) throw new Error(`${projection.name} has no table ${table}`);
      let t = tables.get(table);
      if (!t) {
        t = new DocBatch(open(tableOf(collection, table)));
        t.begin(batch.position);
        tables.set(table, t);
        all.push(t);
      }
      return t;
    },
  });
  const failed: Failed[] = [];
  return {
    async apply(events: readonly RecordedEvent[]): Promise<void> {
      for (const event of events) {
        const handler = own(projection.on, event.type);
        if (!handler) continue;
        for (const b of all) b.begin(event.position);
        try {
          await handler(event, docs);
        } catch (error) {
          if (error instanceof StoreReadFailed) throw error.error;
          for (const b of all) b.undo();
          failed.push({ event, error });
        }
      }
    },
    async writes(): Promise<DocWrite[]> {
      const own = await batch.writes(collection);
      const others = await Promise.all([...tables].map(([table, t]) => t.writes(tableOf(collection, table))));
      return [...own, ...others.flat()];
    },
    /** The events whose handlers threw, in log order: none of their changes is in `writes()`. */
    failed: (): readonly Failed[] => failed,
  };
}

/**
 * Runs the projection's handlers over `events` and returns the document writes they produce;
 * a handler that throws fails the call (nothing is set aside here).
 */
export async function applyEvents(
  projection: AnyProjection,
  collection: string,
  open: (name: string) => Collection,
  events: readonly RecordedEvent[],
): Promise<DocWrite[]> {
  const batch = projectionBatch(projection, collection, open);
  await batch.apply(events);
  const [failed] = batch.failed();
  if (failed) throw failed.error;
  return batch.writes();
}
