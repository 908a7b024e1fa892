/**
 * The scorer as the API answers it (the hosted service's scorer, with `uid`), a list entry, and
 * its results and scores, from the documents of their read models.
 */
import { z } from 'zod';
import type { ScorerDoc } from '../../projections/scorer/scorers.js';
import type { ScoringResultDoc } from '../../projections/scorer/scoring-results.js';
import { isoDuration } from '../run/public.js';

const classification = z.object({ value: z.string(), score: z.number(), description: z.string().nullable() });

export const scorerResource = z.object({
  uid: z.string().describe('The scorer UID (a UUID)'),
  id: z.string().describe('The same UID: `id` in the hosted SDK'),
  factory_uid: z.string(),
  name: z.string(),
  description: z.string(),
  scoring_prompt: z.string().describe('The rubric the judge applies'),
  model_id: z.string().describe('The model the judge runs use'),
  threshold: z.number().describe('A run passes when its classification scores at or above this (0–1)'),
  allowed_classifications: z.array(classification),
  scope_mode: z.enum(['all_agents', 'selected_agents']),
  agent_uids: z.array(z.string()).describe('The selected agents; empty for all_agents'),
  agents: z.array(z.object({ uid: z.string(), name: z.string(), include_descendants: z.boolean() })),
  sampling_rate: z.number().describe('Percent of eligible runs judged automatically (two decimals); 0 stops it'),
  scorer_kind: z.enum(['user', 'benchmark_task_correctness']),
  agent_config: z.object({
    default_runner_uid: z.string().nullable(),
    mcp_servers: z.record(z.string(), z.record(z.string(), z.unknown())).nullable(),
    secrets: z.array(z.object({ name: z.string() })).nullable(),
  }),
  version: z.int().describe('Bumped by every update'),
  self_improvement_enabled: z.boolean(),
  failed_run_threshold: z.int().describe('Unreviewed failures of an agent that start a self-improvement run'),
  created_at: z.string(),
  updated_at: z.string(),
});

export type ScorerResource = z.infer<typeof scorerResource>;

const passRateSummary = z.object({
  pass_count: z.int(),
  fail_count: z.int(),
  pass_rate: z.number().nullable().describe('pass_count / (pass_count + fail_count); null without scores'),
  recent_outcomes: z
    .array(z.enum(['pass', 'fail']))
    .describe('The outcomes of the most recent live scores, oldest first, against the threshold now'),
});

export const scorerListItem = scorerResource.extend({
  result_count: z.int().describe('Live scores recorded (one per run judged)'),
  last_scored_at: z.string().nullable(),
  pass_rate_summary: passRateSummary,
});

export function toScorerResource(doc: ScorerDoc, agentNames: ReadonlyMap<string, string>): ScorerResource {
  return {
    uid: doc.uid,
    id: doc.uid,
    factory_uid: doc.factory_uid,
    name: doc.name,
    description: doc.description,
    scoring_prompt: doc.scoring_prompt,
    model_id: doc.model_id,
    threshold: doc.threshold,
    allowed_classifications: doc.allowed_classifications,
    scope_mode: doc.scope_mode,
    agent_uids: doc.agents.map((a) => a.uid),
    agents: doc.agents.map((a) => ({ ...a, name: agentNames.get(a.uid) ?? '' })),
    sampling_rate: doc.sampling_rate ?? 100,
    scorer_kind: doc.scorer_kind ?? 'user',
    agent_config: doc.agent_config,
    version: doc.version,
    self_improvement_enabled: doc.self_improvement.enabled,
    failed_run_threshold: doc.self_improvement.failed_run_threshold,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}

/** Pass or fail, against the threshold now. */
export const outcomeOf = (score: number, threshold: number): 'pass' | 'fail' => (score >= threshold ? 'pass' : 'fail');

const usage = z
  .looseObject({
    inference_cost: z.number().optional(),
    compute_cost: z.number().optional(),
    platform_cost: z.number().optional(),
    inference_cost_usd: z.number().optional(),
    compute_cost_usd: z.number().optional(),
    platform_cost_usd: z.number().optional(),
    total_tokens: z.number().optional(),
  })
  .describe("The judge run's request_usage");

export const scoringResult = z.object({
  run_id: z.string().describe('The run judged'),
  attempt_id: z.string().describe('The newest attempt on the run'),
  attempted_at: z.string().describe('When the scorer last attempted this run'),
  status: z
    .enum(['scored', 'failed', 'in_flight'])
    .describe('scored: a live score exists; in_flight: none yet and a judge is running; failed: neither'),
  is_in_flight: z.boolean().describe('A judge is running on this run (a live score stays shown meanwhile)'),
  trigger: z
    .enum(['automatic', 'manual', 'benchmark'])
    .describe('What started the newest attempt (benchmark: a benchmark run judging its trial)'),
  classification: z.string().nullable(),
  score: z.number().nullable(),
  outcome: z.enum(['pass', 'fail']).nullable().describe('Derived now, against the current threshold'),
  scored_at: z.string().nullable(),
  error: z.string().nullable().describe('Why the newest attempt failed, when it did'),
  scoring_run_id: z.string().nullable().describe('The judge run of the attempt shown'),
  scoring_run_time: z.string().nullable().describe('ISO 8601 duration of the judge run, once it ended'),
  scoring_run_usage: usage.nullable(),
  conversation_id: z.string().nullable(),
  conversation_title: z.string().nullable(),
  reason: z.string().nullable().optional().describe("With include_reasons=true: the judge's reasoning"),
  reason_status: z
    .enum(['available', 'absent', 'unavailable'])
    .optional()
    .describe('With include_reasons=true: absent when the judge gave none, unavailable when it cannot be read'),
});

export type ScoringResult = z.infer<typeof scoringResult>;

/** A result row: the live score when there is one (with its judge run), else the newest attempt. */
export function toScoringResult(doc: ScoringResultDoc, threshold: number): ScoringResult {
  const live = doc.live;
  const shown = live ?? doc;
  return {
    run_id: doc.run_id,
    attempt_id: doc.attempt_id,
    attempted_at: doc.attempted_at,
    status: live ? 'scored' : doc.in_flight.length ? 'in_flight' : 'failed',
    is_in_flight: doc.in_flight.length > 0,
    trigger: doc.trigger,
    classification: live?.classification ?? null,
    score: live?.score ?? null,
    outcome: live ? outcomeOf(live.score, threshold) : null,
    scored_at: live?.scored_at ?? null,
    error: doc.attempt_status === 'failed' ? doc.error : null,
    scoring_run_id: shown.scoring_run_id,
    scoring_run_time: shown.scoring_run_time_ms === null ? null : isoDuration(shown.scoring_run_time_ms),
    scoring_run_usage: shown.scoring_run_usage,
    conversation_id: doc.conversation_id,
    conversation_title: doc.conversation_title,
  };
}
