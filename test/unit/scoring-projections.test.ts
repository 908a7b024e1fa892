/**
 * The scorer read models from their events: the scorer list, one result per scorer and run (its
 * newest attempt, its live score, whether self-improvement reviewed it), and the rollups the
 * metrics sum; and the same events applied twice, or one at a time, give the same documents.
 */
import { describe, expect, it } from 'vitest';
import type { ScorerEvent, ScoringEvent, SelfImprovementEvent } from '../../commands/scorer/events.js';
import { scorersProjection } from '../../projections/scorers.js';
import { scoringResultsProjection } from '../../projections/scoring-results.js';
import { rollupKey, scoringRollupsProjection } from '../../projections/scoring-rollups.js';
import type { AnyProjection } from '../../src/projector/projection.js';
import { metadata, project, recorded } from '../helpers/projection-spec.js';

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
const ended = (attempt_id: string, at: string): ScoringEvent & { metadata: ReturnType<typeof metadata> } => ({
  type: 'ScoringJudgeRunEnded',
  data: {
    end_id: `e-${attempt_id}`,
    attempt_id,
    scorer_uid: 's-1',
    run_id: 'r-1',
    judge_run_id: `j-${attempt_id}`,
    state: 'SUCCEEDED',
    usage: { inference_cost_usd: 0.25 },
    run_time_ms: 90_000,
    cost: { inference: 0.25, compute: 0, platform: 0, total: 0.25 },
    first: true,
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
  scored('a-1', 1, '2026-05-01T10:05:00.000Z'),
  ended('a-1', '2026-05-01T10:06:00.000Z'),
  started('a-2', 'manual', '2026-05-02T08:00:00.000Z'),
  scored('a-2', 0, '2026-05-02T08:00:30.000Z', { attempt_id: 'a-1', score: 1, scored_at: '2026-05-01T10:05:00.000Z' }),
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
    expect(Object.keys(docs)).toEqual(['s-1:r-1']);
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
      },
      live_score: 0,
      live_scored_at: '2026-05-02T08:00:30.000Z',
      reviewed: true,
    });
  });

  it('rolls live scores up per minute to month (a replaced score leaves its periods) and judge-run cost where it ended', async () => {
    const docs = await project(scoringRollupsProjection, history);
    const row = (grain: string, start: string) => docs[rollupKey('s-1', grain as 'day', start)];
    expect(row('all', '')).toMatchObject({
      scores: [{ score: 0, count: 1 }],
      judge_runs: 2,
      cost: { inference: 0.5, total: 0.5 },
      last_scored_at: '2026-05-02T08:00:30.000Z',
    });
    expect(row('day', '2026-05-01T00:00:00.000Z')).toMatchObject({ scores: [], judge_runs: 1 });
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
