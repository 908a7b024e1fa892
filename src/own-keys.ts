/**
 * Records keyed by what comes from outside (an id or a name in a path or a body, a field of an
 * event, a model id a worker reports) are read and written through these. `record[key]` and
 * `key in record` also find what every object inherits (`constructor`, `toString`, `valueOf`,
 * `hasOwnProperty`, `__proto__`), so an id of that name "existed": `DELETE
 * /me/api-keys/constructor` revoked a key that never was. And `record[key] = value` with
 * `__proto__` sets the record's prototype instead of a key. test/unit/own-keys.test.ts finds any
 * other indexing of a string-keyed record with a key that is not a literal.
 */

/** The value `record` holds under `key` itself, never one every object inherits. */
export const own = <V>(record: Readonly<Record<string, V>>, key: string): V | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined;

/** Whether `record` holds `key` itself. */
export const ownsKey = (record: object, key: string): boolean => Object.hasOwn(record, key);

/** Puts `value` under `key` as a key of `record`'s own, `__proto__` too. */
export function putOwn<V>(record: Record<string, V>, key: string, value: NoInfer<V>): void {
  Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
}
