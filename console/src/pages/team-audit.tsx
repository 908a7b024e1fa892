/** A team's access audit: who was added, removed, given or stripped of keys, newest first. */
import { usePaged } from '../hooks';
import { Time } from '../ui/format';
import { More } from '../ui/page';
import { Empty, Loading, ProblemView } from '../ui/status';

interface AuditEntry {
  id: string;
  type: string;
  occurred_at: string;
  actor: { type: string; uid: string };
}

export function AccessAudit({ teamUid }: { teamUid: string }) {
  const audit = usePaged<AuditEntry>(`/teams/${teamUid}/audit`, 'entries', (e) => e.id, { limit: 50 });
  return (
    <section aria-labelledby="access-audit">
      <h2 id="access-audit">Access audit</h2>
      {audit.problem && <ProblemView problem={audit.problem} />}
      {audit.loading && audit.items.length === 0 && <Loading what="Loading the access audit" />}
      {!audit.loading && !audit.problem && audit.items.length === 0 && <Empty>No access changes recorded.</Empty>}
      <ol class="events">
        {audit.items.map((e) => (
          <li key={e.id}>
            <Time iso={e.occurred_at} /> <strong>{e.type}</strong> by {e.actor.type} <code>{e.actor.uid}</code>
          </li>
        ))}
      </ol>
      <More {...audit} />
    </section>
  );
}
