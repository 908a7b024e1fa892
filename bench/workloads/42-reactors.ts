/**
 * 5b. Reactors on a fresh read store: the server starts on the `mixed` history as a server leaves
 * it (its reactors' effects in the log, lib/reacted-history.ts) with an empty read store. The read
 * models' catch-up (spawn to /readyz 200) is the ceiling; the reactors must have passed the log
 * within 1.5 times that, from the same spawn. Meanwhile /readyz is sampled from spawn: while any
 * reactor's checkpoint is short of the head the server started with, it must answer 503 or name a
 * reactor catching up.
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
  /** No answer: the process not listening yet. */
  refused: number;
  /** Answered 503: the read models still catching up (or the read store in trouble). */
  unready: number;
  /** Answered 200 naming a reactor catching up. */
  namedCatchingUp: number;
  /** Answered 200 naming none while a reactor was short of the starting head. */
  untruthful: number;
}

/** How many reactors' checkpoints are short of `head`; null while the read store is not made yet. */
function checkpointsShortOf(dataDir: string, head: number) {
  const names = JSON.stringify(features.flatMap((f) => f.reactors ?? []).map(reactorCheckpoint));
  let read: Database.Database | null = null;
  return {
    count(): number | null {
      try {
        read ??= new Database(path.join(dataDir, 'read.db'), { readonly: true, fileMustExist: true });
        return read
          .prepare(
            `SELECT count(*) FROM json_each(?) AS r LEFT JOIN checkpoints c ON c.name = r.value
             WHERE c.name IS NULL OR CAST(c.commit_pos AS INTEGER) < ?`,
          )
          .pluck()
          .get(names, head) as number;
      } catch {
        return null; // not made yet, or its schema not yet created
      }
    },
    close: () => read?.close(),
  };
}

/** Samples /readyz against the reactors' checkpoints every SAMPLE_MS, from spawn until stopped. */
function sampleReadiness(dataDir: string, startHead: number, base: string, samples: Samples) {
  const short = checkpointsShortOf(dataDir, startHead);
  let running = true;
  const loop = (async () => {
    while (running) {
      // Checkpoints first: a reactor short of the head then is still so when /readyz answers after.
      const behind = short.count();
      const res = await fetch(`${base}/readyz`).catch(() => null);
      samples.taken += 1;
      if (!res) samples.refused += 1;
      else {
        const body = (await res.json()) as { reactors?: { catching_up: unknown[] } };
        const named = body.reactors?.catching_up.length ?? 0;
        if (res.status !== 200) samples.unready += 1;
        else if (named > 0) samples.namedCatchingUp += 1;
        else if ((behind ?? 1) > 0) samples.untruthful += 1;
      }
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      short.close();
    },
  };
}

const workload: Workload = {
  title: '5b. Reactors on a fresh read store',
  async run() {
    const { file, events } = await cachedReactedHistory('mixed', params.memoryEvents);
    const dir = tempDir('reactors');
    copyHistory(file, dir);
    const samples: Samples = { taken: 0, refused: 0, unready: 0, namedCatchingUp: 0, untruthful: 0 };
    log(`starting the server on ${fmt(events)} events with an empty read store`);
    const server = await startServer(dir, 'server-reactors', 600_000, {}, (base) =>
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
          name: '/readyz from spawn: 200s that named no reactor catching up while one was short of the head',
          value: samples.untruthful,
          unit: 'samples',
          detail: `${fmt(samples.taken)} tries every ${SAMPLE_MS} ms: ${fmt(samples.refused)} not listening yet, ${fmt(samples.unready)} 503, ${fmt(samples.namedCatchingUp)} 200 naming reactors catching up`,
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
