/** Where each reactor stands, for `/readyz` and the metrics (issue #36 reads `rt.reactors()`). */
import type { Clock } from '../clock.js';
import { type EventStore, type Position, START } from '../eventstore/port.js';
import type { DocumentStore } from '../readstore/port.js';
import { reactorCheckpoint } from './reactor.js';
import type { ReactorProgress } from './reactor-run.js';

export interface ReactorStatus {
  name: string;
  /** This process runs it (holds its lease); otherwise another process does, or none yet. */
  running_here: boolean;
  /** This process is passing the stored log with it (it took the reactor and has not reached the head it found). */
  catching_up: boolean;
  /** Events up to here are done (this process's progress, else the stored checkpoint). */
  position: Position;
  /** Events between it and the head (on EventStoreDB, the distance of their commit positions). */
  behind_events: number;
  /** How long ago the oldest event it has not passed happened; 0 when it is at the head. */
  behind_seconds: number;
  /** Events set aside for it (see reactor-run). */
  set_aside: number;
}

async function secondsBehind(events: EventStore, position: Position, clock: Clock): Promise<number> {
  const [next] = await events.readAll(position, 1);
  if (!next) return 0;
  return Math.max(0, (clock.now().getTime() - Date.parse(next.metadata.occurred_at)) / 1000);
}

export async function reactorStatus(
  events: EventStore,
  docs: DocumentStore,
  progress: ReadonlyMap<string, ReactorProgress>,
  clock: Clock,
): Promise<ReactorStatus[]> {
  const head = await events.headPosition();
  const counts = await docs.countSetAside();
  const statuses: ReactorStatus[] = [];
  for (const [name, p] of progress) {
    const checkpoint = reactorCheckpoint({ name });
    const here = p.phase !== 'waiting';
    const position = here ? p.position : ((await docs.readCheckpoint(checkpoint)) ?? START);
    const from = position.commit < 0n ? 0n : position.commit; // START is before the first event
    const behind = head.commit > from ? Number(head.commit - from) : 0;
    statuses.push({
      name,
      running_here: here,
      catching_up: p.phase === 'catching-up',
      position,
      behind_events: behind,
      behind_seconds: behind ? await secondsBehind(events, position, clock) : 0,
      set_aside: counts.get(checkpoint) ?? 0,
    });
  }
  return statuses;
}
