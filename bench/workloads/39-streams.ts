/**
 * Event streams (issue #32): 1,000 subscribers of the team stream on one server process while
 * commands run (runs created by 8 writers). Figures: append-to-delivery latency (p50, p99: a
 * command sent until a subscriber has the event) beside the append-to-read-model latency of the same
 * commands in the same phase (sent until answered, which a command is once the read models show its
 * events: the stream's ceiling); memory per idle subscriber (the server's RSS with 1,000 idle
 * streams open, less without); commands a second with the subscribers beside without them.
 *
 * The subscribers are raw sockets in this process (ten parse what they receive, the rest only
 * drain it), so the load generator shares the two cores with the server as in every workload.
 */
import fs from 'node:fs';
import net from 'node:net';
import { QUICK } from '../lib/config.js';
import { BENCH_ADMIN_KEY } from '../lib/history.js';
import { fmt, latencySummary, log, now } from '../lib/measure.js';
import { rssMb } from '../lib/proc.js';
import { startServer } from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Workload } from '../lib/workload.js';

const SUBSCRIBERS = Number(process.env.BENCH_STREAM_SUBSCRIBERS ?? 1000);
const PROBES = 10;
const WRITERS = 8;
const SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? (QUICK ? 3 : 15));
const KIB = 1024;
const TICK_MS = 1000 / 100; // USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on Linux

/** CPU time of a process so far, in ms (utime + stime, proc(5) fields 14 and 15). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop()!.trim().split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

interface Subscriber {
  socket: net.Socket;
  opened: Promise<void>;
}

/** A stream of `base`'s team activity on a raw socket; `onFrame` (probes only) gets each event's data line. */
function subscribe(base: string, onData?: (data: string) => void): Subscriber {
  const url = new URL(`${base}/api/v1/events?types=run.queued`);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.setNoDelay(true);
  let buffered = '';
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      if (!onData && !buffered.includes('stream open')) buffered += chunk.toString('utf8');
      if (buffered.includes('stream open') || onData) resolve();
      if (!onData) return;
      for (const line of chunk.toString('utf8').split('\n')) if (line.startsWith('data: ')) onData(line.slice(6));
    });
  });
  socket.write(
    `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${BENCH_ADMIN_KEY}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  return { socket, opened };
}

/** Creates runs from `WRITERS` loops for `seconds`; each run's title is its key in `sentAt`. */
async function command(base: string, seconds: number, sentAt: Map<string, number>, answered: number[], pid = 0) {
  const cpuBefore = pid ? cpuMs(pid) : 0;
  const until = now() + seconds * 1000;
  let n = 0;
  const writer = async (w: number) => {
    while (now() < until) {
      const title = `w${w}-${n++}`;
      const t0 = now();
      sentAt.set(title, t0);
      const res = await fetch(`${base}/api/v1/agent/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'bench', title }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`POST /agent/runs answered ${res.status}`);
      answered.push(now() - t0);
    }
  };
  const start = now();
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  const rate = (answered.length * 1000) / (now() - start);
  return { rate, serverCpuMsPerCommand: pid ? (cpuMs(pid) - cpuBefore) / answered.length : 0 };
}

const workload: Workload = {
  title: 'Event streams: 1,000 subscribers while commands run',
  async run() {
    const dir = tempDir('streams');
    const server = await startServer(dir, 'server-streams', 60_000, {
      STREAM_MAX_PER_KEY: String(SUBSCRIBERS + PROBES),
      STREAM_MAX_PER_PROCESS: String(SUBSCRIBERS + PROBES),
    });
    try {
      await command(server.base, 1, new Map(), []); // warm-up
      const pid = server.proc.pid;
      const { rate: bare, serverCpuMsPerCommand: bareCpu } = await command(server.base, SECONDS, new Map(), [], pid);
      log(`without subscribers: ${fmt(bare)} commands/s`);

      const before = rssMb(server.proc.pid);
      const idle = Array.from({ length: SUBSCRIBERS - PROBES }, () => subscribe(server.base));
      await Promise.all(idle.map((s) => s.opened));
      await new Promise((r) => setTimeout(r, 2000)); // let the server settle
      const withIdle = rssMb(server.proc.pid);
      const perSubscriberKiB = ((withIdle - before) * KIB) / idle.length;

      const sentAt = new Map<string, number>();
      const delivered: number[] = [];
      const probes = Array.from({ length: PROBES }, () =>
        subscribe(server.base, (data) => {
          const title = (JSON.parse(data) as { title: string }).title;
          const t0 = sentAt.get(title);
          if (t0 !== undefined) delivered.push(now() - t0);
        }),
      );
      await Promise.all(probes.map((s) => s.opened));
      const answered: number[] = [];
      const { rate: withSubs, serverCpuMsPerCommand: subsCpu } = await command(
        server.base,
        SECONDS,
        sentAt,
        answered,
        pid,
      );
      await new Promise((r) => setTimeout(r, 1000)); // the last deliveries
      for (const s of [...idle, ...probes]) s.socket.destroy();

      const d = latencySummary(delivered);
      const a = latencySummary(answered);
      log(
        `with ${SUBSCRIBERS}: ${fmt(withSubs)} commands/s; delivery p99 ${fmt(d.p99, 1)} ms, read model p99 ${fmt(a.p99, 1)} ms`,
      );
      return {
        figures: [
          {
            name: 'append-to-delivery latency p99',
            value: d.p99,
            unit: 'ms',
            detail: `p50 ${fmt(d.p50, 1)} ms, ${delivered.length} deliveries to ${PROBES} probes`,
            ceiling: { name: 'append-to-read-model p99 (the command answered)', value: a.p99 },
            target: { text: 'at most 2x the read-model latency', met: d.p99 <= 2 * a.p99 },
          },
          {
            name: 'append-to-delivery latency p50',
            value: d.p50,
            unit: 'ms',
            ceiling: { name: 'append-to-read-model p50', value: a.p50 },
          },
          {
            name: 'memory per idle subscriber',
            value: perSubscriberKiB,
            unit: 'KiB',
            detail: `server RSS ${fmt(before)} MiB, ${fmt(withIdle)} MiB with ${idle.length} idle streams`,
            target: { text: 'at most 20 KiB', met: perSubscriberKiB <= 20 },
          },
          {
            name: `commands/s with ${SUBSCRIBERS} subscribers`,
            value: withSubs,
            unit: 'commands/s',
            ceiling: { name: 'commands/s without subscribers', value: bare },
            target: { text: 'at least 80% of it', met: withSubs >= 0.8 * bare },
          },
          {
            name: `server CPU per command with ${SUBSCRIBERS} subscribers`,
            value: subsCpu,
            unit: 'ms',
            detail: 'the fan-out of its event to every stream included',
            ceiling: { name: 'server CPU per command without subscribers', value: bareCpu },
          },
        ],
        notes: [
          `${WRITERS} writers create runs for ${SECONDS} s a phase; every subscriber takes every run.queued.`,
          'Subscribers are raw sockets in the benchmark process, which shares the two cores with the server.',
        ],
      };
    } finally {
      await server.proc.stop();
    }
  },
};

export default workload;
