/** A webhook's delivery log: newest first, a status filter, and the payload of accepted deliveries. */
import { useRoute } from 'preact-iso';
import { useApi, usePaged } from '../hooks';
import { Json, Time } from '../ui/format';
import { More, Page, useQuery } from '../ui/page';
import { Empty, Loading, ProblemView } from '../ui/status';

const STATUSES = ['accepted', 'duplicate', 'rejected_auth', 'rejected_invalid_json', 'rejected_too_large'] as const;

interface Delivery {
  delivery_id: string;
  status: string;
  label: string;
  size_bytes: number;
  received_at: string;
  duplicate_of?: string;
  payload?: unknown;
  count?: number;
  refused_runs?: RefusedRun[];
}

/** An automation's run this delivery fired that could not start (a budget with no room, say). */
interface RefusedRun {
  run_id: string;
  automation_name: string;
  replay_id: string | null;
  code: string;
  detail: string;
  refused_at: string;
}

function Refusals({ refused }: { refused: RefusedRun[] }) {
  return (
    <details open>
      <summary>
        {refused.length} automation run{refused.length === 1 ? '' : 's'} refused
      </summary>
      <ul>
        {refused.map((r) => (
          <li key={r.run_id}>
            <strong>{r.automation_name}</strong> <code>{r.code}</code>: {r.detail} <Time iso={r.refused_at} />
            {r.replay_id && <span class="muted"> · on replay {r.replay_id}</span>}
          </li>
        ))}
      </ul>
    </details>
  );
}

export default function Deliveries() {
  const { params } = useRoute();
  const [query, setQuery] = useQuery();
  const base = `/factory/${params.factoryUid}/webhooks/${params.webhookUid}`;
  const webhook = useApi<{ name: string }>(base);
  const deliveries = usePaged<Delivery>(`${base}/deliveries`, 'deliveries', (d) => d.delivery_id, { limit: 50 }, [
    'delivery',
  ]);
  // The API has no status filter on this log: the filter applies to the pages loaded so far.
  const shown = deliveries.items.filter((d) => !query.status || d.status === query.status);
  return (
    <Page title={`Deliveries of ${webhook.data?.name ?? 'the webhook'}`}>
      <p>
        <a href={`/webhooks?factory=${params.factoryUid}`}>Back to webhooks</a>
      </p>
      <label class="picker">
        Status{' '}
        <select value={query.status ?? ''} onChange={(e) => setQuery({ status: e.currentTarget.value })}>
          <option value="">Any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      {deliveries.problem && <ProblemView problem={deliveries.problem} />}
      {deliveries.loading && deliveries.items.length === 0 && <Loading what="Loading deliveries" />}
      {!deliveries.loading && !deliveries.problem && shown.length === 0 && (
        <Empty>
          No deliveries{query.status ? ' with this status among those loaded' : ''}: post an event to the webhook's
          ingress URL.
        </Empty>
      )}
      <ul class="cards">
        {shown.map((d) => (
          <li key={d.delivery_id} class="card">
            <strong>{d.label}</strong> <Time iso={d.received_at} /> · {d.size_bytes.toLocaleString()} bytes
            {d.count ? ` · ${d.count} refusals counted` : ''}
            {d.duplicate_of && <span> · repeats {d.duplicate_of}</span>}
            <div class="muted">
              <code>{d.delivery_id}</code>
            </div>
            {d.refused_runs && <Refusals refused={d.refused_runs} />}
            {d.status === 'accepted' && d.payload !== undefined && (
              <details>
                <summary>Payload</summary>
                <Json value={d.payload} label={`Payload of delivery ${d.delivery_id}`} />
              </details>
            )}
          </li>
        ))}
      </ul>
      <More {...deliveries} />
    </Page>
  );
}
