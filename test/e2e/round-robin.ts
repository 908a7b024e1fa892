/**
 * A load balancer for end-to-end tests: each request goes to the next backend in turn, so a
 * client's calls alternate between the processes behind it. A backend that refuses the connection
 * (it died) is skipped for a while and the request goes to the next one, as a balancer's health
 * check would have it; a request cut off after it was sent answers 502, as a balancer's does.
 */
import http from 'node:http';
import type net from 'node:net';

export interface RoundRobin {
  url: string;
  /** Requests forwarded to each backend, by base URL and path prefix. */
  forwarded(backend: string, prefix?: string): number;
  close(): Promise<void>;
}

const DEAD_FOR_MS = 2_000;

export async function roundRobin(backends: readonly string[]): Promise<RoundRobin> {
  let next = 0;
  const deadUntil = new Map<string, number>();
  const log: Array<{ backend: string; path: string }> = [];
  const agent = new http.Agent({ keepAlive: true });

  const forward = (backend: string, req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) =>
    new Promise<'sent' | 'refused'>((resolve) => {
      const target = new URL(req.url ?? '/', backend);
      const out = http.request(target, { method: req.method, headers: req.headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => resolve('sent'));
        answer.on('error', () => (res.destroy(), resolve('sent')));
      });
      out.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ECONNREFUSED') return resolve('refused');
        if (!res.headersSent) {
          res.writeHead(502, { 'content-type': 'application/problem+json' });
          res.end(JSON.stringify({ status: 502, title: 'Bad gateway', detail: String(error), code: 'bad_gateway' }));
        } else res.destroy();
        resolve('sent');
      });
      // A long poll whose client left must not hold the backend.
      res.on('close', () => out.destroy());
      out.end(body);
    });

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    for (let tried = 0; tried < backends.length; tried++) {
      const backend = backends[next++ % backends.length]!;
      if ((deadUntil.get(backend) ?? 0) > Date.now()) continue;
      log.push({ backend, path: req.url ?? '/' });
      if ((await forward(backend, req, body, res)) === 'sent') return;
      deadUntil.set(backend, Date.now() + DEAD_FOR_MS);
    }
    res.writeHead(503, { 'content-type': 'application/problem+json' });
    res.end(JSON.stringify({ status: 503, title: 'No backend', detail: 'every backend refused', code: 'no_backend' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded: (backend, prefix = '') => log.filter((l) => l.backend === backend && l.path.startsWith(prefix)).length,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
