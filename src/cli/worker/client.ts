/** The worker API as the reference worker calls it: one method per operation, JSON in and out. */
import { setTimeout as delay } from 'node:timers/promises';
import type { FoundSkill } from './skills.js';

export interface Announced {
  worker_id: string;
  heartbeat_interval_seconds: number;
  lease_seconds: number;
}

export interface Assignment {
  run_id: string;
  execution_id: string;
  title: string;
  /** RUN_SCORER runs are judges: they report a judgement before they finish. */
  source: string;
  prompt: string;
  mode: string;
  conversation_id: string;
  resumed: boolean;
  config: Record<string, unknown> | null;
  attachments: Array<{ attachment_id: string; file_name: string; mime_type: string; download_url: string }>;
  /** W3C trace context of the run's span: sent with its reports, and to the command as TRACEPARENT. */
  traceparent?: string;
}

export type Signal =
  | { signal_id: string; type: 'followup'; run_id: string; execution_id: string; message: string }
  | { signal_id: string; type: 'interrupt'; run_id: string; execution_id: string }
  | { signal_id: string; type: 'cancel'; run_id: string; execution_id: string | null; cause: string; reason: string };

/** An answer other than 2xx, with the problem's stable `code`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(`${status} ${code}: ${detail}`);
    this.name = 'ApiError';
  }
}

/**
 * A failure that says nothing of whether the request was applied: no answer at all, or a gateway's
 * or an overloaded server's (behind a load balancer, the process that had it may have died).
 */
const isTransient = (error: unknown): boolean =>
  error instanceof ApiError ? [502, 503, 504].includes(error.status) : (error as Error)?.name !== 'AbortError';

/**
 * Runs `attempt` through transient failures, for about `budgetMs`, with growing pauses; `again` is
 * true on the retries (when an earlier attempt may have been applied after all).
 */
export async function withRetries<T>(attempt: (again: boolean) => Promise<T>, budgetMs = 30_000): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let n = 0; ; n++) {
    try {
      return await attempt(n > 0);
    } catch (error) {
      if (!isTransient(error) || Date.now() > deadline) throw error;
      await delay(Math.min(2000, 100 * 2 ** n));
    }
  }
}

/** The report endpoints on a held run (JSON bodies). */
export type Report =
  | 'claim'
  | 'start'
  | 'timeline'
  | 'messages'
  | 'artifacts'
  | 'questions'
  | 'usage'
  | 'judgement'
  | 'finish';

export class WorkerClient {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  private async request(
    method: string,
    path: string,
    init: { json?: unknown; bytes?: Buffer; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ) {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, ...init.headers };
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.bytes) {
      headers['content-type'] = 'application/octet-stream';
      body = new Uint8Array(init.bytes) as Uint8Array<ArrayBuffer>; // a copy: a plain ArrayBuffer
    }
    const res = await fetch(`${this.baseUrl}/api/v1${path}`, { method, headers, body, signal: init.signal ?? null });
    const text = await res.text();
    let parsed: Record<string, unknown> | null = null;
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    } catch {
      // not JSON (a proxy's error page): the status says it
    }
    if (!res.ok) throw new ApiError(res.status, String(parsed?.code ?? 'unknown'), String(parsed?.detail ?? text));
    return { status: res.status, body: parsed };
  }

  async announce(host: string, capabilities: string[], workerId?: string): Promise<Announced> {
    const res = await this.request('POST', '/agent/workers', {
      json: { host, capabilities, ...(workerId ? { worker_id: workerId } : {}) },
    });
    return res.body as unknown as Announced;
  }

  /** Tells the server the skills found in these repositories (replacing what it knew of them). */
  async reportSkills(workerId: string, repos: string[], skills: FoundSkill[]): Promise<void> {
    await this.request('PUT', `/agent/workers/${workerId}/skills`, { json: { repos, skills } });
  }

  async heartbeat(workerId: string, runs: string[], acks: string[]): Promise<Signal[]> {
    const res = await this.request('POST', `/agent/workers/${workerId}/heartbeat`, { json: { runs, acks } });
    return (res.body?.signals ?? []) as Signal[];
  }

  /** Long-polls for a run; null when none came within `waitSeconds`. */
  async claim(workerId: string, waitSeconds: number, signal: AbortSignal): Promise<Assignment | null> {
    const res = await this.request('POST', `/agent/workers/${workerId}/claim?wait_seconds=${waitSeconds}`, { signal });
    return res.status === 204 ? null : ((res.body?.run ?? null) as Assignment | null);
  }

  /** Downloads a file the server signed a link to (an attachment of the run's prompt). */
  async download(url: string): Promise<Buffer> {
    const res = await fetch(url);
    if (!res.ok) throw new ApiError(res.status, 'download_failed', `could not download ${new URL(url).pathname}`);
    return Buffer.from(await res.arrayBuffer());
  }

  async report(
    workerId: string,
    run: Pick<Assignment, 'run_id' | 'execution_id' | 'traceparent'>,
    what: Report,
    json: unknown = {},
  ) {
    const res = await this.request('POST', `/agent/workers/${workerId}/runs/${run.run_id}/${what}`, {
      json,
      headers: { 'x-execution-id': run.execution_id, ...(run.traceparent ? { traceparent: run.traceparent } : {}) },
    });
    return res.body;
  }

  /** Uploads a file as an artifact (`files`) or a handoff file (`handoff`). */
  async upload(
    workerId: string,
    run: Pick<Assignment, 'run_id' | 'execution_id'>,
    what: 'files' | 'handoff',
    query: Record<string, string>,
    bytes: Buffer,
  ) {
    const qs = new URLSearchParams(query).toString();
    const res = await this.request('PUT', `/agent/workers/${workerId}/runs/${run.run_id}/${what}?${qs}`, {
      bytes,
      headers: { 'x-execution-id': run.execution_id },
    });
    return res.body;
  }
}
