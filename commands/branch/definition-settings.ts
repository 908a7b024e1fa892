/**
 * What a definition sets on the resources of other features: an agent's identity profile, and the
 * run settings of an automation, as the files resolve them (the carry-out writes them).
 */
import type { AgentSpec, AutomationSpec, FactorySpec } from '../factoryfile/public.js';
import type { AgentProfile } from '../identity/events.js';

/** The profile fields a definition sets on an agent identity (others, set through the API, stay). */
export const PROFILE_FIELDS = [
  'name',
  'agent_type',
  'description',
  'prompt',
  'base_model',
  'harness',
  'harness_auth_secrets',
  'credential_strategy',
  'default_runner_uid',
  'environment_id',
  'worker_host',
  'mcp_servers',
  'secrets',
  'factory_uid',
] as const;

/** An agent's identity profile as its file resolves it. */
export function profileOf(
  agent: AgentSpec,
  factoryUid: string,
  factory: FactorySpec,
  runnerUid: (name: string) => string,
): AgentProfile {
  const { harness: h, runner, environment_id, worker_host, mcp_servers, secrets } = agent.execution;
  const authSecret = h.auth?.source === 'managedSecret' ? h.auth.secret_name : null;
  return {
    name: agent.name,
    agent_type: agent.agent_type,
    description: agent.description,
    prompt: agent.prompt,
    base_model: h.model === 'auto' ? null : h.model,
    harness:
      h.type === 'oz'
        ? null
        : { type: h.type, model: h.model, ...(h.reasoning_level ? { reasoning_level: h.reasoning_level } : {}) },
    harness_auth_secrets: authSecret ? { [`${h.type}_auth_secret_name`]: authSecret } : null,
    credential_strategy: agent.credential_strategy ?? factory.credential_strategy,
    default_runner_uid: runner ? runnerUid(runner) : null,
    environment_id,
    worker_host,
    mcp_servers: Object.keys(mcp_servers).length ? mcp_servers : null,
    secrets: secrets.length ? secrets.map((name) => ({ name })) : null,
    factory_uid: factoryUid,
  };
}

/** The run settings an automation's own declarations give its runs (the agent's own fill the rest). */
export function runConfigOf(
  automation: AutomationSpec,
  runnerUid: (name: string) => string,
): Record<string, unknown> | null {
  const o = automation.overrides;
  const config: Record<string, unknown> = {};
  if (o.harness?.model && o.harness.model !== 'auto') config.model_id = o.harness.model;
  if (o.harness?.type && o.harness.type !== 'oz')
    config.harness = {
      type: o.harness.type,
      ...(o.harness.model ? { model_id: o.harness.model } : {}),
      ...(o.harness.reasoning_level ? { reasoning_level: o.harness.reasoning_level } : {}),
    };
  if (o.runner) config.runner_id = runnerUid(o.runner);
  if (o.environment_id) config.environment_id = o.environment_id;
  if (o.worker_host) config.worker_host = o.worker_host;
  if (o.mcp_servers) config.mcp_servers = o.mcp_servers;
  return Object.keys(config).length ? config : null;
}
