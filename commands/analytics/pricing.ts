/**
 * Pricing, pure: a usage report's tokens at the model catalogue's prices, an execution's machine
 * and platform time at the rates, both in US dollars and in credits. The price list is the one in
 * force when the usage happened (see prices.ts); what these functions return is recorded in the
 * cost ledger, never reckoned again.
 */
import type { Catalogue, Rates } from '../model/events.js';
import type { InferenceUsage, MachineUsage, PricedModel, Tokens, UsageType } from './events.js';
import { own, putOwn } from '../../src/own-keys.js';

const NO_RATES: Rates = {
  credit_price_usd: 0,
  compute_usd_per_hour: { default: 0, runners: {} },
  platform_usd_per_hour: 0,
};

/** The rates of a price list; none (nothing charged for time, no credits) before rates existed. */
const ratesOf = (catalogue: Catalogue | null): Rates => catalogue?.rates ?? NO_RATES;

/** Dollars to nano-dollars precision, so recorded amounts stay short and exact in JSON. */
export const roundUsd = (usd: number): number => Math.round(usd * 1e9) / 1e9;

/** Credits for `usd` at the credit price (0 when the price list sets none). */
const creditsOf = (usd: number, rates: Rates): number =>
  rates.credit_price_usd > 0 ? roundUsd(usd / rates.credit_price_usd) : 0;

type Categories = Omit<Tokens, 'other'>;

/** Category names a report may use, to the category priced. */
const CATEGORY: Record<string, keyof Categories> = {
  input: 'input',
  input_cache_read: 'cache_read',
  cache_read: 'cache_read',
  input_cache_write: 'cache_write',
  cache_write: 'cache_write',
  output: 'output',
};

const noTokens = (): Tokens => ({ input: 0, cache_read: 0, cache_write: 0, output: 0, other: 0 });

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const USAGE_TYPES: Record<string, UsageType> = {
  direct_api_inference_usage: 'warp',
  byok_inference_usage: 'byok',
  custom_endpoint_inference_usage: 'custom_endpoint',
};

/**
 * The tokens of a usage report, by model and usage type: from `model_token_usage` (its
 * `tokens_by_category`; a model's tokens given without categories count as `other`) when the
 * report has it, else summed from `usage_by_category` (each category's per-model `token_count`).
 * One source only, so no token is counted twice.
 */
export function tokensOf(
  usage: Record<string, unknown>,
): Array<{ model_id: string; usage_type: UsageType; tokens: Tokens }> {
  const out = new Map<string, { model_id: string; usage_type: UsageType; tokens: Tokens }>();
  const add = (model_id: string, usage_type: UsageType, category: keyof Tokens, n: number) => {
    const key = `${usage_type}\u0000${model_id}`;
    const entry = out.get(key) ?? { model_id, usage_type, tokens: noTokens() };
    entry.tokens[category] += n;
    out.set(key, entry);
  };
  if (Array.isArray(usage.model_token_usage)) {
    for (const m of usage.model_token_usage) {
      if (!isRecord(m) || typeof m.model_id !== 'string') continue;
      const type = (m.usage_type as UsageType | undefined) ?? 'warp';
      const byCategory = isRecord(m.tokens_by_category) ? m.tokens_by_category : null;
      let categorized = 0;
      for (const [name, n] of Object.entries(byCategory ?? {})) {
        add(m.model_id, type, own(CATEGORY, name) ?? 'other', count(n));
        categorized += count(n);
      }
      const rest = count(m.total_tokens) - categorized;
      if (rest > 0 || !byCategory) add(m.model_id, type, 'other', Math.max(0, rest));
    }
  } else if (isRecord(usage.usage_by_category)) {
    for (const category of Object.values(usage.usage_by_category)) {
      if (!isRecord(category)) continue;
      for (const [field, type] of Object.entries(USAGE_TYPES)) {
        const models = own(category, field);
        if (!isRecord(models)) continue;
        for (const [model_id, u] of Object.entries(models)) {
          const tokenCount = isRecord(u) && isRecord(u.token_count) ? u.token_count : {};
          add(model_id, type, 'input', count(tokenCount.input));
          add(model_id, type, 'cache_read', count(tokenCount.input_cache_read));
          add(model_id, type, 'cache_write', count(tokenCount.input_cache_write));
          add(model_id, type, 'output', count(tokenCount.output));
        }
      }
    }
  }
  return [...out.values()];
}

