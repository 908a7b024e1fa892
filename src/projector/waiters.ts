/**
 * Commands waiting for the projector to pass their events (read your writes), and the events read
 * models set aside lately: a command one of whose own events was set aside is answered at once
 * with ReadModelFailed, as waiting longer would not show it.
 */
import { comparePositions, type EventMetadata, type Position } from '../eventstore/port.js';
import type { SetAsideEvent } from '../readstore/port.js';
import { DomainError, ReadModelFailed } from '../kernel/errors.js';

const WAIT_FOR_TIMEOUT_MS = 10_000;
/** Set-aside events kept in memory for waiters: a command waits for its own, recent, events only. */
const RECENT_SET_ASIDE = 1000;

interface Waiter {
  position: Position;
  /** The metadata of the waiting command's own events (one command context makes them alike). */
  origin?: EventMetadata;
  resolve(): void;
  reject(error: Error): void;
}

/** An event set aside, with the read model that set it aside. */
export interface Noted extends SetAsideEvent {
  readModel: string;
}

/** Whether `e` is one of the waiting command's own events: same request, same moment, same actor. */
const concerns = ({ origin, position }: Pick<Waiter, 'origin' | 'position'>, { metadata: m, position: at }: Noted) =>
  origin !== undefined &&
  comparePositions(at, position) <= 0 &&
  m.occurred_at === origin.occurred_at &&
  m.request_id === origin.request_id &&
  m.correlation_id === origin.correlation_id &&
  m.causation_id === origin.causation_id &&
  m.actor.uid === origin.actor.uid;

export class Waiters {
  private waiting: Waiter[] = [];
  private recent: Noted[] = [];

  /** How many commands wait. */
  get pending(): number {
    return this.waiting.length;
  }

  /** The answer to a command whose events the projector has passed already. */
  passed(position: Position, origin?: EventMetadata): Promise<void> {
    const failed = this.failedFor({ position, origin });
    return failed ? Promise.reject(failed) : Promise.resolve();
  }

  /** Resolves once `settle` reaches `position`; rejects when one of `origin`'s events is set aside, or in time. */
  wait(position: Position, origin?: EventMetadata): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new DomainError(
              503,
              'resource_unavailable',
              'Read models lagging',
              'The read models did not catch up in time; the change was saved',
            ),
          ),
        WAIT_FOR_TIMEOUT_MS,
      );
      this.waiting.push({
        position,
        origin,
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
    });
  }

  /** Answers the commands whose positions the projector has now passed. */
  settle(processed: Position): void {
    const reached = this.waiting.filter((w) => comparePositions(processed, w.position) >= 0);
    if (!reached.length) return;
    this.waiting = this.waiting.filter((w) => !reached.includes(w));
    for (const w of reached) {
      const failed = this.failedFor(w);
      if (failed) w.reject(failed);
      else w.resolve();
    }
  }

  /** Keeps a set-aside event for the commands waiting on it; those waiting are answered now. */
  remember(noted: Noted): void {
    this.recent.push(noted);
    if (this.recent.length > RECENT_SET_ASIDE) this.recent = this.recent.slice(-RECENT_SET_ASIDE);
    const hit = this.waiting.filter((w) => concerns(w, noted));
    if (hit.length) {
      this.waiting = this.waiting.filter((w) => !hit.includes(w));
      for (const w of hit) w.reject(this.failedFor(w)!);
    }
  }

  /** The events read model `name` set aside lately, as kept here. */
  setAsideBy(name: string): Noted[] {
    return this.recent.filter((e) => e.readModel === name);
  }

  private failedFor(w: Pick<Waiter, 'origin' | 'position'>): ReadModelFailed | null {
    const names = new Set(this.recent.filter((e) => concerns(w, e)).map((e) => e.readModel));
    return names.size ? new ReadModelFailed([...names]) : null;
  }
}
