/**
 * Every grant and revocation of access to a team, for GET /teams/{team_uid}/audit: the team's
 * memberships and invitations, its agents (creation, on_behalf_of, deletion) and their keys, and
 * the keys of its members while they are members (a user's key opens each of the user's teams).
 * One entry per event and team, in log order; the event's metadata says who, when and in which
 * request. Entries show no hash of any key or code.
 *
 * Two tables say whom a key event concerns: `agents` (each agent's team) and `users` (each
 * user's teams now). `teamAudit` reads a team's entries a page at a time, as history entries, for
 * the route and for `shopfloor history team`.
 */
import type { z } from 'zod';
import { positionKey, type RecordedEvent } from '../../src/eventstore/port.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import type { HistoryEntry, historyResponse } from '../../src/http/history.js';
import type { Collection, Sort } from '../../src/readstore/port.js';
import { type ProjectionDocs, projection } from '../../src/projector/projection.js';
import type { IdentityEvent } from '../../commands/identity/events.js';
import type { TeamEvent } from '../../commands/team/events.js';
import type { UserEvent } from '../../commands/user/events.js';

export interface AuditEntryDoc {
  [field: string]: unknown;
  team_uid: string;
  /** The log position as text that sorts as the log does: the key of a page. */
  order: string;
  event_id: string;
  position: string;
  stream: string;
  revision: number;
  type: string;
  occurred_at: string;
  actor: { type: 'user' | 'agent' | 'system'; uid: string };
  correlation_id: string;
  causation_id: string | null;
  request_id: string | null;
  /** What the event granted or took away, without hashes. */
  data: Record<string, unknown>;
}

type Tables = { agents: { team_uid: string }; users: { team_uids: string[] } };
type AuditDocs = ProjectionDocs<AuditEntryDoc, Tables>;

function entry(docs: AuditDocs, team_uid: string, e: RecordedEvent, data: Record<string, unknown>): void {
  const { position } = e;
  docs.put(`${e.id}:${team_uid}`, {
    team_uid,
    order: positionKey(position),
    event_id: e.id,
    position: position.commit.toString(),
    stream: e.stream,
    revision: Number(e.revision),
    type: e.type,
    occurred_at: e.metadata.occurred_at,
    actor: e.metadata.actor,
    correlation_id: e.metadata.correlation_id,
    causation_id: e.metadata.causation_id,
    request_id: e.metadata.request_id,
    data,
  } satisfies AuditEntryDoc);
}

/** The teams a key of this principal opens now. */
async function teamsOf(docs: AuditDocs, principal: { type: 'user' | 'agent'; uid: string }): Promise<string[]> {
  if (principal.type === 'agent') {
    const agent = await docs.in('agents').get(principal.uid);
    return agent ? [agent.team_uid] : [];
  }
  return (await docs.in('users').get(principal.uid))?.team_uids ?? [];
}

export const accessAuditProjection = projection<TeamEvent | UserEvent | IdentityEvent, AuditEntryDoc, Tables>({
  name: 'access_audit',
  version: 2,
  indexes: [['team_uid', 'order']],
  tables: { agents: [], users: [] },
  on: {
    TeamCreated: (e, docs) => entry(docs, e.data.uid, e, { uid: e.data.uid, name: e.data.name }),
    MemberAdded: async (e, docs) => {
      entry(docs, e.data.team_uid, e, { ...e.data });
      const teams = (await teamsOf(docs, { type: 'user', uid: e.data.user_uid })).filter((t) => t !== e.data.team_uid);
      docs.in('users').put(e.data.user_uid, { team_uids: [...teams, e.data.team_uid] });
    },
    MemberRemoved: async (e, docs) => {
      entry(docs, e.data.team_uid, e, { ...e.data });
      const teams = await teamsOf(docs, { type: 'user', uid: e.data.user_uid });
      docs.in('users').put(e.data.user_uid, { team_uids: teams.filter((t) => t !== e.data.team_uid) });
    },
    InvitationIssued: (e, docs) => entry(docs, e.data.team_uid, e, { uid: e.data.uid, team_uid: e.data.team_uid }),
    AgentIdentityCreated: (e, docs) => {
      const { uid, team_uid, profile } = e.data;
      entry(docs, team_uid, e, {
        uid,
        team_uid,
        name: profile.name,
        agent_type: profile.agent_type,
        on_behalf_of_enabled: profile.on_behalf_of_enabled ?? null,
      });
      docs.in('agents').put(uid, { team_uid });
    },
    // Acting on users' behalf is a grant; the rest of an agent's profile is not access.
    AgentIdentityUpdated: async (e, docs) => {
      if (!('on_behalf_of_enabled' in e.data.changes)) return;
      const on_behalf_of_enabled = e.data.changes.on_behalf_of_enabled ?? null;
      for (const team of await teamsOf(docs, { type: 'agent', uid: e.data.uid }))
        entry(docs, team, e, { uid: e.data.uid, on_behalf_of_enabled });
    },
    AgentIdentityDeleted: async (e, docs) => {
      const data = { uid: e.data.uid, revoked_key_ids: e.data.revoked_key_ids ?? null };
      for (const team of await teamsOf(docs, { type: 'agent', uid: e.data.uid })) entry(docs, team, e, data);
    },
    ApiKeyIssued: async (e, docs) => {
      const { key_id, principal, label, last4, expires_at } = e.data;
      const data = { key_id, principal, label: label ?? null, last4: last4 ?? null, expires_at: expires_at ?? null };
      for (const team of await teamsOf(docs, principal)) entry(docs, team, e, data);
    },
    ApiKeyRevoked: async (e, docs) => {
      const { key_id, principal } = e.data;
      for (const team of await teamsOf(docs, principal)) entry(docs, team, e, { key_id, principal });
    },
  },
});

const ORDER: Sort = [['order', 'asc']];

const toAuditEntry = (doc: AuditEntryDoc): HistoryEntry => ({
  id: doc.event_id,
  position: doc.position,
  stream: doc.stream,
  revision: doc.revision,
  type: doc.type,
  occurred_at: doc.occurred_at,
  actor: doc.actor,
  correlation_id: doc.correlation_id,
  causation_id: doc.causation_id,
  request_id: doc.request_id,
  data: doc.data,
});

/** One page of a team's audit entries, after `cursor`. */
export async function teamAudit(
  entries: Collection<AuditEntryDoc>,
  team_uid: string,
  limit: number,
  cursor?: string,
): Promise<z.infer<typeof historyResponse>> {
  const page = await entries.find({ filter: { team_uid }, sort: ORDER, limit, after: decodeCursor(cursor, ORDER) });
  return { entries: page.items.map(toAuditEntry), page_info: pageInfo(ORDER, page.next) };
}
