/** The catalogue the operator configures: MODELS_FILE (YAML or JSON), else the one shipped here. */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { z } from 'zod';
import { type Catalogue, DISABLE_REASONS, PROVIDERS } from './events.js';

export const SHIPPED_CATALOGUE = fileURLToPath(new URL('./models.yaml', import.meta.url));

const price = z.number().min(0).max(1_000_000);

const catalogueSchema = z
  .object({
    default_model_id: z.string().min(1).max(200),
    models: z
      .array(
        z
          .object({
            id: z.string().regex(/^[\w.:-]{1,200}$/, 'letters, digits and . _ : -'),
            display_name: z.string().min(1).max(200),
            provider: z.enum(PROVIDERS),
            vision_supported: z.boolean(),
            description: z.string().max(2000).optional(),
            reasoning_level: z.string().max(50).optional(),
            disable_reason: z.enum(DISABLE_REASONS).optional(),
            prices: z.object({ input: price, cache_read: price, cache_write: price, output: price }).strict(),
          })
          .strict(),
      )
      .min(1)
      .max(1000),
    rates: z
      .object({
        credit_price_usd: z.number().positive().max(1_000_000),
        compute_usd_per_hour: z
          .object({
            default: price,
            runners: z
              .record(z.string().regex(/^[\w.:-]{1,200}$/, 'letters, digits and . _ : -'), price)
              .refine((r) => Object.keys(r).length <= 1000, 'at most 1,000 runners')
              .default({}),
          })
          .strict(),
        platform_usd_per_hour: price,
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const ids = c.models.map((m) => m.id);
    if (new Set(ids).size !== ids.length)
      ctx.addIssue({ code: 'custom', path: ['models'], message: 'model ids repeat' });
    const fallback = c.models.find((m) => m.id === c.default_model_id);
    if (!fallback || fallback.disable_reason)
      ctx.addIssue({ code: 'custom', path: ['default_model_id'], message: 'must name an enabled model of the list' });
  });

/** Reads and checks the catalogue; a broken file stops the start with the reason. */
export function loadCatalogue(file: string): Catalogue {
  const parsed = catalogueSchema.safeParse(parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`).join('; ');
    throw new Error(`the model catalogue ${file} is not valid: ${problems}`);
  }
  return parsed.data;
}
