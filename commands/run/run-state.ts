/** A run's state as the write side knows it now (folded by its decider, kept between reads). */
import type { Runtime } from '../../src/runtime.js';
import { runDecider, type RunView } from './run-decider.js';
import { runStream } from './events.js';

/** The live run, or null for a run that does not exist. */
export async function runState(rt: Runtime, runId: string): Promise<RunView | null> {
  const state = await rt.state(runDecider, runStream(runId));
  return state.status === 'live' ? state : null;
}
