/**
 * Validation of a factory's files (reference notes §6): the layout, strict YAML, Markdown front
 * matter, each file against its schema document (schemas.ts, the documents served), triggers by
 * the automations API's own rules (automation/triggers.ts), and the rules across files (one
 * MAIN/FOREMAN agent, references between resources, benchmark tasks). Pure: the same files give
 * the same diagnostics, and a definition (resolved, see definition.ts) when there is none.
 * What needs the service's state (models, environments, secrets, webhook UIDs) is listed, and
 * checked when the definition is applied.
 */
import {
  type TriggerRequest,
  normalizeTrigger,
  triggerErrors,
  MAX_AUTOMATIONS_PER_FACTORY,
} from '../automation/public.js';
import { readScorerFile } from '../scorer/public.js';
import { MAX_WEBHOOKS_PER_FACTORY, deliveryIdHeaderError } from '../webhook/public.js';
import {
  type AgentSpec,
  type AutomationSpec,
  type BenchmarkSpec,
  type Definition,
  type ExecutionOverrides,
  type ExecutionSettings,
  type FactorySpec,
  type Harness,
  type HarnessType,
  type RunnerSpec,
  type ScorerSpec,
  type SkillSpec,
  type StateReference,
  sha256,
  type WebhookSpec,
} from './definition.js';
import { byPosition, type Diagnostic, type DiagnosticCode, diagnostic } from './diagnostics.js';
import { type FileRole, roleOf } from './layout.js';
import { CURRENT_SCHEMA_VERSION, type FileSchema, type SchemaError, validatorFor } from './schemas.js';
import { parseMarkdown, parseStrictYaml, type YamlPath, type YamlSource } from './yaml.js';
import { own } from '../../src/own-keys.js';

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

type Json = Record<string, unknown>;

/** What `path` leads to in a parsed document, through its own keys only. */
const valueAt = (root: unknown, path: YamlPath): unknown =>
  path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? own(v as Json, String(k)) : undefined), root);

/** A parsed file of a resource: its front matter or document, its body, where it stands. */
interface Parsed {
  path: string;
  role: FileRole;
  source: YamlSource;
  value: Json;
  body: string;
  content: string;
}

const SCHEMA_OF: Partial<Record<FileRole['kind'], FileSchema>> = {
  factory: 'factory',
  agent: 'agent',
  automation: 'automation',
  runner: 'runner',
  scorer: 'scorer',
  webhook: 'webhook',
  skill: 'skill',
  agentSkill: 'skill',
  benchmarkSuite: 'benchmarkSuite',
  benchmarkTask: 'benchmarkTask',
};
const MARKDOWN: ReadonlySet<FileRole['kind']> = new Set(['agent', 'automation', 'scorer', 'skill', 'agentSkill']);

/** The instance path of a schema error as YAML path segments. */
const segmentsOf = (pointer: string): Array<string | number> =>
  pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));

const fieldName = (path: YamlPath) => (path.length ? path.join('.') : 'the document');

/** Schema errors as diagnostics, each at the key or value it is about, without the noise of branches. */
function schemaDiagnostics(errors: SchemaError[], file: Parsed): Diagnostic[] {
  // An anyOf/oneOf that failed is reported as itself; the failures of its branches are not.
  const summaries = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => `${e.schemaPath}/`);
  const out = new Map<string, Diagnostic>();
  for (const e of errors) {
    if (e.keyword === 'if' || summaries.some((s) => e.schemaPath.startsWith(s))) continue;
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
    const d = diagnostic(code, file.path, message, at);
    out.set(`${d.code}:${d.line}:${d.column}:${d.message}`, d);
  }
  return [...out.values()];
}

