/**
 * The event streams of one process: one tail of the store's log, behind the read models (an event
 * is sent once they show it), mapped once per event and handed to every open stream that takes it.
 * A stream resuming from an id first replays the log up to the tail on its own, then joins. The
 * tail reads the store, never this process's appends, so a stream on a process that follows
 * another's projector sees the other's writes as its read models do. Appends never wait for it:
 * it moves when the projector tells it has passed a position.
 */
import { comparePositions, type Position, type RecordedEvent } from '../eventstore/port.js';
import type { Runtime } from '../runtime.js';
import { encodeEventId } from './event-id.js';
import { own } from '../own-keys.js';
import { type StreamEventSource, type StreamItem, streamEventTypes } from './stream-events.js';

/** Events read from the log at a time, by the tail and by a replay. */
const PAGE = 500;
/**
 * The streams write at most once in this long: under load one write (a system call per stream)
 * carries several events rather than one each, which is most of what a thousand streams cost
 * (bench/workloads/39-streams.ts); an event after a quiet spell is written at once.
 */
const FLUSH_MS = 50;

/** One event as a stream sends it. */
export interface Sent {
  position: Position;
  item: StreamItem;
  /** The whole `id:`/`event:`/`data:` frame, built once for every stream it goes to. */
  frame: string;
}

/** An open stream as the tail sees it. */
export interface Subscriber {
  /** The last position it has been given or passed over. */
  after: Position;
  /** Takes one event (those it does not want it ignores); it may hold it until `flush`. */
  deliver(sent: Sent): void;
  /** Sends what `deliver` held: one write for a page of events rather than one each. */
  flush(): void;
  /** Everything up to `position` has been handed out. */
  passed(position: Position): void;
}

const frameOf = (position: Position, type: string, data: unknown): string =>
  `id: ${encodeEventId(position)}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

export class EventStreams {
  private tail: Position;
  private readonly live = new Set<Subscriber>();
  private readonly bySource = new Map<string, StreamEventSource[]>();
  readonly domainTypes: string[];
  readonly types;
  private pumping = false;
  private again = false;
  private flushing: NodeJS.Timeout | null = null;
  private flushedAt = 0;

  constructor(
    private readonly rt: Runtime,
    sources: readonly StreamEventSource[],
  ) {
    this.types = streamEventTypes(sources);
    for (const s of sources) for (const t of s.from) this.bySource.set(t, [...(this.bySource.get(t) ?? []), s]);
    this.domainTypes = [...this.bySource.keys()];
    this.tail = rt.projector.position;
    rt.projector.onPassed(() => void this.pump());
  }

  /** Where the tail stands: every event up to it has been handed to the streams then open. */
  get position(): Position {
    return this.tail;
  }

  /** What `event` tells, in sent form, checked against each type's schema. */
  async map(event: RecordedEvent): Promise<Sent[]> {
    const sent: Sent[] = [];
    for (const source of this.bySource.get(event.type) ?? []) {
      try {
        const item = await source.map(this.rt, event);
        const type = item && own(source.types, item.type);
        if (!item || !type) continue;
        // Parsing strips whatever the schema does not declare: nothing undocumented leaves.
        const data = type.schema.parse(item.data) as Record<string, unknown>;
        sent.push({
          position: event.position,
          item: { ...item, data },
          frame: frameOf(event.position, item.type, data),
        });
      } catch (error) {
        // One event that cannot be told is left out; the streams go on past it.
        this.rt.log.error({ err: error, event_id: event.id, event_type: event.type }, 'event streams skip an event');
      }
    }
    return sent;
  }

  /** Up to `max` events after `after` of the types the streams map. */
  readLog(after: Position, max: number): Promise<RecordedEvent[]> {
    return this.rt.events.readAll(after, max, this.domainTypes);
  }

  /** The stream joins the live tail once it has caught up with it (`catchUp` replays up to a position). */
  async join(s: Subscriber, catchUp: (upTo: Position) => Promise<boolean>, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted) return false;
      const upTo = this.tail;
      if (comparePositions(s.after, upTo) >= 0) {
        this.live.add(s);
        return true;
      }
      if (!(await catchUp(upTo))) return false;
      if (comparePositions(s.after, upTo) < 0) s.after = upTo;
    }
  }

  leave(s: Subscriber): void {
    this.live.delete(s);
  }

  private flushSoon(): void {
    if (this.flushing) return;
    const wait = this.flushedAt + FLUSH_MS - performance.now();
    if (wait <= 0) this.flush();
    else this.flushing = setTimeout(() => this.flush(), wait);
  }

  private flush(): void {
    this.flushing = null;
    this.flushedAt = performance.now();
    for (const s of this.live) s.flush();
  }

  get open(): number {
    return this.live.size;
  }

  /** Moves the tail to the projector's position; passes that come meanwhile make one more round. */
  private async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        await this.advance(this.rt.projector.position);
      } while (this.again);
    } catch (error) {
      this.rt.log.error({ err: error }, 'event streams could not read the log; trying at the next change');
    } finally {
      this.pumping = false;
    }
  }

  private async advance(target: Position): Promise<void> {
    while (comparePositions(this.tail, target) < 0) {
      if (this.live.size === 0) {
        this.tail = target;
        break;
      }
      const page = await this.readLog(this.tail, PAGE);
      for (const event of page) {
        if (comparePositions(event.position, target) > 0) break;
        for (const sent of await this.map(event)) for (const s of this.live) s.deliver(sent);
        this.tail = event.position;
      }
      this.flushSoon();
      if (page.length < PAGE || comparePositions(page[page.length - 1]!.position, target) > 0) this.tail = target;
    }
    for (const s of this.live) s.passed(this.tail);
  }
}
