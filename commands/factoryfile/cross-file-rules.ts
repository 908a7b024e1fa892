/**
 * The rules across a definition's files: one MAIN/FOREMAN agent, references between resources
 * (agents, runners), the per-factory limits, skills named by their directory, and each benchmark
 * suite's task list against its task files. References resolve against every file declared,
 * parsed or not (a file's own problems are its own).
 */
import { MAX_AUTOMATIONS_PER_FACTORY } from '../automation/public.js';
import { MAX_WEBHOOKS_PER_FACTORY, deliveryIdHeaderError } from '../webhook/public.js';
import { type Diagnostic, diagnostic } from './diagnostics.js';
import { scorerDiagnostics } from './file-diagnostics.js';
import type { FileRole } from './layout.js';
import { filesOfKind, type Parsed, type RoledFile, valueAt } from './parsed-file.js';
import type { YamlPath } from './yaml.js';

/** A definition's files: their roles, the parsed ones, and those that failed their schema. */
interface ParsedTree {
  roles: readonly RoledFile[];
  parsed: readonly Parsed[];
  schemaFailed: ReadonlySet<string>;
}

/** What every rule is given: the tree, the names declared, and where a problem goes. */
interface Rules extends ParsedTree {
  of: <K extends FileRole['kind']>(kind: K) => ReturnType<typeof filesOfKind<K>>;
  agentNames: ReadonlySet<string>;
  checkAgent: (p: Parsed, path: YamlPath) => void;
  checkRunner: (p: Parsed, path: YamlPath) => void;
  add: (d: Diagnostic) => void;
}

/** The problems across the files, in the order the rules find them. */
export function crossFileDiagnostics(tree: ParsedTree): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const rules = rulesOf(tree, (d) => diagnostics.push(d));
  agentRules(rules);
  automationRules(rules);
  webhookRules(rules);
  scorerRules(rules);
  skillRules(rules);
  benchmarkRules(rules);
  return diagnostics;
}

function rulesOf(tree: ParsedTree, add: (d: Diagnostic) => void): Rules {
  const declaredNames = (kind: FileRole['kind']) =>
    new Set(tree.roles.flatMap((r) => (r.role.kind === kind ? [(r.role as { name: string }).name] : [])));
  const agentNames = declaredNames('agent');
  const runnerNames = declaredNames('runner');
  /** A reference to a resource of `names`, by the file of it that `file` names. */
  const checkIn =
    (names: ReadonlySet<string>, kind: string, file: (name: string) => string) => (p: Parsed, path: YamlPath) => {
      const name = valueAt(p.value, path);
      if (typeof name === 'string' && !names.has(name))
        add(
          diagnostic(
            'FF_INVALID_REFERENCE',
            p.path,
            `no ${kind} ${name} (${file(name)})`,
            p.source.locate(path, 'value'),
          ),
        );
    };
  return {
    ...tree,
    of: (kind) => filesOfKind(tree.parsed, kind),
    agentNames,
    checkAgent: checkIn(agentNames, 'agent', (name) => `agents/${name}/agent.md`),
    checkRunner: checkIn(runnerNames, 'runner', (name) => `runners/${name}.yaml`),
    add,
  };
}

/** One MAIN/FOREMAN agent among at least one, and the runners the factory and agents name. */
function agentRules({ of, agentNames, checkRunner, add }: Rules): void {
  const agents = of('agent');
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
  const [factory] = of('factory');
  if (factory) checkRunner(factory, ['agentDefaults', 'runner']);
  for (const a of agents) checkRunner(a, ['runner']);
}

function automationRules({ of, checkAgent, checkRunner, add }: Rules): void {
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
}

function webhookRules({ of, add }: Rules): void {
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
}

function scorerRules({ of, checkAgent, schemaFailed, add }: Rules): void {
  for (const s of of('scorer')) {
    for (const i of (Array.isArray(s.value.agents) ? s.value.agents : []).keys()) checkAgent(s, ['agents', i]);
    // Once its shape is right, the scorers API's own rules read it (commands/scorer/file-form.ts).
    if (!schemaFailed.has(s.path)) for (const d of scorerDiagnostics(s)) add(d);
  }
}

/** A skill of an agent the files declare, named by its directory. */
function skillRules({ of, agentNames, add }: Rules): void {
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
}

/** Benchmarks: each suite's task list and its task files, one for one. */
function benchmarkRules({ of, checkAgent, add }: Rules): void {
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
}
