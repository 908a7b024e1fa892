/** Benchmarks: a factory's benchmark runs, a page at a time. */
import { usePaged } from '../hooks';
import { Time, usd } from '../ui/format';
import { FactoryPicker, More, Page } from '../ui/page';
import { Empty, Loading, ProblemView } from '../ui/status';

interface BenchmarkRun {
  uid: string;
  suite_name: string;
  state: string;
  agent_name?: string;
  trial_count: number;
  cost_usd?: number;
  created_at: string;
}

function Runs({ factoryUid }: { factoryUid: string }) {
  const runs = usePaged<BenchmarkRun>(`/factory/${factoryUid}/benchmarks/runs`, 'runs', (r) => r.uid, { limit: 25 }, [
    'benchmark',
  ]);
  return (
    <>
      {runs.problem && <ProblemView problem={runs.problem} />}
      {runs.loading && runs.items.length === 0 && <Loading what="Loading benchmark runs" />}
      {!runs.loading && !runs.problem && runs.items.length === 0 && (
        <Empty>
          No benchmark runs: create a suite and start a run with{' '}
          <code>
            POST /api/v1/factory/{'{uid}'}/benchmarks/{'{suite_uid}'}/runs
          </code>
          .
        </Empty>
      )}
      {runs.items.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Suite</th>
              <th scope="col">State</th>
              <th scope="col">Trials</th>
              <th scope="col">Cost</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {runs.items.map((r) => (
              <tr key={r.uid}>
                <td>
                  <a href={`/benchmarks/${factoryUid}/${r.uid}`}>{r.suite_name}</a>
                </td>
                <td>{r.state}</td>
                <td>{r.trial_count}</td>
                <td>{usd(r.cost_usd)}</td>
                <td>
                  <Time iso={r.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <More {...runs} />
    </>
  );
}

export default function Benchmarks() {
  return (
    <Page title="Benchmarks">
      <FactoryPicker>{(f) => <Runs key={f.uid} factoryUid={f.uid} />}</FactoryPicker>
    </Page>
  );
}
