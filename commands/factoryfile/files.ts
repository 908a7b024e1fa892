/** The files of a definition as requests carry them: bounded, each path once. */
import { z } from 'zod';
import { PATH_PATTERN } from './layout.js';

/** Files of one definition, and bytes of one file (reference notes §6.3: content at most 2 MiB). */
export const MAX_FILES = 256;
export const MAX_FILE_BYTES = 2 * 1024 * 1024;
/** The body of a request carrying files: more than a typical definition, far less than 256 files of 2 MiB. */
export const FILES_BODY_LIMIT = 8 * 1024 * 1024;

export const filesSchema = z
  .array(
    z
      .object({
        path: z
          .string()
          .max(512)
          .regex(PATH_PATTERN, 'a relative path of /-separated names, without . or .. (at most 512 characters)'),
        content: z
          .string()
          .max(MAX_FILE_BYTES)
          .refine((c) => Buffer.byteLength(c, 'utf8') <= MAX_FILE_BYTES, `at most ${MAX_FILE_BYTES} bytes of UTF-8`),
      })
      .strict(),
  )
  .max(MAX_FILES)
  .superRefine((files, ctx) => {
    const seen = new Set<string>();
    files.forEach((f, i) => {
      if (seen.has(f.path)) ctx.addIssue({ code: 'custom', path: [i, 'path'], message: `${f.path} is given twice` });
      seen.add(f.path);
    });
  });
