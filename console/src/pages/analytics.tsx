/** Analytics: a factory's runs, pull requests and costs over a chosen range and period, as charts with CSVs. */
import { useApi } from '../hooks';
import { ChartView } from '../ui/chart';
import { downloadCsv, type Table } from '../ui/csv';
import { usd } from '../ui/format';
import { FactoryPicker, Page, useQuery } from '../ui/page';
import { Async, Empty } from '../ui/status';

type Dollars = { inference: number; compute: number; platform: number; total: number };

interface Metrics {
  run_count: number;
  pr_count: number;
  merged_pr_count: number;
  period_list: string[];
  series: { run_count: number[]; pr_count: number[]; merged_pr_count: number[] };
}

interface Breakdown {
  total: Dollars;
  period_list: string[];
  series: { total: Dollars[] };
}

interface BySize {
  sized_pr_count: number;
  /** A bucket without pull requests has no mean nor median. */
  buckets: Array<{ size: string; pr_count: number; mean: Dollars | null; median: number | null }>;
}

interface TopPr {
  url: string;
  title: string;
  repo_full_name: string;
  pr_number: number;
  state: string;
  dollars: Dollars;
}

const DAY = 86_400_000;
const dateOnly = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The range asked for, as the API takes it (whole UTC days, end exclusive). */
function useRange() {
  const [query, setQuery] = useQuery();
  const end = query.end ?? dateOnly(Date.now() + DAY);
  const start = query.start ?? dateOnly(Date.parse(end) - 30 * DAY);
  const period = query.period ?? 'day';
  const params = { start_date: `${start}T00:00:00Z`, end_date: `${end}T00:00:00Z`, group_by_period: period };
  return { start, end, period, params, setQuery };
}

function RangeForm() {
  const { start, end, period, setQuery } = useRange();
  return (
    <div class="filters">
      <label>
        From
        <input type="date" value={start} onChange={(e) => setQuery({ start: e.currentTarget.value })} />
      </label>
      <label>
        Until (exclusive)
        <input type="date" value={end} onChange={(e) => setQuery({ end: e.currentTarget.value })} />
      </label>
      <label>
        Period
        <select value={period} onChange={(e) => setQuery({ period: e.currentTarget.value })}>
          <option value="day">Day</option>
          <option value="week">Week</option>
          <option value="month">Month</option>
        </select>
      </label>
    </div>
  );
}

function TopList({ prs }: { prs: TopPr[] }) {
  const table: Table = {
    columns: ['pull request', 'title', 'state', 'total usd'],
    rows: prs.map((p) => [`${p.repo_full_name}#${p.pr_number}`, p.title, p.state, p.dollars.total]),
  };
  return (
    <figure class="chart">
      <figcaption>Most expensive pull requests</figcaption>
      {prs.length === 0 ? (
        <Empty>No pull requests in this range.</Empty>
      ) : (
        <ol>
          {prs.map((p) => (
            <li key={p.url}>
              <a href={p.url} rel="noreferrer noopener" target="_blank">
                {p.repo_full_name}#{p.pr_number}
              </a>{' '}
              {p.title} — {usd(p.dollars.total)}
            </li>
          ))}
        </ol>
      )}
      <button type="button" onClick={() => downloadCsv('top-pull-requests.csv', table)}>
        Download CSV<span class="visually-hidden">: Most expensive pull requests</span>
      </button>
    </figure>
  );
}

function Charts({ factoryUid }: { factoryUid: string }) {
  const { params } = useRange();
  const base = `/factory/${factoryUid}`;
  const metrics = useApi<Metrics>(`${base}/metrics`, params);
  const costs = useApi<Breakdown>(`${base}/costs/breakdown`, { ...params, group_by: 'source' });
  const bySize = useApi<BySize>(`${base}/costs/per-pr/by-size`, params);
  const top = useApi<{ data: TopPr[] }>(`${base}/costs/per-pr/top`, {
    start_date: params.start_date,
    end_date: params.end_date,
    limit: 10,
  });
  return (
    <div class="charts">
      <Async state={metrics} what="Loading metrics">
        {(m) => (
          <ChartView
            title={`Runs and pull requests (${m.run_count} runs, ${m.pr_count} pull requests, ${m.merged_pr_count} merged)`}
            kind="line"
            labels={m.period_list}
            file="runs-and-pull-requests.csv"
            series={[
              { label: 'runs', values: m.series.run_count },
              { label: 'pull requests', values: m.series.pr_count },
              { label: 'merged', values: m.series.merged_pr_count },
            ]}
          />
        )}
      </Async>
      <Async state={costs} what="Loading costs">
        {(c) => (
          <ChartView
            title={`Cost by component (${usd(c.total.total)} in all)`}
            kind="bar"
            stacked
            dollars
            labels={c.period_list}
            file="cost-by-component.csv"
            series={(['inference', 'compute', 'platform'] as const).map((k) => ({
              label: `${k} usd`,
              values: c.series.total.map((d) => d[k]),
            }))}
          />
        )}
      </Async>
      <Async state={bySize} what="Loading cost by size">
        {(s) =>
          s.sized_pr_count === 0 ? (
            <figure class="chart">
              <figcaption>Mean cost per pull request by size</figcaption>
              <Empty>No pull requests with known sizes in this range.</Empty>
            </figure>
          ) : (
            <ChartView
              title="Mean cost per pull request by size"
              kind="bar"
              dollars
              labels={s.buckets.map((b) => b.size)}
              file="cost-by-pr-size.csv"
              series={[
                { label: 'mean usd', values: s.buckets.map((b) => b.mean?.total ?? 0) },
                { label: 'median usd', values: s.buckets.map((b) => b.median ?? 0) },
              ]}
            />
          )
        }
      </Async>
      <Async state={top} what="Loading the top list">
        {(t) => <TopList prs={t.data} />}
      </Async>
    </div>
  );
}

export default function Analytics() {
  return (
    <Page title="Analytics">
      <RangeForm />
      <FactoryPicker>{(f) => <Charts key={f.uid} factoryUid={f.uid} />}</FactoryPicker>
    </Page>
  );
}
