/**
 * The time of record: when commands happen, when schedules are due, what "now" an answer is
 * reckoned at. One clock for the whole server, injected, so tests move it instead of sleeping.
 * Durations a process waits out (long polls, heartbeats, rate windows) use its own timers.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until moved: for tests. */
export function manualClock(start: Date | string): Clock & { set(to: Date | string): void; advance(ms: number): void } {
  let current = new Date(start);
  return {
    now: () => new Date(current),
    set: (to) => {
      current = new Date(to);
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms);
    },
  };
}
