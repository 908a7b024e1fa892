/**
 * The figures a run and its results share, as the API answers them: progress, pass rates,
 * seconds, credits and elapsed time, from the tallies the runs read model keeps.
 */
import { z } from 'zod';
import type { Tally } from '../../projections/benchmark/tallies.js';
import type { RunConfiguration } from './events.js';

export const progress = z.object({
  trials: z.object({
    total: z.int(),
    pending: z.int(),
    running: z.int(),
    succeeded: z.int(),
    failed: z.int(),
    cancelled: z.int(),
    completed: z.int().describe('succeeded + failed + cancelled'),
  }),
  scores: z.object({
    awaiting_trial: z.int(),
    pending: z.int(),
    judging: z.int(),
    scored: z.int(),
    finished_unscored: z.int(),
    not_scoreable: z.int(),
    received: z.int().describe('scored'),
    expected: z.int().describe('judging + scored + finished_unscored'),
  }),
});

export const trialProgressOf = (t: Tally) => ({
  total: t.trials,
  pending: t.pending,
  running: t.running,
  succeeded: t.succeeded,
  failed: t.failed,
  cancelled: t.cancelled,
  completed: t.succeeded + t.failed + t.cancelled,
});

export const scoreProgressOf = (t: Tally) => ({
  ...t.ledger,
  pending: 0,
  received: t.ledger.scored,
  expected: t.ledger.judging + t.ledger.scored + t.ledger.finished_unscored,
});

export const rate = (pass: number, fail: number) => (pass + fail > 0 ? pass / (pass + fail) : null);
export const seconds = (ms: number) => Math.round(ms) / 1000;
/** Credits as the hosted service answers them: a decimal string (to the millionth of a credit). */
export const creditString = (credits: number) => String(Math.round(credits * 1e6) / 1e6);

/** The elapsed time of a run: from its start to its end, or to `now` while in flight. */
export const elapsedOf = (run: { started_at: string | null; completed_at: string | null }, now: string) =>
  run.started_at ? Math.max(0, Date.parse(run.completed_at ?? now) - Date.parse(run.started_at)) / 1000 : null;

/** What names a configuration in a run's answers: the start of its row in the results and the stats. */
export const configurationNames = (c: RunConfiguration) => ({
  uid: c.uid,
  id: c.id,
  display_name: c.display_name ?? '',
  role: c.role,
  model: c.model ?? '',
  harness: c.harness ?? '',
});
