/** Query and body pieces shared by many routes. */
import { z } from 'zod';

export const limitParam = (max = 100, fallback = 50) => z.coerce.number().int().min(1).max(max).default(fallback);

/** Query booleans are the words true and false, nothing else. */
export const booleanParam = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .default(false);

/** Repeatable query parameters arrive as a string or an array of strings. */
export const repeatable = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]), z.array(item).optional());

export const dateTimeParam = z.iso.datetime({ offset: true });

export const sortOrderParam = z.enum(['asc', 'desc']).default('desc');

export const uidParam = z.string().min(1).max(128);

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** `page_info` of every paged list. */
export const pageInfoSchema = z.object({ has_next_page: z.boolean(), next_cursor: z.string().nullable() });

/** An answer with no body: 204, and redirects (302, with a `location`). */
export const noContent = (description = 'No content') => z.null().describe(description);
