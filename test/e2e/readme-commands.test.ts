// @vitest-environment node
/**
 * The README's "Run it": `npm start` on an empty data directory without BOOTSTRAP_API_KEY
 * prints a generated admin key once, that key works as a bearer credential, a second start does
 * not print it again, and no log line ever contains it. The README still says so: its two commands
 * and the key line are the ones run and read here.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { call, makeDataDir, removeDir, type ServerProcess, startServer } from './server-process.js';

const KEY_LINE = /^Admin API key \(shown once\): (\S+)$/m;

describe.sequential('README commands', () => {
  const dataDir = makeDataDir();
  const servers: ServerProcess[] = [];
  // `npm start` exactly as documented, with request logging on (LOG_LEVEL=info) so that every
  // request below produces a log line to check.
  const npmStart = async () => {
    const s = await startServer({ dataDir, apiKey: null, via: 'npm', logLevel: 'info' });
    servers.push(s);
    return s;
  };
  /** Every line either stream printed, except the one line that is meant to show the key. */
  const logLines = (s: ServerProcess) =>
    `${s.stdout()}\n${s.stderr()}`.split('\n').filter((l) => l.trim() && !KEY_LINE.test(l));

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    removeDir(dataDir);
  });

  let key = '';
  let factoryUid = '';

  it('the README shows the commands run here and the line they print', () => {
    const readme = fs.readFileSync('README.md', 'utf8');
    expect(readme).toContain('```sh\nnpm install\nnpm start\n```');
    expect(readme).toContain('```sh\nnpm test\n```');
    expect(readme).toMatch(KEY_LINE);
  });

  it('npm start on an empty store prints a generated admin key once, and the key works', {
    timeout: 40_000,
  }, async () => {
    const server = await npmStart();
    key = (await server.waitForOutput(KEY_LINE))[1]!;
    expect(key).toMatch(/^sf_\S{16,}$/);
    const as = { baseUrl: server.baseUrl, apiKey: key };

    const created = await call(as, 'POST', '/factory', { name: 'Payments' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    factoryUid = created.body!.uid as string;
    const read = await call(as, 'GET', `/factory/${factoryUid}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expect((await call(as, 'GET', `/factory/${factoryUid}`, undefined, null)).status).toBe(401);
    expect((await call(as, 'GET', `/factory/${factoryUid}`, undefined, `${key}x`)).status).toBe(401);

    await server.stop();
    const all = server.stdout() + server.stderr();
    expect(all.match(/Admin API key/g)).toHaveLength(1);
    expect(all.split(key)).toHaveLength(2);
    const lines = logLines(server);
    expect(lines.filter((l) => l.includes('"status":201')).length, 'the requests were logged').toBeGreaterThan(0);
    for (const l of lines) expect(l).not.toContain(key.slice(3));
  });

  it('a second start of the same data directory keeps the key and never prints it', { timeout: 40_000 }, async () => {
    expect(key, 'the first start gave a key').not.toBe('');
    const server = await npmStart();
    const as = { baseUrl: server.baseUrl, apiKey: key };
    const read = await call(as, 'GET', `/factory/${factoryUid}`);
    expect(read.status).toBe(200);
    expect(read.body!.name).toBe('Payments');
    const patched = await call(as, 'PATCH', `/factory/${factoryUid}`, { name: 'Payments v2' });
    expect(patched.status).toBe(200);

    await server.stop();
    // npm itself dies of the SIGTERM; the server behind it shuts down on it.
    expect(server.stdout()).toMatch(/"signal":"SIGTERM".*"msg":"shutting down"/);
    const all = server.stdout() + server.stderr();
    expect(all).not.toMatch(/Admin API key/);
    expect(all).not.toContain(key.slice(3));
    expect(
      logLines(server).filter((l) => l.includes('"status":200')).length,
      'the requests were logged',
    ).toBeGreaterThan(0);
  });
});
