/**
 * The production event store: EventStoreDB through `@eventstore/db-client`.
 * Every use of the client lives in this file, so it can be swapped for `@kurrent/kurrentdb-client`
 * (which renames `expectedRevision` to `streamState`) in one place.
 */
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START as FROM_START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  streamNameFilter,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import {
  type AppendResult,
  ConcurrencyError,
  causeOf,
  START,
  comparePositions,
  type EventMetadata,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type Position,
  type ReadStreamOptions,
  type RecordedEvent,
} from './port.js';

/** How many events one `$all` read asks for while skipping system events. */
const PAGE = 500;

const toExpectedRevision = (expected: ExpectedRevision): AppendExpectedRevision =>
  expected === 'any'
    ? ANY
    : expected === 'no_stream'
      ? NO_STREAM
      : expected === 'stream_exists'
        ? STREAM_EXISTS
        : expected;

// ESDB positions are never negative, so START ({-1, -1}) means "from the beginning".
const fromPosition = (p: Position): ReadPosition => (p.commit < 0n ? FROM_START : p);

/** Our events are JSON; a foreign binary event that is not JSON reads as {} (projections skip unknown types). */
function decode(value: unknown): unknown {
  if (!(value instanceof Uint8Array)) return value;
  try {
    return JSON.parse(Buffer.from(value).toString('utf8'));
  } catch {
    return {};
  }
}

function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  return {
    id: event.id,
    stream: event.streamId,
    revision: event.revision,
    // Stream reads carry a position only on servers from 22.6 on.
    position: event.position ?? START,
    type: event.type,
    data: decode(event.data) as Record<string, unknown>,
    metadata: decode(event.metadata) as EventMetadata,
  };
}

/** An event of ours from `$all`, or undefined for system events, `$` streams and other stores' streams. */
function fromAll(resolved: AllStreamResolvedEvent, prefix: string): RecordedEvent | undefined {
  const event = resolved.event;
  if (!event || event.type.startsWith('$') || event.streamId.startsWith('$')) return undefined;
  if (!event.streamId.startsWith(prefix)) return undefined;
  return unprefixed(toRecorded(event), prefix);
}

const unprefixed = (event: RecordedEvent, prefix: string): RecordedEvent =>
  prefix ? { ...event, stream: event.stream.slice(prefix.length) } : event;

/** The client, and the prefix of this store's streams on a server that holds several (EVENTSTORE_STREAM_PREFIX). */
type Client = { esdb: EventStoreDBClient; prefix: string };

async function readAllPage(client: Client, from: ReadPosition, direction: typeof FORWARDS | typeof BACKWARDS) {
  const page: AllStreamResolvedEvent[] = [];
  for await (const resolved of client.esdb.readAll({ fromPosition: from, direction, maxCount: PAGE }))
    page.push(resolved);
  return page;
}

async function* subscribe(client: Client, after: Position, signal: AbortSignal, batchSize = 1000) {
  if (signal.aborted) return;
  // A store of its own on a shared server asks the server for its streams only.
  const filter = client.prefix ? streamNameFilter({ prefixes: [client.prefix] }) : excludeSystemEvents();
  const subscription = client.esdb.subscribeToAll({ fromPosition: fromPosition(after), filter });
  const queue: RecordedEvent[] = [];
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  subscription.on('data', (resolved: AllStreamResolvedEvent) => {
    const event = fromAll(resolved, client.prefix);
    // The filter only sees event types, and `after` itself must not come back.
    if (event && comparePositions(event.position, after) > 0) queue.push(event);
    // Back-pressure: stop taking from the server until the consumer takes a batch.
    if (queue.length >= batchSize) subscription.pause();
    notify();
  });
  subscription.on('error', (error: Error) => {
    failure ??= error;
    notify();
  });
  signal.addEventListener('abort', notify);
  try {
    while (!signal.aborted) {
      if (failure !== undefined) throw failure;
      if (queue.length === 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      // Whatever arrived before we woke up (events are pushed synchronously) goes out as one batch.
      const batch = queue.splice(0, batchSize);
      subscription.resume();
      yield batch;
    }
  } finally {
    signal.removeEventListener('abort', notify);
    subscription.removeAllListeners('data');
    await subscription.unsubscribe();
  }
}

async function append(
  client: Client,
  stream: string,
  events: readonly EventToAppend[],
  expected: ExpectedRevision,
): Promise<AppendResult> {
  try {
    const result = await client.esdb.appendToStream(
      client.prefix + stream,
      events.map((e) =>
        jsonEvent({ id: e.id, type: e.type, data: e.data as Record<string, unknown>, metadata: { ...e.metadata } }),
      ),
      { expectedRevision: toExpectedRevision(expected) },
    );
    // The server answers with the transaction's position; a caller waiting for its events
    // needs the last one's, which only differs (in `prepare`) when several were written.
    const position =
      events.length > 1
        ? (await readStream(client, stream, { direction: 'backwards', maxCount: 1 }))[0]?.position
        : result.position;
    return { nextRevision: result.nextExpectedRevision, position: position ?? START };
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) {
      const actual = error.actualVersion;
      throw new ConcurrencyError(stream, expected, actual === 'no_stream' || actual < 0n ? 'no_stream' : actual);
    }
    throw error;
  }
}

