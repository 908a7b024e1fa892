/** Counts and times the appends of an event store (wrapped once, where the runtime opens it). */
import { ConcurrencyError, type EventStore } from '../eventstore/port.js';
import type { Metrics } from './registry.js';

export function measuredAppends(events: EventStore, { appends }: Metrics): EventStore {
  const append: EventStore['append'] = async (stream, batch, expected) => {
    const started = performance.now();
    const record = (outcome: 'ok' | 'conflict' | 'error') => {
      appends.events.inc({ outcome }, batch.length);
      appends.seconds.observe({ outcome }, (performance.now() - started) / 1000);
    };
    try {
      const result = await events.append(stream, batch, expected);
      record('ok');
      return result;
    } catch (error) {
      record(error instanceof ConcurrencyError ? 'conflict' : 'error');
      throw error;
    }
  };
  return Object.assign(Object.create(events) as EventStore, { append });
}
