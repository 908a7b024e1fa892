/**
 * A factory's definition as its files resolve it: every resource with the settings it takes
 * effect with (inheritance applied: factory.yaml's agentDefaults, then the agent, then the
 * automation; reference notes §6.2), each with a hash of those settings so that two
 * definitions compare resource by resource. Pure data, built by validation from valid files.
 */
import { createHash } from 'node:crypto';
import type { Trigger } from '../automation/events.js';
import type { Position } from './diagnostics.js';
import { own } from '../../src/own-keys.js';

export type HarnessType = 'oz' | 'claude' | 'codex' | 'gemini';

export interface Harness {
  type: HarnessType;
  /** A model id, or `auto` for the team's default. */
  model: string;
  reasoning_level: string | null;
  auth: { source: 'managedSecret' | 'workerEnvironment'; secret_name: string | null } | null;
}

/** What a run of an agent executes with, resolved. */
export interface ExecutionSettings {
  harness: Harness;
  runner: string | null;
  environment_id: string | null;
  /** The factory's secrets, then the layer's (an agent's list replaces the defaults'). */
  secrets: string[];
  mcp_servers: Record<string, { warp_id: string }>;
  worker_host: string | null;
}

/** What an automation declares over its agent's settings (absent: the agent's). */
export interface ExecutionOverrides {
  harness?: Partial<Pick<Harness, 'type' | 'model'>> & { reasoning_level?: string | null; auth?: Harness['auth'] };
  runner?: string;
  environment_id?: string;
  secrets?: string[];
  mcp_servers?: Record<string, { warp_id: string }>;
  worker_host?: string | null;
}

interface Located {
  name: string;
  /** The file that declares it. */
  path: string;
}

export interface FactorySpec {
  name: string;
  description: string | null;
  alias: string | null;
  /** null: the one in force is kept (reference notes §6.2). */
  credential_strategy: 'EXECUTOR' | 'CREATOR' | null;
  repositories: Array<{ owner: string; repo: string }>;
  integrations: Array<{ type: string }> | null;
  cloud_providers: Record<string, unknown> | null;
  agent_defaults: ExecutionSettings;
}

export interface AgentSpec extends Located {
  agent_type: 'FOREMAN' | 'TRIAGE' | 'SPEC' | 'IMPLEMENT' | 'REVIEW' | 'VERIFY' | 'CUSTOM';
  description: string | null;
  prompt: string | null;
  credential_strategy: 'EXECUTOR' | 'CREATOR' | null;
  execution: ExecutionSettings;
  /** Its own skills (agents/<name>/skills/), by name with their content hash. */
  skills: Array<{ name: string; sha256: string }>;
}

export interface AutomationSpec extends Located {
  enabled: boolean;
  /** An agent of the definition; null: the factory's foreman. */
  agent: string | null;
  prompt: string;
  triggers: Trigger[];
  overrides: ExecutionOverrides;
}

export interface WebhookSpec extends Located {
  auth_mode: 'token' | 'url_token' | 'signature';
  signature_scheme: 'standard_webhooks' | 'stripe' | 'github' | 'sentry' | 'pagerduty' | 'vercel' | null;
  secret_name: string;
  delivery_id_header: string | null;
  enabled: boolean;
}

export interface RunnerSpec extends Located {
  description: string | null;
  setup_commands: string[];
  instance_shape: { vcpus: number; memory_gb: number } | null;
  platform: {
    os: 'linux' | 'macos';
    arch: 'x86_64' | 'aarch64';
    docker_image: string | null;
    mac_version: string | null;
  };
}

export interface ScorerSpec extends Located {
  display_name: string;
  description: string | null;
  agents: string[];
  enabled: boolean;
  output: 'classification';
  labels: Array<{ value: string; score: number; description: string | null }>;
  passing_score: number;
  /** Percent of eligible runs, 0.01-100. */
  sampling_rate: number;
  model: string;
  self_improvement: boolean;
  rubric: string;
  /** The file itself: the scorers feature reads it into a scorer when applied (its file form). */
  source: string;
}

export interface SkillSpec extends Located {
  /** The agent whose own skill it is; null for every agent's (skills/). */
  agent: string | null;
  description: string;
  sha256: string;
}

export interface BenchmarkSpec extends Located {
  display_name: string;
  description: string | null;
  agent: string;
  tasks: Array<{
    slug: string;
    title: string;
    prompt: string;
    success_criteria: string;
    source_run_id: string | null;
    starting_repo_refs: string[];
  }>;
}

/** A value only the service can check, when the definition is applied: where it stands. */
export interface StateReference extends Position {
  kind: 'model_id' | 'environment_id' | 'secret_name' | 'webhook_uid';
  value: string;
  path: string;
  field: string;
}

export interface Definition {
  factory: FactorySpec;
  agents: AgentSpec[];
  automations: AutomationSpec[];
  webhooks: WebhookSpec[];
  runners: RunnerSpec[];
  scorers: ScorerSpec[];
  skills: SkillSpec[];
  benchmarks: BenchmarkSpec[];
  references: StateReference[];
}

/** The kinds of resource an apply creates, changes and retires, in the order they are reported. */
export const RESOURCE_KINDS = ['agents', 'automations', 'webhooks', 'scorers', 'runners'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

/** JSON with keys in order: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .filter((k) => own(value as Record<string, unknown>, k) !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(own(value as Record<string, unknown>, k))}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

export const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/** A resource's hash: of what it takes effect with, not of the file (so moving or reformatting it changes nothing). */
const specHash = (spec: object) => {
  const { path: _path, source: _source, ...rest } = spec as { path?: string; source?: string };
  return sha256(canonicalJson(rest)).slice(0, 32);
};

/** Each resource of a definition by `kind/name`, with its hash: what two definitions are compared by. */
export function resourceHashes(d: Definition): Record<string, string> {
  const out: Record<string, string> = { 'factory/factory': specHash(d.factory) };
  for (const kind of RESOURCE_KINDS) for (const r of d[kind]) out[`${kind}/${r.name}`] = specHash(r);
  return out;
}
