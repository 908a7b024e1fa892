/** Reads a request body up to a hard limit without ever holding more than limit + one chunk. */
import type { IncomingMessage } from 'node:http';

export const MAX_WEBHOOK_BODY_BYTES = 262_144;

export type BodyRead =
  | { ok: true; bytes: Buffer }
  | { ok: false; too_large: true; size_bytes: number }
  /** The client went away, or the server's request timeout cut it off, before the body arrived. */
  | { ok: false; too_large: false };

export async function readLimitedBody(req: IncomingMessage, limit = MAX_WEBHOOK_BODY_BYTES): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return { ok: false, too_large: true, size_bytes: declared };
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      // Stop at once: the rest is never read, and the connection is closed after the answer.
      if (size > limit) {
        return { ok: false, too_large: true, size_bytes: Number.isFinite(declared) ? Math.max(declared, size) : size };
      }
      chunks.push(buffer);
    }
  } catch {
    // `aborted`: the listener logs it (throttled), nothing here to add.
    return { ok: false, too_large: false };
  }
  return { ok: true, bytes: Buffer.concat(chunks, size) };
}