/** Trigger problems (the automations API's rule) as diagnostics at their place in the file. */
function triggerDiagnostics(file: Parsed): Diagnostic[] {
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
function scorerDiagnostics(file: Parsed): Diagnostic[] {
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

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const HARNESS_TYPES: Record<string, HarnessType> = {
  oz: 'oz',
  claude: 'claude',
  'claude-code': 'claude',
  codex: 'codex',
  gemini: 'gemini',
};

function authOf(v: unknown): Harness['auth'] {
  if (!v || typeof v !== 'object') return null;
  const a = v as Json;
  return { source: a.source as 'managedSecret' | 'workerEnvironment', secret_name: str(a.secretName) };
}

const mcpOf = (v: unknown): Record<string, { warp_id: string }> =>
  Object.fromEntries(
    Object.entries((v ?? {}) as Record<string, Json>).map(([k, s]) => [k, { warp_id: String(s.warpId) }]),
  );

/** The overrides a layer (agent, automation) declares, normalised. */
function overridesOf(v: Json): ExecutionOverrides {
  const o: ExecutionOverrides = {};
  if (typeof v.model === 'string') o.harness = { type: 'oz', model: v.model, reasoning_level: null, auth: null };
  else if (v.harness && typeof v.harness === 'object') {
    const h = v.harness as Json;
    o.harness = {};
    if (typeof h.type === 'string') o.harness.type = own(HARNESS_TYPES, h.type)!;
    if (typeof h.model === 'string') o.harness.model = h.model;
    if ('reasoningLevel' in h) o.harness.reasoning_level = str(h.reasoningLevel) || null;
    if ('auth' in h) o.harness.auth = authOf(h.auth);
  }
  if (typeof v.runner === 'string') o.runner = v.runner;
  if (typeof v.environmentId === 'string') o.environment_id = v.environmentId;
  if (Array.isArray(v.secrets)) o.secrets = v.secrets as string[];
  if (v.mcpServers && typeof v.mcpServers === 'object') o.mcp_servers = mcpOf(v.mcpServers);
  if ('workerHost' in v) o.worker_host = str(v.workerHost) || null;
  return o;
}

/** A layer over the settings it inherits; the factory's own secrets and MCP servers always apply. */
function layered(base: ExecutionSettings, o: ExecutionOverrides, factory: Json): ExecutionSettings {
  let harness = base.harness;
  if (o.harness) {
    harness = {
      type: o.harness.type ?? harness.type,
      model: o.harness.model ?? harness.model,
      reasoning_level: o.harness.reasoning_level !== undefined ? o.harness.reasoning_level : harness.reasoning_level,
      auth: o.harness.auth !== undefined ? o.harness.auth : harness.auth,
    };
    if (harness.type === 'oz') harness = { ...harness, reasoning_level: null, auth: null };
  }
  const secrets = [...new Set([...((factory.secrets as string[] | undefined) ?? []), ...(o.secrets ?? base.secrets)])];
  return {
    harness,
    runner: o.runner ?? base.runner,
    environment_id: o.environment_id ?? base.environment_id,
    secrets,
    mcp_servers: { ...(o.mcp_servers ?? base.mcp_servers), ...mcpOf(factory.mcpServers) },
    worker_host: o.worker_host !== undefined ? o.worker_host : base.worker_host,
  };
}

function defaultsOf(factory: Json): ExecutionSettings {
  const d = factory.agentDefaults as Json;
  const h = d.harness as Json | undefined;
  const harness: Harness = h
    ? {
        type: own(HARNESS_TYPES, String(h.type))!,
        model: String(h.model),
        reasoning_level: str(h.reasoningLevel) || null,
        auth: authOf(h.auth),
      }
    : { type: 'oz', model: String(d.model), reasoning_level: null, auth: null };
  return {
    harness: harness.type === 'oz' ? { ...harness, reasoning_level: null, auth: null } : harness,
    runner: str(d.runner),
    environment_id: str(d.environmentId),
    secrets: [...new Set([...((factory.secrets as string[] | undefined) ?? []), ...((d.secrets as string[]) ?? [])])],
    mcp_servers: { ...mcpOf(d.mcpServers), ...mcpOf(factory.mcpServers) },
    worker_host: str(d.workerHost) || null,
  };
}

/** Validates a definition's files; see the module comment. */
export function validateFiles(files: readonly FactoryFile[]): ValidationResult {
  const diagnostics: Diagnostic[] = [];
  const add = (d: Diagnostic) => diagnostics.push(d);
  let declaredVersion: string = CURRENT_SCHEMA_VERSION;
  let parsedTree = false;
  const result = (definition: Definition | null, state_dependent: StateReference[] = []): ValidationResult => {
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
      schema_version: declaredVersion,
      parsed: parsedTree,
      diagnostics: shown,
      state_dependent: definition ? state_dependent : [],
      definition: sorted.length === 0 ? definition : null,
    };
  };

  // The layout: each file's role, and one declaration per resource.
  const roles = files.map((f) => ({ file: f, role: roleOf(f.path) }));
  const declared = new Map<string, string>();
  for (const { file, role } of roles) {
    if (role.kind === 'unsupported') add(diagnostic('FF_UNSUPPORTED_PATH', file.path, role.message));
    if (role.kind === 'automation') {
      const other = declared.get(`automation/${role.name}`);
      if (other)
        add(diagnostic('FF_DUPLICATE_PATH', file.path, `the automation ${role.name} is also declared by ${other}`));
      else declared.set(`automation/${role.name}`, file.path);
    }
  }
  const factoryFile = roles.find((r) => r.role.kind === 'factory');
  if (!factoryFile) {
    add(diagnostic('FF_MISSING_FACTORY', 'factory.yaml', 'a definition has a factory.yaml at its root'));
    return result(null);
  }

  // Each file parsed (strict YAML, front matter) and checked against its schema.
  const parsed: Parsed[] = [];
  const schemaFailed = new Set<string>();
  for (const { file, role } of roles) {
    const schema = SCHEMA_OF[role.kind];
    if (!schema) continue;
    const markdown = MARKDOWN.has(role.kind);
    const {
      source,
      diagnostics: found,
      body,
    } = markdown ? parseMarkdown(file.content, file.path) : { ...parseStrictYaml(file.content, file.path), body: '' };
    found.forEach(add);
    if (!source) continue;
    const p: Parsed = { path: file.path, role, source, value: source.value, body, content: file.content };
    if (role.kind === 'factory' && typeof p.value.schemaVersion === 'string') declaredVersion = p.value.schemaVersion;
    if (role.kind === 'factory' && p.value.schemaVersion !== CURRENT_SCHEMA_VERSION) {
      const version = p.value.schemaVersion;
      add(
        diagnostic(
          version === undefined ? 'FF_MISSING_REQUIRED' : 'FF_UNSUPPORTED_VERSION',
          file.path,
          version === undefined
            ? 'the field schemaVersion is required'
            : `schemaVersion ${JSON.stringify(version)} is not supported: the supported version is ${CURRENT_SCHEMA_VERSION}`,
          source.locate(['schemaVersion'], 'value'),
        ),
      );
      return result(null); // files of another version cannot be read by this one's rules
    }
    const validate = validatorFor(CURRENT_SCHEMA_VERSION, schema);
    const errors = validate(p.value) ? [] : (validate.errors ?? []);
    if (errors.length) schemaFailed.add(p.path);
    schemaDiagnostics(errors, p).forEach(add);
    // Triggers are checked by the automations API's rules once their shape is right.
    if (
      role.kind === 'automation' &&
      Array.isArray(p.value.triggers) &&
      !errors.some((e) => e.instancePath.startsWith('/triggers'))
    )
      triggerDiagnostics(p).forEach(add);
    parsed.push(p);
  }
  const factory = parsed.find((p) => p.role.kind === 'factory');
  parsedTree = factory !== undefined;
  const of = <K extends FileRole['kind']>(kind: K) =>
    parsed.filter((p): p is Parsed & { role: Extract<FileRole, { kind: K }> } => p.role.kind === kind);

  // Rules across files.
  const agents = of('agent');
  // References resolve against every file declared, parsed or not (its own problems are its own).
  const declaredNames = (kind: FileRole['kind']) =>
    new Set(roles.flatMap((r) => (r.role.kind === kind ? [(r.role as { name: string }).name] : [])));
  const agentNames = declaredNames('agent');
  const runnerNames = declaredNames('runner');
  const foremen = agents.filter((a) => a.value.agentType === 'MAIN' || a.value.agentType === 'FOREMAN');
  if (agentNames.size === 0)
    add(diagnostic('FF_MISSING_REQUIRED', 'factory.yaml', 'a factory has at least one agent (agents/<name>/agent.md)'));
  else if (foremen.length === 0 && agents.length === agentNames.size)
    add(diagnostic('FF_MISSING_REQUIRED', 'factory.yaml', 'exactly one agent has agentType MAIN or FOREMAN; none has'));
  for (const extra of foremen.slice(1))
    add(
      diagnostic(
        'FF_DUPLICATE_KEY',
        extra.path,
        `exactly one agent has agentType MAIN or FOREMAN; ${foremen[0]!.path} already has`,
        extra.source.locate(['agentType'], 'value'),
      ),
    );
  const checkAgent = (p: Parsed, path: YamlPath) => {
    const name = valueAt(p.value, path);
    if (typeof name === 'string' && !agentNames.has(name))
      add(
        diagnostic(
          'FF_INVALID_REFERENCE',
          p.path,
          `no agent ${name} (agents/${name}/agent.md)`,
          p.source.locate(path, 'value'),
        ),
      );
  };
  const checkRunner = (p: Parsed, path: YamlPath) => {
    const name = valueAt(p.value, path);
    if (typeof name === 'string' && !runnerNames.has(name))
      add(
        diagnostic(
          'FF_INVALID_REFERENCE',
          p.path,
          `no runner ${name} (runners/${name}.yaml)`,
          p.source.locate(path, 'value'),
        ),
      );
  };
  if (factory) checkRunner(factory, ['agentDefaults', 'runner']);
  for (const a of agents) checkRunner(a, ['runner']);
  for (const a of of('automation')) {
    checkAgent(a, ['agent']);
    checkRunner(a, ['runner']);
    if (!a.body)
      add(
        diagnostic(
          'FF_MISSING_REQUIRED',
          a.path,
          'the body after the front matter is the prompt of the runs, and is required',
        ),
      );
  }
  if (of('automation').length > MAX_AUTOMATIONS_PER_FACTORY)
    add(
      diagnostic(
        'FF_INVALID_VALUE',
        'factory.yaml',
        `a factory has at most ${MAX_AUTOMATIONS_PER_FACTORY} automations`,
      ),
    );
  of('webhook').forEach((w, i) => {
    if (i === MAX_WEBHOOKS_PER_FACTORY)
      add(diagnostic('FF_INVALID_VALUE', w.path, `a factory has at most ${MAX_WEBHOOKS_PER_FACTORY} webhooks`));
    const header = w.value.deliveryIdHeader;
    const problem = typeof header === 'string' ? deliveryIdHeaderError(header) : null;
    if (problem)
      add(
        diagnostic(
          'FF_INVALID_VALUE',
          w.path,
          `deliveryIdHeader: ${problem}`,
          w.source.locate(['deliveryIdHeader'], 'value'),
        ),
      );
  });
  for (const s of of('scorer')) {
    for (const i of (Array.isArray(s.value.agents) ? s.value.agents : []).keys()) checkAgent(s, ['agents', i]);
    // Once its shape is right, the scorers API's own rules read it (commands/scorer/file-form.ts).
    if (!schemaFailed.has(s.path)) for (const d of scorerDiagnostics(s)) add(d);
  }
  for (const k of of('agentSkill'))
    if (!agentNames.has(k.role.agent))
      add(
        diagnostic(
          'FF_INVALID_REFERENCE',
          k.path,
          `a skill of the agent ${k.role.agent}, which agents/ does not declare`,
        ),
      );
  for (const k of [...of('skill'), ...of('agentSkill')]) {
    const name = k.value.name;
    if (typeof name === 'string' && name !== k.role.name)
      add(
        diagnostic(
          'FF_INVALID_VALUE',
          k.path,
          `name: a skill is named by its directory, ${k.role.name}`,
          k.source.locate(['name'], 'value'),
        ),
      );
  }
  // Benchmarks: each suite's task list and its task files, one for one.
  const suites = of('benchmarkSuite');
  const tasks = of('benchmarkTask');
  const suiteNames = new Map<string, string>();
  for (const s of suites) {
    checkAgent(s, ['agent']);
    const display = String(s.value.name);
    if (typeof s.value.name === 'string' && suiteNames.has(display))
      add(
        diagnostic(
          'FF_DUPLICATE_KEY',
          s.path,
          `the suite name ${display} is also ${suiteNames.get(display)}'s`,
          s.source.locate(['name'], 'value'),
        ),
      );
    suiteNames.set(display, s.path);
    const listed = (Array.isArray(s.value.tasks) ? s.value.tasks : []).filter(
      (t): t is string => typeof t === 'string',
    );
    const own = new Set(tasks.filter((t) => t.role.suite === s.role.suite).map((t) => t.role.name));
    listed.forEach((slug, i) => {
      if (!own.has(slug))
        add(
          diagnostic(
            'FF_INVALID_REFERENCE',
            s.path,
            `no task file benchmarks/${s.role.suite}/tasks/${slug}.yaml`,
            s.source.locate(['tasks', i], 'value'),
          ),
        );
    });
    for (const t of tasks.filter((t) => t.role.suite === s.role.suite && !listed.includes(t.role.name)))
      add(diagnostic('FF_INVALID_REFERENCE', t.path, `the task ${t.role.name} is not listed in ${s.path}`));
  }
  for (const t of tasks.filter((t) => !suites.some((s) => s.role.suite === t.role.suite)))
    add(diagnostic('FF_INVALID_REFERENCE', t.path, `a task of the suite ${t.role.suite}, which has no suite.yaml`));

  if (diagnostics.length || !factory) return result(null);
  return result(...resolve(factory, parsed));
}

/** The resolved definition of valid files, and the references only the service can check. */
function resolve(factoryFile: Parsed, parsed: Parsed[]): [Definition, StateReference[]] {
  const f = factoryFile.value;
  const references: StateReference[] = [];
  const refer = (p: Parsed, kind: StateReference['kind'], path: YamlPath, value: unknown): void => {
    if (typeof value === 'string' && value !== '')
      references.push({ kind, value, path: p.path, field: path.join('.'), ...p.source.locate(path, 'value') });
  };
  const referExecution = (p: Parsed, v: Json, at: YamlPath = []) => {
    if (typeof v.model === 'string' && v.model !== 'auto') refer(p, 'model_id', [...at, 'model'], v.model);
    const h = v.harness as Json | undefined;
    if (h && h.type === 'oz' && typeof h.model === 'string' && h.model !== 'auto')
      refer(p, 'model_id', [...at, 'harness', 'model'], h.model);
    refer(p, 'environment_id', [...at, 'environmentId'], v.environmentId);
    for (const [i, s] of ((v.secrets as string[] | undefined) ?? []).entries())
      refer(p, 'secret_name', [...at, 'secrets', i], s);
    refer(p, 'secret_name', [...at, 'harness', 'auth', 'secretName'], (h?.auth as Json | undefined)?.secretName);
  };
  const of = (kind: FileRole['kind']) => parsed.filter((p) => p.role.kind === kind);
  const nameOf = (p: Parsed) => (p.role as { name: string }).name;

  for (const [i, s] of ((f.secrets as string[] | undefined) ?? []).entries())
    refer(factoryFile, 'secret_name', ['secrets', i], s);
  referExecution(factoryFile, f.agentDefaults as Json, ['agentDefaults']);
  const defaults = defaultsOf(f);
  const clouds = (f.cloudProviders ?? f.providers ?? null) as Record<string, unknown> | null;
  const factory: FactorySpec = {
    name: String(f.name).trim(),
    description: str(f.description),
    alias: str(f.alias)?.trim() ?? null,
    credential_strategy: (f.credentialStrategy as FactorySpec['credential_strategy']) ?? null,
    repositories: (f.repositories as Array<{ owner: string; name: string }>).map((r) => ({
      owner: r.owner,
      repo: r.name,
    })),
    integrations: Array.isArray(f.integrations) ? (f.integrations as Array<{ type: string }>) : null,
    cloud_providers: clouds,
    agent_defaults: defaults,
  };

  const skillsOf = (agent: string | null) =>
    parsed
      .filter((p) =>
        agent === null ? p.role.kind === 'skill' : p.role.kind === 'agentSkill' && p.role.agent === agent,
      )
      .map(
        (p): SkillSpec => ({
          name: nameOf(p),
          path: p.path,
          agent,
          description: String(p.value.description),
          sha256: sha256(p.content),
        }),
      );

  const agents = of('agent').map((p): AgentSpec => {
    referExecution(p, p.value);
    const type = p.value.agentType as string | null | undefined;
    return {
      name: nameOf(p),
      path: p.path,
      agent_type: (type === 'MAIN' ? 'FOREMAN' : (type ?? 'CUSTOM')) as AgentSpec['agent_type'],
      description: str(p.value.description),
      prompt: p.body || null,
      credential_strategy: (p.value.credentialStrategy as AgentSpec['credential_strategy']) ?? null,
      execution: layered(defaults, overridesOf(p.value), f),
      skills: skillsOf(nameOf(p)).map((s) => ({ name: s.name, sha256: s.sha256 })),
    };
  });

  const automations = of('automation').map((p): AutomationSpec => {
    referExecution(p, p.value);
    const triggers = p.value.triggers as TriggerRequest[];
    triggers.forEach((t, i) => {
      const ids = t.provider === 'webhook' ? (t.filter?.webhook_ids as unknown) : undefined;
      const list = Array.isArray(ids) ? ids : ((ids as { in?: unknown[] } | undefined)?.in ?? []);
      const at = Array.isArray(ids)
        ? ['triggers', i, 'filter', 'webhook_ids', 0]
        : ['triggers', i, 'filter', 'webhook_ids', 'in', 0];
      if (list.length) refer(p, 'webhook_uid', at, list[0]);
    });
    return {
      name: nameOf(p),
      path: p.path,
      enabled: p.value.enabled !== false,
      agent: str(p.value.agent),
      prompt: p.body,
      triggers: triggers.map(normalizeTrigger),
      overrides: overridesOf(p.value),
    };
  });

  const webhooks = of('webhook').map((p): WebhookSpec => {
    refer(p, 'secret_name', ['secretName'], p.value.secretName);
    const header = str(p.value.deliveryIdHeader);
    return {
      name: nameOf(p),
      path: p.path,
      auth_mode: (p.value.authMode as WebhookSpec['auth_mode']) ?? 'token',
      signature_scheme: (p.value.signatureScheme as WebhookSpec['signature_scheme']) ?? null,
      secret_name: String(p.value.secretName),
      delivery_id_header: header ? header.toLowerCase() : null,
      enabled: p.value.enabled !== false,
    };
  });

  const runners = of('runner').map((p): RunnerSpec => {
    const platform = (p.value.platform ?? {}) as Json;
    const os = (platform.os as 'linux' | 'macos' | undefined) ?? 'linux';
    const shape = p.value.instanceShape as { vcpus: number; memoryGb: number } | undefined;
    return {
      name: nameOf(p),
      path: p.path,
      description: str(p.value.description),
      setup_commands: (p.value.setupCommands as string[] | undefined) ?? [],
      instance_shape: shape ? { vcpus: shape.vcpus, memory_gb: shape.memoryGb } : null,
      platform: {
        os,
        arch: (platform.arch as 'x86_64' | 'aarch64' | undefined) ?? (os === 'macos' ? 'aarch64' : 'x86_64'),
        docker_image: str((platform.linux as Json | undefined)?.dockerImage),
        mac_version: os === 'macos' ? (str((platform.mac as Json | undefined)?.version) ?? '26') : null,
      },
    };
  });

  const scorers = of('scorer').map((p): ScorerSpec => {
    if (p.value.model !== 'auto') refer(p, 'model_id', ['model'], p.value.model);
    const v = p.value;
    return {
      name: nameOf(p),
      path: p.path,
      display_name: str(v.name)?.trim() ?? nameOf(p),
      description: str(v.description),
      agents: v.agents as string[],
      enabled: v.enabled !== false,
      output: 'classification',
      labels: (v.labels as Array<Json>).map((l) => ({
        value: String(l.value),
        score: Number(l.score),
        description: str(l.description),
      })),
      passing_score: v.passingScore as number,
      sampling_rate: (v.samplingRate as number | undefined) ?? 25,
      model: String(v.model),
      self_improvement: v.selfImprovement === true,
      rubric: p.body,
      source: p.content,
    };
  });

  const benchmarks = of('benchmarkSuite').map((p): BenchmarkSpec => {
    const suite = (p.role as { suite: string }).suite;
    const tasks = parsed.filter((t) => t.role.kind === 'benchmarkTask' && t.role.suite === suite);
    return {
      name: suite,
      path: p.path,
      display_name: String(p.value.name),
      description: str(p.value.description),
      agent: String(p.value.agent),
      tasks: (p.value.tasks as string[]).map((slug) => {
        const t = tasks.find((x) => nameOf(x) === slug)!.value;
        return {
          slug,
          title: String(t.title),
          prompt: String(t.prompt),
          success_criteria: String(t.successCriteria),
          source_run_id: str(t.sourceRunId),
          starting_repo_refs: (t.startingRepoRefs as string[] | undefined) ?? [],
        };
      }),
    };
  });

  const byName = <T extends { name: string }>(list: T[]) => list.sort((a, b) => a.name.localeCompare(b.name));
  return [
    {
      factory,
      agents: byName(agents),
      automations: byName(automations),
      webhooks: byName(webhooks),
      runners: byName(runners),
      scorers: byName(scorers),
      skills: byName(skillsOf(null)).concat(agents.flatMap((a) => skillsOf(a.name))),
      benchmarks: byName(benchmarks),
      references,
    },
    references,
  ];
}
