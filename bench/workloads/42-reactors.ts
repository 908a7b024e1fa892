/**
 * 5b. Reactors on a fresh read store: the server starts on the `mixed` history as a server leaves
 * it (its reactors' effects in the log, lib/reacted-history.ts) with an empty read store. The read
 * models' catch-up (spawn to /readyz 200) is the ceiling; the reactors must have passed the log
 * within 1.5 times that, from the same spawn. Meanwhile /readyz is sampled: while any reactor's
 * checkpoint is short of the head the server started with, it must name a reactor catching up.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { features } from '../../src/features.js';
import { reactorCheckpoint } from '../../src/projector/reactor.js';
import { params } from '../lib/config.js';
import { fmt, log } from '../lib/measure.js';
import { cachedReactedHistory } from '../lib/reacted-history.js';
import { copyHistory } from '../lib/seed.js';
import { startServer } from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Workload } from '../lib/workload.js';

const SAMPLE_MS = 200;
const TARGET = 1.5;

interface Samples {
  taken: number;
  /** Taken while a reactor was short of the starting head, and /readyz named none catching up. */
  untruthful: number;
  /** The most reactors /readyz named catching up at once. */
  mostCatchingUp: number;
}

/** Samples /readyz against the reactors' checkpoints every SAMPLE_MS until stopped. */
function sampleReadiness(dataDir: string, startHead: number, base: string, samples: Samples) {
  const read = new Database(path.join(dataDir, 'read.db'), { readonly: true });
  const names = JSON.stringify(features.flatMap((f) => f.reactors ?? []).map(reactorCheckpoint));
  const behind = read
    .prepare(
      `SELECT count(*) FROM json_each(?) AS r LEFT JOIN checkpoints c ON c.name = r.value
       WHERE c.name IS NULL OR CAST(c.commit_pos AS INTEGER) < ?`,
    )
    .pluck();
  let running = true;
  const loop = (async () => {
    while (running) {
      // Checkpoints first: a reactor short of the head then is still so when /readyz answers after.
      const short = behind.get(names, startHead) as number;
      const body = (await (await fetch(`${base}/readyz`)).json()) as { reactors?: { catching_up: unknown[] } };
      const named = body.reactors?.catching_up.length ?? 0;
      samples.taken += 1;
      samples.mostCatchingUp = Math.max(samples.mostCatchingUp, named);
      if (short > 0 && named === 0) samples.untruthful += 1;
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      read.close();
    },
  };
}

const workload: Workload = {
  title: '5b. Reactors on a fresh read store',
  async run() {
    const { file, events } = await cachedReactedHistory(params.memoryEvents);
    const dir = tempDir('reactors');
    copyHistory(file, dir);
    const samples: Samples = { taken: 0, untruthful: 0, mostCatchingUp: 0 };
    log(`starting the server on ${fmt(events)} events with an empty read store`);
    const server = await startServer(dir, 'server-reactors', 600_000, (base) =>
      sampleReadiness(dir, events, base, samples),
    );
    await server.proc.stop();
    const reactorsMs = server.readyMs + server.reactorsMs;
    const ratio = reactorsMs / server.readyMs;
    log(`read models ${fmt(server.readyMs)} ms, reactors ${fmt(reactorsMs)} ms from spawn`);
    return {
      figures: [
        {
          name: `Reactors caught up on a fresh read store over ${fmt(events)} events (from spawn)`,
          value: reactorsMs / 1000,
          unit: 's',
          detail: `${fmt(server.reactorsMs / 1000, 1)} s after /readyz first answered 200`,
          ceiling: { name: "the read models' catch-up, spawn to /readyz 200", value: server.readyMs / 1000 },
          target: { text: `≤ ${TARGET}x the read models' catch-up`, met: ratio <= TARGET },
        },
        {
          name: '/readyz meanwhile: samples that named no reactor catching up while one was short of the head',
          value: samples.untruthful,
          unit: 'samples',
          detail: `${fmt(samples.taken)} samples every ${SAMPLE_MS} ms; at most ${samples.mostCatchingUp} reactors named at once`,
          target: { text: '0', met: samples.untruthful === 0 },
        },
      ],
      notes: [
        `The \`mixed\` history of workload 2 (BENCH_MEMORY_EVENTS), passed once by a server's reactors beforehand (cached), ` +
          `so the log holds their effects as a server's would; the server starts on a copy with no read store. ` +
          `Each reactor without a checkpoint starts at the cause of its last recorded effect (docs/architecture.md, the replay rule per reactor).`,
      ],
    };
  },
};
export default workload;
