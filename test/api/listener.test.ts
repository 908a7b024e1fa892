/**
 * The listener's limits on a real socket: what Node refuses before Fastify sees a request (431,
 * 408, malformed requests) is answered as a problem document. Timeouts are short here
 * (HTTP_*_SECONDS accept fractions).
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp({
    HTTP_HEADERS_TIMEOUT_SECONDS: '0.5',
    HTTP_REQUEST_TIMEOUT_SECONDS: '1',
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
