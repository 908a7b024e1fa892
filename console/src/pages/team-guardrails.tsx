/**
 * The Team page's guardrails: the team's budget and limits, a chosen factory's budget and limits,
 * a chosen member's budget, and the runs waiting for approval. The API lists no factory or member
 * budgets, so one is read on demand for the factory or member picked (kept in the URL), never a
 * request per row. Admins are offered the writes; members only read.
 */
import { useApi } from '../hooks';
import { FactoryPicker, useQuery } from '../ui/page';
import { Async, Empty } from '../ui/status';
import { Approvals } from './guardrail-approvals';
import { Budget } from './guardrail-budget';
import { LimitsView } from './guardrail-limits';

interface Member {
  user: { uid: string; email: string; display_name: string };
}

function MemberBudget({ teamUid, admin }: { teamUid: string; admin: boolean }) {
  const [query, setQuery] = useQuery();
  const members = useApi<{ members: Member[] }>(`/teams/${teamUid}/members`, { limit: 100 });
  return (
    <Async state={members} what="Loading members">
      {({ members: list }) => {
        const chosen = list.find((m) => m.user.uid === query.member) ?? list[0];
        if (!chosen) return <Empty>No members.</Empty>;
        return (
          <>
            <label class="picker">
              Member{' '}
              <select value={chosen.user.uid} onChange={(e) => setQuery({ member: e.currentTarget.value })}>
                {list.map((m) => (
                  <option key={m.user.uid} value={m.user.uid}>
                    {m.user.display_name} ({m.user.email})
                  </option>
                ))}
              </select>
            </label>
            <Budget
              key={chosen.user.uid}
              path={`/teams/${teamUid}/members/${chosen.user.uid}/budget`}
              name={`budget of ${chosen.user.email}`}
              admin={admin}
            />
          </>
        );
      }}
    </Async>
  );
}

export function Guardrails({ teamUid, admin }: { teamUid: string; admin: boolean }) {
  return (
    <section aria-labelledby="guardrails">
      <h2 id="guardrails">Budgets, limits and approvals</h2>
      <h3>Team budget</h3>
      <Budget path={`/teams/${teamUid}/budget`} name="team budget" admin={admin} />
      <h3>Team limits</h3>
      <LimitsView path={`/teams/${teamUid}/limits`} name="team limits" admin={admin} />
      <h3>Runs waiting for approval</h3>
      <Approvals admin={admin} />
      <h3>A factory's budget and limits</h3>
      <FactoryPicker>
        {(f) => (
          <div key={f.uid}>
            <Budget path={`/factory/${f.uid}/budget`} name={`budget of ${f.name}`} admin={admin} />
            <LimitsView
              path={`/factory/${f.uid}/limits`}
              name={`limits of ${f.name}`}
              admin={admin}
              inherits="the team's"
            />
          </div>
        )}
      </FactoryPicker>
      <h3>A member's budget</h3>
      <MemberBudget teamUid={teamUid} admin={admin} />
    </section>
  );
}
