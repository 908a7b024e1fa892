/** Team: members (invite, remove), my API keys (create, shown once; revoke), the access audit, guardrails. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { useAction, useApi, usePaged } from '../hooks';
import { isAdmin, useSession } from '../session';
import { Time } from '../ui/format';
import { More, Page } from '../ui/page';
import { ActionResult, Async, Empty, Loading, ProblemView } from '../ui/status';
import { AccessAudit } from './team-audit';
import { Guardrails } from './team-guardrails';

interface Member {
  user: { uid: string; email: string; display_name: string };
  role: string;
  joined_at: string;
}

function Invite({ teamUid, invited }: { teamUid: string; invited: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const [state, invite] = useAction(
    () =>
      api<{ invitation_code: string; user: { email: string } }>(`/teams/${teamUid}/members`, {
        method: 'POST',
        body: { email, role },
      }),
    (r) =>
      `${r.user.email} added. Give them this invitation code, shown once, to redeem on the sign-in page: ${r.invitation_code}`,
  );
  return (
    <form class="card" onSubmit={async (e) => (e.preventDefault(), (await invite()) && (setEmail(''), invited()))}>
      <h3>Invite a member</h3>
      <label for="invite-email">Email</label>
      <input id="invite-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      <label for="invite-role">Role</label>
      <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
        <option value="member">Member</option>
        <option value="admin">Admin</option>
      </select>
      <button type="submit" disabled={state.busy}>
        Invite
      </button>
      <ActionResult state={state} />
    </form>
  );
}

function Members({ teamUid, admin }: { teamUid: string; admin: boolean }) {
  const { userUid } = useSession();
  const members = usePaged<Member>(`/teams/${teamUid}/members`, 'members', (m) => m.user.uid, { limit: 50 });
  const [removal, remove] = useAction(
    (m: Member) => api(`/teams/${teamUid}/members/${m.user.uid}`, { method: 'DELETE' }),
    () => 'Member removed: their keys no longer open this team.',
  );
  return (
    <section aria-labelledby="members">
      <h2 id="members">Members</h2>
      {members.problem && <ProblemView problem={members.problem} />}
      {members.loading && members.items.length === 0 && <Loading what="Loading members" />}
      <ul class="cards">
        {members.items.map((m) => (
          <li key={m.user.uid} class="card">
            <strong>{m.user.display_name}</strong> {m.user.email} <span class="badge">{m.role}</span> joined{' '}
            <Time iso={m.joined_at} />{' '}
            {admin && m.user.uid !== userUid && (
              <button
                type="button"
                class="danger"
                onClick={async () => (await remove(m)) !== undefined && members.refresh()}
              >
                Remove {m.user.email}
              </button>
            )}
          </li>
        ))}
      </ul>
      <ActionResult state={removal} />
      <More {...members} />
      {admin && <Invite teamUid={teamUid} invited={members.refresh} />}
    </section>
  );
}

interface ApiKey {
  key_id: string;
  label: string;
  last4: string;
  created_at: string;
  expires_at?: string | null;
}

function Keys() {
  const keys = useApi<{ api_keys: ApiKey[] }>('/me/api-keys');
  const [label, setLabel] = useState('');
  const [created, create] = useAction(
    () => api<ApiKey & { api_key: string }>('/me/api-keys', { method: 'POST', body: label ? { label } : {} }),
    (k) => `Key created. It is shown this once: ${k.api_key}`,
  );
  const [revoked, revoke] = useAction(
    (k: ApiKey) => api(`/me/api-keys/${k.key_id}`, { method: 'DELETE' }),
    () => 'Key revoked: it opens nothing from now on, on every server of this store.',
  );
  return (
    <section aria-labelledby="keys">
      <h2 id="keys">My API keys</h2>
      <Async state={keys} what="Loading keys">
        {({ api_keys }) =>
          api_keys.length === 0 ? (
            <Empty>No keys listed.</Empty>
          ) : (
            <ul class="cards">
              {api_keys.map((k) => (
                <li key={k.key_id} class="card">
                  <strong>{k.label || 'Unlabelled key'}</strong> …{k.last4} created <Time iso={k.created_at} />{' '}
                  <button
                    type="button"
                    class="danger"
                    onClick={async () => (await revoke(k)) !== undefined && keys.reload()}
                  >
                    Revoke {k.label || `key …${k.last4}`}
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Async>
      <ActionResult state={revoked} />
      <form class="card" onSubmit={async (e) => (e.preventDefault(), (await create()) && keys.reload())}>
        <label for="key-label">Label of a new key</label>
        <input id="key-label" maxLength={200} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        <button type="submit" disabled={created.busy}>
          Create key
        </button>
        <ActionResult state={created} />
      </form>
    </section>
  );
}

export default function Team() {
  const session = useSession();
  const team = session.team;
  return (
    <Page title={team ? `Team ${team.name}` : 'Team'}>
      {team ? (
        <>
          <p>
            Your role: <span class="badge">{team.role}</span>
          </p>
          <Members teamUid={team.uid} admin={isAdmin(session)} />
          <Keys />
          <AccessAudit teamUid={team.uid} />
          <Guardrails teamUid={team.uid} admin={isAdmin(session)} />
        </>
      ) : (
        <Empty>You belong to no team: ask an admin for an invitation.</Empty>
      )}
    </Page>
  );
}
