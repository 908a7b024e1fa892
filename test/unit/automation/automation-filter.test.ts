import { describe, expect, it } from 'vitest';
import { FILTER_LIMITS, type FieldMap, matchFilter, validateFilter } from '../../../commands/automation/filter.js';

const matches = (filter: FieldMap | null, body: unknown) => matchFilter(filter, body).matched;

describe('matchFilter: the matching rules', () => {
  const cases: Array<[string, FieldMap | null, unknown, boolean]> = [
    // no filter
    ['no filter matches any body', null, { a: 1 }, true],
    ['an empty filter matches any body', {}, 'scalar', true],
    // bare lists and scalars
    ['a bare list allows its values', { action: ['opened', 'reopened'] }, { action: 'reopened' }, true],
    ['a bare list refuses other values', { action: ['opened'] }, { action: 'closed' }, false],
    ['a bare scalar is equality', { action: 'opened' }, { action: 'opened' }, true],
    ['a bare scalar refuses another value', { action: 'opened' }, { action: 'closed' }, false],
    ['every key must match (one fails)', { action: 'opened', draft: false }, { action: 'opened', draft: true }, false],
    ['every key must match (all hold)', { action: 'opened', draft: false }, { action: 'opened', draft: false }, true],
    // JSON equality, no coercion
    ['a number is not its string', { n: [1] }, { n: '1' }, false],
    ['a string is not its number', { n: ['1'] }, { n: 1 }, false],
    ['1 equals 1.0 (same JSON number)', { n: [1] }, { n: 1.0 }, true],
    ['true is not "true"', { b: [true] }, { b: 'true' }, false],
    ['null matches null', { v: [null] }, { v: null }, true],
    ['null is not missing for in', { v: [null] }, {}, false],
    ['strings compare case-sensitively', { s: ['Open'] }, { s: 'open' }, false],
    ['an object value is not a listed scalar', { o: ['x'] }, { o: { x: 1 } }, false],
    // in / not_in / exists
    ['in allows its values', { a: { in: ['x', 'y'] } }, { a: 'y' }, true],
    ['in refuses others', { a: { in: ['x'] } }, { a: 'z' }, false],
    ['not_in refuses its values', { a: { not_in: ['x'] } }, { a: 'x' }, false],
    ['not_in allows others', { a: { not_in: ['x'] } }, { a: 'y' }, true],
    ['in and not_in together both hold', { a: { in: ['x', 'y'], not_in: ['z'] } }, { a: 'x' }, true],
    ['exists: true holds for a present field', { a: { exists: true } }, { a: 0 }, true],
    ['exists: true holds for a present null', { a: { exists: true } }, { a: null }, true],
    ['exists: false refuses a present field', { a: { exists: false } }, { a: null }, false],
    ['exists with in: both hold', { a: { exists: true, in: ['x'] } }, { a: 'x' }, true],
    // missing keys
    ['a missing key fails a bare list', { a: ['x'] }, {}, false],
    ['a missing key fails in', { a: { in: ['x'] } }, {}, false],
    ['a missing key fails exists: true', { a: { exists: true } }, {}, false],
    ['a missing key passes not_in', { a: { not_in: ['x'] } }, {}, true],
    ['a missing key passes exists: false', { a: { exists: false } }, {}, true],
    ['an inherited property is missing', { toString: { exists: true } }, {}, false],
    // nested objects
    [
      'nested objects reach nested fields',
      { pull_request: { base: { ref: 'main' } } },
      { pull_request: { base: { ref: 'main' } } },
      true,
    ],
    [
      'a nested field can fail',
      { pull_request: { base: { ref: 'main' } } },
      { pull_request: { base: { ref: 'dev' } } },
      false,
    ],
    ['a missing parent makes nested fields missing (in fails)', { pr: { state: ['open'] } }, {}, false],
    [
      'a missing parent makes nested fields missing (exists: false passes)',
      { pr: { merged_at: { exists: false } } },
      { other: 1 },
      true,
    ],
    ['a scalar parent has no nested fields', { pr: { state: { not_in: ['x'] } } }, { pr: 'text' }, true],
    ['a null parent has no nested fields', { pr: { state: ['open'] } }, { pr: null }, false],
    // arrays in the payload
    ['an array matches when any element is allowed', { labels: ['bug'] }, { labels: ['docs', 'bug'] }, true],
    ['an array fails when no element is allowed', { labels: ['bug'] }, { labels: ['docs'] }, false],
    ['an empty array fails in', { labels: ['bug'] }, { labels: [] }, false],
    [
      'not_in refuses an array holding an excluded value',
      { labels: { not_in: ['wontfix'] } },
      { labels: ['bug', 'wontfix'] },
      false,
    ],
    ['not_in allows an array holding none', { labels: { not_in: ['wontfix'] } }, { labels: ['bug'] }, true],
    ['not_in allows an empty array', { labels: { not_in: ['wontfix'] } }, { labels: [] }, true],
    ['exists: true holds for an empty array', { labels: { exists: true } }, { labels: [] }, true],
    [
      'a nested map matches when one element matches every key',
      { commits: { author: 'ann', verified: true } },
      {
        commits: [
          { author: 'bob', verified: true },
          { author: 'ann', verified: true },
        ],
      },
      true,
    ],
    [
      'keys must hold on the same element',
      { commits: { author: 'ann', verified: true } },
      {
        commits: [
          { author: 'bob', verified: true },
          { author: 'ann', verified: false },
        ],
      },
      false,
    ],
    ['only one level of arrays is looked into', { a: ['x'] }, { a: [['x']] }, false],
    [
      'a body that is an array matches when an element matches',
      { kind: 'push' },
      [{ kind: 'tag' }, { kind: 'push' }],
      true,
    ],
    ['a scalar body has no fields', { kind: { exists: false } }, 42, true],
    ['a scalar body fails in', { kind: ['push'] }, 'push', false],
    // keys are field names, even odd ones
    ['a dotted key is one field, not a path', { 'a.b': 1 }, { 'a.b': 1, a: { b: 2 } }, true],
  ];
  it.each(cases)('%s', (_name, filter, body, expected) => {
    expect(matches(filter, body)).toBe(expected);
  });

  it('names every failed path with a reason', () => {
    const verdict = matchFilter(
      { action: ['opened'], pr: { base: { ref: 'main' } }, draft: { exists: false } },
      { action: 'closed', pr: { base: { ref: 'dev' } } },
    );
    expect(verdict).toEqual({
      matched: false,
      failures: [
        { path: 'payload.action', reason: '"closed" is not one of ["opened"]' },
        { path: 'payload.pr.base.ref', reason: '"dev" is not one of ["main"]' },
      ],
    });
    expect(matchFilter({ a: { exists: true } }, {})).toEqual({
      matched: false,
      failures: [{ path: 'payload.a', reason: 'the field is missing' }],
    });
    expect(matchFilter({ items: { id: 1 } }, { items: [] }, 'f')).toEqual({
      matched: false,
      failures: [{ path: 'f.items', reason: 'the array is empty' }],
    });
  });

  it('survives a deeply nested body (recursion follows the filter, not the body)', () => {
    const deep = JSON.parse('['.repeat(50_000) + ']'.repeat(50_000));
    expect(matches({ a: ['x'] }, deep)).toBe(false);
    expect(matches({ a: { exists: false } }, { a0: deep })).toBe(true);
  });
});

