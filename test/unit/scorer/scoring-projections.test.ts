/**
 * The scorer read models from their events: the scorer list, one result per scorer and run (its
 * newest attempt, its live score, whether self-improvement reviewed it, its judge run's priced
 * usage), and the rollups the metrics sum (judge-run cost from the cost ledger's entries); and the
 * same events applied twice, or one at a time, give the same documents.
 */
import { describe, expect, it } from 'vitest';
import type { ScorerEvent, ScoringEvent, SelfImprovementEvent } from '../../../commands/scorer/events.js';
import { scorersProjection } from '../../../projections/scorer/scorers.js';
import { scoringResultsProjection } from '../../../projections/scorer/scoring-results.js';
import { rollupKey, scoringRollupsProjection } from '../../../projections/scorer/scoring-rollups.js';
import type { AnyProjection } from '../../../src/projector/projection.js';
import { executionPriced, inferencePriced } from '../../helpers/ledger-fixtures.js';
import { metadata, project, recorded } from '../../helpers/projection-spec.js';

const scorer = {
  uid: 's-1',
  factory_uid: 'f-1',
  team_uid: 't-1',
  name: 'Compliance',
  description: '',
  scoring_prompt: 'Did it comply?',
  model_id: 'm',
  threshold: 0.5,
  allowed_classifications: [
    { value: 'yes', score: 1, description: null },
    { value: 'no', score: 0, description: null },
  ],
  scope_mode: 'all_agents' as const,
  agents: [],
  sampling_rate: null,
  agent_config: { default_runner_uid: null, mcp_servers: null, secrets: null },
  self_improvement: { enabled: true, failed_run_threshold: 1 },
};
const run = {
  run_id: 'r-1',
  factory_uid: 'f-1',
  team_uid: 't-1',
  agent_uid: 'a-1',
  conversation_id: 'c-1',
  conversation_title: 'Fix',
  include_descendants: false,
};
const started = (attempt_id: string, trigger: 'automatic' | 'manual', attempted_at: string): ScoringEvent => ({
  type: 'ScoringAttemptStarted',
  data: {
    ...run,
    attempt_id,
    scorer_uid: 's-1',
    scorer_version: 1,
    judge_run_id: `j-${attempt_id}`,
    trigger,
    attempted_at,
    classifications: scorer.allowed_classifications,
  },
});
const scored = (
  attempt_id: string,
  score: number,
  scored_at: string,
  replaces: { attempt_id: string; score: number; scored_at: string } | null = null,
): ScoringEvent => ({
  type: 'ScoringJudgementRecorded',
  data: {
    attempt_id,
    scorer_uid: 's-1',
    run_id: 'r-1',
    factory_uid: 'f-1',
    agent_uid: 'a-1',
    judge_run_id: `j-${attempt_id}`,
    classification: score ? 'yes' : 'no',
    score,
    reason_sealed: `v1.sealed-${attempt_id}`,
    scored_at,
    live: true,
    replaces,
  },
});
/** The judge run of an attempt ended; `legacy`: as recorded before the cost ledger, with the worker's own dollars. */
const ended = (
  attempt_id: string,
  at: string,
  legacy = false,
): ScoringEvent & { metadata: ReturnType<typeof metadata> } => ({
  type: 'ScoringJudgeRunEnded',
  data: {
    end_id: `e-${attempt_id}`,
    attempt_id,
    scorer_uid: 's-1',
    run_id: 'r-1',
    judge_run_id: `j-${attempt_id}`,
    state: 'SUCCEEDED',
    run_time_ms: 90_000,
    first: true,
    ...(legacy ? { usage: { inference_cost_usd: 9 }, cost: { inference: 9, compute: 0, platform: 0, total: 9 } } : {}),
  },
  metadata: metadata(at),
});
const reviewed: SelfImprovementEvent = {
  type: 'SelfImprovementStarted',
  data: {
    scorer_uid: 's-1',
    agent_uid: 'a-1',
    factory_uid: 'f-1',
    team_uid: 't-1',
    run_id: 'si-1',
    failures: [
      { run_id: 'r-1', attempt_id: 'a-2', classification: 'no', score: 0, scored_at: '2026-05-02T08:00:00.000Z' },
    ],
    reasons_sealed: null,
    why: 'failed_run_threshold',
  },
};

const history = recorded([
  {
    type: 'ScorerCreated',
    data: { ...scorer, version: 1, created_at: '2026-05-01T00:00:00.000Z' },
  } satisfies ScorerEvent,
  { type: 'ScorerUpdated', data: { uid: 's-1', version: 2, changes: { threshold: 1 } } } satisfies ScorerEvent,
  started('a-1', 'automatic', '2026-05-01T10:00:00.000Z'),
  // The judge run j-a-1 reports its usage twice (cumulative: $0.20, then $0.25) and ends.
  inferencePriced('j-a-1', '2026-05-01T10:03:00.000Z', 0.2),
  scored('a-1', 1, '2026-05-01T10:05:00.000Z'),
  inferencePriced('j-a-1', '2026-05-01T10:05:30.000Z', 0.25, 0.05),
  executionPriced('j-a-1', '2026-05-01T10:06:00.000Z', { compute: 0.01, platform: 0.005 }),
  ended('a-1', '2026-05-01T10:06:00.000Z', true),
  // The judged run's own cost is no judge's.
  inferencePriced('r-1', '2026-05-01T10:07:00.000Z', 7),
  started('a-2', 'manual', '2026-05-02T08:00:00.000Z'),
  inferencePriced('j-a-2', '2026-05-02T08:00:20.000Z', 0.25),
  scored('a-2', 0, '2026-05-02T08:00:30.000Z', { attempt_id: 'a-1', score: 1, scored_at: '2026-05-01T10:05:00.000Z' }),
  executionPriced('j-a-2', '2026-05-02T08:01:00.000Z', { compute: 0.02, platform: 0.01 }),
  ended('a-2', '2026-05-02T08:01:00.000Z'),
  reviewed,
]);

