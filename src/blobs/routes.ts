/**
 * GET /api/v1/blobs/{blob}: Shopfloor's own time-limited download links (artifacts, attachments,
 * transcripts). Public: the HMAC signature over the path and its query is the credential, so a
 * link opens exactly the file, name and type it was signed for, until it expires. Links are made
 * by `signedBlobUrl` below.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { DomainError, NotFound } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import type { Api } from '../http/api.js';

/** How long a signed download URL stays valid. */
const SIGNED_URL_TTL_SECONDS = 15 * 60;

// Slashes stay readable in the query (`mime=application/json`); everything else is encoded.
const queryValue = (value: string) => encodeURIComponent(value).replace(/%2F/gi, '/');

/** A signed URL of Shopfloor's own blob download route, naming the file and its type. */
export const signedBlobUrl = (rt: Runtime, blob: string, filename: string, mime: string) =>
  rt.urls.sign(
    `/api/v1/blobs/${blob}?filename=${queryValue(filename)}&mime=${queryValue(mime)}`,
    SIGNED_URL_TTL_SECONDS,
  );

const MIME = /^[\w.+-]+\/[\w.+-]+$/;

/** The URL as it was signed: the path and its query without `expires` and `signature`. */
function signedPart(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const kept = url
    .slice(at + 1)
    .split('&')
    .filter((p) => p && !p.startsWith('expires=') && !p.startsWith('signature='));
  return kept.length ? `${url.slice(0, at)}?${kept.join('&')}` : url.slice(0, at);
}

/** `attachment`, so that no uploaded file ever renders as a page of this origin. */
function contentDisposition(filename: string | undefined): string {
  if (!filename) return 'attachment';
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** The file itself, streamed: Fastify sends a stream as it is, no serializer touches it. */
const fileResponse = {
  description: 'The file, of the type it was signed for (application/octet-stream without one), as an attachment',
  content: { '*/*': { schema: z.unknown().meta({ type: 'string', format: 'binary' }) } },
};

const query = z.object({
  filename: z.string().max(1024).optional(),
  mime: z.string().max(255).optional(),
  expires: z.string().max(20).default(''),
  signature: z.string().max(200).default(''),
});

export default function blobQueries(api: Api, rt: Runtime): void {
  api.get(
    '/blobs/:blob',
    {
      config: { public: true },
      schema: {
        params: z.object({ blob: z.string().max(128).describe('The content hash of the file') }),
        querystring: query,
        response: { 200: fileResponse },
        tags: ['blobs'],
        security: [],
      },
    },
    async (req, reply) => {
      const { filename, mime, expires, signature } = req.query;
      if (!rt.urls.verify(signedPart(req.url), expires, signature)) {
        throw new DomainError(403, 'invalid_signature', 'Forbidden', 'The download link is not valid or has expired');
      }
      const file = rt.blobs.path(req.params.blob);
      if (!file) throw new NotFound('file');
      const { size } = await fs.promises.stat(file);
      return reply
        .header('content-type', mime && MIME.test(mime) ? mime : 'application/octet-stream')
        .header('content-length', size)
        .header('content-disposition', contentDisposition(filename))
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, no-transform')
        .send(fs.createReadStream(file));
    },
  );
}
