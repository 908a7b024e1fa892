import type { ApiKeyIssued, ApiKeyRevoked } from '../user/events.js';

export const AGENT_TYPES = ['FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

export const CREDENTIAL_STRATEGIES = ['EXECUTOR', 'CREATOR'] as const;

type Json = Record<string, unknown>;

/** The configurable part of an agent identity, as the API takes it. Absent: never set; null: cleared. */
export interface AgentProfile {
  name: string;
  agent_type: AgentType;
  description?: string | null;
  prompt?: string | null;
  base_model?: string | null;
  harness?: Json | null;
  harness_auth_secrets?: Record<string, string> | null;
  credential_strategy?: (typeof CREDENTIAL_STRATEGIES)[number] | null;
  default_runner_uid?: string | null;
  environment_id?: string | null;
  worker_host?: string | null;
  mcp_servers?: Record<string, Json> | null;
  secrets?: Array<{ name: string }> | null;
  skills?: string[] | null;
  memory?: Json | null;
  inference_providers?: Json | null;
  factory_uid?: string | null;
  on_behalf_of_enabled?: boolean | null;
}

export type IdentityEvent =
  | { type: 'AgentIdentityCreated'; data: { uid: string; team_uid: string; profile: AgentProfile } }
  | { type: 'AgentIdentityUpdated'; data: { uid: string; changes: Partial<AgentProfile> } }
  /**
   * Carries the hashes of every live key of the agent, so that all of them go in the same append
   * (and their ids, for auditors; absent on deletions recorded before).
   */
  | { type: 'AgentIdentityDeleted'; data: { uid: string; revoked_key_hashes: string[]; revoked_key_ids?: string[] } }
  | ApiKeyIssued
  | ApiKeyRevoked;

export const identityStream = (uid: string) => `identity-${uid}`;