describe('scorer read models', () => {
  it('keeps the scorer as its last version', async () => {
    const docs = await project(scorersProjection, history);
    expect(docs['s-1']).toMatchObject({ version: 2, threshold: 1, self_improvement_enabled: true });
    const gone = await project(
      scorersProjection,
      recorded([
        ...history.map((e) => ({ ...e })),
        { type: 'ScorerDeleted', data: { uid: 's-1', factory_uid: 'f-1', team_uid: 't-1' } },
      ]),
    );
    expect(gone).toEqual({});
  });

  it('keeps one result per scorer and run: the newest attempt, the live score, reviewed by self-improvement', async () => {
    const docs = await project(scoringResultsProjection, history);
    expect(Object.keys(docs).filter((k) => !k.startsWith('judge_runs/'))).toEqual(['s-1:r-1']);
    // The judge run's usage is its request_usage as the ledger priced it: inference $0.25 (25
    // credits at $0.01), machine time $0.02 (2 credits), platform time $0.01 (1 credit).
    const usage = {
      inference_cost: 25,
      compute_cost: 2,
      platform_cost: 1,
      inference_cost_usd: 0.25,
      compute_cost_usd: 0.02,
      platform_cost_usd: 0.01,
    };
    expect(docs['s-1:r-1']).toMatchObject({
      attempt_id: 'a-2',
      attempted_at: '2026-05-02T08:00:00.000Z',
      trigger: 'manual',
      attempt_status: 'scored',
      in_flight: [],
      live: {
        attempt_id: 'a-2',
        classification: 'no',
        score: 0,
        reason_sealed: 'v1.sealed-a-2',
        scoring_run_time_ms: 90_000,
        scoring_run_usage: usage,
      },
      scoring_run_usage: usage,
      live_score: 0,
      live_scored_at: '2026-05-02T08:00:30.000Z',
      reviewed: true,
    });
  });

  it('rolls live scores up per minute to month (a replaced score leaves its periods), and judge-run cost where the ledger priced it', async () => {
    const docs = await project(scoringRollupsProjection, history);
    const row = (grain: string, start: string) => docs[rollupKey('s-1', grain as 'day', start)];
    const close = (inference: number, compute: number, platform: number) => ({
      inference: expect.closeTo(inference, 12),
      compute: expect.closeTo(compute, 12),
      platform: expect.closeTo(platform, 12),
      total: expect.closeTo(inference + compute + platform, 12),
    });
    // By hand: j-a-1 cost $0.25 of inference ($0.20 then $0.05 more), $0.01 of machine and $0.005
    // of platform time; j-a-2 $0.25, $0.02 and $0.01. The worker's own $9 of the legacy end, and
    // the judged run's $7, count for nothing.
    expect(row('all', '')).toMatchObject({
      scores: [{ score: 0, count: 1 }],
      judge_runs: 2,
      cost: close(0.5, 0.03, 0.015),
      last_scored_at: '2026-05-02T08:00:30.000Z',
    });
    expect(row('day', '2026-05-01T00:00:00.000Z')).toMatchObject({
      scores: [],
      judge_runs: 1,
      cost: close(0.25, 0.01, 0.005),
    });
    expect(row('minute', '2026-05-01T10:03:00.000Z')).toMatchObject({ judge_runs: 0, cost: close(0.2, 0, 0) });
    expect(row('minute', '2026-05-02T08:00:00.000Z')).toMatchObject({ cost: close(0.25, 0, 0) });
    expect(row('day', '2026-05-02T00:00:00.000Z')).toMatchObject({ scores: [{ score: 0, count: 1 }] });
    expect(row('minute', '2026-05-02T08:00:00.000Z')).toMatchObject({ scores: [{ score: 0, count: 1 }] });
    expect(row('month', '2026-05-01T00:00:00.000Z')).toMatchObject({ scores: [{ score: 0, count: 1 }], judge_runs: 2 });
    // Weeks start on Sunday: 2026-05-01 is a Friday.
    expect(row('week', '2026-04-26T00:00:00.000Z')).toMatchObject({ scores: [{ score: 0, count: 1 }] });
  });

  const all: AnyProjection[] = [scorersProjection, scoringResultsProjection, scoringRollupsProjection];
  it.each(all.map((p) => [p.name, p] as const))(
    '%s: the same events applied twice, or one at a time, give the same documents',
    async (_name, p) => {
      const once = await project(p, history);
      expect(await project(p, history, { times: 2 })).toEqual(once);
      expect(await project(p, history, { batchSize: 1 })).toEqual(once);
    },
  );
});
