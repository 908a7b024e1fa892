import type { ApiKeyIssued } from '../user/events.js';

export const AGENT_TYPES = ['FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/** The configurable part of an agent identity, as the API takes it. */
export interface AgentProfile {
  name: string;
  agent_type: AgentType;
  factory_uid?: string | null;
  [field: string]: unknown;
}

export type IdentityEvent =
  | { type: 'AgentIdentityCreated'; data: { uid: string; team_uid: string; profile: AgentProfile } }
  | { type: 'AgentIdentityUpdated'; data: { uid: string; changes: Partial<AgentProfile> } }
  /** Carries the hashes of every key of the agent, so that all of them go in the same append. */
  | { type: 'AgentIdentityDeleted'; data: { uid: string; revoked_key_hashes: string[] } }
  | ApiKeyIssued;

export const identityStream = (uid: string) => `identity-${uid}`;
