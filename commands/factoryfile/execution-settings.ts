/**
 * How a definition's agents and automations run: the factory's agent defaults, and the layers
 * (an agent, an automation) that override them, as the files declare them (reference notes §6).
 */
import { own } from '../../src/own-keys.js';
import type { ExecutionOverrides, ExecutionSettings, Harness, HarnessType } from './definition.js';
import { type Json, str } from './parsed-file.js';

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
export function overridesOf(v: Json): ExecutionOverrides {
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
export function layered(base: ExecutionSettings, o: ExecutionOverrides, factory: Json): ExecutionSettings {
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

/** The factory's agent defaults, with its own secrets and MCP servers. */
export function defaultsOf(factory: Json): ExecutionSettings {
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
