/**
 * A local HTTP receiver for outbound webhooks: records every request (headers and raw body) and
 * answers each with the status its `answer` function picks.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  url: string;
}

export async function startReceiver(
  answer: (request: Received, index: number) => number | { status: number; headers?: Record<string, string> } = () =>
    204,
) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body, url: req.url ?? '/' };
      received.push(request);
      const a = answer(request, received.length - 1);
      const { status, headers = {} } = typeof a === 'number' ? { status: a } : a;
      res.writeHead(status, headers).end(status >= 400 ? 'nope' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
