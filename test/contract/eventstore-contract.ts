/**
 * The contract every event store adapter must meet. The store may already hold other data
 * (EventStoreDB persists between runs), so each test writes to fresh streams and looks only at
 * its own streams, after the head position taken before it started.
 */
import { v4 as uuid } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConcurrencyError,
  comparePositions,
  type EventMetadata,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type Position,
  type RecordedEvent,
} from '../../src/eventstore/port.js';

/** How long a test waits for an event that should arrive; a bound, not a sleep. */
const WAIT_MS = 5_000;

const newStream = () => `task-${uuid()}`;

const metadata = (over: Partial<EventMetadata> = {}): EventMetadata => ({
  actor: { type: 'user', uid: `user-${uuid()}` },
  team_uid: `team-${uuid()}`,
  correlation_id: uuid(),
  causation_id: null,
  request_id: null,
  occurred_at: new Date().toISOString(),
  ...over,
});

const event = (type: string, data: Record<string, unknown> = {}): EventToAppend => ({
  id: uuid(),
  type,
  data,
  metadata: metadata(),
});

const events = (n: number, type = 'Noted'): EventToAppend[] =>
  Array.from({ length: n }, (_, i) => event(type, { n: i }));

function expectIncreasing(positions: Position[]): void {
  for (let i = 1; i < positions.length; i++) expect(comparePositions(positions[i - 1]!, positions[i]!)).toBeLessThan(0);
}

