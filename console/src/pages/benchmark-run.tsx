/** A benchmark run: its results per configuration, and each comparison's significance in plain words. */
import { useRoute } from 'preact-iso';
import { useApi } from '../hooks';
import { usd } from '../ui/format';
import { Page } from '../ui/page';
import { Async, Empty } from '../ui/status';

interface Configuration {
  uid: string;
  display_name: string;
  role: string;
  model?: string;
  scoring: { pass_count: number; fail_count: number; unscored_count: number; pass_rate: number | null };
  metrics: { trial_count: number; cost_usd: number; avg_cost_usd_per_trial: number | null };
}

interface Comparison {
  baseline_uid: string;
  candidate_uid: string;
  baseline: { pass_rate: number | null; trial_count: number };
  candidate: { pass_rate: number | null; trial_count: number };
  p_value: number | null;
  alpha: number;
  verdict: 'candidate_better' | 'baseline_better' | 'no_significant_difference' | 'insufficient_data';
}

interface Results {
  run_state: string;
  provisional: boolean;
  suite_name: string;
  incomplete_reason?: string | null;
  configurations: Configuration[];
  comparisons: Comparison[];
}

const percent = (r: number | null) => (r === null ? 'no scores' : `${Math.round(r * 100)}%`);

/** A comparison's verdict as a sentence a person reads. */
function verdictInWords(c: Comparison, name: (uid: string) => string): string {
  const p = c.p_value === null ? '' : ` (p = ${c.p_value.toPrecision(2)}, threshold ${c.alpha})`;
  const [b, k] = [name(c.baseline_uid), name(c.candidate_uid)];
  switch (c.verdict) {
    case 'candidate_better':
      return `${k} passes significantly more often than ${b}: ${percent(c.candidate.pass_rate)} against ${percent(c.baseline.pass_rate)}${p}.`;
    case 'baseline_better':
      return `${k} passes significantly less often than ${b}: ${percent(c.candidate.pass_rate)} against ${percent(c.baseline.pass_rate)}${p}.`;
    case 'no_significant_difference':
      return `No significant difference between ${k} and ${b}: ${percent(c.candidate.pass_rate)} against ${percent(c.baseline.pass_rate)}${p}; the gap may be chance.`;
    default:
      return `Not enough scored trials yet to compare ${k} with ${b}.`;
  }
}

function ResultsView({ r }: { r: Results }) {
  const name = (uid: string) => r.configurations.find((c) => c.uid === uid)?.display_name ?? uid;
  return (
    <>
      <p>
        State: <span class="badge">{r.run_state}</span>
        {r.provisional && ' — provisional: trials or scores are still coming in.'}
        {r.incomplete_reason && ` ${r.incomplete_reason}`}
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Configuration</th>
            <th scope="col">Role</th>
            <th scope="col">Pass rate</th>
            <th scope="col">Passed / failed / unscored</th>
            <th scope="col">Trials</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {r.configurations.map((c) => (
            <tr key={c.uid}>
              <td>{c.display_name}</td>
              <td>{c.role}</td>
              <td>{percent(c.scoring.pass_rate)}</td>
              <td>
                {c.scoring.pass_count} / {c.scoring.fail_count} / {c.scoring.unscored_count}
              </td>
              <td>{c.metrics.trial_count}</td>
              <td>{usd(c.metrics.cost_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Verdict</h2>
      {r.comparisons.length === 0 ? (
        <Empty>No comparison: a run compares candidates with a baseline configuration.</Empty>
      ) : (
        <ul>
          {r.comparisons.map((c) => (
            <li key={c.candidate_uid}>{verdictInWords(c, name)}</li>
          ))}
        </ul>
      )}
    </>
  );
}

export default function BenchmarkRun() {
  const { params } = useRoute();
  const results = useApi<Results>(`/factory/${params.factoryUid}/benchmarks/runs/${params.runUid}/results`, {}, [
    'benchmark',
  ]);
  return (
    <Page title={results.data ? `Benchmark: ${results.data.suite_name}` : 'Benchmark run'}>
      <p>
        <a href={`/benchmarks?factory=${params.factoryUid}`}>Back to benchmarks</a>
      </p>
      <Async state={results} what="Loading results">
        {(r) => <ResultsView r={r} />}
      </Async>
    </Page>
  );
}
