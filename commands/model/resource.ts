/** `GET /agent/models`: the hosted service's `ListModelsResponse`, each model with its prices. */
import { z } from 'zod';
import { DISABLE_REASONS, PROVIDERS } from './events.js';

export const modelListResource = z.object({
  default_model_id: z.string(),
  models: z.array(
    z.object({
      id: z.string(),
      display_name: z.string(),
      provider: z.enum(PROVIDERS),
      vision_supported: z.boolean(),
      description: z.string().optional(),
      reasoning_level: z.string().optional(),
      disable_reason: z.enum(DISABLE_REASONS).optional().describe('Set when runs may not use the model'),
      prices: z
        .object({ input: z.number(), cache_read: z.number(), cache_write: z.number(), output: z.number() })
        .describe('US dollars per million tokens, by category: what usage is priced at'),
    }),
  ),
  rates: z
    .object({
      credit_price_usd: z.number().describe('US dollars per credit'),
      compute_usd_per_hour: z.object({ default: z.number(), runners: z.record(z.string(), z.number()) }),
      platform_usd_per_hour: z.number(),
    })
    .optional()
    .describe('What machine time (per runner) and platform time cost, and what a credit is worth'),
});
