/**
 * The cost ledger of a run tree and the pricing it records, on hand-made histories whose dollars
 * are worked out in each test.
 */
import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../../../commands/analytics/events.js';
import { type LedgerCommand, ledgerDecider, type PriceList } from '../../../commands/analytics/cost-ledger-decider.js';
import { priceExecution, priceUsage, tokensOf } from '../../../commands/analytics/pricing.js';
import type { Catalogue } from '../../../commands/model/events.js';
import { deciderSpec, fold } from '../../helpers/decider-spec.js';

const catalogue: Catalogue = {
  default_model_id: 'small',
  models: [
    {
      id: 'small',
      display_name: 'Small',
      provider: 'OPENAI',
      vision_supported: false,
      prices: { input: 1, cache_read: 0.5, cache_write: 2, output: 4 },
    },
    {
      id: 'big',
      display_name: 'Big',
      provider: 'ANTHROPIC',
      vision_supported: true,
      prices: { input: 10, cache_read: 1, cache_write: 20, output: 40 },
    },
  ],
  rates: {
    credit_price_usd: 0.01,
    compute_usd_per_hour: { default: 1, runners: { gpu: 6 } },
    platform_usd_per_hour: 0.5,
  },
};
const prices: PriceList = { revision: 0, catalogue };

const keys = { source: 'API', user: 'u-1', agent: 'a-1', model: 'big' };
const usage = (run_id: string, revision: number, byCategory: Record<string, number>, model = 'big'): LedgerCommand => ({
  type: 'PriceUsage',
  data: {
    root_run_id: 'root',
    run_id,
    attributed_run_id: run_id,
    factory_uid: 'f-1',
    team_uid: 't-1',
    keys,
    cause: { event_id: `${run_id}-${revision}`, revision, at: '2026-03-02T10:00:00.000Z' },
    price_list: prices,
    usage: {
      model_token_usage: [{ model_id: model, usage_type: 'warp', total_tokens: 0, tokens_by_category: byCategory }],
    },
  },
});
const execution = (
  run_id: string,
  execution_id: string,
  claimed: string,
  started: string,
  ended: string,
): LedgerCommand => ({
  type: 'PriceExecution',
  data: {
    root_run_id: 'root',
    run_id,
    factory_uid: 'f-1',
    team_uid: 't-1',
    keys,
    cause: { event_id: `${execution_id}-end`, revision: 9, at: ended },
    price_list: prices,
    execution_id,
    runner_id: null,
    times: { claimed_at: claimed, started_at: started, ended_at: ended },
  },
});
const link = (run_id: string, pr_id: string): LedgerCommand => ({
  type: 'LinkPullRequest',
  data: {
    root_run_id: 'root',
    factory_uid: 'f-1',
    team_uid: 't-1',
    cause: { event_id: `${run_id}-${pr_id}`, revision: 5, at: '2026-03-02T11:00:00.000Z' },
    pr: {
      pr_id,
      url: `https://github.com/acme/app/pull/${pr_id}`,
      provider: 'github',
      repo_full_name: 'acme/app',
      pr_number: 1,
      branch: 'fix',
    },
    run: {
      run_id,
      root_run_id: 'root',
      created_at: '2026-03-02T09:00:00.000Z',
      creator: { type: 'user', uid: 'u-1' },
      source: 'API',
      requested_model_id: 'big',
    },
  },
});

/** Decides each command on the state the ones before left, as the ledger's stream would. */
function run(commands: LedgerCommand[]): LedgerEvent[] {
  const events: LedgerEvent[] = [];
  for (const c of commands)
    events.push(
      ...ledgerDecider.decide(c, fold(ledgerDecider, events), {
        now: '',
        actor: { type: 'system', uid: 'r' },
        teams: {},
      }),
    );
  return events;
}

