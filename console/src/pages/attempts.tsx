/** An outbound webhook's deliveries and each one's attempts, filtered by status. */
import { useRoute } from 'preact-iso';
import { usePaged } from '../hooks';
import { useSession } from '../session';
import { Json, Time } from '../ui/format';
import { More, Page, useQuery } from '../ui/page';
import { Empty, Loading, ProblemView } from '../ui/status';

const STATUSES = ['pending', 'delivered', 'failed', 'abandoned'] as const;

interface Attempt {
  attempt: number;
  at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

interface OutboundDelivery {
  delivery_id: string;
  event_type: string;
  status: string;
  attempts: Attempt[];
  created_at: string;
  reason?: string | null;
  payload?: unknown;
}

export default function Attempts() {
  const { params } = useRoute();
  const [query, setQuery] = useQuery();
  const { team } = useSession();
  const deliveries = usePaged<OutboundDelivery>(
    `/teams/${team?.uid}/outbound-webhooks/${params.webhookUid}/deliveries`,
    'deliveries',
    (d) => d.delivery_id,
    { limit: 50, status: query.status },
  );
  return (
    <Page title="Outbound deliveries">
      <p>
        <a href="/webhooks">Back to webhooks</a>
      </p>
      <label class="picker">
        Status{' '}
        <select value={query.status ?? ''} onChange={(e) => setQuery({ status: e.currentTarget.value })}>
          <option value="">Any</option>
          {STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      {deliveries.problem && <ProblemView problem={deliveries.problem} />}
      {deliveries.loading && deliveries.items.length === 0 && <Loading what="Loading deliveries" />}
      {!deliveries.loading && !deliveries.problem && deliveries.items.length === 0 && (
        <Empty>No deliveries yet: they are made when an event of a subscribed type happens.</Empty>
      )}
      <ul class="cards">
        {deliveries.items.map((d) => (
          <li key={d.delivery_id} class="card">
            <strong>{d.event_type}</strong> <span class="badge">{d.status}</span> <Time iso={d.created_at} />
            {d.reason && <p>{d.reason}</p>}
            <ol>
              {d.attempts.map((a) => (
                <li key={a.attempt}>
                  <Time iso={a.at} /> {a.status_code ? `HTTP ${a.status_code}` : (a.error ?? 'no answer')} in{' '}
                  {a.latency_ms} ms
                </li>
              ))}
            </ol>
            <details>
              <summary>Payload</summary>
              <Json value={d.payload} label={`Payload of ${d.delivery_id}`} />
            </details>
          </li>
        ))}
      </ul>
      <More {...deliveries} />
    </Page>
  );
}
