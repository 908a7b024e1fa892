/** The ceiling of every rebuild: the port's readAll loop over the whole log, timed. */
import { type EventStore, type Position, START } from '../../src/eventstore/port.js';
import { timed } from './measure.js';

/** Reads every event in pages of `page`, as src/projector/rebuild.ts does; resolves to the count and the time. */
export const timeReadAll = (events: EventStore, page: number) =>
  timed(async () => {
    let n = 0;
    for (let after: Position = START; ; ) {
      const batch = await events.readAll(after, page);
      if (batch.length === 0) return n;
      n += batch.length;
      after = batch[batch.length - 1]!.position;
    }
  });
