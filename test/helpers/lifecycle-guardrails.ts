/**
 * The guardrail steps of the lifecycle (test/helpers/lifecycle.ts), issue #33: the team's limits
 * and budgets set back to what the story needs (the property before it may have left anything),
 * a factory budget that refuses a start, then one that every later run of the factory reserves
 * from and whose threshold its priced usage passes; a factory requiring approval whose runs are
 * approved, denied, and left to expire (the sweep after the clock moves).
 */
import type { LightMyRequestResponse } from 'fastify';
import { sweepGuardrails } from '../../commands/guardrail/sweeper.js';
import type { TestApp } from './app.js';
import type { Content } from './lifecycle.js';

type Send = (key?: string) => Promise<LightMyRequestResponse>;

export interface Steps {
  send: (what: string, make: (c: Content) => Send) => Promise<Record<string, unknown> | null>;
  expectAnswer: (what: string, request: () => Promise<LightMyRequestResponse>, statuses: number[]) => Promise<void>;
  after: (what: string) => Promise<void>;
}

/** The factory budget every later run of the story reserves from. */
export const FACTORY_BUDGET = { monthly_usd: 10, per_run_usd: 0.05, notify_at: [1e-6] };

const call =
  (t: TestApp, method: 'POST' | 'PUT' | 'DELETE', url: string, body?: (c: Content) => unknown) =>
  (c: Content) =>
  (key?: string) =>
    t.call(method, url, body?.(c), key);

/** Before the factory's runs; returns what to do once the clock has moved past the approval timeout. */
export async function guardrailSteps(
  t: TestApp,
  factory: string,
  agentUid: string,
  { send, expectAnswer, after }: Steps,
): Promise<() => Promise<void>> {
  await send(
    'team limits as the story needs them',
    call(t, 'PUT', `/teams/${t.teamUid}/limits`, () => ({})),
  );
  await expectAnswer('no team budget', () => t.call('DELETE', `/teams/${t.teamUid}/budget`), [204, 404]);
  await expectAnswer(
    'no member budget',
    () => t.call('DELETE', `/teams/${t.teamUid}/members/${t.adminUid}/budget`),
    [204, 404],
  );
  await send(
    'a budget with no room',
    call(t, 'PUT', `/factory/${factory}/budget`, () => ({ monthly_usd: 0.001 })),
  );
  await expectAnswer(
    'a start it refuses',
    () => t.call('POST', '/agent/runs', { prompt: 'p', agent_identity_uid: agentUid }),
    [402],
  );
  await send(
    'a budget the factory’s runs reserve from',
    call(t, 'PUT', `/factory/${factory}/budget`, () => FACTORY_BUDGET),
  );
  await send(
    'approval required',
    call(t, 'PUT', `/factory/${factory}/limits`, () => ({ requires_approval: true, approval_timeout_minutes: 60 })),
  );
  const waiting = async () =>
    (await send(
      'a run waiting',
      call(t, 'POST', `/factory/${factory}/runs`, (c) => ({ prompt: c.text || 'p' })),
    ))!.run_id as string;
  const [approved, denied, expiring] = [await waiting(), await waiting(), await waiting()];
  await send('approve', call(t, 'POST', `/agent/runs/${approved}/approve`));
  await send(
    'deny',
    call(t, 'POST', `/agent/runs/${denied}/deny`, (c) => ({ reason: c.text })),
  );
  await send(
    'no approval needed again',
    call(t, 'PUT', `/factory/${factory}/limits`, () => ({ max_concurrent_runs: 1000 })),
  );
  return async () => {
    await sweepGuardrails(t.rt);
    await after(`the approval of ${expiring} expired`);
  };
}
