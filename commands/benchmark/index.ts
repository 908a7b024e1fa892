/**
 * Benchmarks: suites of fixed tasks, and runs that try agent configurations on them as trials
 * (agent runs of source BENCHMARK_TRIAL), judged by the built-in correctness scorer and the
 * selected scorers, costed, and compared (is the candidate's pass rate better than chance?).
 */
import { feature } from '../../src/feature.js';
import { benchmarkRunsProjection } from '../../projections/benchmark/benchmark-runs.js';
import { benchmarkSuitesProjection } from '../../projections/benchmark/benchmark-suites.js';
import benchmarkRunQueries from '../../queries/benchmark/benchmark-runs.js';
import benchmarkQueries from '../../queries/benchmark/benchmarks.js';
import { benchmarkTrialsReactor } from './benchmark-trials-reactor.js';
import benchmarkRoutes from './routes.js';

export const benchmarkFeature = feature({
  name: 'benchmark',
  routes: [benchmarkRoutes, benchmarkQueries, benchmarkRunQueries],
  projections: [benchmarkSuitesProjection, benchmarkRunsProjection],
  reactors: [benchmarkTrialsReactor],
});
