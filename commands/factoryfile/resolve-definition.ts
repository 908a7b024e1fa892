/**
 * The resolved definition of valid files (definition.ts): each resource's spec with its execution
 * settings layered, resources by name, and the references only the service can check (models,
 * environments, team secrets, webhook UIDs), each at its place in its file.
 */
import { type TriggerRequest, normalizeTrigger } from '../automation/public.js';
import {
  type AgentSpec,
  type AutomationSpec,
  type BenchmarkSpec,
  type Definition,
  type ExecutionSettings,
  type FactorySpec,
  type RunnerSpec,
  type ScorerSpec,
  type SkillSpec,
  type StateReference,
  sha256,
  type WebhookSpec,
} from './definition.js';
import { defaultsOf, layered, overridesOf } from './execution-settings.js';
import { filesOfKind, type Json, nameOf, type Parsed, str } from './parsed-file.js';
import type { YamlPath } from './yaml.js';

/** The references of the files, collected as the specs are read. */
class References {
  readonly list: StateReference[] = [];

  refer(p: Parsed, kind: StateReference['kind'], path: YamlPath, value: unknown): void {
    if (typeof value === 'string' && value !== '')
      this.list.push({ kind, value, path: p.path, field: path.join('.'), ...p.source.locate(path, 'value') });
  }

  /** The models, environment and secrets a layer of execution settings names. */
  referExecution(p: Parsed, v: Json, at: YamlPath = []): void {
    if (typeof v.model === 'string' && v.model !== 'auto') this.refer(p, 'model_id', [...at, 'model'], v.model);
    const h = v.harness as Json | undefined;
    if (h && h.type === 'oz' && typeof h.model === 'string' && h.model !== 'auto')
      this.refer(p, 'model_id', [...at, 'harness', 'model'], h.model);
    this.refer(p, 'environment_id', [...at, 'environmentId'], v.environmentId);
    for (const [i, s] of ((v.secrets as string[] | undefined) ?? []).entries())
      this.refer(p, 'secret_name', [...at, 'secrets', i], s);
    this.refer(p, 'secret_name', [...at, 'harness', 'auth', 'secretName'], (h?.auth as Json | undefined)?.secretName);
  }
}

/** The resolved definition of valid files, and the references only the service can check. */
export function resolveDefinition(factoryFile: Parsed, parsed: readonly Parsed[]): [Definition, StateReference[]] {
  const refs = new References();
  const f = factoryFile.value;
  for (const [i, s] of ((f.secrets as string[] | undefined) ?? []).entries())
    refs.refer(factoryFile, 'secret_name', ['secrets', i], s);
  refs.referExecution(factoryFile, f.agentDefaults as Json, ['agentDefaults']);
  const defaults = defaultsOf(f);
  const agents = agentSpecs(parsed, defaults, f, refs);
  const automations = automationSpecs(parsed, refs);
  const webhooks = webhookSpecs(parsed, refs);
  const runners = runnerSpecs(parsed);
  const scorers = scorerSpecs(parsed, refs);
  const benchmarks = benchmarkSpecs(parsed);
  const byName = <T extends { name: string }>(list: T[]) => list.sort((a, b) => a.name.localeCompare(b.name));
  return [
    {
      factory: factorySpec(f, defaults),
      agents: byName(agents),
      automations: byName(automations),
      webhooks: byName(webhooks),
      runners: byName(runners),
      scorers: byName(scorers),
      skills: byName(skillSpecs(parsed, null)).concat(agents.flatMap((a) => skillSpecs(parsed, a.name))),
      benchmarks: byName(benchmarks),
      references: refs.list,
    },
    refs.list,
  ];
}

function factorySpec(f: Json, defaults: ExecutionSettings): FactorySpec {
  const clouds = (f.cloudProviders ?? f.providers ?? null) as Record<string, unknown> | null;
  return {
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
}

/** The factory's skills (`agent` null), or an agent's own. */
const skillSpecs = (parsed: readonly Parsed[], agent: string | null) =>
  parsed
    .filter((p) => (agent === null ? p.role.kind === 'skill' : p.role.kind === 'agentSkill' && p.role.agent === agent))
    .map(
      (p): SkillSpec => ({
        name: nameOf(p),
        path: p.path,
        agent,
        description: String(p.value.description),
        sha256: sha256(p.content),
      }),
    );

function agentSpecs(parsed: readonly Parsed[], defaults: ExecutionSettings, f: Json, refs: References): AgentSpec[] {
  return filesOfKind(parsed, 'agent').map((p): AgentSpec => {
    refs.referExecution(p, p.value);
    const type = p.value.agentType as string | null | undefined;
    return {
      name: nameOf(p),
      path: p.path,
      agent_type: (type === 'MAIN' ? 'FOREMAN' : (type ?? 'CUSTOM')) as AgentSpec['agent_type'],
      description: str(p.value.description),
      prompt: p.body || null,
      credential_strategy: (p.value.credentialStrategy as AgentSpec['credential_strategy']) ?? null,
      execution: layered(defaults, overridesOf(p.value), f),
      skills: skillSpecs(parsed, nameOf(p)).map((s) => ({ name: s.name, sha256: s.sha256 })),
    };
  });
}

function automationSpecs(parsed: readonly Parsed[], refs: References): AutomationSpec[] {
  return filesOfKind(parsed, 'automation').map((p): AutomationSpec => {
    refs.referExecution(p, p.value);
    const triggers = p.value.triggers as TriggerRequest[];
    triggers.forEach((t, i) => {
      const ids = t.provider === 'webhook' ? (t.filter?.webhook_ids as unknown) : undefined;
      const list = Array.isArray(ids) ? ids : ((ids as { in?: unknown[] } | undefined)?.in ?? []);
      const at = Array.isArray(ids)
        ? ['triggers', i, 'filter', 'webhook_ids', 0]
        : ['triggers', i, 'filter', 'webhook_ids', 'in', 0];
      if (list.length) refs.refer(p, 'webhook_uid', at, list[0]);
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
}

function webhookSpecs(parsed: readonly Parsed[], refs: References): WebhookSpec[] {
  return filesOfKind(parsed, 'webhook').map((p): WebhookSpec => {
    refs.refer(p, 'secret_name', ['secretName'], p.value.secretName);
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
}

function runnerSpecs(parsed: readonly Parsed[]): RunnerSpec[] {
  return filesOfKind(parsed, 'runner').map((p): RunnerSpec => {
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
}

function scorerSpecs(parsed: readonly Parsed[], refs: References): ScorerSpec[] {
  return filesOfKind(parsed, 'scorer').map((p): ScorerSpec => {
    if (p.value.model !== 'auto') refs.refer(p, 'model_id', ['model'], p.value.model);
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
}

/** Each suite with its tasks, in the order its task list gives them. */
function benchmarkSpecs(parsed: readonly Parsed[]): BenchmarkSpec[] {
  return filesOfKind(parsed, 'benchmarkSuite').map((p): BenchmarkSpec => {
    const suite = p.role.suite;
    const tasks = filesOfKind(parsed, 'benchmarkTask').filter((t) => t.role.suite === suite);
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
}
