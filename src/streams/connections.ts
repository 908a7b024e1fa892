/**
 * The open streams of this process: their bounds (per key, per process: a 429 past either), the
 * comment line that keeps each open through proxies and past the listener's idle timeout, and their
 * end at shutdown with a `retry:` hint (the client comes back to this process restarted, or another).
 */
import { DomainError } from '../kernel/errors.js';

/** What the registry needs of an open stream. */
export interface Connection {
  keyHash: string;
  /** Writes a comment line (keeps the stream open). */
  keepAlive(): void;
  /** Ends the stream; with `retryMs`, tells the client when to come back. */
  end(retryMs?: number): void;
}

/** When a client told to go at shutdown comes back (to the process restarted, or another). */
const SHUTDOWN_RETRY_MS = 1000;

class TooManyStreams extends DomainError {
  constructor(detail: string) {
    super(429, 'too_many_streams', 'Too many requests', detail);
    this.retryable = true;
  }
}

export class Connections {
  private readonly open = new Set<Connection>();
  private readonly perKey = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(private readonly limits: { perKey: number; perProcess: number; heartbeatMs: number }) {}

  /** Admits a stream, or throws the 429 of the bound it would break. */
  admit(c: Connection): void {
    if (this.closing) throw new DomainError(503, 'shutting_down', 'Service unavailable', 'the server is shutting down');
    if (this.open.size >= this.limits.perProcess)
      throw new TooManyStreams(`this server holds at most ${this.limits.perProcess} open event streams`);
    const ofKey = this.perKey.get(c.keyHash) ?? 0;
    if (ofKey >= this.limits.perKey)
      throw new TooManyStreams(`an API key may hold at most ${this.limits.perKey} open event streams at once`);
    this.perKey.set(c.keyHash, ofKey + 1);
    this.open.add(c);
    this.timer ??= setInterval(() => this.keepAlive(), this.limits.heartbeatMs).unref();
  }

  release(c: Connection): void {
    if (!this.open.delete(c)) return;
    const left = (this.perKey.get(c.keyHash) ?? 1) - 1;
    if (left > 0) this.perKey.set(c.keyHash, left);
    else this.perKey.delete(c.keyHash);
    if (this.open.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  get size(): number {
    return this.open.size;
  }

  private keepAlive(): void {
    for (const c of this.open) c.keepAlive();
  }

  /** Ends every stream with a `retry:` hint; no new one is admitted. */
  closeAll(): void {
    this.closing = true;
    for (const c of [...this.open]) c.end(SHUTDOWN_RETRY_MS);
  }
}
