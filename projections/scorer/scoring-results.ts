/**
 * One document per scorer and run judged: its newest attempt (what `results` lists and pages by),
 * the judges still running on it, and its live score (the newest attempt that scored). The
 * judge's reason is kept only as sealed under the scorer's key; reads open it on request.
 *
 * A judge run's usage is its `request_usage`: the cost ledger's latest `RunInferencePriced` and
 * `RunExecutionPriced` of it, kept in the `judge_runs` table (one row per judge run).
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { type ProjectionDocs, projection } from '../../src/projector/projection.js';
import type {
  InferenceUsage,
  MachineUsage,
  RunExecutionPriced,
  RunInferencePriced,
} from '../../commands/analytics/events.js';
import { requestUsageOf } from '../../commands/run/public.js';
import type { ScoringEvent, SelfImprovementEvent, Trigger } from '../../commands/scorer/events.js';

interface LiveScore {
  attempt_id: string;
  classification: string;
  score: number;
  scored_at: string;
  reason_sealed: string | null;
  scoring_run_id: string;
  scoring_run_time_ms: number | null;
  scoring_run_usage: Record<string, unknown> | null;
}

export interface ScoringResultDoc {
  [field: string]: unknown;
  scorer_uid: string;
  run_id: string;
  factory_uid: string;
  team_uid: string;
  agent_uid: string;
  conversation_id: string;
  conversation_title: string;
  /** The newest attempt: results are listed by it. */
  attempt_id: string;
  attempted_at: string;
  trigger: Trigger;
  /** How the newest attempt stands (the live score may come from an older one). */
  attempt_status: 'in_flight' | 'scored' | 'failed';
  error: string | null;
  scoring_run_id: string;
  scoring_run_time_ms: number | null;
  scoring_run_usage: Record<string, unknown> | null;
  /** Attempts whose judge has not answered yet. */
  in_flight: string[];
  live: LiveScore | null;
  /** The live score's score and time, flat for indexes; null without one. */
  live_score: number | null;
  live_scored_at: string | null;
  /** Whether a self-improvement run covered the live score (a new live score is unreviewed again). */
  reviewed: boolean;
}

/** A judge run: the attempt it answers, and its priced usage so far. */
interface JudgeRunDoc {
  [field: string]: unknown;
  scorer_uid: string;
  run_id: string;
  attempt_id: string;
  inference: InferenceUsage | null;
  machine: MachineUsage | null;
}

type Tables = { judge_runs: JudgeRunDoc };

export const resultKey = (scorerUid: string, runId: string) => `${scorerUid}:${runId}`;

const usageOf = (judge: JudgeRunDoc | null) => (judge ? requestUsageOf(judge.inference, judge.machine) : null);

/** A ledger entry of a judge run: its usage now, on the result rows that show that judge run. */
async function priced(
  e: RecordedEvent<RunInferencePriced | RunExecutionPriced>,
  docs: ProjectionDocs<ScoringResultDoc, Tables>,
) {
  const judges = docs.in('judge_runs');
  const judge = await judges.get(e.data.run_id);
  if (!judge) return;
  const next: JudgeRunDoc =
    e.type === 'RunInferencePriced'
      ? { ...judge, inference: (e as RecordedEvent<RunInferencePriced>).data.usage }
      : { ...judge, machine: (e as RecordedEvent<RunExecutionPriced>).data.usage };
  judges.put(e.data.run_id, next);
  const id = resultKey(judge.scorer_uid, judge.run_id);
  const doc = await docs.get(id);
  if (!doc) return;
  const scoring_run_usage = usageOf(next);
  docs.patch(id, {
    ...(doc.attempt_id === judge.attempt_id ? { scoring_run_usage } : {}),
    ...(doc.live?.attempt_id === judge.attempt_id ? { live: { ...doc.live, scoring_run_usage } } : {}),
  });
}

export const scoringResultsProjection = projection<
  ScoringEvent | SelfImprovementEvent | RunInferencePriced | RunExecutionPriced,
  ScoringResultDoc,
  Tables
