// @vitest-environment node
/**
 * The attack of issue #17 against a real server process: two thousand unauthenticated clients
 * send the headers and the start of a body to a signature webhook's ingress (or only part of
 * their headers) and then stall or trickle. With short timeouts set through the environment:
 * every one of them is answered (503 at once over the bound on unauthenticated body reads, else
 * 408 at the timeout) and its connection closed; the server's descriptors stay near the bound;
 * an authenticated GET answers promptly meanwhile, and so do a signed delivery to another
 * webhook and a worker's long poll longer than the request timeout; and the log holds a handful
 * of lines whose counts add up to what the clients saw.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeDataDir, removeDir, type ServerProcess, sleep, startServer } from './server-process.js';

const HEADERS_TIMEOUT_S = 1;
const REQUEST_TIMEOUT_S = 3;
const BODY_READS = 64;
const CLAIM_WAIT_S = REQUEST_TIMEOUT_S + 1;

/** Two thousand, or fewer if the descriptors of this process (the clients) would not suffice. */
const openFileLimit = Number(execFileSync('sh', ['-c', 'ulimit -n']).toString().trim()) || 1024;
const CLIENTS = Math.min(2_000, Math.floor((openFileLimit - 300) / 2));
const BATCH = 250;

let dataDir: string;
let server: ServerProcess;

beforeAll(async () => {
  dataDir = makeDataDir();
  server = await startServer({
    dataDir,
    // At info, the level `npm start` logs at: one line per answered request is logged too.
    logLevel: 'info',
    extra: {
      HTTP_HEADERS_TIMEOUT_SECONDS: String(HEADERS_TIMEOUT_S),
      HTTP_REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_S),
      WEBHOOK_CONCURRENT_BODY_READS: String(BODY_READS),
      WEBHOOK_CONCURRENT_BODY_READS_PER_WEBHOOK: String(BODY_READS / 2),
    },
  });
});
afterAll(async () => {
  await server?.stop();
  removeDir(dataDir);
});

interface Outcome {
  status: number;
  code: string | null;
  /** From the last byte the client wrote until the server closed the connection. */
  ms: number;
}

/** The server's open descriptors (Linux), or null where /proc cannot tell. */
function serverFds(): number | null {
  try {
    return fs.readdirSync(`/proc/${server.process.pid}/fd`).length;
  } catch {
    return null;
  }
}

/**
 * A client that writes `head`, then every `trickleMs` one byte of `trickle` (or nothing), and
 * resolves with what the server answered once it closes the connection.
 */
function slowClient(
  port: number,
  head: string,
  trickle: string | null,
): Promise<{ connected: Promise<void>; outcome: Promise<Outcome> }> {
  const socket = net.connect(port, '127.0.0.1');
  let got = '';
  let sentAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => {
      socket.write(head, () => {
        sentAt = Date.now();
        resolve();
      });
      if (trickle !== null) timer = setInterval(() => socket.write(trickle, () => (sentAt = Date.now())), 400);
    });
    socket.once('error', reject);
  });
  const outcome = new Promise<Outcome>((resolve) => {
    socket.setEncoding('utf8').on('data', (d: string) => (got += d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      const body = got.split('\r\n\r\n')[1] ?? '';
      let code: string | null = null;
      try {
        code = (JSON.parse(body) as { code?: string }).code ?? null;
      } catch {}
      resolve({ status: Number(got.split(' ')[1]) || 0, code, ms: Date.now() - sentAt });
    });
  });
  return Promise.resolve({ connected, outcome });
}

