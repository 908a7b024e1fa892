/**
 * The attempts of one scorer on one run (`scoring-<scorer>:<run>`): when one may start, which
 * judgement counts, and when an attempt fails. Everything on one run meets in this stream, so an
 * automatic and a manual attempt racing on it are ordered here and leave one live score: the
 * judgement of the newest attempt that scored.
 */
import type { Decider } from '../../src/kernel/decider.js';
import { Conflict } from '../../src/kernel/errors.js';
import type { Classification, JudgedRun, ScoringEvent, Trigger } from './events.js';

/** An automatic attempt waits this long after the last attempt on the same run (manual ones do not). */
export const COOL_DOWN_MS = 24 * 60 * 60 * 1000;
/** Attempts kept in the state; older ones are closed and no report can concern them. */
const KEPT_ATTEMPTS = 20;

type Started = Extract<ScoringEvent, { type: 'ScoringAttemptStarted' }>['data'];

export type ScoringCommand =
  | { type: 'StartAttempt'; data: Omit<Started, 'attempted_at'> }
  | {
      type: 'RecordJudgement';
      data: { attempt_id: string; judge_run_id: string; classification: string; reason_sealed: string | null };
    }
  | { type: 'FailAttempt'; data: { attempt_id: string; error: string } }
  | {
      type: 'EndJudgeRun';
      data: {
        /** The run event that ended it: the same end reported twice (a replay) records nothing. */
        end_id: string;
        attempt_id: string;
        judge_run_id: string;
        state: string;
        run_time_ms: number;
      };
    };

interface Attempt {
  attempt_id: string;
  judge_run_id: string;
  /** The order attempts started in: the newest that scored is live. */
  seq: number;
  attempted_at: string;
  trigger: Trigger;
  status: 'in_flight' | 'scored' | 'failed';
  classifications: Classification[];
  /** The run events that ended its judge run (a resumed judge run ends again). */
  ends: string[];
}

export type ScoringState =
  | { status: 'none' }
  | {
      status: 'live';
      scorer_uid: string;
      run: JudgedRun;
      started: number;
      attempts: Attempt[];
      live: { attempt_id: string; seq: number; score: number; scored_at: string } | null;
    };

const withAttempt = (
  state: Extract<ScoringState, { status: 'live' }>,
  id: string,
  change: (a: Attempt) => Attempt,
): ScoringState => ({ ...state, attempts: state.attempts.map((a) => (a.attempt_id === id ? change(a) : a)) });

