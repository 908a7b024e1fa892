/**
 * The rules of scorers, of the attempts on one run, and of self-improvement, as given events,
 * a command, then events (or an error).
 */
import { describe, expect, it } from 'vitest';
import { scorerDecider } from '../../../commands/scorer/scorer-decider.js';
import type { ScorerEvent, ScorerFields, ScoringEvent, SelfImprovementEvent } from '../../../commands/scorer/events.js';
import { selfImprovementDecider } from '../../../commands/scorer/self-improvement-decider.js';
import { inScope, sampled } from '../../../commands/scorer/scorer-reactor.js';
import { COOL_DOWN_MS, scoringDecider } from '../../../commands/scorer/scoring-decider.js';
import { Conflict, Forbidden, InvalidRequest, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';

const fields: ScorerFields = {
  name: 'Compliance',
  description: '',
  scoring_prompt: 'Did it comply?',
  model_id: 'claude-4-6-sonnet',
  threshold: 0.5,
  allowed_classifications: [
    { value: 'yes', score: 1, description: null },
    { value: 'partly', score: 0.5, description: null },
    { value: 'no', score: 0, description: null },
  ],
  scope_mode: 'all_agents',
  agents: [],
  sampling_rate: null,
  agent_config: { default_runner_uid: null, mcp_servers: null, secrets: null },
  self_improvement: { enabled: false, failed_run_threshold: 25 },
};
const ids = { uid: 's-1', factory_uid: 'f-1', team_uid: 't-1' };
const created: ScorerEvent = {
  type: 'ScorerCreated',
  data: { ...fields, ...ids, version: 1, created_at: '2026-01-01T00:00:00.000Z' },
};
const agentContext = {
  ...userContext(),
  actor: { type: 'agent' as const, uid: 'a-1' },
  teams: { 't-1': 'member' as const },
};
const stranger = userContext('u-2', { 't-2': 'admin' });

describe('scorer decider', () => {
  const spec = deciderSpec(scorerDecider);

  it('creates a scorer at version 1 for the people of its team only', () => {
    spec
      .given([])
      .when({ type: 'CreateScorer', data: { ...fields, ...ids } })
      .then([{ type: 'ScorerCreated', data: { version: 1, threshold: 0.5 } }]);
    spec
      .given([])
      .when({ type: 'CreateScorer', data: { ...fields, ...ids } }, agentContext)
      .thenThrows(Forbidden);
    spec
      .given([])
      .when({ type: 'CreateScorer', data: { ...fields, ...ids } }, stranger)
      .thenThrows(NotFound);
    spec
      .given([created])
      .when({ type: 'CreateScorer', data: { ...fields, ...ids } })
      .thenThrows(Conflict);
  });

  it.each([
    [
      'repeated classification values',
      { allowed_classifications: [...fields.allowed_classifications, fields.allowed_classifications[0]!] },
      /unique/,
    ],
    [
      'no classification passing',
      {
        threshold: 1,
        allowed_classifications: [
          { value: 'a', score: 0.9, description: null },
          { value: 'b', score: 0, description: null },
        ],
      },
      /at or above/,
    ],
    ['no classification failing', { threshold: 0 }, /below the threshold/],
    ['selected agents without agents', { scope_mode: 'selected_agents' as const }, /at least one agent/],
    ['all agents naming agents', { agents: [{ uid: 'a-1', include_descendants: false }] }, /takes no agents/],
    [
      'an agent named twice',
      {
        scope_mode: 'selected_agents' as const,
        agents: [
          { uid: 'a-1', include_descendants: false },
          { uid: 'a-1', include_descendants: true },
        ],
      },
      /named twice/,
    ],
  ])('refuses %s', (_what, change, message) => {
    spec
      .given([])
      .when({ type: 'CreateScorer', data: { ...fields, ...ids, ...change } })
      .thenThrows(InvalidRequest, message);
  });

  it('makes each change a new version, changes nothing when nothing differs, and checks the rules on the result', () => {
    spec
      .given([created])
      .when({ type: 'UpdateScorer', data: { uid: 's-1', changes: { threshold: 1, name: 'Compliance' } } })
      .then([{ type: 'ScorerUpdated', data: { uid: 's-1', version: 2, changes: { threshold: 1 } } }]);
    spec
      .given([created, { type: 'ScorerUpdated', data: { uid: 's-1', version: 2, changes: { threshold: 1 } } }])
      .when({ type: 'UpdateScorer', data: { uid: 's-1', changes: { name: 'Strict' } } })
      .then([{ type: 'ScorerUpdated', data: { version: 3 } }]);
    spec
      .given([created])
      .when({ type: 'UpdateScorer', data: { uid: 's-1', changes: { threshold: 0.5 } } })
      .thenNothingHappened();
    // A threshold of 1 still has `yes` passing; classifications all below 0.5 leave none.
    spec
      .given([created])
      .when({ type: 'UpdateScorer', data: { uid: 's-1', changes: { threshold: 1 } } })
      .then([{ type: 'ScorerUpdated' }]);
    spec
      .given([created])
      .when({
        type: 'UpdateScorer',
        data: { uid: 's-1', changes: { allowed_classifications: [{ value: 'x', score: 0.1, description: null }] } },
      })
      .thenThrows(InvalidRequest, /at or above/);
    // A scope given replaces the scope in full.
    spec
      .given([created])
      .when({
        type: 'UpdateScorer',
        data: {
          uid: 's-1',
          changes: { scope_mode: 'selected_agents', agents: [{ uid: 'a-2', include_descendants: true }] },
        },
      })
      .then([
        {
          type: 'ScorerUpdated',
          data: { changes: { scope_mode: 'selected_agents', agents: [{ uid: 'a-2', include_descendants: true }] } },
        },
      ]);
    spec
      .given([created])
      .when({ type: 'UpdateScorer', data: { uid: 's-1', changes: { name: 'x' } } }, agentContext)
      .thenThrows(Forbidden);
    spec
      .given([created])
      .when({ type: 'UpdateScorer', data: { uid: 's-1', changes: { name: 'x' } } }, stranger)
      .thenThrows(NotFound);
  });

  it('deletes for good: nothing more can be done to a deleted scorer', () => {
    const deleted: ScorerEvent = { type: 'ScorerDeleted', data: ids };
    spec
      .given([created])
      .when({ type: 'DeleteScorer', data: { uid: 's-1' } })
      .then([{ type: 'ScorerDeleted', data: ids }]);
    spec
      .given([created, deleted])
      .when({ type: 'DeleteScorer', data: { uid: 's-1' } })
      .thenThrows(NotFound);
    spec
      .given([created, deleted])
      .when({ type: 'UpdateScorer', data: { uid: 's-1', changes: { name: 'x' } } })
      .thenThrows(NotFound);
    spec
      .given([created, deleted])
      .when({ type: 'CreateScorer', data: { ...fields, ...ids } })
      .thenThrows(Conflict);
  });
});

// ---- attempts on one run -------------------------------------------------------------------------

const T0 = '2026-05-01T10:00:00.000Z';
const at = (iso: string) => ({ ...userContext(), now: iso });
const later = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const run = {
  run_id: 'r-1',
  factory_uid: 'f-1',
  team_uid: 't-1',
  agent_uid: 'a-1',
  conversation_id: 'c-1',
  conversation_title: 'Fix',
  include_descendants: false,
};
const start = (attempt_id: string, trigger: 'automatic' | 'manual') => ({
  type: 'StartAttempt' as const,
  data: {
    ...run,
    attempt_id,
    scorer_uid: 's-1',
    scorer_version: 1,
    judge_run_id: `j-${attempt_id}`,
    trigger,
    classifications: fields.allowed_classifications,
  },
});
const started = (attempt_id: string, trigger: 'automatic' | 'manual', attempted_at = T0): ScoringEvent => ({
  type: 'ScoringAttemptStarted',
  data: { ...start(attempt_id, trigger).data, attempted_at },
});
const judgement = (attempt_id: string, classification: string, reason_sealed: string | null = 'v1.sealed') => ({
  type: 'RecordJudgement' as const,
  data: { attempt_id, judge_run_id: `j-${attempt_id}`, classification, reason_sealed },
});
const scored = (attempt_id: string, score: number, scored_at: string, live = true): ScoringEvent => ({
  type: 'ScoringJudgementRecorded',
  data: {
    attempt_id,
    scorer_uid: 's-1',
    run_id: 'r-1',
    factory_uid: 'f-1',
    agent_uid: 'a-1',
    judge_run_id: `j-${attempt_id}`,
    classification: 'x',
    score,
    reason_sealed: null,
    scored_at,
    live,
    replaces: null,
  },
});
const end = (attempt_id: string, end_id: string, state = 'SUCCEEDED') => ({
  type: 'EndJudgeRun' as const,
  data: { end_id, attempt_id, judge_run_id: `j-${attempt_id}`, state, run_time_ms: 1000 },
});

describe('scoring decider (the attempts of one scorer on one run)', () => {
  const spec = deciderSpec(scoringDecider);

  it('starts an automatic attempt once: not while one is in flight, nor within the cool-down; manual ones always', () => {
    spec
      .given([])
      .when(start('a1', 'automatic'), at(T0))
      .then([{ type: 'ScoringAttemptStarted', data: { attempted_at: T0 } }]);
    spec
      .given([started('a1', 'automatic')])
      .when(start('a2', 'automatic'), at(later(COOL_DOWN_MS * 2)))
      .thenNothingHappened();
    spec
      .given([started('a1', 'automatic')])
      .when(start('a1', 'manual'), at(later(1)))
      .thenNothingHappened();
    const done = [started('a1', 'automatic'), scored('a1', 1, later(1000))];
    spec
      .given(done)
      .when(start('a2', 'automatic'), at(later(COOL_DOWN_MS - 1)))
      .thenNothingHappened();
    spec
      .given(done)
      .when(start('a2', 'automatic'), at(later(COOL_DOWN_MS)))
      .then([{ type: 'ScoringAttemptStarted' }]);
    // Manual dispatch skips cool-down, and may run beside a judge in flight.
    spec
      .given([started('a1', 'automatic')])
      .when(start('a2', 'manual'), at(later(1)))
      .then([{ type: 'ScoringAttemptStarted', data: { trigger: 'manual' } }]);
  });

  it('records an allowed classification with its score from the attempt, and fails one that is not allowed', () => {
    spec
      .given([started('a1', 'automatic')])
      .when(judgement('a1', 'partly'), at(later(5)))
      .then([
        {
          type: 'ScoringJudgementRecorded',
          data: { classification: 'partly', score: 0.5, live: true, replaces: null, scored_at: later(5) },
        },
      ]);
    spec
      .given([started('a1', 'automatic')])
      .when(judgement('a1', 'perfect'))
      .then([
        { type: 'ScoringAttemptFailed', data: { attempt_id: 'a1', error: expect.stringMatching(/not allowed/) } },
      ]);
    // An attempt answers once; an unknown one never.
    spec
      .given([started('a1', 'automatic'), scored('a1', 1, T0)])
      .when(judgement('a1', 'yes'))
      .thenThrows(Conflict);
    spec
      .given([started('a1', 'automatic')])
      .when(judgement('zz', 'yes'))
      .thenThrows(Conflict);
    spec.given([]).when(judgement('a1', 'yes')).thenThrows(Conflict);
  });

  it('keeps one live score: the newest attempt that scored, whatever order the judges answer in', () => {
    const both = [started('a1', 'automatic'), started('a2', 'manual', later(1))];
    // The newer answers first and is live; the older answers late and is not.
    spec
      .given([...both, scored('a2', 1, later(10))])
      .when(judgement('a1', 'no'), at(later(20)))
      .then([{ type: 'ScoringJudgementRecorded', data: { attempt_id: 'a1', live: false, replaces: null } }]);
    // The older answers first and is live until the newer replaces it.
    spec
      .given([...both])
      .when(judgement('a1', 'no'), at(later(10)))
      .then([{ type: 'ScoringJudgementRecorded', data: { live: true } }]);
    spec
      .given([...both, scored('a1', 0, later(10))])
      .when(judgement('a2', 'yes'), at(later(20)))
      .then([
        {
          type: 'ScoringJudgementRecorded',
          data: { attempt_id: 'a2', live: true, replaces: { attempt_id: 'a1', score: 0, scored_at: later(10) } },
        },
      ]);
  });

  it('closes an attempt whose judge run ended without a judgement, and counts each end of a judge run once', () => {
    spec
      .given([started('a1', 'automatic')])
      .when(end('a1', 'e1', 'FAILED'))
      .then([
        { type: 'ScoringJudgeRunEnded', data: { first: true, state: 'FAILED', run_time_ms: 1000 } },
        { type: 'ScoringAttemptFailed', data: { error: expect.stringMatching(/ended FAILED/) } },
      ]);
    const ended = [started('a1', 'automatic'), scored('a1', 1, T0)];
    spec
      .given(ended)
      .when(end('a1', 'e1'))
      .then([{ type: 'ScoringJudgeRunEnded', data: { first: true } }]);
    const once: ScoringEvent = {
      type: 'ScoringJudgeRunEnded',
      data: { ...end('a1', 'e1').data, scorer_uid: 's-1', run_id: 'r-1', first: true },
    };
    spec
      .given([...ended, once])
      .when(end('a1', 'e1'))
      .thenNothingHappened();
    // Resumed and ended again: a second end, not a second judge run. What it cost is the cost
    // ledger's, not the attempt's: the event records none.
    spec
      .given([...ended, once])
      .when(end('a1', 'e2'))
      .then([{ type: 'ScoringJudgeRunEnded', data: { first: false } }]);
    const state = [...ended, once].reduce(scoringDecider.evolve, scoringDecider.initialState());
    const [again] = scoringDecider.decide(end('a1', 'e2'), state, userContext()) as ScoringEvent[];
    expect(again!.data).not.toHaveProperty('cost');
    expect(again!.data).not.toHaveProperty('usage');
    spec
      .given([started('a1', 'automatic')])
      .when({ type: 'FailAttempt', data: { attempt_id: 'a1', error: 'x' } })
      .then([{ type: 'ScoringAttemptFailed' }]);
    spec
      .given(ended)
      .when({ type: 'FailAttempt', data: { attempt_id: 'a1', error: 'x' } })
      .thenNothingHappened();
  });
});

describe('sampling and scope', () => {
  it('samples a (scorer, run) the same way every time, at about its rate', () => {
    const runs = Array.from({ length: 4000 }, (_, i) => `run-${i}`);
    const chosen = runs.filter((r) => sampled('s-1', r, 25));
    expect(chosen.length / runs.length).toBeGreaterThan(0.22);
    expect(chosen.length / runs.length).toBeLessThan(0.28);
    expect(runs.filter((r) => sampled('s-1', r, 25))).toEqual(chosen);
    // Raising the rate keeps every run chosen before (lowering it judges fewer runs, not other ones).
    expect(chosen.every((r) => sampled('s-1', r, 50))).toBe(true);
    expect(runs.every((r) => sampled('s-1', r, null))).toBe(true);
    expect(runs.some((r) => sampled('s-1', r, 0))).toBe(false);
    expect(runs.every((r) => sampled('s-1', r, 100))).toBe(true);
  });

  it('scopes by agent', () => {
    expect(inScope({ scope_mode: 'all_agents', agents: [] }, 'a-9')).toEqual({
      uid: 'a-9',
      include_descendants: false,
    });
    const selected = { scope_mode: 'selected_agents' as const, agents: [{ uid: 'a-1', include_descendants: true }] };
    expect(inScope(selected, 'a-1')).toEqual({ uid: 'a-1', include_descendants: true });
    expect(inScope(selected, 'a-2')).toBeNull();
  });
});

// ---- self-improvement ----------------------------------------------------------------------------

const failure = (n: number) => ({
  run_id: `r-${n}`,
  attempt_id: `a-${n}`,
  classification: 'no',
  score: 0,
  scored_at: T0,
});
const startImprovement = (run_id: string, failures: ReturnType<typeof failure>[]) => ({
  type: 'StartSelfImprovement' as const,
  data: {
    scorer_uid: 's-1',
    agent_uid: 'a-1',
    factory_uid: 'f-1',
    team_uid: 't-1',
    run_id,
    failures,
    reasons_sealed: 'v1.x',
    why: 'failed_run_threshold' as const,
  },
});
const improved = (run_id: string, failures: ReturnType<typeof failure>[]): SelfImprovementEvent => ({
  type: 'SelfImprovementStarted',
  data: startImprovement(run_id, failures).data,
});

describe('self-improvement decider', () => {
  const spec = deciderSpec(selfImprovementDecider);

  it('reviews each failure once: a second check offering reviewed failures starts nothing', () => {
    spec
      .given([])
      .when(startImprovement('si-1', [failure(1), failure(2)]))
      .then([{ type: 'SelfImprovementStarted' }]);
    const first = [improved('si-1', [failure(1), failure(2)])];
    spec
      .given(first)
      .when(startImprovement('si-2', [failure(2), failure(3)]))
      .thenNothingHappened();
    spec
      .given(first)
      .when(startImprovement('si-1', [failure(3)]))
      .thenNothingHappened();
    spec
      .given(first)
      .when(startImprovement('si-2', [failure(3)]))
      .then([{ type: 'SelfImprovementStarted', data: { run_id: 'si-2' } }]);
    spec.given([]).when(startImprovement('si-1', [])).thenNothingHappened();
  });

  it('records a run that could not start, once', () => {
    const refuse = {
      type: 'RefuseSelfImprovementRun' as const,
      data: { scorer_uid: 's-1', agent_uid: 'a-1', run_id: 'si-1', error: 'no' },
    };
    spec
      .given([improved('si-1', [failure(1)])])
      .when(refuse)
      .then([{ type: 'SelfImprovementRunRefused' }]);
    spec
      .given([improved('si-1', [failure(1)]), { type: 'SelfImprovementRunRefused', data: refuse.data }])
      .when(refuse)
      .thenNothingHappened();
    spec.given([]).when(refuse).thenNothingHappened();
  });
});
