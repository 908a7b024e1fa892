/**
 * Self-improvement for one scorer and one agent (`selfimprovement-<scorer>:<agent>`): each failure
 * is reviewed by at most one self-improvement run. Two checks racing (two processes, a retry) meet
 * in this stream, and the second finds the failures reviewed and starts nothing.
 */
import type { Decider } from '../../src/kernel/decider.js';
import type { SelfImprovementEvent } from './events.js';

/** Failures one self-improvement run covers at most. */
export const MAX_FAILURES_PER_RUN = 50;
/** An agent's oldest unreviewed failure starts a run once it is this old, however few there are. */
export const OLDEST_FAILURE_MS = 7 * 24 * 60 * 60 * 1000;
/** Reviewed attempts remembered (far more than any check offers again: the read model marks them too). */
const KEPT_REVIEWED = 5000;

type Started = Extract<SelfImprovementEvent, { type: 'SelfImprovementStarted' }>['data'];

export type SelfImprovementCommand =
  | { type: 'StartSelfImprovement'; data: Started }
  | {
      type: 'RefuseSelfImprovementRun';
      data: { scorer_uid: string; agent_uid: string; run_id: string; error: string };
    };

export interface SelfImprovementState {
  reviewed: string[];
  runs: string[];
  refused: string[];
}

export const selfImprovementDecider: Decider<SelfImprovementCommand, SelfImprovementEvent, SelfImprovementState> = {
  initialState: () => ({ reviewed: [], runs: [], refused: [] }),

  evolve: (state, event) => {
    switch (event.type) {
      case 'SelfImprovementStarted':
        return {
          ...state,
          reviewed: [...state.reviewed, ...event.data.failures.map((f) => f.attempt_id)].slice(-KEPT_REVIEWED),
          runs: [...state.runs, event.data.run_id].slice(-100),
        };
      case 'SelfImprovementRunRefused':
        return { ...state, refused: [...state.refused, event.data.run_id].slice(-100) };
    }
  },

  decide: (command, state) => {
    switch (command.type) {
      case 'StartSelfImprovement': {
        const d = command.data;
        if (state.runs.includes(d.run_id)) return [];
        const failures = d.failures.filter((f) => !state.reviewed.includes(f.attempt_id));
        // The reasons were sealed for the failures offered: if another run took some, offer again later.
        if (failures.length !== d.failures.length || failures.length === 0) return [];
        return [{ type: 'SelfImprovementStarted', data: { ...d, failures: failures.slice(0, MAX_FAILURES_PER_RUN) } }];
      }
      case 'RefuseSelfImprovementRun':
        return state.runs.includes(command.data.run_id) && !state.refused.includes(command.data.run_id)
          ? [{ type: 'SelfImprovementRunRefused', data: command.data }]
          : [];
    }
  },
};
