/**
 * Helpers for the guardrail tests: waiting until the reactors that guardrails depend on have
 * passed every event written (and what they wrote in turn), and claiming a given run.
 */
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { eventually } from './task-fixtures.js';

const GUARD_REACTORS = ['cost-ledger', 'guardrails', 'inbox', 'outbound-webhooks'];

/** Waits until the head stops moving with every guardrail-related reactor and read model at it. */
export async function settleGuards(t: TestApp, reactors = GUARD_REACTORS): Promise<void> {
  await eventually(async () => {
    const head = await t.rt.events.headPosition();
    for (const reactor of reactors) {
      const at = await t.rt.docs.readCheckpoint(`reactor_${reactor}`);
      if (!at || at.commit < head.commit) return undefined;
    }
    await t.rt.projector.waitFor(head);
    return (await t.rt.events.headPosition()).commit === head.commit ? true : undefined;
  });
}

/** Claims as the worker until it is handed `runId` (other queued runs of its team are leased meanwhile). */
export async function claimRun(
  t: TestApp,
  worker: { workerId: string; key: string },
  runId: string,
): Promise<{ execution_id: string }> {
  for (let i = 0; i < 100; i++) {
    const res = await t.call('POST', `/agent/workers/${worker.workerId}/claim`, undefined, worker.key);
    expect(res.statusCode, res.body).toBe(200);
    if (res.json().run.run_id === runId) return res.json().run;
  }
  throw new Error(`run ${runId} was never handed out`);
}
