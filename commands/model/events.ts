/**
 * The model catalogue: `models`, one stream for the whole service. Each change of the catalogue
 * the operator configures is an event, so the price a usage report is charged at is a fact in the
 * log (what a rebuild reads), never a lookup of today's file.
 */

export const PROVIDERS = ['OPENAI', 'ANTHROPIC', 'GOOGLE', 'UNKNOWN'] as const;
export const DISABLE_REASONS = ['PROVIDER_OUTAGE', 'OUT_OF_REQUESTS', 'ADMIN_DISABLED', 'REQUIRES_UPGRADE'] as const;

/** US dollars per million tokens of each category. */
interface TokenPrices {
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
}

interface Model {
  id: string;
  display_name: string;
  provider: (typeof PROVIDERS)[number];
  vision_supported: boolean;
  description?: string;
  reasoning_level?: string;
  /** Set on a disabled model: runs and schedules may not name it. */
  disable_reason?: (typeof DISABLE_REASONS)[number];
  prices: TokenPrices;
}

/**
 * What machine and platform time cost, and what a credit is worth: the rest of the price list.
 * A catalogue recorded without rates (before they existed) charged nothing for time and gave no
 * credits, so a rebuild prices that history as it was priced.
 */
export interface Rates {
  /** US dollars per credit: credit figures are dollars divided by it. */
  credit_price_usd: number;
  /** US dollars per hour of machine time (claim to end of an execution): per runner id, else `default`. */
  compute_usd_per_hour: { default: number; runners: Record<string, number> };
  /** US dollars per hour a run is in progress (start to end of an execution). */
  platform_usd_per_hour: number;
}

export interface Catalogue {
  default_model_id: string;
  models: Model[];
  rates?: Rates;
}

export type ModelEvent = { type: 'ModelCatalogueChanged'; data: Catalogue };

export const MODELS_STREAM = 'models';
