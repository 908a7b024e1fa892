/**
 * `jsonBoundsProblem`, the one measure of every free-form JSON field: its size is the size
 * `JSON.stringify` writes, to the byte, and its depth the nesting of objects and arrays, for any
 * JSON value; and it answers at once, without exhausting the stack, for values far past a bound.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedJson, jsonBoundsProblem } from '../../src/http/schemas.js';

/** Strings with what JSON must escape or encodes long: NUL, controls, quotes, lone surrogates, astral characters. */
const edgeUnit = fc.oneof(
  fc.constantFrom('\0', '\u001b', '\n', '"', '\\', '\ud800', '\udfff', '\u2028', '\uffff', '\u{1F600}', 'é'),
  fc.string({ unit: 'binary', maxLength: 1 }),
);
/** A key holding NUL is refused outright (MongoDB cannot store it): the measures are of the others. */
const nulKey = (v: unknown): boolean =>
  v !== null && typeof v === 'object' && Object.entries(v).some(([k, x]) => k.includes('\0') || nulKey(x));
const json = fc.jsonValue({ maxDepth: 6, stringUnit: edgeUnit }).filter((v) => !nulKey(v));

const bytesOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');
const depthOf = (v: unknown): number =>
  v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;

const SEED = 20_240_517;

describe('jsonBoundsProblem', () => {
  it('measures the bytes JSON.stringify writes, to the byte', () => {
    fc.assert(
      fc.property(json, (v) => {
        const size = bytesOf(v);
        expect(jsonBoundsProblem(v, { maxBytes: size, maxDepth: 100 })).toBeNull();
        expect(jsonBoundsProblem(v, { maxBytes: size - 1, maxDepth: 100 })).toMatch(/of JSON$/);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('counts the levels of objects and arrays', () => {
    fc.assert(
      fc.property(json, (v) => {
        const depth = depthOf(v);
        expect(jsonBoundsProblem(v, { maxBytes: 1e9, maxDepth: depth })).toBeNull();
        if (depth > 0)
          expect(jsonBoundsProblem(v, { maxBytes: 1e9, maxDepth: depth - 1 })).toBe(
            `nests at most ${depth - 1} levels deep`,
          );
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('leaves the fields named in `besides` out of the size, at the top level only', () => {
    const big = 'x'.repeat(1000);
    expect(jsonBoundsProblem({ base_prompt: big, a: 1 }, { maxBytes: 100, besides: ['base_prompt'] })).toBeNull();
    expect(jsonBoundsProblem({ a: { base_prompt: big } }, { maxBytes: 100, besides: ['base_prompt'] })).not.toBeNull();
  });

  it('stops at the first bound passed, whatever lies beyond it', () => {
    const deep = JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000));
    expect(jsonBoundsProblem(deep, { maxBytes: 1e9 })).toBe('nests at most 64 levels deep');
    expect(jsonBoundsProblem({ s: 'x'.repeat(20_000_000) }, { maxBytes: 64 * 1024 })).toBe('at most 64 KB of JSON');
    expect(jsonBoundsProblem(new Array(10_000_000).fill(0), { maxBytes: 1024 * 1024 })).toBe('at most 1 MiB of JSON');
  });

  it('refuses a number that is not finite, saying where it is (JSON.parse reads 1e999 as Infinity)', () => {
    const at = (where: string) => `holds a number too large to keep${where}: numbers are finite, at most ±1.8e308`;
    expect(jsonBoundsProblem(JSON.parse('1e999'), { maxBytes: 1e9 })).toBe(at(''));
    expect(jsonBoundsProblem(JSON.parse('{"a":[0,{"b":-1e999}]}'), { maxBytes: 1e9 })).toBe(at(' at a.1.b'));
    expect(jsonBoundsProblem({ n: Number.NaN }, { maxBytes: 1e9 })).toBe(at(' at n'));
    expect(jsonBoundsProblem({ n: Number.MAX_VALUE, m: -Number.MAX_VALUE }, { maxBytes: 1e9 })).toBeNull();
  });

  it('takes 64 levels by default, and no more', () => {
    const nested = (n: number) => JSON.parse('['.repeat(n) + ']'.repeat(n));
    expect(jsonBoundsProblem(nested(64), { maxBytes: 1000 })).toBeNull();
    expect(jsonBoundsProblem(nested(65), { maxBytes: 1000 })).toBe('nests at most 64 levels deep');
  });
});

describe('boundedJson', () => {
  it('checks the bounds before the inner schema, and documents them', () => {
    const schema = boundedJson({ maxBytes: 10 });
    expect(schema.safeParse({ a: 1 }).success).toBe(true);
    expect(schema.safeParse({ a: 'more than ten' }).error?.issues).toEqual([
      expect.objectContaining({ code: 'custom', message: 'at most 10 bytes of JSON', path: [] }),
    ]);
    expect(JSON.stringify(schema.toJSONSchema())).toMatch(/"x-max-bytes":10,"x-max-depth":64/);
  });
});
