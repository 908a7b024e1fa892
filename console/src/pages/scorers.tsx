/** Scorers: a factory's scorers with their pass rates, and one scorer's pass rate over time. */
import { useApi } from '../hooks';
import { ChartView } from '../ui/chart';
import { FactoryPicker, Page, useQuery } from '../ui/page';
import { Async, Empty } from '../ui/status';

interface Scorer {
  uid: string;
  name: string;
  description?: string;
  threshold: number;
  result_count?: number;
  pass_rate_summary?: { pass_count: number; fail_count: number; pass_rate: number | null };
}

interface ScorerMetrics {
  pass_rate: number | null;
  score_count: number;
  period_list: string[];
  series: { pass_rate: Array<number | null>; score_count: number[] };
}

const percent = (r: number | null | undefined) => (r === null || r === undefined ? '—' : `${Math.round(r * 100)}%`);

function PassRates({ factoryUid, scorer }: { factoryUid: string; scorer: Scorer }) {
  const metrics = useApi<ScorerMetrics>(`/factory/${factoryUid}/scorers/${scorer.uid}/metrics`, {
    group_by_period: 'day',
  });
  return (
    <Async state={metrics} what="Loading pass rates">
      {(m) =>
        m.score_count === 0 ? (
          <Empty>No scores in the last 30 days: {scorer.name} scores runs as they finish.</Empty>
        ) : (
          <ChartView
            title={`Pass rate of ${scorer.name} by day (${percent(m.pass_rate)} over ${m.score_count} scores)`}
            kind="line"
            labels={m.period_list}
            file={`pass-rate-${scorer.name}.csv`}
            series={[{ label: 'pass rate', values: m.series.pass_rate.map((r) => r ?? 0) }]}
          />
        )
      }
    </Async>
  );
}

function FactoryScorers({ factoryUid }: { factoryUid: string }) {
  const [query] = useQuery();
  const scorers = useApi<{ scorers: Scorer[] }>(`/factory/${factoryUid}/scorers`);
  return (
    <Async state={scorers} what="Loading scorers">
      {({ scorers: list }) => {
        if (list.length === 0)
          return (
            <Empty>
              No scorers: add one with <code>POST /api/v1/factory/{'{uid}'}/scorers</code> to judge the factory's runs.
            </Empty>
          );
        const chosen = list.find((s) => s.uid === query.scorer) ?? list[0]!;
        return (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Scorer</th>
                  <th scope="col">Threshold</th>
                  <th scope="col">Results</th>
                  <th scope="col">Pass rate</th>
                </tr>
              </thead>
              <tbody>
                {list.map((s) => (
                  <tr key={s.uid}>
                    <td>
                      <a
                        href={`?factory=${factoryUid}&scorer=${s.uid}`}
                        aria-current={s === chosen ? 'true' : undefined}
                      >
                        {s.name}
                      </a>
                    </td>
                    <td>{s.threshold}</td>
                    <td>{s.result_count ?? 0}</td>
                    <td>{percent(s.pass_rate_summary?.pass_rate)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <PassRates key={chosen.uid} factoryUid={factoryUid} scorer={chosen} />
          </>
        );
      }}
    </Async>
  );
}

export default function Scorers() {
  return (
    <Page title="Scorers">
      <FactoryPicker>{(f) => <FactoryScorers key={f.uid} factoryUid={f.uid} />}</FactoryPicker>
    </Page>
  );
}