describe('pricing', () => {
  it('prices tokens by category at the model’s prices per million, in dollars and credits', () => {
    // small: 2 M input × $1 + 1 M cache read × $0.5 + 0.5 M cache write × $2 + 0.25 M output × $4 = 2 + 0.5 + 1 + 1 = $4.5
    const priced = priceUsage(
      {
        model_token_usage: [
          {
            model_id: 'small',
            usage_type: 'warp',
            total_tokens: 3_750_000,
            tokens_by_category: {
              input: 2_000_000,
              input_cache_read: 1_000_000,
              input_cache_write: 500_000,
              output: 250_000,
            },
          },
        ],
      },
      catalogue,
    );
    expect(priced.usage).toMatchObject({
      inference_cost_usd: 4.5,
      inference_cost: 450, // $4.5 at $0.01 a credit
      total_tokens: 3_750_000,
      inference_cost_breakdown_usd: {
        input_cost_usd: 2,
        input_cache_read_cost_usd: 0.5,
        input_cache_write_cost_usd: 1,
        output_cost_usd: 1,
      },
    });
  });

  it('charges nothing for bring-your-own-key tokens, a model the catalogue lacks, or tokens without a category', () => {
    const priced = priceUsage(
      {
        model_token_usage: [
          { model_id: 'big', usage_type: 'byok', total_tokens: 1_000_000, tokens_by_category: { input: 1_000_000 } },
          {
            model_id: 'mystery',
            usage_type: 'warp',
            total_tokens: 1_000_000,
            tokens_by_category: { output: 1_000_000 },
          },
          { model_id: 'small', usage_type: 'warp', total_tokens: 1_000_000 },
        ],
      },
      catalogue,
    );
    expect(priced.usage.inference_cost_usd).toBe(0);
    expect(priced.usage.total_tokens).toBe(3_000_000);
    expect(priced.models.map((m) => [m.model_id, m.prices === null, m.tokens.other])).toEqual([
      ['big', true, 0],
      ['mystery', true, 0],
      ['small', false, 1_000_000],
    ]);
  });

  it('takes the tokens from usage_by_category when the report has no model_token_usage, never both', () => {
    const fromCategories = tokensOf({
      usage_by_category: {
        primary_agent: { direct_api_inference_usage: { small: { token_count: { input: 10, output: 5 } } } },
        conversation_compaction: { direct_api_inference_usage: { small: { token_count: { input: 7 } } } },
      },
    });
    expect(fromCategories).toEqual([
      {
        model_id: 'small',
        usage_type: 'warp',
        tokens: { input: 17, cache_read: 0, cache_write: 0, output: 5, other: 0 },
      },
    ]);
    const both = tokensOf({
      model_token_usage: [{ model_id: 'big', total_tokens: 3, tokens_by_category: { input: 3 } }],
      usage_by_category: { primary_agent: { direct_api_inference_usage: { small: { token_count: { input: 10 } } } } },
    });
    expect(both.map((m) => m.model_id)).toEqual(['big']);
  });

  it('prices machine time from claim to end at the runner’s rate, platform time from start to end', () => {
    // 90 min claimed on a gpu runner at $6/h = $9; 60 min in progress at $0.5/h = $0.5.
    const times = {
      claimed_at: '2026-03-02T09:00:00Z',
      started_at: '2026-03-02T09:30:00Z',
      ended_at: '2026-03-02T10:30:00Z',
    };
    expect(priceExecution(times, 'gpu', catalogue)).toMatchObject({
      compute_usd: 9,
      platform_usd: 0.5,
      compute_seconds: 5400,
    });
    // Any other runner at the default $1/h; a catalogue recorded before rates existed charges nothing for time.
    expect(priceExecution(times, 'other', catalogue).compute_usd).toBe(1.5);
    expect(priceExecution(times, null, { ...catalogue, rates: undefined })).toMatchObject({
      compute_usd: 0,
      platform_usd: 0,
    });
  });
});

