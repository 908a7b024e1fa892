/**
 * One open `text/event-stream` answer: it replays what the client missed (from its last id), then
 * takes the live tail's events, each filtered by the stream's own test (the types asked for, the
 * resource's read check). It ends when the client goes, when its admission lapses (the key revoked,
 * the member removed: auth.ts `watchAdmission`), when its client reads too slowly (past the buffer
 * bound: it resumes from its last id), at shutdown (with a `retry:` hint), or when the stream says
 * it is complete (a run tree that has ended).
 */
import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { comparePositions, type Position, type RecordedEvent } from '../eventstore/port.js';
import { watchAdmission } from '../http/auth.js';
import type { Connection, Connections } from './connections.js';
import type { EventStreams, Sent, Subscriber } from './hub.js';
import type { StreamItem } from './stream-events.js';

export interface StreamRequest {
  /** Where it starts: after this position (the client's last id, or where the tail stands). */
  after: Position;
  /** Whether the stream sends an item: its types and filters, and the resource's read check. */
  takes(item: StreamItem): boolean;
  /** The past events of (after, upTo] the stream may send, a page at a time; default: the log. */
  replay?(after: Position, upTo: Position): Promise<RecordedEvent[]>;
  /**
   * Asked once live and after each item sent: the position past which the stream is complete (it
   * ends once everything up to it has been sent), or null while it goes on.
   */
  completeAt?(): Promise<Position | null>;
}

export interface StreamLimits {
  bufferBytes: number;
  replayMax: number;
}

/** Replay pages read from the log. */
const REPLAY_PAGE = 500;

class OpenStream implements Subscriber, Connection {
  after: Position;
  readonly keyHash: string;
  private ended = false;
  private replayed = 0;
  private endAt: Position | null = null;
  private asking = false;
  /** Frames delivered and not yet written (see `flush`). */
  private held = '';
  readonly stop = new AbortController();

  constructor(
    private readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly hub: EventStreams,
    private readonly request: StreamRequest,
    private readonly limits: StreamLimits,
  ) {
    this.after = request.after;
    this.keyHash = req.admission!.keyHash;
  }

  private write(text: string): boolean {
    if (this.ended) return false;
    const raw = this.reply.raw;
    raw.write(text);
    // A client that does not read: its stream goes rather than the server's memory. What the
    // server holds counts (once the kernel's socket buffers are full), the write just made included.
    if (raw.writableLength > this.limits.bufferBytes) {
      this.req.log.info({ buffered: raw.writableLength }, 'event stream closed: its client reads too slowly');
      this.end();
      return false;
    }
    return true;
  }

  deliver(sent: Sent): void {
    if (comparePositions(sent.position, this.after) <= 0) return;
    this.after = sent.position;
    if (this.request.takes(sent.item)) this.held += sent.frame;
  }

  flush(): void {
    if (!this.held) return;
    const frames = this.held;
    this.held = '';
    if (this.write(frames)) this.askComplete();
  }

  passed(position: Position): void {
    if (comparePositions(position, this.after) > 0) this.after = position;
    if (this.endAt && comparePositions(this.after, this.endAt) >= 0) this.end();
  }

  keepAlive(): void {
    this.write(': keep-alive\n\n');
  }

  end(retryMs?: number): void {
    if (this.ended) return;
    if (retryMs !== undefined) this.reply.raw.write(`retry: ${retryMs}\n\n`);
    this.ended = true;
    this.stop.abort();
    this.reply.raw.end();
  }

  /** Whether the stream is complete; once it is, it ends as soon as everything before has been sent. */
  private askComplete(): void {
    if (!this.request.completeAt || this.asking || this.endAt) return;
    this.asking = true;
    void this.request
      .completeAt()
      .then((at) => {
        this.asking = false;
        if (!at) return;
        this.endAt = at;
        this.passed(this.after);
      })
      .catch((error: unknown) => {
        this.asking = false;
        this.req.log.error({ err: error }, 'event stream: cannot tell whether the run tree ended');
      });
  }

  /** Sends the past events of (after, upTo]; false once the stream ended (or replayed its bound). */
  async catchUp(upTo: Position): Promise<boolean> {
    while (!this.ended && comparePositions(this.after, upTo) < 0) {
      const page = this.request.replay
        ? await this.request.replay(this.after, upTo)
        : await this.hub.readLog(this.after, REPLAY_PAGE);
      const within = page.filter((e) => comparePositions(e.position, upTo) <= 0);
      for (const event of within) {
        for (const sent of await this.hub.map(event)) {
          if (!this.request.takes(sent.item)) continue;
          if (++this.replayed > this.limits.replayMax) {
            // A backlog past the bound: the client comes back at once for the next part.
            this.end(0);
            return false;
          }
          if (!this.write(sent.frame)) return false;
          await this.drained();
        }
        this.after = event.position;
      }
      if (within.length === page.length && page.length === REPLAY_PAGE && !this.request.replay) continue;
      this.after = upTo;
    }
    return !this.ended;
  }

  /** A replay waits for its client rather than buffer the log. */
  private async drained(): Promise<void> {
    const raw = this.reply.raw;
    if (raw.writableNeedDrain && !this.ended) await once(raw, 'drain', { signal: this.stop.signal }).catch(() => {});
  }

  async run(): Promise<void> {
    if (await this.hub.join(this, (upTo) => this.catchUp(upTo), this.stop.signal)) this.askComplete();
  }
}

/** Answers `req` with an event stream until it ends; the 429 of a broken bound is thrown before anything is sent. */
export async function openStream(
  req: FastifyRequest,
  reply: FastifyReply,
  hub: EventStreams,
  connections: Connections,
  request: StreamRequest,
  limits: StreamLimits,
): Promise<void> {
  const stream = new OpenStream(req, reply, hub, request, limits);
  connections.admit(stream);
  const admission = watchAdmission(req);
  const ended = once(stream.stop.signal, 'abort');
  admission.signal.addEventListener('abort', () => stream.end());
  reply.raw.on('close', () => stream.end());
  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  });
  reply.raw.write(': stream open\n\n');
  try {
    await stream.run();
    await ended;
  } catch (error) {
    req.log.error({ err: error }, 'event stream failed; the client resumes from its last id');
    stream.end(1000);
  } finally {
    hub.leave(stream);
    connections.release(stream);
    admission.stop();
  }
}
