/**
 * The listener's limits on a real socket: what Node refuses before Fastify sees a request (431,
 * 408, malformed requests) is answered as a problem document, and the webhook ingress reads only
 * so many unauthenticated bodies at once. Timeouts are short here (HTTP_*_SECONDS accept fractions).
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { deliveryLog, makeHook, type Hook } from './webhook/ingress-helpers.js';

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp({
    HTTP_HEADERS_TIMEOUT_SECONDS: '0.5',
    HTTP_REQUEST_TIMEOUT_SECONDS: '1',
    WEBHOOK_CONCURRENT_BODY_READS: '3',
    WEBHOOK_CONCURRENT_BODY_READS_PER_WEBHOOK: '2',
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(() => t.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** From connecting until the server closed the connection. */
  ms: number;
}

/** Opens a connection, writes `data` and waits for the server to answer and close it. */
function raw(data: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(data));
    let got = '';
    socket.setEncoding('utf8').on('data', (d: string) => (got += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = got.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, ms: Date.now() - started });
    });
  });
}

/** Opens a connection that sends the headers and the start of a body, and holds it there. */
function stalled(data: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(data, () => resolve(socket)));
    socket.on('error', reject);
  });
}

function expectProblemText(res: RawAnswer, status: number, code: string) {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
  const body = JSON.parse(res.body);
  expect(body).toMatchObject({ status, code, type: `https://shopfloor.dev/problems/${code}` });
  return body;
}

describe('what Node refuses before Fastify', () => {
  it('431 problem for headers over 16 KiB, and for a URL as long', async () => {
    const headers = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const body = expectProblemText(headers, 431, 'headers_too_large');
    expect(body.detail).toBe('the request line and headers are at most 16 KiB together');
    const url = await raw(`GET /api/v1/factory?name=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectProblemText(url, 431, 'headers_too_large');
  });

  it('400 problem for a request that is not HTTP', async () => {
    expectProblemText(await raw('HELLO THERE\r\n\r\n'), 400, 'malformed_request');
  });

  it('408 problem when the headers do not arrive within HTTP_HEADERS_TIMEOUT_SECONDS', async () => {
    const res = await raw('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    expectProblemText(res, 408, 'request_timeout');
    expect(res.ms).toBeGreaterThanOrEqual(450);
    expect(res.ms).toBeLessThan(3_000);
  });

  it('408 problem naming the path when the body does not arrive within HTTP_REQUEST_TIMEOUT_SECONDS', async () => {
    const res = await raw(
      'POST /api/v1/invitations/redeem HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"co',
    );
    const body = expectProblemText(res, 408, 'request_timeout');
    expect(body.instance).toBe('/api/v1/invitations/redeem');
    expect(res.ms).toBeGreaterThanOrEqual(950);
    expect(res.ms).toBeLessThan(4_000);
  });
});

describe('the bound on unauthenticated webhook bodies', () => {
  const slowDelivery = (hook: Hook) =>
    `POST /webhooks/w/${hook.uid} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"partial":`;

  it('over the bound per webhook, or in all, a 503 with Retry-After at once; token webhooks are not bound', async () => {
    const signed = () => makeHook(t, { authMode: 'signature', signatureScheme: 'standard_webhooks' });
    const [a, b, c] = [await signed(), await signed(), await signed()];

    const held = [await stalled(slowDelivery(a)), await stalled(slowDelivery(a))];
    // Two of a's bodies are being read: a third waits for neither a slot nor its body.
    const third = await raw(slowDelivery(a));
    const problem = expectProblemText(third, 503, 'ingress_busy');
    expect(problem.retryable).toBe(true);
    expect(third.headers['retry-after']).toBe('5');
    expect(third.ms).toBeLessThan(500);

    // b has slots of its own, until the bound of all (3) is reached.
    held.push(await stalled(slowDelivery(b)));
    expectProblemText(await raw(slowDelivery(c)), 503, 'ingress_busy');
    // A token webhook authenticates before its body is read, so it does not wait for a slot.
    const token = await makeHook(t);
    const delivered = await fetch(`http://127.0.0.1:${port}/webhooks/w/${token.uid}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.secret}` },
      body: '{"ok":true}',
    });
    expect(delivered.status).toBe(202);

    // The slots come back when the bodies are cut off (here the senders leave; else the timeout).
    for (const socket of held) socket.destroy();
    const payload = '{"event":"ping"}';
    const id = 'msg_after_the_stall';
    const at = new Date();
    for (let i = 0; ; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/webhooks/w/${c.uid}`, {
        method: 'POST',
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': new Webhook(c.secret!).sign(id, at, payload),
        },
        body: payload,
      });
      if (res.status === 202) break;
      expect(res.status).toBe(503);
      expect(i).toBeLessThan(50);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Refused or cut off, a delivery is not one: only the accepted ones are in the logs.
    expect((await deliveryLog(t, a)).deliveries).toEqual([]);
    expect((await deliveryLog(t, b)).deliveries).toEqual([]);
    expect((await deliveryLog(t, c)).deliveries.map((d) => d.status)).toEqual(['accepted']);
  });
});
