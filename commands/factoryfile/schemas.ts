/**
 * The schema documents of factory files, written once (schemas/<version>/*.schema.json): served
 * as they are by GET /factory-files/schemas…, and compiled here to validate every file, so what
 * is served is what is enforced. JSON Schema 2020-12, with ajv's 2020 build.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

export const SCHEMA_VERSIONS = ['v1alpha1'] as const;
export type SchemaVersion = (typeof SCHEMA_VERSIONS)[number];
export const CURRENT_SCHEMA_VERSION: SchemaVersion = 'v1alpha1';

export const SCHEMA_DOCUMENTS = [
  'common.schema.json',
  'factory.schema.json',
  'agent.schema.json',
  'automation.schema.json',
  'runner.schema.json',
  'scorer.schema.json',
] as const;
export type SchemaDocument = (typeof SCHEMA_DOCUMENTS)[number];

type JsonObject = Record<string, unknown>;

const load = (version: SchemaVersion, name: SchemaDocument): JsonObject =>
  JSON.parse(fs.readFileSync(new URL(`./schemas/${version}/${name}`, import.meta.url), 'utf8')) as JsonObject;

/** The documents of each version, by file name, as loaded once. */
export const schemaDocuments: Record<SchemaVersion, Record<SchemaDocument, JsonObject>> = Object.fromEntries(
  SCHEMA_VERSIONS.map((v) => [v, Object.fromEntries(SCHEMA_DOCUMENTS.map((d) => [d, load(v, d)]))]),
) as never;

/** A strong ETag of a JSON answer: the hash of the bytes it is sent as. */
export const etagOf = (body: unknown) =>
  `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 32)}"`;

/** The annotations a document uses besides JSON Schema's own: which diagnostic a failure reports. */
const ANNOTATIONS = ['x-ff-codes', 'x-ff-message'];

const ajv = new Ajv2020({
  allErrors: true,
  verbose: true,
  // Documents meant for editors too: a `required` may name a property defined in a sibling schema.
  strictRequired: false,
  strictTypes: false,
  multipleOfPrecision: 9,
});
ajv.addVocabulary(ANNOTATIONS);
// Each document is known by its `$id` (its file name), so relative `$ref`s resolve as served. One
// version for now; the next needs its own ajv instance, as its `$id`s are the same file names.
for (const name of SCHEMA_DOCUMENTS) ajv.addSchema(schemaDocuments[CURRENT_SCHEMA_VERSION][name]);

/** What a file of each kind is checked against: a document, or a definition of common.schema.json. */
export type FileSchema =
  | 'factory'
  | 'agent'
  | 'automation'
  | 'runner'
  | 'scorer'
  | 'webhook'
  | 'benchmarkSuite'
  | 'benchmarkTask'
  | 'skill';

const validators = new Map<string, ValidateFunction>();

export function validatorFor(version: SchemaVersion, schema: FileSchema): ValidateFunction {
  const key = `${version}/${schema}`;
  let validate = validators.get(key);
  if (!validate) {
    const ref = ['factory', 'agent', 'automation', 'runner', 'scorer'].includes(schema)
      ? `${schema}.schema.json`
      : `common.schema.json#/$defs/${schema}`;
    validate = ajv.getSchema(ref);
    if (!validate) throw new Error(`no schema ${ref}`);
    validators.set(key, validate);
  }
  return validate;
}

export type SchemaError = ErrorObject;
