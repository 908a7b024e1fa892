/**
 * Deterministic event histories, as rows of the SQLite event store, typed against the events of
 * commands/ so that a change of shape fails `tsc` here rather than silently benchmarking stale data.
 *
 * Every history starts the way a fresh install does (bootstrap claim, admin user with the bench
 * key, first team), so the server starts on it without bootstrapping and the bench key works.
 * - `mixed`: a real-looking history of many teams: factories created, updated several times,
 *   some deleted; agent identities (foremen linked to factories) with keys, updated, some deleted;
 *   users joining teams. Streams interleave in time as they would in production.
 * - `one-team`: `size` factories of the admin's team (a fifth of them updated once), for HTTP.
 */
import { createHash } from 'node:crypto';
import type { EventMetadata, NewEvent } from '../../src/eventstore/port.js';
import type { FactoryEvent } from '../../commands/factory/events.js';
import type { AgentType, IdentityEvent } from '../../commands/identity/events.js';
import type { TeamEvent } from '../../commands/team/events.js';
import type { EmailReserved, UserEvent } from '../../commands/user/events.js';

export const BENCH_ADMIN_KEY = 'sf_bench_admin_key_0123456789abcdef';

export interface HistoryRow {
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
}

export type HistoryKind = 'mixed' | 'one-team';

