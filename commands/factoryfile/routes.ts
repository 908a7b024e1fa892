/**
 * The factory file schemas (GET /factory-files/schemas, …/{schema_version}, …/{document}) and
 * POST /factory-files/validate: public, as the hosted service's are, and writing nothing. The
 * documents are static, so their routes live with the feature rather than over a read model.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { noContent } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { FILES_BODY_LIMIT, filesSchema } from './files.js';
import { diagnosticSchema } from './resource.js';
import {
  CURRENT_SCHEMA_VERSION,
  etagOf,
  SCHEMA_DOCUMENTS,
  SCHEMA_VERSIONS,
  type SchemaDocument,
  type SchemaVersion,
  schemaDocuments,
} from './schemas.js';
import { validateFiles } from './validate.js';

const jsonDocument = z.record(z.string(), z.unknown()).describe('A JSON Schema 2020-12 document');

const versionList = z.object({
  current_version: z.string(),
  versions: z.array(z.object({ schema_version: z.string(), schema_url: z.string() })),
});
const bundle = z.object({
  schema_version: z.string(),
  documents: z.record(z.string(), jsonDocument).describe('By file name; their `$id`s and `$ref`s are relative'),
});

const stateReference = z.object({
  kind: z.enum(['model_id', 'environment_id', 'secret_name', 'webhook_uid']),
  value: z.string(),
  path: z.string(),
  field: z.string(),
  line: z.number().int(),
  column: z.number().int(),
});

/** The checks only an apply makes, against the team's state: listed on every answer, clean or not. */
const STATE_DEPENDENT_CHECKS = ['model_ids', 'environment_ids', 'secret_names', 'webhook_uids'];

const validation = z.object({
  valid: z.boolean().describe('No parser or state-independent problem; it does not promise the apply'),
  schema_version: z.string().describe('The version factory.yaml declares, or the current one when it declares none'),
  diagnostics: z.array(diagnosticSchema),
  deferred_resolutions: z
    .array(z.object({ path: z.string(), field: z.string(), kind: z.string() }))
    .describe('Names resolved to ids when applied; none here (triggers take ids)'),
  state_dependent_checks_not_run: z.array(z.string()).describe('The checks only an apply makes'),
  state_dependent_references: z
    .array(stateReference)
    .describe('Extension: each value those checks will look at, and where it stands'),
  validation_scope: z.object({
    parser: z.enum(['checked', 'not_run']),
    state_independent: z.enum(['checked', 'not_run']),
    state_dependent: z.literal('not_checked'),
  }),
});

const versionParams = z.object({ schema_version: z.string().max(50) });
const documentParams = versionParams.extend({ document: z.string().max(100) });
const notModified = { 304: noContent('Not modified: the ETag given in If-None-Match is current') };

/** Answers `body` with its ETag, or 304 when the client has it (If-None-Match). */
function withEtag(req: FastifyRequest, reply: FastifyReply, body: unknown) {
  const etag = etagOf(body);
  reply.header('etag', etag).header('cache-control', 'public, max-age=300');
  const given = req.headers['if-none-match'];
  const tags = (given ?? '').split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (tags.includes(etag) || tags.includes('*')) return reply.code(304).send(null);
  return reply.code(200).send(body);
}

const known = (version: string): SchemaVersion => {
  if (!(SCHEMA_VERSIONS as readonly string[]).includes(version)) throw new NotFound('schema version', version);
  return version as SchemaVersion;
};

export default function factoryFileRoutes(api: Api, _rt: Runtime): void {
  const tags = ['factory files'];
  const open = { config: { public: true } } as const;

  api.get(
    '/factory-files/schemas',
    { ...open, schema: { response: { 200: versionList, ...notModified }, tags, security: [] } },
    async (req, reply) =>
      withEtag(req, reply, {
        current_version: CURRENT_SCHEMA_VERSION,
        versions: SCHEMA_VERSIONS.map((v) => ({
          schema_version: v,
          schema_url: `/api/v1/factory-files/schemas/${v}`,
        })),
      }),
  );

  api.get(
    '/factory-files/schemas/:schema_version',
    { ...open, schema: { params: versionParams, response: { 200: bundle, ...notModified }, tags, security: [] } },
    async (req, reply) => {
      const version = known(req.params.schema_version);
      return withEtag(req, reply, { schema_version: version, documents: schemaDocuments[version] });
    },
  );

  api.get(
    '/factory-files/schemas/:schema_version/:document',
    {
      ...open,
      schema: { params: documentParams, response: { 200: jsonDocument, ...notModified }, tags, security: [] },
    },
    async (req, reply) => {
      const version = known(req.params.schema_version);
      const name = req.params.document;
      if (!(SCHEMA_DOCUMENTS as readonly string[]).includes(name)) throw new NotFound('schema document', name);
      return withEtag(req, reply, schemaDocuments[version][name as SchemaDocument]);
    },
  );

  api.post(
    '/factory-files/validate',
    {
      ...open,
      bodyLimit: FILES_BODY_LIMIT,
      schema: {
        body: z.object({ files: filesSchema }).strict(),
        response: { 200: validation },
        tags,
        security: [],
      },
    },
    async (req) => {
      const result = validateFiles(req.body.files);
      return {
        valid: result.valid,
        schema_version: result.schema_version,
        diagnostics: result.diagnostics,
        deferred_resolutions: [],
        state_dependent_checks_not_run: STATE_DEPENDENT_CHECKS,
        state_dependent_references: result.state_dependent,
        validation_scope: {
          parser: 'checked' as const,
          state_independent: result.parsed ? ('checked' as const) : ('not_run' as const),
          state_dependent: 'not_checked' as const,
        },
      };
    },
  );
}
