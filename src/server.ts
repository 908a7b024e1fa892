/**
 * A server of the given features on the configured stores: the runtime, each feature's start,
 * its reactors and services, and the HTTP app (not listening yet, so tests drive it by inject).
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import { type Feature, projectionsOf, streamSourcesOf } from './feature.js';
import { buildApp } from './http/app.js';
import { openRuntime, type Runtime } from './runtime.js';
import { openLiveStreams } from './streams/live-streams.js';

export async function openServer(config: Config, log: Logger, features: readonly Feature[], clock?: Clock) {
  const rt: Runtime = await openRuntime(config, log, projectionsOf(features), clock);
  openLiveStreams(rt, streamSourcesOf(features));
  const started = new Map<string, unknown>();
  for (const f of features) if (f.start) started.set(f.name, await f.start(rt));
  rt.startReactors(features.flatMap((f) => f.reactors ?? []));
  const services = features.flatMap((f) => f.services ?? []).map((start) => start(rt));
  const app = await buildApp(rt, features);
  return {
    rt,
    app,
    /** What each feature's `start` returned, by feature name. */
    started,
    async close(): Promise<void> {
      await app.close();
      for (const s of services) await s.stop();
      await rt.close();
    },
  };
}