/** Words that occur in factory names: searching one matches about 1/CITIES.length of them. */
export const CITIES = [
  'Lisbon', 'Porto', 'Madrid', 'Seville', 'Valencia', 'Bilbao', 'Lyon', 'Marseille', 'Toulouse', 'Nantes',
  'Hamburg', 'Munich', 'Cologne', 'Dresden', 'Leipzig', 'Vienna', 'Graz', 'Zurich', 'Basel', 'Geneva',
  'Milan', 'Turin', 'Naples', 'Florence', 'Bologna', 'Krakow', 'Gdansk', 'Prague', 'Brno', 'Budapest',
  'Oslo', 'Bergen', 'Uppsala', 'Malmo', 'Helsinki', 'Tampere', 'Tallinn', 'Riga', 'Vilnius', 'Dublin',
  'Cork', 'Glasgow', 'Leeds', 'Bristol', 'Antwerp', 'Ghent', 'Utrecht', 'Eindhoven', 'Aarhus', 'Odense',
] as const;
/** A word that no generated name contains: a search for it scans every factory of the team. */
export const ABSENT_WORD = 'Atlantis';
const KINDS = ['assembly', 'packaging', 'paint shop', 'foundry', 'press line', 'welding', 'test bench', 'kitting'];
const AGENT_TYPES: AgentType[] = ['FOREMAN', 'TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'VERIFY', 'CUSTOM'];

/** mulberry32: a small, fast, seeded PRNG; the same seed gives the same history. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

interface Factory {
  uid: string;
  team: Team;
}
interface Identity {
  uid: string;
  team: Team;
  keyHashes: string[];
}
interface Team {
  uid: string;
  members: string[];
}

export interface HistoryInfo {
  kind: HistoryKind;
  events: number;
  teamUid: string;
  adminUid: string;
}

/** Yields `size` events (mixed) or the events of `size` factories (one-team). */
export function* generateHistory(kind: HistoryKind, size: number, info: Partial<HistoryInfo> = {}): Generator<HistoryRow> {
  const rand = prng(kind === 'mixed' ? 0x5eed : 0xfac7);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const hex = (n: number) => {
    let s = '';
    while (s.length < n) s += Math.floor(rand() * 0x100000000).toString(16).padStart(8, '0');
    return s.slice(0, n);
  };
  const uuid = () => {
    const h = hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  };

  let clock = Date.parse('2025-01-06T08:00:00.000Z');
  const revisions = new Map<string, number>();
  let count = 0;
  let actor: EventMetadata['actor'] = { type: 'system', uid: 'bootstrap' };
  let teamUid: string | null = null;

  /** One event; the type parameter ties the literal to an event type of commands/. */
  const row = <E extends NewEvent>(stream: string, event: E): HistoryRow => {
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    clock += 1 + int(600);
    count += 1;
    const request = uuid();
    const metadata: EventMetadata = {
      actor,
      team_uid: teamUid,
      correlation_id: request,
      causation_id: null,
      request_id: request,
      occurred_at: new Date(clock).toISOString(),
    };
    return { id: uuid(), stream, revision, type: event.type, data: JSON.stringify(event.data), metadata: JSON.stringify(metadata) };
  };

  function* newUser(email: string, displayName: string): Generator<HistoryRow, string> {
    const uid = uuid();
    yield row<EmailReserved>(`email-${sha256(email)}`, { type: 'EmailReserved', data: { email, user_uid: uid } });
    yield row<UserEvent>(`user-${uid}`, { type: 'UserRegistered', data: { uid, email, display_name: displayName } });
    const keyHash = displayName === 'admin' ? sha256(BENCH_ADMIN_KEY) : hex(64);
    yield row<UserEvent>(`user-${uid}`, { type: 'ApiKeyIssued', data: { key_id: uuid(), key_hash: keyHash, principal: { type: 'user', uid } } });
    return uid;
  }

  function* newTeam(name: string, adminUid: string): Generator<HistoryRow, Team> {
    const uid = uuid();
    yield row<TeamEvent>(`team-${uid}`, { type: 'TeamCreated', data: { uid, name } });
    yield row<TeamEvent>(`team-${uid}`, { type: 'MemberAdded', data: { team_uid: uid, user_uid: adminUid, role: 'admin' } });
    return { uid, members: [adminUid] };
  }

  // The prologue of every install: commands/team/bootstrap.ts, with the bench key.
  const team0Uid = uuid();
  const adminUid = uuid();
  teamUid = team0Uid;
  yield row(`bootstrap`, { type: 'BootstrapClaimed', data: { team_uid: team0Uid, user_uid: adminUid } });
  const email = 'admin@example.com';
  yield row<EmailReserved>(`email-${sha256(email)}`, { type: 'EmailReserved', data: { email, user_uid: adminUid } });
  yield row<UserEvent>(`user-${adminUid}`, { type: 'UserRegistered', data: { uid: adminUid, email, display_name: 'admin' } });
  yield row<UserEvent>(`user-${adminUid}`, {
    type: 'ApiKeyIssued',
    data: { key_id: uuid(), key_hash: sha256(BENCH_ADMIN_KEY), principal: { type: 'user', uid: adminUid } },
  });
  yield row<TeamEvent>(`team-${team0Uid}`, { type: 'TeamCreated', data: { uid: team0Uid, name: 'Default team' } });
  yield row<TeamEvent>(`team-${team0Uid}`, { type: 'MemberAdded', data: { team_uid: team0Uid, user_uid: adminUid, role: 'admin' } });
  const team0: Team = { uid: team0Uid, members: [adminUid] };
  Object.assign(info, { kind, teamUid: team0Uid, adminUid });

  const teams: Team[] = [team0];
  const factories: Factory[] = [];
  const identities: Identity[] = [];
  let serial = 0;

  const as = (team: Team) => {
    actor = { type: 'user', uid: pick(team.members) };
    teamUid = team.uid;
  };
  const fields = () => {
    serial += 1;
    const city = pick(CITIES);
    return {
      name: `${city} ${pick(KINDS)} ${serial}`,
      alias: rand() < 0.7 ? `${city.slice(0, 3).toUpperCase()}-${serial}` : null,
      description: rand() < 0.5 ? `Line ${serial} of the ${city} plant, shift ${1 + int(3)}` : null,
      repositories: Array.from({ length: int(3) }, () => ({ owner: 'acme', repo: `svc-${hex(6)}` })),
    };
  };
  function* createFactory(team: Team): Generator<HistoryRow> {
    as(team);
    const uid = uuid();
    yield row<FactoryEvent>(`factory-${uid}`, { type: 'FactoryCreated', data: { uid, team_uid: team.uid, ...fields() } });
    factories.push({ uid, team });
  }
  /** Half the updates go to the 2,000 newest factories: recent work is hot. */
  const someFactory = (): number =>
    rand() < 0.5 ? Math.max(0, factories.length - 1 - int(2000)) : int(factories.length);
  function* updateFactory(): Generator<HistoryRow> {
    const f = factories[someFactory()]!;
    as(f.team);
    const all = fields();
    const changes = rand() < 0.5 ? { description: all.description ?? 'updated' } : rand() < 0.5 ? { name: all.name } : { repositories: all.repositories };
    yield row<FactoryEvent>(`factory-${f.uid}`, { type: 'FactoryUpdated', data: { uid: f.uid, changes } });
  }

  if (kind === 'one-team') {
    actor = { type: 'user', uid: adminUid };
    for (let i = 0; i < size; i++) {
      yield* createFactory(team0);
      if (rand() < 0.2) yield* updateFactory();
    }
    Object.assign(info, { events: count });
    return;
  }

  while (count < size) {
    const r = rand() * 100;
    if (r < 0.2 || teams.length < 5) {
      const admin = yield* newUser(`owner${serial++}@example.org`, 'owner');
      actor = { type: 'user', uid: admin };
      teams.push(yield* newTeam(`Team ${teams.length}`, admin));
    } else if (r < 1.2) {
      const team = pick(teams);
      as(team);
      const uid = yield* newUser(`member${serial++}@example.org`, 'member');
      yield row<TeamEvent>(`team-${team.uid}`, { type: 'MemberAdded', data: { team_uid: team.uid, user_uid: uid, role: 'member' } });
      team.members.push(uid);
    } else if (r < 21.2 || factories.length === 0) {
      yield* createFactory(pick(teams));
    } else if (r < 76.2) {
      yield* updateFactory();
    } else if (r < 78.7) {
      const i = someFactory();
      const f = factories[i]!;
      as(f.team);
      yield row<FactoryEvent>(`factory-${f.uid}`, { type: 'FactoryDeleted', data: { uid: f.uid } });
      factories[i] = factories[factories.length - 1]!;
      factories.pop();
    } else if (r < 84.7 || identities.length === 0) {
      const f = factories[someFactory()]!;
      as(f.team);
      const uid = uuid();
      const agentType = rand() < 0.5 ? 'FOREMAN' : pick(AGENT_TYPES);
      const profile = { name: `${agentType.toLowerCase()} ${serial++}`, agent_type: agentType, factory_uid: rand() < 0.8 ? f.uid : null };
      yield row<IdentityEvent>(`identity-${uid}`, { type: 'AgentIdentityCreated', data: { uid, team_uid: f.team.uid, profile } });
      const keyHash = hex(64);
      yield row<IdentityEvent>(`identity-${uid}`, { type: 'ApiKeyIssued', data: { key_id: uuid(), key_hash: keyHash, principal: { type: 'agent', uid } } });
      identities.push({ uid, team: f.team, keyHashes: [keyHash] });
    } else if (r < 98) {
      const a = pick(identities);
      as(a.team);
      yield row<IdentityEvent>(`identity-${a.uid}`, { type: 'AgentIdentityUpdated', data: { uid: a.uid, changes: { name: `agent ${serial++}` } } });
    } else if (r < 99) {
      const a = pick(identities);
      as(a.team);
      const keyHash = hex(64);
      yield row<IdentityEvent>(`identity-${a.uid}`, { type: 'ApiKeyIssued', data: { key_id: uuid(), key_hash: keyHash, principal: { type: 'agent', uid: a.uid } } });
      a.keyHashes.push(keyHash);
    } else {
      const i = int(identities.length);
      const a = identities[i]!;
      as(a.team);
      yield row<IdentityEvent>(`identity-${a.uid}`, { type: 'AgentIdentityDeleted', data: { uid: a.uid, revoked_key_hashes: a.keyHashes } });
      identities[i] = identities[identities.length - 1]!;
      identities.pop();
    }
  }
  Object.assign(info, { events: count });
}
