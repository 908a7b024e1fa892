// @vitest-environment node
/**
 * A process killed with SIGKILL during a stream of writes loses no acknowledged event, and on
 * restart every projection resumes from its checkpoint and `projections verify` finds no
 * difference.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  call,
  makeDataDir,
  parseStatus,
  readEvents,
  removeDir,
  runCli,
  type ServerProcess,
  startServer,
} from './server-process.js';

const WRITERS = 8;
const PATCHES_PER_FACTORY = 4;
/** The server is killed from inside the handler of this acknowledgement, with the other writers mid-request. */
const KILL_AT_ACK = 400;

/** What one writer saw for one factory it created. */
interface Tracked {
  uid: string;
  /** Names in the order they were acknowledged: the created name, then every 2xx PATCH. */
  acked: string[];
  /** A PATCH whose response never came: it may or may not have landed. */
  inFlight: string | null;
}

describe.sequential('crash recovery (SIGKILL mid-stream)', () => {
  const dataDir = makeDataDir();
  const servers: ServerProcess[] = [];
  const start = async () => {
    const s = await startServer({ dataDir });
    servers.push(s);
    return s;
  };

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    removeDir(dataDir);
  });

  it('keeps every acknowledged write, resumes projections, and verify/rebuild agree', { timeout: 75_000 }, async () => {
    const first = await start();
    const tracked: Tracked[] = [];
    const unexpected: string[] = [];
    let creationsInFlight = 0;
    let killed = false;
    let acks = 0;
    let killing: Promise<void> | undefined;
    const acknowledged = () => {
      if (++acks !== KILL_AT_ACK) return;
      killing = first.kill('SIGKILL'); // the signal goes out synchronously, before any other response is read
      killed = true;
    };

    // Each writer owns its factories and changes them one request at a time, so the order of
    // its acknowledgements is the order of the events; the writers race each other.
    const writer = async (w: number) => {
      for (let f = 0; !killed; f++) {
        const name = `w${w}-f${f}-n0`;
        let created: Awaited<ReturnType<typeof call>>;
        try {
          created = await call(first, 'POST', '/factory', { name });
        } catch {
          creationsInFlight += 1;
          return;
        }
        if (created.status !== 201)
          return void unexpected.push(`POST ${created.status} ${JSON.stringify(created.body)}`);
        const t: Tracked = { uid: created.body!.uid as string, acked: [name], inFlight: null };
        tracked.push(t);
        acknowledged();
        for (let n = 1; n <= PATCHES_PER_FACTORY && !killed; n++) {
          const next = `w${w}-f${f}-n${n}`;
          try {
            const res = await call(first, 'PATCH', `/factory/${t.uid}`, { name: next });
            if (res.status !== 200) return void unexpected.push(`PATCH ${res.status} ${JSON.stringify(res.body)}`);
            t.acked.push(next);
            acknowledged();
          } catch {
            t.inFlight = next;
            return;
          }
        }
      }
    };
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
    await Promise.all(writers);
    await (killing ?? first.kill('SIGKILL'));

    expect(unexpected).toEqual([]);
    const ackedEvents = tracked.reduce((n, t) => n + t.acked.length, 0);
    expect(ackedEvents, 'the kill came in the middle of the stream').toBeGreaterThanOrEqual(KILL_AT_ACK);

    // The dead process's files, before anyone opens them again: every acknowledged event is in
    // the log, in acknowledged order, followed by at most the one request that was in flight.
    const events = readEvents(dataDir, { prefix: 'factory-' });
    const byStream = new Map<string, typeof events>();
    for (const e of events) byStream.set(e.stream, [...(byStream.get(e.stream) ?? []), e]);
    for (const t of tracked) {
      const stored = byStream.get(`factory-${t.uid}`) ?? [];
      expect(stored.map((e) => e.revision)).toEqual(stored.map((_, i) => i));
      const landed = names(stored);
      expect(landed.slice(0, t.acked.length), t.uid).toEqual(t.acked);
      expect(landed.slice(t.acked.length), t.uid).toEqual(
        t.inFlight && landed.length > t.acked.length ? [t.inFlight] : [],
      );
    }
    const created = events.filter((e) => e.type === 'FactoryCreated').length;
    expect(created).toBeGreaterThanOrEqual(tracked.length);
    expect(created).toBeLessThanOrEqual(tracked.length + creationsInFlight);

    // Read models and checkpoints are committed together, so even a crashed store verifies.
    const env = { dataDir };
    const crashed = await runCli(['projections', 'status'], env);
    expect(crashed.code, crashed.stderr).toBe(0);
    const crashedRows = parseStatus(crashed.stdout);
    expect(crashedRows.length).toBeGreaterThan(0);
    const crashedVerify = await runCli(['projections', 'verify'], env);
    expect(crashedVerify.code, crashedVerify.stdout + crashedVerify.stderr).toBe(0);

    // Restart on the same data directory: ready means every projection caught up from where it was.
    const second = await start();
    const status = await runCli(['projections', 'status'], env);
    expect(status.code, status.stderr).toBe(0);
    const rows = parseStatus(status.stdout);
    expect(rows.map((r) => r.projection)).toEqual(crashedRows.map((r) => r.projection));
    for (const r of rows) {
      expect(r, `${r.projection} has no lag`).toMatchObject({ lag: '0', caught_up: 'true', position: r.head });
      const before = crashedRows.find((c) => c.projection === r.projection)!;
      expect(Number(r.position)).toBeGreaterThanOrEqual(before.position === '-' ? -1 : Number(before.position));
    }

    const readAll = async () => {
      const docs = new Map<string, unknown>();
      for (let i = 0; i < tracked.length; i += 16) {
        const chunk = tracked.slice(i, i + 16);
        const answers = await Promise.all(chunk.map((t) => call(second, 'GET', `/factory/${t.uid}`)));
        for (const [j, t] of chunk.entries()) docs.set(t.uid, answers[j]);
      }
      return docs;
    };
    const docs = await readAll();
    for (const t of tracked) {
      const res = docs.get(t.uid) as Awaited<ReturnType<typeof call>>;
      expect(res.status, t.uid).toBe(200);
      expect([t.acked.at(-1), t.inFlight], t.uid).toContain(res.body!.name);
      expect(res.body!.name, `${t.uid}: the read model shows what the log says`).toBe(
        names(byStream.get(`factory-${t.uid}`)!).at(-1),
      );
    }

    const verified = await runCli(['projections', 'verify'], env);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    for (const r of rows) expect(verified.stdout).toContain(`${r.projection}: ok`);

    // Rebuild every read model beside the live one while the server runs, then swap it in.
    const rebuilt = await runCli(['projections', 'rebuild', 'all'], env);
    expect(rebuilt.code, rebuilt.stdout + rebuilt.stderr).toBe(0);
    // One pass over the log rebuilds all of them.
    const summary = /^(.+): rebuilt from \d+ events in [\d.]+ s$/m.exec(rebuilt.stdout);
    expect(summary?.[1]?.split(', ')).toEqual(rows.map((r) => r.projection));
    expect(await readAll()).toEqual(docs);
    const reverified = await runCli(['projections', 'verify'], env);
    expect(reverified.code, reverified.stdout + reverified.stderr).toBe(0);

    await second.stop();
    expect(second.process.exitCode, second.stderr()).toBe(0);
  });
});

const names = (events: ReturnType<typeof readEvents>) =>
  events.map((e) => (e.type === 'FactoryCreated' ? e.data.name : (e.data.changes as { name: string }).name));
