// @vitest-environment node
/**
 * `shopfloor backup` while the server runs and keeps acknowledging writes, and `shopfloor restore`
 * into an empty DATA_DIR: every write acknowledged before the backup began is in the restored
 * store, `projections verify` is clean on it, and a restored server answers the same reads. The
 * p99 of the writes made while the backup ran is printed (a figure for the report, not a bound).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, makeDataDir, removeDir, runCli, type ServerProcess, startServer } from './server-process.js';

const BEFORE = 150;

const p99 = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.ceil(ms.length * 0.99) - 1] ?? 0;
const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe.sequential('backup and restore', () => {
  const dataDir = makeDataDir();
  const backupDir = path.join(makeDataDir(), 'backup');
  const restoredDir = path.join(makeDataDir(), 'restored');
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    for (const d of [dataDir, path.dirname(backupDir), path.dirname(restoredDir)]) removeDir(d);
  });

  it('takes a snapshot under writes and restores a server that answers the same reads', {
    timeout: 120_000,
  }, async () => {
    const server = await startServer({ dataDir });
    servers.push(server);
    const before: string[] = [];
    for (let i = 0; i < BEFORE; i++)
      before.push((await call(server, 'POST', '/factory', { name: `Before ${i}` })).body!.uid as string);
    // A blob, for the backup to carry: a webhook delivery's payload.
    const hook = (await call(server, 'POST', `/factory/${before[0]}/webhooks`, { name: 'w', authMode: 'url_token' }))
      .body!;
    const delivered = await fetch(`${server.baseUrl}/webhooks/w/${hook.uid}/${hook.secret}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"kept":true}',
    });
    expect(delivered.status).toBe(202);

    // Writes go on, one after another, for as long as the backup runs.
    let backingUp = true;
    const during: number[] = [];
    const failures: string[] = [];
    const writer = (async () => {
      for (let i = 0; backingUp; i++) {
        const started = performance.now();
        const res = await call(server, 'POST', '/factory', { name: `During ${i}` });
        if (res.status !== 201) failures.push(`${res.status} ${JSON.stringify(res.body)}`);
        else during.push(performance.now() - started);
      }
    })();
    const backedUp = await runCli(['backup', backupDir], { dataDir }, 60_000);
    backingUp = false;
    await writer;
    expect(backedUp.code, backedUp.stderr).toBe(0);
    expect(failures).toEqual([]);
    expect(during.length).toBeGreaterThan(0);
    console.log(`writes during the backup: ${during.length} acknowledged, p99 ${p99(during).toFixed(1)} ms`);

    const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8'));
    expect(Number(manifest.log_position)).toBeGreaterThanOrEqual(BEFORE);
    const paths = manifest.files.map((f: { path: string }) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['events.db', 'url-signing.key', 'secrets.key']));
    expect(paths.some((p: string) => p.startsWith('blobs/'))).toBe(true);
    expect(paths.some((p: string) => /read\.db|-wal$/.test(p))).toBe(false);
    expect(modeOf(backupDir)).toBe(0o700);
    for (const p of [...paths, 'manifest.json']) expect(modeOf(path.join(backupDir, p)), p).toBe(0o600);

    const restored = await runCli(['restore', backupDir], { dataDir: restoredDir }, 60_000);
    expect(restored.code, restored.stderr).toBe(0);
    const verified = await runCli(['projections', 'verify'], { dataDir: restoredDir }, 60_000);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    // Each reactor resumes where the backup found it (never past the snapshot: read before it).
    const status = (await runCli(['projections', 'status'], { dataDir: restoredDir }, 60_000)).stdout;
    const reactors = Object.entries(manifest.reactor_checkpoints as Record<string, string>);
    expect(reactors.length).toBeGreaterThan(0);
    for (const [name, position] of reactors) {
      expect(Number(position)).toBeLessThanOrEqual(Number(manifest.log_position));
      expect(status).toMatch(new RegExp(`reactor ${name} +position ${position} `));
    }

    const again = await startServer({ dataDir: restoredDir });
    servers.push(again);
    for (const uid of before) {
      const [original, copy] = [
        await call(server, 'GET', `/factory/${uid}`),
        await call(again, 'GET', `/factory/${uid}`),
      ];
      expect(copy.status).toBe(200);
      expect(copy.body).toEqual(original.body);
    }
    const log = (s: ServerProcess) => call(s, 'GET', `/factory/${before[0]}/webhooks/${hook.uid}/deliveries`);
    expect((await log(again)).body).toEqual((await log(server)).body);
  });

  it('restores only into an empty DATA_DIR, and refuses a damaged backup', { timeout: 60_000 }, async () => {
    const refused = await runCli(['restore', backupDir], { dataDir }, 30_000);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/DATA_DIR .* is not empty/);

    const damaged = `${backupDir}-damaged`;
    fs.cpSync(backupDir, damaged, { recursive: true });
    const key = path.join(damaged, 'url-signing.key');
    fs.writeFileSync(key, 'not the key');
    const target = path.join(path.dirname(restoredDir), 'from-damaged');
    const res = await runCli(['restore', damaged], { dataDir: target }, 30_000);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/url-signing\.key does not match its checksum/);
    expect(fs.existsSync(target)).toBe(false);
  });

  it('refuses to back up the production stores and names their own tools', async () => {
    const target = path.join(path.dirname(backupDir), 'esdb');
    const res = await runCli(['backup', target], {
      dataDir,
      extra: { EVENTSTORE_URL: 'esdb://127.0.0.1:1?tls=false' },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/embedded store only[\s\S]*EventStoreDB[\s\S]*MongoDB/);
    expect(fs.existsSync(target)).toBe(false);
  });
});
