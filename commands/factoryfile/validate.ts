/**
 * Validation of a factory's files (reference notes §6): the layout, strict YAML, Markdown front
 * matter, each file against its schema document (schemas.ts, the documents served; file-diagnostics.ts),
 * triggers by the automations API's own rules (automation/triggers.ts), and the rules across files
 * (cross-file-rules.ts). Pure: the same files give the same diagnostics, and a definition
 * (resolved, see resolve-definition.ts) when there is none.
 * What needs the service's state (models, environments, secrets, webhook UIDs) is listed, and
 * checked when the definition is applied.
 */
import { crossFileDiagnostics } from './cross-file-rules.js';
import type { Definition, StateReference } from './definition.js';
import { byPosition, type Diagnostic, diagnostic } from './diagnostics.js';
import { schemaDiagnostics, triggerDiagnostics } from './file-diagnostics.js';
import { roleOf } from './layout.js';
import { type Parsed, type RoledFile, readFile, SCHEMA_OF } from './parsed-file.js';
import { resolveDefinition } from './resolve-definition.js';
import { CURRENT_SCHEMA_VERSION, validatorFor } from './schemas.js';

export interface FactoryFile {
  path: string;
  content: string;
}

export interface ValidationResult {
  valid: boolean;
  /** The version factory.yaml declares, or the current one when it declares none. */
  schema_version: string;
  /** Whether the files could be read (a factory.yaml of this version): else only the layout was checked. */
  parsed: boolean;
  diagnostics: Diagnostic[];
  /** What only the service can check, at apply: each reference and where it stands. */
  state_dependent: StateReference[];
  /** The resolved definition, when valid. */
  definition: Definition | null;
}

/** At most this many diagnostics are reported (the rest are counted in the last one). */
const MAX_DIAGNOSTICS = 500;

/** Appends one by one: a file may have more problems than a call takes arguments. */
const addAll = (to: Diagnostic[], found: readonly Diagnostic[]) => {
  for (const d of found) to.push(d);
};

/** Validates a definition's files; see the module comment. */
export function validateFiles(files: readonly FactoryFile[]): ValidationResult {
  const diagnostics: Diagnostic[] = [];
  const roles = files.map((f) => ({ file: f, role: roleOf(f.path) }));
  addAll(diagnostics, layoutDiagnostics(roles));
  if (!roles.some((r) => r.role.kind === 'factory')) {
    diagnostics.push(diagnostic('FF_MISSING_FACTORY', 'factory.yaml', 'a definition has a factory.yaml at its root'));
    return resultOf(diagnostics, { version: CURRENT_SCHEMA_VERSION, parsed: false });
  }
  const read = parseFiles(roles, diagnostics);
  // Files of another version cannot be read by this one's rules.
  if (!read.parsed) return resultOf(diagnostics, { version: read.version, parsed: false });
  const factory = read.parsed.find((p) => p.role.kind === 'factory');
  const tree = { version: read.version, parsed: factory !== undefined };
  addAll(diagnostics, crossFileDiagnostics({ roles, parsed: read.parsed, schemaFailed: read.schemaFailed }));
  if (diagnostics.length || !factory) return resultOf(diagnostics, tree);
  return resultOf(diagnostics, tree, ...resolveDefinition(factory, read.parsed));
}

/** The layout: each file's role, and one declaration per resource. */
function layoutDiagnostics(roles: readonly RoledFile[]): Diagnostic[] {
  const found: Diagnostic[] = [];
  const declared = new Map<string, string>();
  for (const { file, role } of roles) {
    if (role.kind === 'unsupported') found.push(diagnostic('FF_UNSUPPORTED_PATH', file.path, role.message));
    if (role.kind === 'automation') {
      const other = declared.get(`automation/${role.name}`);
      if (other)
        found.push(
          diagnostic('FF_DUPLICATE_PATH', file.path, `the automation ${role.name} is also declared by ${other}`),
        );
      else declared.set(`automation/${role.name}`, file.path);
    }
  }
  return found;
}

/**
 * Each file parsed (strict YAML, front matter) and checked against its schema, its problems added
 * to `diagnostics`; `parsed` is null when factory.yaml declares a version this one cannot read.
 */
function parseFiles(roles: readonly RoledFile[], diagnostics: Diagnostic[]) {
  let version: string = CURRENT_SCHEMA_VERSION;
  const parsed: Parsed[] = [];
  const schemaFailed = new Set<string>();
  for (const roled of roles) {
    const { file, role } = roled;
    const schema = SCHEMA_OF[role.kind];
    if (!schema) continue;
    const { source, diagnostics: found, body } = readFile(roled);
    addAll(diagnostics, found);
    if (!source) continue;
    const p: Parsed = { path: file.path, role, source, value: source.value, body, content: file.content };
    if (role.kind === 'factory' && typeof p.value.schemaVersion === 'string') version = p.value.schemaVersion;
    if (role.kind === 'factory' && p.value.schemaVersion !== CURRENT_SCHEMA_VERSION) {
      diagnostics.push(unsupportedVersion(p));
      return { version, parsed: null, schemaFailed };
    }
    const validate = validatorFor(CURRENT_SCHEMA_VERSION, schema);
    const errors = validate(p.value) ? [] : (validate.errors ?? []);
    if (errors.length) schemaFailed.add(p.path);
    addAll(diagnostics, schemaDiagnostics(errors, p));
    // Triggers are checked by the automations API's rules once their shape is right.
    if (
      role.kind === 'automation' &&
      Array.isArray(p.value.triggers) &&
      !errors.some((e) => e.instancePath.startsWith('/triggers'))
    )
      addAll(diagnostics, triggerDiagnostics(p));
    parsed.push(p);
  }
  return { version, parsed, schemaFailed };
}

/** factory.yaml without a schemaVersion, or with one this version does not read. */
function unsupportedVersion(factory: Parsed): Diagnostic {
  const version = factory.value.schemaVersion;
  return diagnostic(
    version === undefined ? 'FF_MISSING_REQUIRED' : 'FF_UNSUPPORTED_VERSION',
    factory.path,
    version === undefined
      ? 'the field schemaVersion is required'
      : `schemaVersion ${JSON.stringify(version)} is not supported: the supported version is ${CURRENT_SCHEMA_VERSION}`,
    factory.source.locate(['schemaVersion'], 'value'),
  );
}

/** The answer: diagnostics by position (at most MAX_DIAGNOSTICS), and the definition when there is none. */
function resultOf(
  diagnostics: Diagnostic[],
  tree: { version: string; parsed: boolean },
  definition: Definition | null = null,
  state_dependent: StateReference[] = [],
): ValidationResult {
  const sorted = diagnostics.sort(byPosition);
  const shown = sorted.slice(0, MAX_DIAGNOSTICS);
  if (sorted.length > MAX_DIAGNOSTICS)
    shown[MAX_DIAGNOSTICS - 1] = diagnostic(
      'FF_INVALID_DOCUMENT',
      shown[MAX_DIAGNOSTICS - 1]!.path,
      `${sorted.length - MAX_DIAGNOSTICS + 1} more problems are not listed`,
    );
  return {
    valid: sorted.length === 0,
    schema_version: tree.version,
    parsed: tree.parsed,
    diagnostics: shown,
    state_dependent: definition ? state_dependent : [],
    definition: sorted.length === 0 ? definition : null,
  };
}
