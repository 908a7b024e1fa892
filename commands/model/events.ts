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

export interface Catalogue {
  default_model_id: string;
  models: Model[];
}

export type ModelEvent = { type: 'ModelCatalogueChanged'; data: Catalogue };

export const MODELS_STREAM = 'models';