const tokenTotal = (t: Tokens) => t.input + t.cache_read + t.cache_write + t.output + t.other;

/**
 * Prices each model's tokens: Shopfloor-served (`warp`) tokens at the catalogue's prices per
 * million; bring-your-own-key and custom-endpoint tokens cost nothing here (their provider bills
 * them), nor do tokens of a model the catalogue lacks (listed with `prices: null`).
 */
function priceTokens(models: ReturnType<typeof tokensOf>, catalogue: Catalogue | null): PricedModel[] {
  return models.map(({ model_id, usage_type, tokens }) => {
    const listed = usage_type === 'warp' ? catalogue?.models.find((m) => m.id === model_id) : undefined;
    const prices = listed ? { ...listed.prices } : null;
    const cost = (n: number, per: number | undefined) => roundUsd((n * (per ?? 0)) / 1_000_000);
    return {
      model_id,
      usage_type,
      tokens,
      prices,
      usd: {
        input: cost(tokens.input, prices?.input),
        cache_read: cost(tokens.cache_read, prices?.cache_read),
        cache_write: cost(tokens.cache_write, prices?.cache_write),
        output: cost(tokens.output, prices?.output),
      },
    };
  });
}

const modelUsd = (m: PricedModel) => m.usd.input + m.usd.cache_read + m.usd.cache_write + m.usd.output;

/** Inference dollars by the model that served them. */
export function usdByModel(models: readonly PricedModel[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of models) putOwn(out, m.model_id, roundUsd((own(out, m.model_id) ?? 0) + modelUsd(m)));
  return out;
}

/**
 * A usage report's `usage_by_category`, with each model's `cost_usd` priced like its tokens
 * (the report's own dollar figures are not trusted); token counts and web searches as reported.
 */
function pricedCategories(
  usage: Record<string, unknown>,
  catalogue: Catalogue | null,
): Record<string, unknown> | undefined {
  if (!isRecord(usage.usage_by_category)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, category] of Object.entries(usage.usage_by_category)) {
    if (!isRecord(category)) continue;
    const entry: Record<string, unknown> = {};
    for (const [field, type] of Object.entries(USAGE_TYPES)) {
      const models = own(category, field);
      if (!isRecord(models)) continue;
      const priced: Record<string, unknown> = {};
      for (const [model_id, u] of Object.entries(models)) {
        const tc = isRecord(u) && isRecord(u.token_count) ? u.token_count : {};
        const tokens: Tokens = {
          input: count(tc.input),
          cache_read: count(tc.input_cache_read),
          cache_write: count(tc.input_cache_write),
          output: count(tc.output),
          other: 0,
        };
        const [m] = priceTokens([{ model_id, usage_type: type, tokens }], catalogue);
        putOwn(priced, model_id, {
          cost_usd: {
            input_cost_usd: m!.usd.input,
            input_cache_read_cost_usd: m!.usd.cache_read,
            input_cache_write_cost_usd: m!.usd.cache_write,
            output_cost_usd: m!.usd.output,
          },
          token_count: {
            input: tokens.input,
            input_cache_read: tokens.cache_read,
            input_cache_write: tokens.cache_write,
            output: tokens.output,
          },
          ...(isRecord(u) && typeof u.web_search_count === 'number' ? { web_search_count: u.web_search_count } : {}),
        });
      }
      putOwn(entry, field, priced);
    }
    putOwn(out, name, entry);
  }
  return out;
}

