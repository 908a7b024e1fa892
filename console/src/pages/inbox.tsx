/** Inbox: mine or the team's, read or unread, each item linking to its task or run. */
import { api } from '../api';
import { useAction, usePaged } from '../hooks';
import { Time } from '../ui/format';
import { More, Page, useQuery } from '../ui/page';
import { ActionResult, Empty, Loading, ProblemView } from '../ui/status';

interface Notification {
  notification_uid: string;
  factory_uid: string;
  factory_task_uid?: string | null;
  kind: string;
  title: string;
  description?: string;
  created_at: string;
  is_read: boolean;
  run_id?: string | null;
}

function Item({ n, changed }: { n: Notification; changed: () => void }) {
  const [state, mark] = useAction(
    () =>
      api(`/factory-inbox/notifications/${n.is_read ? 'unread' : 'read'}`, {
        method: 'POST',
        body: { notification_uids: [n.notification_uid] },
      }),
    () => (n.is_read ? 'Marked unread.' : 'Marked read.'),
  );
  return (
    <li class={`card ${n.is_read ? 'read' : 'unread'}`}>
      <span class="badge">{n.kind}</span> <strong>{n.title}</strong> <Time iso={n.created_at} />
      {n.description && <p>{n.description}</p>}
      <p>
        {n.factory_task_uid && <a href={`/factories/${n.factory_uid}/tasks/${n.factory_task_uid}`}>Open the task</a>}{' '}
        {n.run_id && <a href={`/runs/${n.run_id}`}>Open the run</a>}{' '}
        <button
          type="button"
          class="link"
          disabled={state.busy}
          onClick={async () => (await mark()) !== undefined && changed()}
        >
          {n.is_read ? 'Mark unread' : 'Mark read'}
        </button>
      </p>
      <ActionResult state={state} />
    </li>
  );
}

export default function Inbox() {
  const [query, setQuery] = useQuery();
  const scope = query.scope === 'team' ? 'team' : 'mine';
  const inbox = usePaged<Notification>(
    '/factory-inbox',
    'notifications',
    (n) => n.notification_uid,
    { scope, limit: 50 },
    ['inbox'],
  );
  const shown = inbox.items.filter((n) => !query.show || (query.show === 'unread') !== n.is_read);
  return (
    <Page title="Inbox">
      <div class="filters">
        <label>
          Whose
          <select value={scope} onChange={(e) => setQuery({ scope: e.currentTarget.value })}>
            <option value="mine">Mine</option>
            <option value="team">Team</option>
          </select>
        </label>
        <label>
          Show
          <select value={query.show ?? ''} onChange={(e) => setQuery({ show: e.currentTarget.value })}>
            <option value="">Read and unread</option>
            <option value="unread">Unread</option>
            <option value="read">Read</option>
          </select>
        </label>
      </div>
      {inbox.problem && <ProblemView problem={inbox.problem} />}
      {inbox.loading && inbox.items.length === 0 && <Loading what="Loading the inbox" />}
      {!inbox.loading && !inbox.problem && shown.length === 0 && (
        <Empty>Nothing here: questions, reviews and failures of the factories' tasks arrive in the inbox.</Empty>
      )}
      <ul class="cards">
        {shown.map((n) => (
          <Item key={n.notification_uid} n={n} changed={inbox.refresh} />
        ))}
      </ul>
      <More {...inbox} />
    </Page>
  );
}