describe('thousands of slow unauthenticated clients', () => {
  it('are cut off at the timeouts, hold few descriptors, leave a small log; the rest is served meanwhile', async () => {
    const port = Number(new URL(server.baseUrl).port);
    const factory = (await call(server, 'POST', '/factory', { name: 'Targets' })).body!.uid as string;
    const signed = async (name: string) =>
      (await call(server, 'POST', `/factory/${factory}/webhooks`, {
        name,
        authMode: 'signature',
        signatureScheme: 'standard_webhooks',
      }))!.body as { uid: string; secret: string };
    const [target, other] = [await signed('target'), await signed('other')];
    const agent = (await call(server, 'POST', '/agent/identities', { name: 'Poller' })).body!.uid as string;
    const agentKey = (await call(server, 'POST', `/agent/identities/${agent}/api-keys`)).body!.api_key as string;
    const worker = (await call(server, 'POST', '/agent/workers', { host: 'e2e' }, agentKey)).body!.worker_id;

    // The setup's log lines have all arrived once the last one has (pino writes them in order).
    await server.waitForOutput(/"url":"\/api\/v1\/agent\/workers","principal":"agent:[^"]+","status":201/);
    const [outBefore, errBefore] = [server.stdout().length, server.stderr().length];
    const fdsBefore = serverFds();
    let fdsPeak = fdsBefore ?? 0;
    const fdSampler = setInterval(() => (fdsPeak = Math.max(fdsPeak, serverFds() ?? 0)), 100);

    // A worker's long poll outlasts the request timeout: its body was complete at once.
    const pollStart = Date.now();
    let pollMs = 0;
    const claimUrl = `/agent/workers/${worker}/claim?wait_seconds=${CLAIM_WAIT_S}`;
    const poll = call(server, 'POST', claimUrl, undefined, agentKey).then((res) => {
      pollMs = Date.now() - pollStart;
      return res;
    });

    // The clients: most stall after the start of their body, some trickle it, some their headers.
    const body = `POST /webhooks/w/${target.uid} HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\nwebhook-id: msg_1\r\n\r\n{"a":`;
    const headers = 'POST /webhooks/w/whatever HTTP/1.1\r\nHost: x\r\n';
    const kinds: Array<'stall' | 'trickle' | 'headers'> = [];
    const outcomes: Array<Promise<Outcome>> = [];
    const started = Date.now();
    for (let i = 0; i < CLIENTS; i += BATCH) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(BATCH, CLIENTS - i) }, (_, j) => {
          const n = i + j;
          const kind = n % 10 === 0 ? 'headers' : n % 10 === 1 ? 'trickle' : 'stall';
          kinds.push(kind);
          return slowClient(
            port,
            kind === 'headers' ? headers : body,
            kind === 'stall' ? null : kind === 'headers' ? 'X' : ' ',
          );
        }),
      );
      await Promise.all(batch.map((c) => c.connected));
      outcomes.push(...batch.map((c) => c.outcome));
    }
    const connectedMs = Date.now() - started;
    // While the bodies within the bound are still being waited for (the refused ones answered by now).
    await sleep(300);
    const fdsDuring = serverFds();

    // Meanwhile: authenticated reads, and a signed delivery to another webhook, answer promptly.
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = Date.now();
      const res = await call(server, 'GET', '/factory');
      latencies.push(Date.now() - t0);
      expect(res.status).toBe(200);
      await sleep(150);
    }
    const payload = '{"event":"during the attack"}';
    const at = new Date();
    const delivered = await fetch(`${server.baseUrl}/webhooks/w/${other.uid}`, {
      method: 'POST',
      headers: {
        'webhook-id': 'msg_real',
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(other.secret).sign('msg_real', at, payload),
      },
      body: payload,
    });
    expect(delivered.status).toBe(202);

    // Every client is answered and its connection closed.
    const results = await Promise.all(outcomes);
    const allClosedMs = Date.now() - started;
    clearInterval(fdSampler);
    const polled = await poll;

    const tally = (kind: string) => {
      const mine = results.filter((_, i) => kinds[i] === kind);
      const by = new Map<string, number>();
      for (const r of mine) by.set(`${r.status} ${r.code}`, (by.get(`${r.status} ${r.code}`) ?? 0) + 1);
      return { mine, by: Object.fromEntries(by) };
    };
    const bodies = [...tally('stall').mine, ...tally('trickle').mine];
    const busy = bodies.filter((r) => r.status === 503);
    const timedOut = bodies.filter((r) => r.status === 408);
    const headersOnly = tally('headers').mine;

    // Bodies: over the bound refused at once without being read; within it cut off at the request timeout.
    expect(busy.length + timedOut.length).toBe(bodies.length);
    expect(busy.every((r) => r.code === 'ingress_busy' && r.ms < 2_000)).toBe(true);
    expect(timedOut.every((r) => r.code === 'request_timeout')).toBe(true);
    expect(timedOut.length).toBeGreaterThan(0);
    // At most the bound per webhook at once: a slot comes back when its body is cut off.
    const waves = 1 + Math.ceil(connectedMs / (REQUEST_TIMEOUT_S * 1000));
    expect(timedOut.length).toBeLessThanOrEqual((BODY_READS / 2) * waves);
    // Headers that never end: cut off at the headers timeout, however they trickle.
    expect(headersOnly.every((r) => r.status === 408 && r.code === 'request_timeout')).toBe(true);
    expect(Math.max(...headersOnly.map((r) => r.ms))).toBeLessThan((HEADERS_TIMEOUT_S + 2) * 1000);
    expect(allClosedMs).toBeLessThan((REQUEST_TIMEOUT_S + 8) * 1000);

    // The long poll ran its course past the request timeout, and answered.
    expect(polled.status).toBe(204);
    expect(pollMs).toBeGreaterThanOrEqual(CLAIM_WAIT_S * 1000 - 100);

    // Prompt: a read on a shared, busy machine in well under a second.
    expect(Math.max(...latencies)).toBeLessThan(1_000);

    // Descriptors: the refused clients are let go at once, so the server holds the bodies within the
    // bound and the headers still within their timeout (at most all 200), not thousands.
    const headersClients = kinds.filter((k) => k === 'headers').length;
    if (fdsBefore !== null && fdsDuring !== null)
      expect(fdsDuring - fdsBefore).toBeLessThan(BODY_READS / 2 + headersClients + 50);

    // The log: a handful of throttled lines, whose counts add up to what the clients saw.
    await sleep(1_500); // the last throttle window closes
    const log = (server.stdout().slice(outBefore) + server.stderr().slice(errBefore)).split('\n').filter(Boolean);
    const lines = log.map(
      (l) => JSON.parse(l) as { level: number; msg: string; url?: string; kind?: string; count?: number },
    );
    const counted = (kind: string) => lines.filter((l) => l.kind === kind).reduce((sum, l) => sum + (l.count ?? 0), 0);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(counted('ingress_busy')).toBe(busy.length);
    expect(counted('request_timeout')).toBe(timedOut.length + headersOnly.length);
    // A line per request served meanwhile (10 reads, the delivery, the long poll); none per refused or cut-off client.
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines.filter((l) => l.url === '/api/v1/factory')).toHaveLength(latencies.length);
    expect(requestLines.filter((l) => l.url?.startsWith(`/webhooks/w/${target.uid}`))).toEqual([]);
    expect(requestLines).toHaveLength(latencies.length + 2);
    expect(lines.filter((l) => l.kind).length).toBeLessThanOrEqual(20);

    console.info(
      `${CLIENTS} slow clients (${busy.length} refused 503, ${timedOut.length} bodies and ${headersOnly.length} headers cut 408): ` +
        `connected in ${connectedMs} ms, all closed after ${allClosedMs} ms; GET /factory meanwhile ` +
        `max ${Math.max(...latencies)} ms (median ${latencies.sort((a, b) => a - b)[5]} ms); ` +
        `server fds ${fdsBefore} before, ${fdsDuring} during, peak ${fdsPeak}; ${log.length} log lines; long poll ${pollMs} ms`,
    );
  });
});
