/**
 * Concurrency limits at the claim (issue #33): before a worker is handed a run, the run takes a
 * place under its team's and its factory's `max_concurrent_runs`, each decided on its slots
 * stream; with no place free it stays QUEUED and the claim looks at the next run. A place is held
 * until the run ends (a run handed back to the queue keeps it): the claim frees the places of
 * runs it finds ended on the write side, and the budgets reactor frees them as runs end.
 */
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { own } from '../../src/own-keys.js';
import { contended } from './contended.js';
import { type BudgetScope, limitsStream, scopeKey, slotsStream } from './events.js';
import { limitsDecider } from './limits-decider.js';
import { slotsDecider } from './slots-decider.js';

type LimitScope = Exclude<BudgetScope, { kind: 'member' }>;

/** What places a run: the team whose workers execute it and its factory. */
export interface QueuedRun {
  run_id: string;
  executing_team_uid: string;
  factory_uid: string | null;
}

function limitScopes(run: QueuedRun): LimitScope[] {
  const team_uid = run.executing_team_uid;
  const scopes: LimitScope[] = [{ kind: 'team', team_uid }];
  if (run.factory_uid) scopes.push({ kind: 'factory', team_uid, factory_uid: run.factory_uid });
  return scopes;
}

const maxOf = async (rt: Runtime, scope: LimitScope) =>
  (await rt.state(limitsDecider, limitsStream(scope))).limits.max_concurrent_runs ?? null;

/** Whether a run has ended, as its own stream says (the claim asks the run feature). */
export type HasEnded = (runId: string) => Promise<boolean>;

/** The runs holding places in `scope` that have ended. */
async function endedHolders(rt: Runtime, scope: LimitScope, hasEnded: HasEnded): Promise<string[]> {
  const { held } = await rt.state(slotsDecider, slotsStream(scope));
  const ended: string[] = [];
  for (const runId of Object.keys(held)) if (await hasEnded(runId)) ended.push(runId);
  return ended;
}

/**
 * Takes the run's places under every limit set; false (having given back what it took) when one
 * has none free.
 */
export async function takeSlots(
  rt: Runtime,
  run: QueuedRun,
  context: CommandContext,
  hasEnded: HasEnded,
): Promise<boolean> {
  const taken: LimitScope[] = [];
  for (const scope of limitScopes(run)) {
    const max = await maxOf(rt, scope);
    if (max === null) continue;
    const ended = await endedHolders(rt, scope, hasEnded);
    const scope_key = scopeKey(scope);
    const { state } = await contended(`${run.run_id}:${scope_key}`, () =>
      rt.handle(
        slotsStream(scope),
        slotsDecider,
        { type: 'TakeSlot', data: { scope_key, run_id: run.run_id, factory_uid: run.factory_uid, max, ended } },
        context,
      ),
    );
    if (own(state.held, run.run_id) === undefined) {
      await freeSlots(rt, run, context, taken);
      return false;
    }
    taken.push(scope);
  }
  return true;
}

/** Gives back the run's places (in `scopes`, else every one it may hold). */
export async function freeSlots(
  rt: Runtime,
  run: QueuedRun,
  context: CommandContext,
  scopes: readonly LimitScope[] = limitScopes(run),
): Promise<void> {
  for (const scope of scopes) {
    const scope_key = scopeKey(scope);
    const { held } = await rt.state(slotsDecider, slotsStream(scope));
    if (own(held, run.run_id) === undefined) continue;
    await contended(`${run.run_id}:${scope_key}`, () =>
      rt.handle(
        slotsStream(scope),
        slotsDecider,
        { type: 'FreeSlot', data: { scope_key, run_id: run.run_id } },
        context,
      ),
    );
  }
}

/**
 * Queued runs in the order a claim offers them: fair between factories (the factory with the
 * fewest runs holding places under the team's limit first), first in first out within each.
 */
export async function fairOrder<R extends QueuedRun>(rt: Runtime, teamUid: string, runs: readonly R[]): Promise<R[]> {
  const team: LimitScope = { kind: 'team', team_uid: teamUid };
  if ((await maxOf(rt, team)) === null) return [...runs];
  const { held } = await rt.state(slotsDecider, slotsStream(team));
  const running = new Map<string | null, number>();
  for (const factory of Object.values(held)) running.set(factory, (running.get(factory) ?? 0) + 1);
  // Stable: runs of equally busy factories keep their queue order.
  return runs
    .map((run, i) => ({ run, i, busy: running.get(run.factory_uid) ?? 0 }))
    .sort((a, b) => a.busy - b.busy || a.i - b.i)
    .map((x) => x.run);
}
