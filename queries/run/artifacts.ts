/**
 * GET /agent/artifacts/{artifact_uid} and GET /agent/artifacts/{artifact_uid}/download.
 *
 * Both routes are public so that public artifacts need no credential; a private artifact checks
 * the credential here: none or an invalid one is 401, one that cannot view the run is 404.
 * Files leave through time-limited signed URLs of the blob download route.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { hashApiKey } from '../../src/http/api-key.js';
import { bearer } from '../../src/http/auth.js';
import { noContent, uidParam } from '../../src/http/schemas.js';
import { NotFound, Unauthorized, Unprocessable } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { artifactsProjection, type ArtifactDoc } from '../../projections/run/artifacts.js';
import { signedBlobUrl } from '../../src/blobs/routes.js';
import { artifactItemSchema, canView, filenameOf, mimeOf, viewerOf } from '../../commands/run/public.js';
import type { Api } from '../../src/http/api.js';

const params = z.object({ artifact_uid: uidParam });

const artifactResponse = z.object({
  artifact_uid: z.string(),
  artifact_type: artifactItemSchema.shape.artifact_type,
  created_at: z.string(),
  data: z
    .record(z.string(), z.unknown())
    .describe(
      'The fields of the artifact type; a file or screenshot adds download_url (signed, time-limited), expires_at, content_type and filename, a plan its markdown content and content_type. filepath is left out for anonymous readers',
    ),
});

export default function artifactQueries(api: Api, rt: Runtime): void {
  const artifacts = rt.readModel(artifactsProjection);

  /** The artifact if the caller may read it; `anonymous` tells whether it was read without a credential. */
  async function readable(req: FastifyRequest, uid: string): Promise<{ artifact: ArtifactDoc; anonymous: boolean }> {
    const artifact = await artifacts.get(uid);
    if (artifact?.public) return { artifact, anonymous: true };
    const key = bearer(req);
    if (!key) throw new Unauthorized();
    const principal = await req.access.resolve(hashApiKey(key));
    if (!principal) throw new Unauthorized('The API key is not valid or has been revoked');
    req.principal = principal;
    if (!artifact || !canView(artifact, viewerOf(principal))) throw new NotFound('artifact', uid);
    return { artifact, anonymous: false };
  }

  /** Plan content: inline in the artifact, or its stored file. */
  async function planContent(a: ArtifactDoc): Promise<string> {
    if (typeof a.data.content === 'string') return a.data.content;
    const bytes = a.blob ? await rt.blobs.read(a.blob) : null;
    return bytes ? bytes.toString('utf8') : '';
  }

  async function downloadable(a: ArtifactDoc): Promise<{ url: string; expires_at: string } | null> {
    if (a.blob) return signedBlobUrl(rt, a.blob, filenameOf(a), mimeOf(a));
    if (a.artifact_type !== 'PLAN') return null;
    const blob = await rt.blobs.put(Buffer.from(await planContent(a), 'utf8'));
    return signedBlobUrl(rt, blob, filenameOf(a), 'text/markdown');
  }

  const schema = { params, tags: ['artifacts'], security: [] };

  const getSchema = { ...schema, response: { 200: artifactResponse } };
  api.get('/agent/artifacts/:artifact_uid', { config: { public: true }, schema: getSchema }, async (req) => {
    const { artifact: a, anonymous } = await readable(req, req.params.artifact_uid);
    const {
      artifact_uid: _uid,
      artifact_type: _type,
      public: _public,
      mime_type: _mime,
      content: _content,
      filepath,
      ...fields
    } = a.data;
    const shown = { ...fields, ...(anonymous || filepath === undefined ? {} : { filepath }) };
    let data: Record<string, unknown>;
    if (a.artifact_type === 'PLAN') {
      data = { ...shown, content: await planContent(a), content_type: 'text/markdown' };
    } else if (a.blob) {
      const link = signedBlobUrl(rt, a.blob, filenameOf(a), mimeOf(a));
      data = {
        ...shown,
        download_url: link.url,
        expires_at: link.expires_at,
        content_type: mimeOf(a),
        filename: filenameOf(a),
      };
    } else {
      data = shown;
    }
    return { artifact_uid: a.artifact_uid, artifact_type: a.artifact_type, created_at: a.created_at, data };
  });

  const downloadSchema = { ...schema, response: { 302: noContent('Redirect to a signed, time-limited download URL') } };
  api.get(
    '/agent/artifacts/:artifact_uid/download',
    { config: { public: true }, schema: downloadSchema },
    async (req, reply) => {
      const { artifact } = await readable(req, req.params.artifact_uid);
      const link = await downloadable(artifact);
      if (!link) throw new Unprocessable(`a ${artifact.artifact_type} artifact has no file to download`);
      return reply.redirect(link.url, 302);
    },
  );
}
