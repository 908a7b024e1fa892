/** `shopfloor projections status | rebuild <name|all> | verify [name]`. */
import cliProgress from 'cli-progress';
import { comparePositions, START, type EventStore, type Position } from '../eventstore/port.js';
import type { DocumentStore } from '../readstore/port.js';
import { type AnyProjection, collectionOf } from '../projector/projection.js';
import { rebuildProjections, verifyProjection } from '../projector/rebuild.js';

export interface Stores {
  events: EventStore;
  docs: DocumentStore;
}

const show = (p: Position) => (p.commit < 0n ? '-' : p.commit.toString());

export async function status({ events, docs }: Stores, projections: readonly AnyProjection[]): Promise<number> {
  const head = await events.headPosition();
  const rows = [];
  for (const p of projections) {
    const checkpoint = (await docs.readCheckpoint(collectionOf(p))) ?? START;
    rows.push({
      projection: p.name,
      version: p.version,
      position: show(checkpoint),
      head: show(head),
      lag: (head.commit - checkpoint.commit).toString(),
      caught_up: comparePositions(checkpoint, head) >= 0,
    });
  }
  console.table(rows);
  return 0;
}

export function select(projections: readonly AnyProjection[], name: string | undefined): AnyProjection[] {
  if (!name || name === 'all') return [...projections];
  const found = projections.filter((p) => p.name === name);
  if (!found.length) throw new Error(`unknown projection ${name}; known: ${projections.map((p) => p.name).join(', ')}`);
  return found;
}

/** Rebuilds the chosen read models in one pass over the log (only the event types they handle). */
export async function rebuild({ events, docs }: Stores, chosen: AnyProjection[]): Promise<number> {
  const names = chosen.map((p) => p.name).join(', ');
  const bar = new cliProgress.SingleBar(
    {
      format: `rebuilding [{bar}] {percentage}% | {events} events`,
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 2000,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = performance.now();
  bar.start(100, 0, { events: 0 });
  const count = await rebuildProjections(events, docs, chosen, ({ events: n, position, head }) => {
    const percent = head.commit > 0n ? Number((position.commit * 100n) / head.commit) : 100;
    bar.update(percent, { events: n });
  });
  bar.update(100, { events: count });
  bar.stop();
  const seconds = (performance.now() - started) / 1000;
  console.log(`${names}: rebuilt from ${count} events in ${seconds.toFixed(2)} s`);
  return 0;
}

export async function verify({ events, docs }: Stores, chosen: AnyProjection[]): Promise<number> {
  let failures = 0;
  for (const p of chosen) {
    const differences = await verifyProjection(events, docs, p);
    if (differences.length === 0) {
      console.log(`${p.name}: ok`);
      continue;
    }
    failures += 1;
    console.log(`${p.name}: ${differences.length} document(s) differ`);
    for (const d of differences.slice(0, 20)) console.log(JSON.stringify(d));
  }
  return failures ? 1 : 0;
}