export const scoringDecider: Decider<ScoringCommand, ScoringEvent, ScoringState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    if (event.type === 'ScoringAttemptStarted') {
      const { attempt_id, judge_run_id, attempted_at, trigger, classifications, scorer_uid, scorer_version, ...run } =
        event.data;
      void scorer_version;
      const base = state.status === 'live' ? state : { started: 0, attempts: [], live: null };
      const attempt: Attempt = {
        attempt_id,
        judge_run_id,
        seq: base.started + 1,
        attempted_at,
        trigger,
        status: 'in_flight',
        classifications,
        ends: [],
      };
      // Closed attempts go first when the list is full; one in flight is kept however old.
      let attempts = [...base.attempts, attempt];
      while (attempts.length > KEPT_ATTEMPTS) {
        const closed = Math.max(
          attempts.findIndex((a) => a.status !== 'in_flight' && a.ends.length > 0),
          attempts.findIndex((a) => a.status !== 'in_flight'),
          0,
        );
        attempts = attempts.filter((_, i) => i !== closed);
      }
      return { status: 'live', scorer_uid, run, started: base.started + 1, attempts, live: base.live };
    }
    if (state.status !== 'live') return state;
    switch (event.type) {
      case 'ScoringJudgementRecorded': {
        const { attempt_id, live, score, scored_at } = event.data;
        const next = withAttempt(state, attempt_id, (a) => ({ ...a, status: 'scored' }));
        const seq = state.attempts.find((a) => a.attempt_id === attempt_id)?.seq ?? state.started;
        return live && next.status === 'live' ? { ...next, live: { attempt_id, seq, score, scored_at } } : next;
      }
      case 'ScoringAttemptFailed':
        return withAttempt(state, event.data.attempt_id, (a) => ({ ...a, status: 'failed' }));
      case 'ScoringJudgeRunEnded':
        return withAttempt(state, event.data.attempt_id, (a) => ({ ...a, ends: [...a.ends, event.data.end_id] }));
    }
  },

  decide: (command, state, context) => {
    if (command.type === 'StartAttempt') {
      const d = command.data;
      if (state.status === 'live') {
        // A replayed or repeated start (a reactor seeing its event again) starts nothing new.
        if (state.attempts.some((a) => a.attempt_id === d.attempt_id)) return [];
        if (d.trigger === 'automatic') {
          if (state.attempts.some((a) => a.status === 'in_flight')) return [];
          const newest = state.attempts.at(-1);
          if (newest && Date.parse(context.now) - Date.parse(newest.attempted_at) < COOL_DOWN_MS) return [];
        }
      }
      return [{ type: 'ScoringAttemptStarted', data: { ...d, attempted_at: context.now } }];
    }
    if (state.status !== 'live') {
      if (command.type === 'RecordJudgement') throw new Conflict('no such scoring attempt', 'attempt_closed');
      return [];
    }
    const attempt = state.attempts.find((a) => a.attempt_id === command.data.attempt_id);
    const { scorer_uid } = state;
    const { run_id } = state.run;
    switch (command.type) {
      case 'RecordJudgement': {
        const { attempt_id, judge_run_id, classification, reason_sealed } = command.data;
        if (!attempt || attempt.judge_run_id !== judge_run_id || attempt.status !== 'in_flight')
          throw new Conflict(`scoring attempt ${attempt_id} is not waiting for a judgement`, 'attempt_closed');
        const chosen = attempt.classifications.find((c) => c.value === classification);
        if (!chosen) {
          const allowed = attempt.classifications.map((c) => c.value).join(', ');
          const error = `the judge answered a classification that is not allowed (allowed: ${allowed})`;
          return [{ type: 'ScoringAttemptFailed', data: { attempt_id, scorer_uid, run_id, error } }];
        }
        const live = state.live === null || attempt.seq > state.live.seq;
        const replaces =
          live && state.live
            ? { attempt_id: state.live.attempt_id, score: state.live.score, scored_at: state.live.scored_at }
            : null;
        return [
          {
            type: 'ScoringJudgementRecorded',
            data: {
              attempt_id,
              scorer_uid,
              run_id,
              factory_uid: state.run.factory_uid,
              agent_uid: state.run.agent_uid,
              judge_run_id,
              classification: chosen.value,
              score: chosen.score,
              reason_sealed,
              scored_at: context.now,
              live,
              replaces,
            },
          },
        ];
      }
      case 'FailAttempt':
        return attempt?.status === 'in_flight'
          ? [{ type: 'ScoringAttemptFailed', data: { scorer_uid, run_id, ...command.data } }]
          : [];
      case 'EndJudgeRun': {
        const { end_id, attempt_id, judge_run_id, state: runState, run_time_ms } = command.data;
        if (!attempt || attempt.judge_run_id !== judge_run_id || attempt.ends.includes(end_id)) return [];
        const events: ScoringEvent[] = [
          {
            type: 'ScoringJudgeRunEnded',
            data: {
              end_id,
              attempt_id,
              scorer_uid,
              run_id,
              judge_run_id,
              state: runState,
              run_time_ms,
              first: attempt.ends.length === 0,
            },
          },
        ];
        if (attempt.status === 'in_flight') {
          const error =
            runState === 'SUCCEEDED'
              ? 'the judge run ended without reporting a judgement'
              : `the judge run ended ${runState} without a judgement`;
          events.push({ type: 'ScoringAttemptFailed', data: { attempt_id, scorer_uid, run_id, error } });
        }
        return events;
      }
    }
  },
};