/** A usage report priced: its models, and the inference part of the run's `request_usage`. */
export function priceUsage(
  usage: Record<string, unknown>,
  catalogue: Catalogue | null,
): { models: PricedModel[]; usage: InferenceUsage } {
  const rates = ratesOf(catalogue);
  const models = priceTokens(tokensOf(usage), catalogue);
  const sum = (pick: (m: PricedModel) => number) => roundUsd(models.reduce((s, m) => s + pick(m), 0));
  const usd = sum(modelUsd);
  const categories = pricedCategories(usage, catalogue);
  return {
    models,
    usage: {
      inference_cost: creditsOf(usd, rates),
      inference_cost_usd: usd,
      total_tokens: count(usage.total_tokens) || models.reduce((s, m) => s + tokenTotal(m.tokens), 0),
      inference_cost_breakdown_usd: {
        input_cost_usd: sum((m) => m.usd.input),
        input_cache_read_cost_usd: sum((m) => m.usd.cache_read),
        input_cache_write_cost_usd: sum((m) => m.usd.cache_write),
        output_cost_usd: sum((m) => m.usd.output),
      },
      model_token_usage: models.map((m) => ({
        model_id: m.model_id,
        usage_type: m.usage_type,
        total_tokens: tokenTotal(m.tokens),
        tokens_by_category: Object.fromEntries(
          (
            [
              ['input', m.tokens.input],
              ['input_cache_read', m.tokens.cache_read],
              ['input_cache_write', m.tokens.cache_write],
              ['output', m.tokens.output],
              ['other', m.tokens.other],
            ] as const
          ).filter(([, n]) => n > 0),
        ),
      })),
      ...(categories ? { usage_by_category: categories } : {}),
    },
  };
}

/** One execution's times. */
export interface ExecutionTimes {
  claimed_at: string | null;
  started_at: string | null;
  ended_at: string;
}

const seconds = (from: string | null, to: string) =>
  from === null ? 0 : Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000);

/**
 * An execution priced: machine time from its claim to its end at the runner's rate (else the
 * default), platform time from its start to its end at the platform rate.
 */
export function priceExecution(times: ExecutionTimes, runnerId: string | null, catalogue: Catalogue | null) {
  const rates = ratesOf(catalogue);
  const compute_usd_per_hour =
    (runnerId === null ? undefined : own(rates.compute_usd_per_hour.runners, runnerId)) ??
    rates.compute_usd_per_hour.default;
  const compute_seconds = seconds(times.claimed_at, times.ended_at);
  const platform_seconds = seconds(times.started_at, times.ended_at);
  return {
    compute_seconds,
    platform_seconds,
    compute_usd_per_hour,
    platform_usd_per_hour: rates.platform_usd_per_hour,
    compute_usd: roundUsd((compute_seconds / 3600) * compute_usd_per_hour),
    platform_usd: roundUsd((platform_seconds / 3600) * rates.platform_usd_per_hour),
  };
}

/** The machine part of `request_usage` after adding an execution to the run's `before`. */
export function addExecution(
  before: MachineUsage | null,
  priced: ReturnType<typeof priceExecution>,
  catalogue: Catalogue | null,
): MachineUsage {
  const rates = ratesOf(catalogue);
  const b = before ?? {
    compute_cost: 0,
    compute_cost_usd: 0,
    platform_cost: 0,
    platform_cost_usd: 0,
    compute_seconds: 0,
    platform_seconds: 0,
  };
  return {
    compute_cost: roundUsd(b.compute_cost + creditsOf(priced.compute_usd, rates)),
    compute_cost_usd: roundUsd(b.compute_cost_usd + priced.compute_usd),
    platform_cost: roundUsd(b.platform_cost + creditsOf(priced.platform_usd, rates)),
    platform_cost_usd: roundUsd(b.platform_cost_usd + priced.platform_usd),
    compute_seconds: b.compute_seconds + priced.compute_seconds,
    platform_seconds: b.platform_seconds + priced.platform_seconds,
  };
}
