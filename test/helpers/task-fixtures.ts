/** Factories, teammates and bounded polling for the task and dispatch tests. */
import { v4 as uuidv4 } from 'uuid';
import { expect } from 'vitest';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { TestApp } from './app.js';

export async function newFactory(
  t: TestApp,
  name = `Factory ${uuidv4()}`,
  headers: Record<string, string> = {},
): Promise<string> {
  const res = await t.call('POST', '/factory', { name }, undefined, headers);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().uid;
}

/** A member of `team` (the default team unless given), with a key and a command context of their own. */
export async function newMember(t: TestApp, team = t.teamUid) {
  const email = `member-${uuidv4()}@example.com`;
  const { user, api_key } = await t.addMember(team, { email });
  const context: CommandContext = {
    now: new Date().toISOString(),
    actor: { type: 'user', uid: user.uid },
    teams: { [team]: 'member' },
    team_uid: team,
    correlation_id: `test-${uuidv4()}`,
    causation_id: null,
    request_id: null,
  };
  return { uid: user.uid, email, key: api_key, context };
}

/**
 * Polls `probe` until it returns a value (not undefined), at most `timeoutMs`: a bound reached only
 * when the test fails, so generous enough for a loaded 2-core machine (a full-suite run once took
 * more than 5 s to hand out a judge run here). Real time: tests may hold `Date` still.
 */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
