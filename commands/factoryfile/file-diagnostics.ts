/**
 * The problems of one parsed file as diagnostics at the key or value they are about: its schema
 * errors, its triggers by the automations API's rules, and a scorer by the scorers API's file form.
 */
import { type TriggerRequest, triggerErrors } from '../automation/public.js';
import { readScorerFile } from '../scorer/public.js';
import { own } from '../../src/own-keys.js';
import { type Diagnostic, type DiagnosticCode, diagnostic } from './diagnostics.js';
import type { Parsed } from './parsed-file.js';
import type { SchemaError } from './schemas.js';
import type { YamlPath } from './yaml.js';

/** The instance path of a schema error as YAML path segments. */
const segmentsOf = (pointer: string): Array<string | number> =>
  pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));

const fieldName = (path: YamlPath) => (path.length ? path.join('.') : 'the document');

/** Schema errors as diagnostics, each at the key or value it is about, without the noise of branches. */
export function schemaDiagnostics(errors: SchemaError[], file: Parsed): Diagnostic[] {
  // An anyOf/oneOf that failed is reported as itself; the failures of its branches are not.
  const summaries = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => `${e.schemaPath}/`);
  const out = new Map<string, Diagnostic>();
  for (const e of errors) {
    if (e.keyword === 'if' || summaries.some((s) => e.schemaPath.startsWith(s))) continue;
    const d = schemaErrorDiagnostic(e, file);
    out.set(`${d.code}:${d.line}:${d.column}:${d.message}`, d);
  }
  return [...out.values()];
}

/** One schema error as a diagnostic: the schema's own code and message (`x-ff-*`) win. */
function schemaErrorDiagnostic(e: SchemaError, file: Parsed): Diagnostic {
  const path = segmentsOf(e.instancePath);
  const annotations = (e.parentSchema ?? {}) as {
    'x-ff-codes'?: Record<string, DiagnosticCode>;
    'x-ff-message'?: string;
  };
  const codes = annotations['x-ff-codes'] ?? {};
  const given = own(codes, e.keyword) ?? own(codes, '*');
  const params = e.params as Record<string, unknown>;
  let code: DiagnosticCode;
  let message: string;
  let at = file.source.locate(path, 'value');
  switch (e.keyword) {
    case 'required':
      code = given ?? 'FF_MISSING_REQUIRED';
      message = `${path.length ? `${fieldName(path)}: ` : ''}the field ${params.missingProperty} is required`;
      at = file.source.locate(path, 'key');
      break;
    case 'unevaluatedProperties':
    case 'additionalProperties': {
      const name = String(params.unevaluatedProperty ?? params.additionalProperty);
      code = given ?? 'FF_UNKNOWN_FIELD';
      message = `unknown field ${fieldName([...path, name])}`;
      at = file.source.locate([...path, name], 'key');
      break;
    }
    case 'type':
      code = given ?? 'FF_TYPE_MISMATCH';
      message = `${fieldName(path)} must be ${String(params.type).replace(',', ' or ')}`;
      break;
    case 'enum':
      code = given ?? 'FF_INVALID_VALUE';
      message = `${fieldName(path)} must be one of ${(params.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`;
      break;
    case 'const':
      code = given ?? 'FF_INVALID_VALUE';
      message = `${fieldName(path)} must be ${String(params.allowedValue)}`;
      break;
    default:
      code = given ?? 'FF_INVALID_VALUE';
      message = `${fieldName(path)} ${e.message ?? 'is not valid'}`;
  }
  if (annotations['x-ff-message'])
    message = path.length ? `${fieldName(path)}: ${annotations['x-ff-message']}` : annotations['x-ff-message'];
  return diagnostic(code, file.path, message, at);
}

/** Trigger problems (the automations API's rule) as diagnostics at their place in the file. */
export function triggerDiagnostics(file: Parsed): Diagnostic[] {
  const triggers = file.value.triggers as TriggerRequest[];
  return triggerErrors(triggers, 'triggers').map((error) => {
    const path = error.path.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    const code: DiagnosticCode =
      path[2] === 'filter' ? 'FF_INVALID_FILTER' : path[2] === 'event' ? 'FF_INVALID_EVENT' : 'FF_INVALID_TRIGGER';
    // A filter key that is not one stands at its key; a bad value at the value.
    const at = file.source.locate(path, typeof path.at(-1) === 'string' && path.length > 3 ? 'key' : 'value');
    return diagnostic(code, file.path, `${error.path}: ${error.message}`, at);
  });
}

/** A scorer file as the scorers API reads it (its file form), its problems at the keys they name. */
export function scorerDiagnostics(file: Parsed): Diagnostic[] {
  const dir = (file.role as { name: string }).name;
  return readScorerFile(dir, file.content).problems.map((p) => {
    if (p.path === 'body' || p.path === '')
      return diagnostic(
        'FF_MISSING_REQUIRED',
        file.path,
        `the body after the front matter is the rubric: ${p.message}`,
      );
    const path = p.path.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    const code = /unique|twice/.test(p.message) ? 'FF_DUPLICATE_KEY' : 'FF_INVALID_VALUE';
    return diagnostic(code, file.path, `${p.path}: ${p.message}`, file.source.locate(path, 'key'));
  });
}