>({
  name: 'scoring_results',
  // 2: a judge run's usage is the cost ledger's (it was what the judge's worker reported).
  version: 2,
  indexes: [
    // GET .../results: newest attempts first, keyset on attempted_at and the attempt id.
    ['scorer_uid', 'attempted_at', 'attempt_id'],
    // GET /factory/runs/{run_id}/scores.
    ['run_id', 'attempted_at'],
    // The recent outcomes of a scorer's list entry.
    ['scorer_uid', 'live_scored_at'],
    // Self-improvement: an agent's unreviewed live scores, oldest first.
    ['scorer_uid', 'agent_uid', 'reviewed', 'live_scored_at'],
  ],
  tables: { judge_runs: [] },
  on: {
    ScoringAttemptStarted: async (e, docs) => {
      const d = e.data;
      const judges = docs.in('judge_runs');
      const judge = (await judges.get(d.judge_run_id)) ?? {
        scorer_uid: d.scorer_uid,
        run_id: d.run_id,
        attempt_id: d.attempt_id,
        inference: null,
        machine: null,
      };
      judges.put(d.judge_run_id, judge);
      const id = resultKey(d.scorer_uid, d.run_id);
      const doc = await docs.get(id);
      const newest = {
        attempt_id: d.attempt_id,
        attempted_at: d.attempted_at,
        trigger: d.trigger,
        attempt_status: 'in_flight' as const,
        error: null,
        scoring_run_id: d.judge_run_id,
        scoring_run_time_ms: null,
        scoring_run_usage: usageOf(judge),
      };
      if (doc) {
        docs.patch(id, { ...newest, in_flight: [...new Set([...doc.in_flight, d.attempt_id])] });
        return;
      }
      docs.put(id, {
        scorer_uid: d.scorer_uid,
        run_id: d.run_id,
        factory_uid: d.factory_uid,
        team_uid: d.team_uid,
        agent_uid: d.agent_uid,
        conversation_id: d.conversation_id,
        conversation_title: d.conversation_title,
        ...newest,
        in_flight: [d.attempt_id],
        live: null,
        live_score: null,
        live_scored_at: null,
        reviewed: false,
      });
    },
    ScoringJudgementRecorded: async (e, docs) => {
      const d = e.data;
      const id = resultKey(d.scorer_uid, d.run_id);
      const doc = await docs.get(id);
      if (!doc) return;
      const live: LiveScore = {
        attempt_id: d.attempt_id,
        classification: d.classification,
        score: d.score,
        scored_at: d.scored_at,
        reason_sealed: d.reason_sealed,
        scoring_run_id: d.judge_run_id,
        scoring_run_time_ms: null,
        scoring_run_usage: usageOf(await docs.in('judge_runs').get(d.judge_run_id)),
      };
      docs.patch(id, {
        in_flight: doc.in_flight.filter((a) => a !== d.attempt_id),
        ...(doc.attempt_id === d.attempt_id ? { attempt_status: 'scored' as const } : {}),
        ...(d.live ? { live, live_score: d.score, live_scored_at: d.scored_at, reviewed: false } : {}),
      });
    },
    ScoringAttemptFailed: async (e, docs) => {
      const d = e.data;
      const id = resultKey(d.scorer_uid, d.run_id);
      const doc = await docs.get(id);
      if (!doc) return;
      docs.patch(id, {
        in_flight: doc.in_flight.filter((a) => a !== d.attempt_id),
        ...(doc.attempt_id === d.attempt_id ? { attempt_status: 'failed' as const, error: d.error } : {}),
      });
    },
    ScoringJudgeRunEnded: async (e, docs) => {
      const d = e.data;
      const id = resultKey(d.scorer_uid, d.run_id);
      const doc = await docs.get(id);
      if (!doc) return;
      const run = { scoring_run_time_ms: d.run_time_ms };
      docs.patch(id, {
        ...(doc.attempt_id === d.attempt_id ? run : {}),
        ...(doc.live?.attempt_id === d.attempt_id ? { live: { ...doc.live, ...run } } : {}),
      });
    },
    RunInferencePriced: priced,
    RunExecutionPriced: priced,
    SelfImprovementStarted: async (e, docs) => {
      for (const f of e.data.failures) {
        const id = resultKey(e.data.scorer_uid, f.run_id);
        const doc = await docs.get(id);
        if (doc?.live?.attempt_id === f.attempt_id) docs.patch(id, { reviewed: true });
      }
    },
  },
});
