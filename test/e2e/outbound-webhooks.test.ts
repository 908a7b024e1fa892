// @vitest-environment node
/**
 * Outbound webhooks end to end: a real server process, and a local receiver that fails its first
 * three deliveries and then accepts. The server is stopped in the middle of the retries and
 * started again. Every event arrives, verified with the `standardwebhooks` library, and none that
 * was acknowledged arrives twice.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { startReceiver } from '../helpers/receiver.js';
import { call, makeDataDir, readEvents, removeDir, type ServerProcess, sleep, startServer } from './server-process.js';

const RUNS = 4;
const dataDir = makeDataDir();
const servers: ServerProcess[] = [];
const extra = {
  OUTBOUND_ALLOWED_RANGES: '127.0.0.0/8',
  OUTBOUND_RETRY_BASE_SECONDS: '0.3',
};
const start = async () => {
  const s = await startServer({ dataDir, extra });
  servers.push(s);
  return s;
};

afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill('SIGKILL')));
  removeDir(dataDir);
});

describe('outbound webhooks across a restart', () => {
  it('deliver every event, signed, none twice once acknowledged', { timeout: 90_000 }, async () => {
    const receiver = await startReceiver((_r, i) => (i < 3 ? 503 : 204));
    try {
      let server = await start();
      const team = ((await call(server, 'GET', '/teams')).body!.teams as Array<{ uid: string }>)[0]!.uid;
      const created = await call(server, 'POST', `/teams/${team}/outbound-webhooks`, {
        url: receiver.url,
        event_types: ['run.queued', 'run.cancelled'],
      });
      expect(created.status).toBe(201);
      const secret = String(created.body!.secret);
      const endpoint = String(created.body!.uid);

      const runs: string[] = [];
      for (let i = 0; i < RUNS; i++) {
        const res = await call(server, 'POST', '/agent/runs', { prompt: `job ${i}`, title: `job ${i}` });
        expect(res.status).toBe(200);
        runs.push(String(res.body!.run_id));
      }
      // The first three attempts fail; stop the server while retries are pending.
      for (const deadline = Date.now() + 20_000; receiver.received.length < 3 && Date.now() < deadline; )
        await sleep(50);
      expect(receiver.received.length).toBeGreaterThanOrEqual(3);
      await server.stop();
      // Stopped in the middle: some deliveries were still waiting for their retry.
      const settled = readEvents(dataDir, { prefix: 'outbounddelivery-' }).filter(
        (e) => e.type === 'OutboundDeliveryAttempted' && e.data.outcome === 'delivered',
      );
      expect(settled.length).toBeLessThan(RUNS);

      const acknowledged = receiver.received.filter((_r, i) => i >= 3).map((r) => String(r.headers['webhook-id']));
      server = await start();
      for (const run of runs.slice(0, 2))
        expect((await call(server, 'POST', `/agent/runs/${run}/cancel`)).status).toBe(200);

      const expected = RUNS + 2;
      const acceptedIds = () =>
        new Set(receiver.received.filter((_r, i) => i >= 3).map((r) => String(r.headers['webhook-id'])));
      for (const deadline = Date.now() + 40_000; acceptedIds().size < expected && Date.now() < deadline; )
        await sleep(100);

      // Every event arrived, each verified with the library.
      const wh = new Webhook(secret);
      const accepted = receiver.received.slice(3);
      const events = accepted.map(
        (r) =>
          wh.verify(r.body, {
            'webhook-id': String(r.headers['webhook-id']),
            'webhook-timestamp': String(r.headers['webhook-timestamp']),
            'webhook-signature': String(r.headers['webhook-signature']),
          }) as { type: string; data: { run_id: string } },
      );
      const seen = events.map((e) => `${e.type} ${e.data.run_id}`).sort();
      expect(seen).toEqual(
        [...runs.map((r) => `run.queued ${r}`), ...runs.slice(0, 2).map((r) => `run.cancelled ${r}`)].sort(),
      );
      // None that was acknowledged came again: each webhook-id was accepted exactly once.
      const ids = accepted.map((r) => String(r.headers['webhook-id']));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual(expect.arrayContaining(acknowledged));
      // The refused ones were retried under their own webhook-id until accepted.
      for (const failed of receiver.received.slice(0, 3)) expect(ids).toContain(String(failed.headers['webhook-id']));

      // The log agrees: every delivery delivered, with its attempts.
      const log = await call(server, 'GET', `/teams/${team}/outbound-webhooks/${endpoint}/deliveries?limit=100`);
      const deliveries = log.body!.deliveries as Array<{ status: string; attempts: Array<{ status_code: number }> }>;
      expect(deliveries).toHaveLength(expected);
      expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);
      expect(deliveries.flatMap((d) => d.attempts).filter((a) => a.status_code === 503)).toHaveLength(3);
      const scheduled = readEvents(dataDir, { prefix: 'outbounddelivery-' }).filter(
        (e) => e.type === 'OutboundDeliveryScheduled',
      );
      expect(scheduled).toHaveLength(expected);
    } finally {
      await receiver.close();
    }
  });
});
