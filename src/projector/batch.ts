/**
 * Applies a batch of events to one projection in memory and yields the final state of each
 * touched document, so that many events on one document cost one write. Documents that are only
 * patched are loaded together, once, when the batch is flushed.
 */
import type { Position, RecordedEvent } from '../eventstore/port.js';
import type { Collection, Doc, DocWrite } from '../readstore/port.js';
import type { AnyProjection, Docs } from './projection.js';

interface Entry {
  /** False while the stored document has not been read: `patches` wait to be applied to it. */
  known: boolean;
  doc: Doc | null;
  patches: Doc[];
  position: Position;
}

class DocBatch implements Docs {
  readonly entries = new Map<string, Entry>();
  position!: Position;

  constructor(private readonly stored: Collection) {}

  async get(id: string): Promise<Doc | null> {
    const entry = this.entries.get(id);
    if (entry?.known) return entry.doc;
    const doc = await this.stored.get(id);
    const resolved = entry ? applyPatches(doc, entry.patches) : doc;
    this.entries.set(id, { known: true, doc: resolved, patches: [], position: entry?.position ?? this.position });
    return resolved;
  }

  put(id: string, doc: Doc): void {
    this.entries.set(id, { known: true, doc, patches: [], position: this.position });
  }

  patch(id: string, fields: Doc): void {
    const entry = this.entries.get(id);
    if (!entry) this.entries.set(id, { known: false, doc: null, patches: [fields], position: this.position });
    else {
      if (entry.known) entry.doc = entry.doc && { ...entry.doc, ...fields };
      else entry.patches.push(fields);
      entry.position = this.position;
    }
  }

  delete(id: string): void {
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
export function projectionBatch(projection: AnyProjection, collection: string, stored: Collection) {
  const batch = new DocBatch(stored);
  return {
    async apply(events: readonly RecordedEvent[]): Promise<void> {
      for (const event of events) {
        const handler = projection.on[event.type];
        if (!handler) continue;
        batch.position = event.position;
        await handler(event, batch);
      }
    },
    writes: (): Promise<DocWrite[]> => batch.writes(collection),
  };
}

/** Runs the projection's handlers over `events` and returns the document writes they produce. */
export async function applyEvents(
  projection: AnyProjection,
  collection: string,
  stored: Collection,
  events: readonly RecordedEvent[],
): Promise<DocWrite[]> {
  const batch = projectionBatch(projection, collection, stored);
  await batch.apply(events);
  return batch.writes();
}
