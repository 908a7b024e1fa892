/**
 * The principal cache is bounded (docs/operations.md#memory): unknown keys are cached too (a flood
 * of made-up keys must not grow it without end), and past 10,000 keys it starts over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { principalSource } from '../../queries/user/principals.js';
import { Access, type PrincipalSource } from '../../src/http/access.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const BOUND = 10_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** An Access over the app's real read models, counting the lookups that reach them. */
function countedAccess(): { access: Access; lookups: () => number } {
  const real = principalSource(t.rt);
  let lookups = 0;
  const source: PrincipalSource = {
    readModels: real.readModels,
    lookUp: (hash) => {
      lookups++;
      return real.lookUp(hash);
    },
  };
  return { access: new Access(source, t.rt.projector, t.rt.clock), lookups: () => lookups };
}

const made = (n: number) => `made-up-key-hash-${n}`;

describe('the principal cache', () => {
  it('answers a key seen among fewer than 10,000 from memory', async () => {
    const { access, lookups } = countedAccess();
    for (let n = 0; n < BOUND - 1; n++) expect(await access.resolve(made(n))).toBeNull();
    expect(lookups()).toBe(BOUND - 1);
    await access.resolve(made(0));
    expect(lookups()).toBe(BOUND - 1);
  }, 60_000);

  it('starts over once it holds 10,000 keys, so it never holds more', async () => {
    const { access, lookups } = countedAccess();
    for (let n = 0; n < BOUND; n++) await access.resolve(made(n));
    await access.resolve(made(0));
    expect(lookups()).toBe(BOUND + 1);
    // Kept again from then on.
    await access.resolve(made(0));
    expect(lookups()).toBe(BOUND + 1);
  }, 60_000);
});
