/**
 * A request that arrives while the server shuts down is answered 503 `shutting_down` as a problem
 * document with `Retry-After` (issue #30: it was Fastify's own JSON body), and the request in
 * flight when the shutdown began is answered as usual. On a real socket: once closing, the server
 * accepts no connection, so the late request comes on one it already had, whose headers were
 * still arriving.
 */
import fs from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { ADMIN_KEY, startTestApp } from '../helpers/app.js';
import { eventually } from '../helpers/task-fixtures.js';

/** A connection that has sent `start`; `finish` sends the rest and waits for the answer and the close. */
async function connection(port: number, start: string) {
  const socket = net.connect(port, '127.0.0.1');
  let got = '';
  socket.setEncoding('utf8').on('data', (d: string) => (got += d));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => socket.write(start, () => resolve()));
  });
  return {
    async finish(rest: string) {
      socket.end(rest);
      await closed;
      const [head = '', body = ''] = got.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      return { status: Number(statusLine.split(' ')[1]), headers, body };
    },
  };
}

it('answers a request arriving during shutdown 503 problem+json with Retry-After, and the one in flight as usual', async () => {
  const t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  const body = JSON.stringify({ name: 'Made during shutdown' });
  // In flight: routed, its body still arriving.
  const inFlight = await connection(
    port,
    `POST /api/v1/factory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
  );
  // Late: its headers not all there yet.
  const late = await connection(port, 'GET /api/v1/teams HTTP/1.1\r\nHost: x\r\n');

  const stopped = t.stop();
  await eventually(async () => (t.app.server.listening ? undefined : true));

  const refused = await late.finish(`Authorization: Bearer ${ADMIN_KEY}\r\n\r\n`);
  expect(refused.status, refused.body).toBe(503);
  expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(refused.headers['retry-after']).toBe('5');
  expect(refused.headers.connection).toBe('close');
  expect(JSON.parse(refused.body)).toMatchObject({
    status: 503,
    code: 'shutting_down',
    type: 'https://shopfloor.dev/problems/shutting_down',
    instance: '/api/v1/teams',
    retryable: true,
  });

  const served = await inFlight.finish(body.slice(5));
  expect(served.status, served.body).toBe(201);
  expect(JSON.parse(served.body)).toMatchObject({ name: 'Made during shutdown' });
  await stopped;
  fs.rmSync(t.dir, { recursive: true, force: true });
});