describe('the cost ledger of a run tree', () => {
  const spec = deciderSpec(ledgerDecider);

  it('records a usage report once, and a later report of the run by the difference', () => {
    // big: 0.1 M input × $10 = $1, then 0.3 M input = $3: the second report adds $2.
    const first = run([usage('root', 3, { input: 100_000 })]);
    expect(first).toMatchObject([
      { type: 'RunInferencePriced', data: { delta: { inference: 1 }, tree_total: { inference: 1 } } },
    ]);
    spec
      .given(first)
      .when(usage('root', 3, { input: 100_000 }))
      .thenNothingHappened();
    spec
      .given(first)
      .when(usage('root', 7, { input: 300_000 }))
      .then([
        {
          type: 'RunInferencePriced',
          data: {
            delta: { inference: 2, compute: 0, platform: 0 },
            tree_total: { inference: 3, compute: 0, platform: 0 },
          },
        },
      ]);
  });

  it('splits the whole tree’s cost evenly across the pull requests it produced', () => {
    const events = run([
      // The root run reports $6 of inference (0.6 M big input tokens) and opens PR one: all of it is PR one's.
      usage('root', 3, { input: 600_000 }),
      link('root', 'pr-1'),
      // Its sub-run opens PR two: the tree's $6 is now $3 each.
      link('child', 'pr-2'),
      // The sub-run's execution: claimed 1 h at $1/h, in progress 30 min at $0.5/h = $1 compute, $0.25 platform.
      execution('child', 'x-1', '2026-03-02T09:00:00Z', '2026-03-02T09:30:00Z', '2026-03-02T10:00:00Z'),
      // Naming a pull request again changes nothing.
      link('child', 'pr-2'),
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'RunInferencePriced',
      'PullRequestLinked',
      'PullRequestLinked',
      'RunExecutionPriced',
    ]);
    expect((events[1]!.data as { pr_shares: unknown }).pr_shares).toEqual([
      { pr_id: 'pr-1', usd: { inference: 6, compute: 0, platform: 0 }, inference_by_model: { big: 6 } },
    ]);
    expect((events[2]!.data as { pr_shares: unknown }).pr_shares).toEqual([
      { pr_id: 'pr-1', usd: { inference: 3, compute: 0, platform: 0 }, inference_by_model: { big: 3 } },
      { pr_id: 'pr-2', usd: { inference: 3, compute: 0, platform: 0 }, inference_by_model: { big: 3 } },
    ]);
    expect(events[3]!.data).toMatchObject({
      delta: { inference: 0, compute: 1, platform: 0.25 },
      tree_total: { inference: 6, compute: 1, platform: 0.25 },
      pr_shares: [
        { pr_id: 'pr-1', usd: { inference: 3, compute: 0.5, platform: 0.125 } },
        { pr_id: 'pr-2', usd: { inference: 3, compute: 0.5, platform: 0.125 } },
      ],
    });
  });

  it('prices an execution once, and adds it to the run’s machine usage so far', () => {
    const events = run([
      execution('root', 'x-1', '2026-03-02T09:00:00Z', '2026-03-02T09:00:00Z', '2026-03-02T09:30:00Z'),
      execution('root', 'x-1', '2026-03-02T09:00:00Z', '2026-03-02T09:00:00Z', '2026-03-02T09:30:00Z'),
      execution('root', 'x-2', '2026-03-02T11:00:00Z', '2026-03-02T11:00:00Z', '2026-03-02T12:00:00Z'),
    ]);
    expect(events).toHaveLength(2);
    // Two executions: 30 min then 60 min, at $1/h compute and $0.5/h platform; credits at $0.01.
    expect(events[1]!.data).toMatchObject({
      usage: {
        compute_cost_usd: 1.5,
        platform_cost_usd: 0.75,
        compute_cost: 150,
        platform_cost: 75,
        compute_seconds: 5400,
        platform_seconds: 5400,
      },
    });
  });

  it('counts a person’s follow-ups to a run for the pull requests it produced', () => {
    const follow = (revision: number): LedgerCommand => ({
      type: 'CountFollowUp',
      data: {
        root_run_id: 'root',
        run_id: 'root',
        cause: { event_id: `f-${revision}`, revision, at: '2026-03-02T12:00:00Z' },
      },
    });
    const events = run([follow(4), link('root', 'pr-1'), follow(8), follow(8)]);
    expect(events.map((e) => e.type)).toEqual(['RunFollowUpCounted', 'PullRequestLinked', 'RunFollowUpCounted']);
    expect(events[1]!.data).toMatchObject({ follow_ups: 1 });
    expect(events[2]!.data).toMatchObject({ follow_ups: 2, pr_ids: ['pr-1'] });
  });
});
