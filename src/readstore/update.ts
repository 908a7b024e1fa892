/**
 * The meaning of an `Update` (port.ts) on one document, shared by the adapters: which fields it
 * may name, and the document it makes. SQLite applies it in JavaScript inside its transaction;
 * MongoDB passes `$set` and `$inc` through, after the same checks.
 */
import type { Doc, Update } from './port.js';
import { own, ownsKey, putOwn } from '../own-keys.js';

const FIELD = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Throws unless `update` writes something, and only top-level fields of plain names. */
export function checkUpdate(update: Update): void {
  const set = Object.keys(update.set ?? {});
  const inc = Object.entries(update.inc ?? {});
  if (set.length + inc.length === 0) throw new Error('an update sets or increments at least one field');
  for (const name of [...set, ...inc.map(([k]) => k)]) {
    if (!FIELD.test(name) || name === 'id') throw new Error(`invalid update field: ${JSON.stringify(name)}`);
  }
  for (const [name, by] of inc) {
    if (typeof by !== 'number' || !Number.isFinite(by)) throw new Error(`inc ${name}: expected a finite number`);
    if (ownsKey(update.set ?? {}, name)) throw new Error(`${name} is both set and incremented`);
  }
}

/** The document `update` makes of `doc` (null: a new one). */
export function applyUpdate(doc: Doc | null, update: Update): Doc {
  const next: Doc = { ...(doc ?? {}), ...(update.set ?? {}) };
  for (const [name, by] of Object.entries(update.inc ?? {})) {
    const current = own(next, name) ?? 0;
    if (typeof current !== 'number') throw new Error(`inc ${name}: the stored value is not a number`);
    putOwn(next, name, current + by);
  }
  return next;
}
