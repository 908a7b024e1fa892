/** How the API shows a diagnostic (and a definition's files): shared by validation and branches. */
import { z } from 'zod';
import { DIAGNOSTIC_CODES } from './diagnostics.js';

export const diagnosticSchema = z.object({
  code: z.enum(DIAGNOSTIC_CODES),
  message: z.string(),
  path: z.string().describe('The file'),
  line: z.number().int().describe('1-based'),
  column: z.number().int().describe('1-based'),
});
