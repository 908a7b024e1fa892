/**
 * What a benchmark run tells a team's event stream: its progress (launched, started, each trial
 * ending, scoring, finished, cancelled), each time as the run resource `GET …/runs/{run_uid}`
 * answers. Readable as its factory is (`canReadFactory`).
 */
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import { benchmarkRunsProjection } from '../../projections/benchmark/benchmark-runs.js';
import { canReadFactory } from '../factory/events.js';
import { runResource, toRunResource } from './run-resource.js';

async function mapProgress(rt: Runtime, event: RecordedEvent): Promise<StreamItem | null> {
  const uid = (event.data as { uid: string }).uid;
  const run = await rt.readModel(benchmarkRunsProjection).get(uid);
  if (!run) return null;
  return {
    type: 'benchmark.run_changed',
    data: toRunResource(run, event.metadata.occurred_at),
    team_uid: run.team_uid,
    factory_uid: run.factory_uid,
    run: null,
    readable: (viewer) => canReadFactory(run.team_uid, viewer.principal, viewer.team),
  };
}

export const benchmarkStreamEvents: StreamEventSource = {
  from: [
    'BenchmarkRunLaunched',
    'BenchmarkRunStarted',
    'TrialSucceeded',
    'TrialFailed',
    'TrialCancelled',
    'BenchmarkRunScoring',
    'BenchmarkRunFinished',
    'BenchmarkRunCancelled',
  ],
  types: {
    'benchmark.run_changed': {
      feeds: ['team'],
      description: 'A benchmark run moved on (a state, a trial ended): the run as GET answers it',
      schema: runResource,
    },
  },
  map: mapProgress,
};