async function readStream(client: Client, stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
  const backwards = options.direction === 'backwards';
  if (options.maxCount !== undefined && options.maxCount <= 0) return [];
  const events: RecordedEvent[] = [];
  try {
    const read = client.esdb.readStream(client.prefix + stream, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision: options.fromRevision ?? (backwards ? END : FROM_START),
      maxCount: options.maxCount ?? Number.MAX_SAFE_INTEGER,
    });
    for await (const resolved of read)
      if (resolved.event) events.push(unprefixed(toRecorded(resolved.event), client.prefix));
  } catch (error) {
    if (error instanceof StreamNotFoundError) return [];
    throw error;
  }
  return events;
}

async function readAll(
  client: Client,
  after: Position,
  maxCount: number,
  types?: readonly string[],
): Promise<RecordedEvent[]> {
  // Filtered here rather than with a server-side filter: one code path for every read.
  const wanted = types && new Set(types);
  const events: RecordedEvent[] = [];
  let from = after;
  while (events.length < maxCount) {
    const page = await readAllPage(client, fromPosition(from), FORWARDS);
    for (const resolved of page) {
      const event = fromAll(resolved, client.prefix);
      // A forwards read starts at `from` itself; `after` is exclusive.
      if (
        event &&
        comparePositions(event.position, from) > 0 &&
        (!wanted || wanted.has(event.type)) &&
        events.length < maxCount
      )
        events.push(event);
    }
    const last = page.at(-1)?.event?.position;
    if (page.length < PAGE || !last) break;
    from = last;
  }
  return events;
}

/** The first event of ours in `$all` read backwards from `from` that `found` accepts. */
async function lastOfOurs(client: Client, from: ReadPosition, found: (e: RecordedEvent) => boolean) {
  for (;;) {
    const page = await readAllPage(client, from, BACKWARDS);
    for (const resolved of page) {
      const event = fromAll(resolved, client.prefix);
      if (event && found(event)) return event;
    }
    const last = page.at(-1)?.event?.position;
    if (page.length < PAGE || !last) return null;
    from = last;
  }
}

/** Read backwards, filtered here: no server-side filter sees metadata. */
async function beforeLastReaction(client: Client, reactor: string): Promise<Position | null> {
  const reaction = (await lastOfOurs(client, END, (e) => e.metadata.reaction?.reactor === reactor))?.metadata.reaction;
  if (!reaction) return null;
  const cause = causeOf(reaction);
  const before = await lastOfOurs(client, cause, (e) => comparePositions(e.position, cause) < 0);
  return before?.position ?? START;
}

async function headPosition(client: Client): Promise<Position> {
  return (await lastOfOurs(client, END, () => true))?.position ?? START;
}

/** `prefix`: this store's streams are those named with it, on a server shared with other stores (tests). */
export function openEsdbEventStore(connectionString: string, prefix = ''): EventStore {
  const client: Client = { esdb: EventStoreDBClient.connectionString(connectionString), prefix };
  return {
    append: (stream, events, expected) => append(client, stream, events, expected),
    readStream: (stream, options) => readStream(client, stream, options),
    readAll: (after, maxCount, types) => readAll(client, after, maxCount, types),
    subscribe: (after, signal, batchSize) => subscribe(client, after, signal, batchSize),
    headPosition: () => headPosition(client),
    beforeLastReaction: (reactor) => beforeLastReaction(client, reactor),
    async close() {
      await client.esdb.dispose();
    },
  };
}