describe('validateFilter: invalid filters are refused with their paths', () => {
  const valid: FieldMap[] = [
    { action: 'opened' },
    { action: ['opened', 'closed'], number: [1, 2], draft: false, x: null },
    { a: { in: ['x'], not_in: ['y'], exists: true } },
    { a: { b: { c: { exists: false } } } },
  ];
  it.each(valid.map((f) => [JSON.stringify(f), f]))('accepts %s', (_name, filter) => {
    expect(validateFilter(filter, 'p')).toEqual([]);
  });

  const invalid: Array<[string, unknown, string]> = [
    ['not an object', ['a'], 'p'],
    ['a scalar filter', 'x', 'p'],
    ['an empty list', { a: [] }, 'p.a'],
    ['an object in a list', { a: [{ b: 1 }] }, 'p.a.0'],
    ['a list in a list', { a: [['b']] }, 'p.a.0'],
    ['in that is not a list', { a: { in: 'x' } }, 'p.a.in'],
    ['an empty not_in', { a: { not_in: [] } }, 'p.a.not_in'],
    ['exists that is not a boolean', { a: { exists: 'yes' } }, 'p.a.exists'],
    ['an operator object with a field key', { a: { in: ['x'], b: 1 } }, 'p.a.b'],
    ['an unknown operator beside a known one', { a: { exists: true, regex: 'x' } }, 'p.a.regex'],
    ['a value in both in and not_in', { a: { in: ['x'], not_in: ['x'] } }, 'p.a'],
    ['exists: false with in', { a: { exists: false, in: ['x'] } }, 'p.a'],
    ['an empty nested object', { a: {} }, 'p.a'],
    ['a string longer than the limit', { a: 'x'.repeat(FILTER_LIMITS.maxStringLength + 1) }, 'p.a'],
    [
      'a list longer than the limit',
      { a: Array.from({ length: FILTER_LIMITS.maxListValues + 1 }, (_, i) => i) },
      'p.a',
    ],
    [
      'nesting deeper than the limit',
      JSON.parse(`${'{"a":'.repeat(FILTER_LIMITS.maxDepth + 1)}1${'}'.repeat(FILTER_LIMITS.maxDepth + 1)}`),
      `p${'.a'.repeat(FILTER_LIMITS.maxDepth + 1)}`.replace(/\.a$/, ''),
    ],
    [
      'more keys than the limit',
      Object.fromEntries(Array.from({ length: FILTER_LIMITS.maxKeys + 1 }, (_, i) => [`k${i}`, i])),
      'p',
    ],
    ['more bytes than the limit', { a: Array.from({ length: 20 }, () => 'y'.repeat(1000)) }, 'p'],
  ];
  it.each(invalid)('refuses %s', (_name, filter, path) => {
    const errors = validateFilter(filter, 'p');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((e) => e.path)).toContain(path);
  });

  it('accepts each limit at its edge', () => {
    expect(validateFilter({ a: Array.from({ length: FILTER_LIMITS.maxListValues }, (_, i) => i) }, 'p')).toEqual([]);
    expect(validateFilter({ a: 'x'.repeat(FILTER_LIMITS.maxStringLength) }, 'p')).toEqual([]);
    expect(
      validateFilter(Object.fromEntries(Array.from({ length: FILTER_LIMITS.maxKeys }, (_, i) => [`k${i}`, i])), 'p'),
    ).toEqual([]);
    const deepest = JSON.parse(`${'{"a":'.repeat(FILTER_LIMITS.maxDepth)}1${'}'.repeat(FILTER_LIMITS.maxDepth)}`);
    expect(validateFilter(deepest, 'p')).toEqual([]);
  });
});
