/**
 * The open-loop client, in a process of its own: forked by `paced()` with every request already
 * made, it sends them on schedule and answers with their latencies. In the benchmark process, which
 * holds the histories' maps, its scavenges paused every request in flight for 5-11 ms every ~115 ms.
 */
import { now, statusExpected } from './measure.js';

export interface PacedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface PacedJob {
  requests: PacedRequest[];
  /** Milliseconds between two scheduled starts. */
  interval: number;
  /** The first requests warm the client up and are not timed. */
  untimed: number;
  /** The status every answer should have, else any 2xx. */
  expect?: number;
}

export interface PacedReport {
  /** Milliseconds from each timed request's scheduled start (or its start, if sent early) to its whole answer. */
  latencies: number[];
  failures: number;
  /** Milliseconds from the first timed request's scheduled start until every answer was in. */
  ms: number;
}

async function run({ requests, interval, untimed, expect }: PacedJob): Promise<PacedReport> {
  const latencies: number[] = [];
  let failures = 0;
  const start = now();
  const inFlight: Promise<void>[] = [];
  for (const [i, r] of requests.entries()) {
    const due = start + i * interval;
    const wait = due - now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    // Sent up to 1 ms early (timers are not finer), such a request is timed from when it left.
    const from = Math.min(due, now());
    inFlight.push(
      fetch(r.url, { method: r.method, headers: r.headers, body: r.body, signal: AbortSignal.timeout(10_000) })
        .then(async (res) => {
          await res.arrayBuffer();
          if (!statusExpected(res.status, expect)) failures++;
          if (i >= untimed) latencies.push(now() - from);
        })
        .catch(() => {
          failures++;
        }),
    );
  }
  await Promise.all(inFlight);
  return { latencies, failures, ms: now() - (start + untimed * interval) };
}

process.once('message', async (job: PacedJob) => {
  const report = await run(job);
  process.send!(report, () => process.exit(0));
});
