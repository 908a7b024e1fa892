/** Runs: the team's runs, newest first, filtered and searched, a page at a time, kept live. */
import { useState } from 'preact/hooks';
import { usePaged, useApi } from '../hooks';
import { RUN_SOURCES, RUN_STATES, type RunSummary, runCost } from '../runs';
import { useSession } from '../session';
import { State, Time, usd } from '../ui/format';
import { More, Page, useQuery, type FactorySummary } from '../ui/page';
import { Empty, Loading, ProblemView } from '../ui/status';

/** A local date-time input's value as an ISO instant (the API wants RFC 3339). */
const instant = (local: string | undefined) => (local ? new Date(local).toISOString() : undefined);

function Filters() {
  const [query, setQuery] = useQuery();
  const { userUid } = useSession();
  const factories = useApi<{ factories: FactorySummary[] }>('/factory', { limit: 100 });
  const [search, setSearch] = useState(query.q ?? '');
  const select = (name: string, label: string, options: ReadonlyArray<readonly [string, string]>) => (
    <label>
      {label}
      <select value={query[name] ?? ''} onChange={(e) => setQuery({ [name]: e.currentTarget.value })}>
        <option value="">Any</option>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <form
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        setQuery({ q: search.trim() });
      }}
    >
      <label>
        Title
        <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
      </label>
      <button type="submit">Search</button>
      {select(
        'state',
        'State',
        RUN_STATES.map((s) => [s, s]),
      )}
      {select(
        'factory',
        'Factory',
        (factories.data?.factories ?? []).map((f) => [f.uid, f.name]),
      )}
      {select(
        'source',
        'Source',
        RUN_SOURCES.map((s) => [s, s]),
      )}
      {select('creator', 'Created by', [[userUid, 'Me']])}
      <label>
        Created after
        <input
          type="datetime-local"
          value={query.after ?? ''}
          onChange={(e) => setQuery({ after: e.currentTarget.value })}
        />
      </label>
      <label>
        Created before
        <input
          type="datetime-local"
          value={query.before ?? ''}
          onChange={(e) => setQuery({ before: e.currentTarget.value })}
        />
      </label>
    </form>
  );
}

export function RunRows({ runs }: { runs: RunSummary[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Title</th>
          <th scope="col">State</th>
          <th scope="col">Source</th>
          <th scope="col">Created</th>
          <th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((r) => (
          <tr key={r.run_id}>
            <td>
              <a href={`/runs/${r.run_id}`}>{r.title || r.run_id}</a>
            </td>
            <td>
              <State state={r.state} />
            </td>
            <td>{r.source}</td>
            <td>
              <Time iso={r.created_at} />
            </td>
            <td>{usd(runCost(r.request_usage))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export default function Runs() {
  const [query] = useQuery();
  const runs = usePaged<RunSummary>(
    '/agent/runs',
    'runs',
    (r) => r.run_id,
    {
      sort_by: 'created_at',
      sort_order: 'desc',
      limit: 25,
      state: query.state,
      factory_uid: query.factory,
      source: query.source,
      creator: query.creator,
      q: query.q,
      created_after: instant(query.after),
      created_before: instant(query.before),
    },
    ['run'],
  );
  return (
    <Page title="Runs">
      <Filters />
      {runs.problem && <ProblemView problem={runs.problem} />}
      {runs.items.length > 0 ? (
        <RunRows runs={runs.items} />
      ) : runs.loading ? (
        <Loading what="Loading runs" />
      ) : (
        !runs.problem && (
          <Empty>
            No runs match. Start one with <code>POST /api/v1/agent/runs</code>, from a factory's task board, or clear
            the filters.
          </Empty>
        )
      )}
      <More {...runs} />
    </Page>
  );
}
