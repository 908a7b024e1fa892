/**
 * Benchmarks: suites of fixed tasks, and runs that try agent configurations on them as trials
 * (agent runs of source BENCHMARK_TRIAL), judged by the built-in correctness scorer and the
 * selected scorers, costed, and compared (is the candidate's pass rate better than chance?).
 */
import { benchmarkStreamEvents } from './stream-events.js';
import { feature } from '../../src/feature.js';
import { benchmarkRunsProjection } from '../../projections/benchmark/benchmark-runs.js';
import { benchmarkSuitesProjection } from '../../projections/benchmark/benchmark-suites.js';
import benchmarkResultQueries from '../../queries/benchmark/benchmark-results.js';
import benchmarkRunQueries from '../../queries/benchmark/benchmark-runs.js';
import benchmarkTrialQueries from '../../queries/benchmark/benchmark-trials.js';
import benchmarkQueries from '../../queries/benchmark/benchmarks.js';
import { benchmarkTrialsReactor } from './benchmark-trials-reactor.js';
import runRoutes from './run-routes.js';
import suiteRoutes from './suite-routes.js';
import taskRoutes from './task-routes.js';

export const benchmarkFeature = feature({
  name: 'benchmark',
  streamEvents: [benchmarkStreamEvents],
  routes: [
    suiteRoutes,
    taskRoutes,
    runRoutes,
    benchmarkQueries,
    benchmarkRunQueries,
    benchmarkResultQueries,
    benchmarkTrialQueries,
  ],
  projections: [benchmarkSuitesProjection, benchmarkRunsProjection],
  reactors: [benchmarkTrialsReactor],
});