/** Resolves with the next value, or fails after `ms`: waits on the real event, never a fixed sleep. */
export async function within<T>(promise: Promise<T>, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`nothing arrived within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Pulls batches until `count` events of `streams` arrived (others' events are skipped). */
async function collect(
  iterator: AsyncIterator<RecordedEvent[]>,
  streams: Set<string>,
  count: number,
): Promise<RecordedEvent[]> {
  const got: RecordedEvent[] = [];
  while (got.length < count) {
    const next = await within(iterator.next());
    if (next.done) throw new Error(`subscription ended after ${got.length} of ${count} events`);
    got.push(...next.value.filter((e) => streams.has(e.stream)));
  }
  return got;
}

async function rejection(promise: Promise<unknown>): Promise<ConcurrencyError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConcurrencyError);
  return error as ConcurrencyError;
}

export function eventStoreContract(
  label: string,
  open: () => Promise<EventStore>,
  cleanup?: () => Promise<void>,
): void {
  describe(`event store contract: ${label}`, () => {
    let store: EventStore;

    beforeAll(async () => {
      store = await open();
    });

    afterAll(async () => {
      await store?.close();
      await cleanup?.();
    });

    /** Our streams' events written since `head`, read through readAll in pages. */
    async function readAllOf(head: Position, streams: Set<string>, page = 1000): Promise<RecordedEvent[]> {
      const all: RecordedEvent[] = [];
      for (let after = head; ; ) {
        const batch = await store.readAll(after, page);
        if (batch.length === 0) break;
        expectIncreasing([after, ...batch.map((e) => e.position)]);
        all.push(...batch);
        after = batch.at(-1)!.position;
      }
      return all.filter((e) => streams.has(e.stream));
    }

    describe('append', () => {
      it('returns the next revision and the position of what it wrote', async () => {
        const stream = newStream();
        const head = await store.headPosition();

        const first = await store.append(stream, [event('Created')], 'no_stream');
        expect(first.nextRevision).toBe(0n);
        expect(comparePositions(first.position, head)).toBeGreaterThan(0);

        const second = await store.append(stream, events(3), first.nextRevision);
        expect(second.nextRevision).toBe(3n);
        expect(comparePositions(second.position, first.position)).toBeGreaterThan(0);

        const third = await store.append(stream, [event('Closed')], 'stream_exists');
        expect(third.nextRevision).toBe(4n);
        expect(comparePositions(third.position, second.position)).toBeGreaterThan(0);

        // A one-event append's position is that event's position in the global log. (Which event's
        // position a longer append reports is adapter-specific, so it is not pinned here.)
        const ours = await readAllOf(head, new Set([stream]), 1);
        expect(ours.map((e) => e.revision)).toEqual([0n, 1n, 2n, 3n, 4n]);
        expect(ours[0]!.position).toEqual(first.position);
        expect(ours[4]!.position).toEqual(third.position);
        expect(comparePositions(await store.headPosition(), third.position)).toBeGreaterThanOrEqual(0);
      });

      it('round-trips data and metadata exactly', async () => {
        const stream = newStream();
        const data = {
          title: 'Grüße, 世界 "quoted" \\ \n',
          count: 42,
          ratio: 0.125,
          negative: -7,
          done: false,
          nothing: null,
          tags: ['a', '', 'c'],
          nested: { deep: { list: [1, { x: 'y' }], empty: {} } },
        };
        const meta = metadata({
          actor: { type: 'agent', uid: 'agent-1' },
          team_uid: null,
          causation_id: uuid(),
          request_id: 'req-1',
          occurred_at: '2025-01-02T03:04:05.678Z',
        });
        const written: EventToAppend = { id: uuid(), type: 'TaskCreated', data, metadata: meta };
        const head = await store.headPosition();
        await store.append(stream, [written], 'no_stream');

        const expected = { id: written.id, stream, revision: 0n, type: 'TaskCreated', data, metadata: meta };
        const [fromStream] = await store.readStream(stream);
        expect(fromStream).toMatchObject(expected);
        expect(fromStream!.data).toStrictEqual(data);
        expect(fromStream!.metadata).toStrictEqual(meta);
        const [fromAll] = await readAllOf(head, new Set([stream]));
        expect(fromAll).toMatchObject(expected);
        expect(fromAll!.data).toStrictEqual(data);
        expect(fromAll!.metadata).toStrictEqual(meta);
      });
    });

    describe('expected revision', () => {
      /** Writes `existing` events first (0 = no stream), then appends with `expected`. */
      async function attempt(existing: number, expected: ExpectedRevision) {
        const stream = newStream();
        if (existing > 0) await store.append(stream, events(existing), 'no_stream');
        const before = await store.readStream(stream);
        return { stream, before, result: store.append(stream, [event('Attempted')], expected) };
      }

      it.each([
        ['any', 0, 'any', 0n],
        ['any', 2, 'any', 2n],
        ['no_stream', 0, 'no_stream', 0n],
        ['stream_exists', 1, 'stream_exists', 1n],
        ['exact revision', 3, 2n, 3n],
      ] as const)('%s succeeds when it holds (%i events before)', async (_, existing, expected, next) => {
        const { stream, result } = await attempt(existing, expected);
        expect((await result).nextRevision).toBe(next);
        expect((await store.readStream(stream)).map((e) => e.type).at(-1)).toBe('Attempted');
      });

      it.each([
        ['no_stream', 2, 'no_stream', 1n],
        ['stream_exists', 0, 'stream_exists', 'no_stream'],
        ['exact revision on a missing stream', 0, 0n, 'no_stream'],
        ['exact revision behind', 3, 1n, 2n],
        ['exact revision ahead', 1, 5n, 0n],
      ] as const)('%s throws ConcurrencyError and writes nothing', async (_, existing, expected, actual) => {
        const head = await store.headPosition();
        const { stream, before, result } = await attempt(existing, expected);
        const error = await rejection(result);
        expect(error).toMatchObject({ stream, expected, actual });
        expect(await store.readStream(stream)).toEqual(before);
        expect(await readAllOf(head, new Set([stream]))).toHaveLength(existing);
      });
    });

    describe('readStream', () => {
      it('reads forwards, backwards, from a revision and up to a count', async () => {
        const stream = newStream();
        await store.append(stream, events(2), 'no_stream');
        await store.append(stream, events(3), 1n);
        const revisions = async (options?: Parameters<EventStore['readStream']>[1]) =>
          (await store.readStream(stream, options)).map((e) => e.revision);

        expect(await revisions()).toEqual([0n, 1n, 2n, 3n, 4n]);
        expect(await revisions({ fromRevision: 2n })).toEqual([2n, 3n, 4n]);
        expect(await revisions({ maxCount: 2 })).toEqual([0n, 1n]);
        expect(await revisions({ fromRevision: 1n, maxCount: 2 })).toEqual([1n, 2n]);
        expect(await revisions({ fromRevision: 9n })).toEqual([]);
        expect(await revisions({ direction: 'backwards' })).toEqual([4n, 3n, 2n, 1n, 0n]);
        expect(await revisions({ direction: 'backwards', fromRevision: 2n })).toEqual([2n, 1n, 0n]);
        expect(await revisions({ direction: 'backwards', maxCount: 2 })).toEqual([4n, 3n]);

        const all = await store.readStream(stream);
        expect(all.every((e) => e.stream === stream)).toBe(true);
        expect(all.map((e) => e.data)).toEqual([{ n: 0 }, { n: 1 }, { n: 0 }, { n: 1 }, { n: 2 }]);
      });

      it('reads an unknown stream as empty', async () => {
        expect(await store.readStream(newStream())).toEqual([]);
        expect(await store.readStream(newStream(), { direction: 'backwards' })).toEqual([]);
      });
    });

    describe('readAll', () => {
      it('returns events after a position in global order', async () => {
        const [a, b, c] = [newStream(), newStream(), newStream()];
        const head = await store.headPosition();
        await store.append(a, [event('A0')], 'no_stream');
        await store.append(b, [event('B0'), event('B1')], 'no_stream');
        await store.append(a, [event('A1')], 0n);
        await store.append(c, [event('C0')], 'any');

        const ours = await readAllOf(head, new Set([a, b, c]));
        expect(ours.map((e) => e.type)).toEqual(['A0', 'B0', 'B1', 'A1', 'C0']);
        expectIncreasing(ours.map((e) => e.position));

        // Paging one at a time gives the same events: `after` is exclusive.
        expect(await readAllOf(head, new Set([a, b, c]), 1)).toEqual(ours);
        // Starting after an event skips it and everything before.
        const rest = await readAllOf(ours[2]!.position, new Set([a, b, c]));
        expect(rest.map((e) => e.type)).toEqual(['A1', 'C0']);
      });

      it('reads only the given event types, in global order, when asked', async () => {
        const [a, b] = [newStream(), newStream()];
        const head = await store.headPosition();
        await store.append(a, [event('Kept'), event('Skipped')], 'no_stream');
        await store.append(b, [event('Skipped'), event('AlsoKept')], 'no_stream');
        await store.append(a, [event('Kept')], 1n);

        const read = async (after: Position, page: number) => {
          const found: RecordedEvent[] = [];
          for (;;) {
            const batch = await store.readAll(after, page, ['Kept', 'AlsoKept']);
            if (batch.length === 0) return found.filter((e) => e.stream === a || e.stream === b);
            found.push(...batch);
            after = batch[batch.length - 1]!.position;
          }
        };
        const kept = await read(head, 1000);
        expect(kept.map((e) => [e.stream, e.type])).toEqual([
          [a, 'Kept'],
          [b, 'AlsoKept'],
          [a, 'Kept'],
        ]);
        expectIncreasing(kept.map((e) => e.position));
        // Paging counts kept events only: a page of one holds the next kept event, however far.
        expect(await read(head, 1)).toEqual(kept);
        expect(await store.readAll(head, 10, [])).toEqual([]);
      });
    });

    describe('beforeLastReaction', () => {
      it("gives the position just before the cause of a reactor's newest effect, or null without one", async () => {
        const reactor = `reactor-${uuid()}`;
        expect(await store.beforeLastReaction(reactor)).toBeNull();
        const [a, b] = [newStream(), newStream()];
        await store.append(a, [event('Before')], 'no_stream');
        const causes = [await store.append(a, [event('First')], 0n), await store.append(a, [event('Second')], 1n)];
        const effect = (cause: Position, by = reactor): EventToAppend => ({
          ...event('Effect'),
          metadata: metadata({
            reaction: { reactor: by, commit: cause.commit.toString(), prepare: cause.prepare.toString() },
          }),
        });
        await store.append(b, [effect(causes[0]!.position)], 'no_stream');
        await store.append(b, [effect(causes[1]!.position)], 0n);
        // Another reactor's effect, newer, does not count.
        await store.append(b, [effect(causes[0]!.position, `other-${uuid()}`)], 1n);

        const before = await store.beforeLastReaction(reactor);
        expect(before).not.toBeNull();
        // Reading after it starts with the cause of the newest effect.
        const [next] = await store.readAll(before!, 1);
        expect(next?.type).toBe('Second');
        expect(next?.position).toEqual(causes[1]!.position);
      });
    });

    describe('subscribe', () => {
      it('catches up, then delivers live appends, and stops on abort', async () => {
        const stream = newStream();
        const streams = new Set([stream]);
        const head = await store.headPosition();
        await store.append(stream, events(3, 'Stored'), 'no_stream');

        const controller = new AbortController();
        const iterator = store.subscribe(head, controller.signal)[Symbol.asyncIterator]();
        const stored = await collect(iterator, streams, 3);
        expect(stored.map((e) => [e.type, e.revision])).toEqual([
          ['Stored', 0n],
          ['Stored', 1n],
          ['Stored', 2n],
        ]);

        // Appended after the subscription caught up: must arrive live.
        const live = store.append(stream, events(2, 'Live'), 2n);
        const delivered = await collect(iterator, streams, 2);
        expect(delivered.map((e) => [e.type, e.revision])).toEqual([
          ['Live', 3n],
          ['Live', 4n],
        ]);
        expect((await live).nextRevision).toBe(4n);
        expectIncreasing([...stored, ...delivered].map((e) => e.position));

        // Aborting while it waits ends the iteration.
        const pending = iterator.next();
        controller.abort();
        expect((await within(pending)).done).toBe(true);
      });

      it('starts after the given position', async () => {
        const stream = newStream();
        await store.append(stream, [event('Before')], 'no_stream');
        const { position } = await store.append(stream, [event('Seen')], 0n);
        await store.append(stream, [event('After')], 1n);

        const controller = new AbortController();
        const iterator = store.subscribe(position, controller.signal)[Symbol.asyncIterator]();
        const got = await collect(iterator, new Set([stream]), 1);
        expect(got.map((e) => e.type)).toEqual(['After']);
        controller.abort();
        expect((await within(iterator.next())).done).toBe(true);
      });

      it('gives every subscriber the whole log after its own position, whatever the others read', async () => {
        const stream = newStream();
        const streams = new Set([stream]);
        const head = await store.headPosition();
        const stored = await store.append(stream, events(5, 'Stored'), 'no_stream');
        const third = (await store.readStream(stream))[2]!.position;
        const controller = new AbortController();
        // From the start, from the middle, from the end of what is stored; batches of 2 and of 1000.
        const subscribers = [
          { after: head, batch: 2, expected: 7 },
          { after: third, batch: 1000, expected: 4 },
          { after: stored.position, batch: 2, expected: 2 },
          { after: head, batch: 1000, expected: 2 },
        ].map((s) => ({
          ...s,
          iterator: store.subscribe(s.after, controller.signal, s.batch)[Symbol.asyncIterator](),
        }));
        // The last one reads what is stored before the others start.
        const storedFirst = await collect(subscribers[3]!.iterator, streams, 5);
        await store.append(stream, events(2, 'Live'), 4n);
        const got = await Promise.all(subscribers.map((s) => collect(s.iterator, streams, s.expected)));
        const written = await store.readStream(stream);
        expect([...storedFirst, ...got[3]!].map((e) => e.id)).toEqual(written.map((e) => e.id));
        for (const [i, s] of subscribers.slice(0, 3).entries())
          expect(got[i]!.map((e) => e.id)).toEqual(written.slice(7 - s.expected).map((e) => e.id));
        controller.abort();
      });

      it('ends at once when the signal is already aborted', async () => {
        const controller = new AbortController();
        controller.abort();
        const iterator = store.subscribe(await store.headPosition(), controller.signal)[Symbol.asyncIterator]();
        expect((await within(iterator.next())).done).toBe(true);
      });
    });

    describe('concurrency', () => {
      it('commits 50 concurrent appends to distinct streams with distinct positions', async () => {
        const streams = Array.from({ length: 50 }, newStream);
        const head = await store.headPosition();
        const results = await Promise.all(streams.map((s) => store.append(s, [event('Parallel')], 'no_stream')));

        expect(results.every((r) => r.nextRevision === 0n)).toBe(true);
        const positions = results.map((r) => r.position);
        expect(new Set(positions.map((p) => `${p.commit}/${p.prepare}`)).size).toBe(50);
        const ours = await readAllOf(head, new Set(streams));
        expect(new Set(ours.map((e) => e.stream))).toEqual(new Set(streams));
        expectIncreasing(ours.map((e) => e.position));
      });

      it('lets exactly one of N concurrent appends with the same expected revision win', async () => {
        const stream = newStream();
        const created = event('Created');
        await store.append(stream, [created], 'no_stream');
        const attempts = Array.from({ length: 10 }, (_, i) => [event('Claimed', { by: i })]);

        const outcomes = await Promise.allSettled(attempts.map((evts) => store.append(stream, evts, 0n)));

        const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
        expect(won).toHaveLength(1);
        expect(outcomes[won[0]!]).toMatchObject({ status: 'fulfilled', value: { nextRevision: 1n } });
        for (const o of outcomes) {
          if (o.status === 'rejected') {
            expect(o.reason).toBeInstanceOf(ConcurrencyError);
            expect(o.reason).toMatchObject({ stream, expected: 0n, actual: 1n });
          }
        }
        const stored = await store.readStream(stream);
        expect(stored.map((e) => e.id)).toEqual([created.id, attempts[won[0]!]![0]!.id]);
      });
    });
  });
}
