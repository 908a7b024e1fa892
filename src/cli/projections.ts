/** `shopfloor projections status | rebuild <name|all> | verify [name] | retry [name]`. */
import cliProgress from 'cli-progress';
import { comparePositions, START, type EventStore, type Position } from '../eventstore/port.js';
import type { DocumentStore } from '../readstore/port.js';
import { type AnyProjection, collectionOf } from '../projector/projection.js';
import { rebuildProjections, verifyProjection } from '../projector/rebuild.js';
import { type LeaseDoc, listLeases } from '../projector/ownership.js';
import { type AnyReactor, reactorCheckpoint } from '../projector/reactor.js';
import type { Runtime } from '../runtime.js';
import { describeSetAside, printReactorSetAside, REACTOR_RETRY_HINT, retryReactors } from './reactors.js';

export interface Stores {
  events: EventStore;
  docs: DocumentStore;
}

const show = (p: Position) => (p.commit < 0n ? '-' : p.commit.toString());
/** Set-aside events listed per read model; the count says how many more there are. */
const LIST_SET_ASIDE = 20;

/** Prints the events `p` set aside (the first few); returns how many there are. */
async function printSetAside(docs: DocumentStore, p: AnyProjection, count?: number): Promise<number> {
  const n = count ?? (await docs.countSetAside()).get(collectionOf(p)) ?? 0;
  if (n === 0) return 0;
  console.log(`${p.name}: ${n} event(s) set aside, skipped because the read model cannot apply them:`);
  for (const e of await docs.listSetAside(collectionOf(p), LIST_SET_ASIDE)) console.log(`  ${describeSetAside(e)}`);
  if (n > LIST_SET_ASIDE) console.log(`  … and ${n - LIST_SET_ASIDE} more`);
  return n;
}

const RETRY_HINT = 'Fix the cause, then `shopfloor projections retry` applies them (a rebuild of those read models).';

/** Who holds a lease: `host pid N`, or why nobody does. */
function ownerOf(lease: LeaseDoc | undefined, nowMs: number): string {
  if (!lease) return '-';
  if (lease.holder === null) return 'none (released)';
  const silent = (nowMs - Date.parse(lease.renewed_at)) / 1000;
  const who = `${lease.host} pid ${lease.pid}`;
  // Wall clocks of two machines may differ a little; this is for people, the lease does not use it.
  return silent * 1000 > lease.ttl_ms ? `${who} (silent ${Math.round(silent)} s)` : who;
}

/**
 * Position, lag and owner of every read model (the projector's, one process of the store at a
 * time) and of every reactor; then the other exclusive work and who owns it.
 */
export async function status(
  { events, docs }: Stores,
  projections: readonly AnyProjection[],
  reactors: readonly string[] = [],
): Promise<number> {
  const head = await events.headPosition();
  const counts = await docs.countSetAside();
  const leases = new Map((await listLeases(docs)).map((l) => [l.name, l]));
  const nowMs = Date.now();
  const rows = [];
  const row = (name: string, checkpoint: Position) => ({
    position: show(checkpoint),
    head: show(head),
    lag: (head.commit - checkpoint.commit).toString(),
    caught_up: comparePositions(checkpoint, head) >= 0,
    owner: ownerOf(leases.get(name), nowMs),
  });
  for (const p of projections) {
    const checkpoint = (await docs.readCheckpoint(collectionOf(p))) ?? START;
    rows.push({
      projection: p.name,
      version: p.version,
      ...row('projector', checkpoint),
      set_aside: counts.get(collectionOf(p)) ?? 0,
    });
  }
  console.table(rows);
  // Beside the table (which lists read models only, as scripts read it): the reactors, then any
  // other work one process owns at a time.
  const reactorRows = [];
  for (const name of reactors) {
    const checkpoint = (await docs.readCheckpoint(reactorCheckpoint({ name }))) ?? START;
    reactorRows.push({
      name,
      ...row(reactorCheckpoint({ name }), checkpoint),
      set_aside: counts.get(reactorCheckpoint({ name })) ?? 0,
    });
  }
  const width = Math.max(0, ...reactorRows.map((r) => r.name.length));
  for (const r of reactorRows)
    console.log(
      `reactor ${r.name.padEnd(width)}  position ${r.position}  lag ${r.lag}  ${r.caught_up ? 'caught up' : 'behind'}  set aside ${r.set_aside}  owner ${r.owner}`,
    );
  const shown = new Set(['projector', ...reactors.map((name) => reactorCheckpoint({ name }))]);
  for (const [name, lease] of leases) if (!shown.has(name)) console.log(`${name}: owned by ${ownerOf(lease, nowMs)}`);
  let setAside = 0;
  for (const p of projections) setAside += await printSetAside(docs, p, counts.get(collectionOf(p)) ?? 0);
  if (setAside) console.log(RETRY_HINT);
  if (await printReactorSetAside(docs, reactors)) console.log(REACTOR_RETRY_HINT);
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
  let setAside = 0;
  for (const p of chosen) setAside += await printSetAside(docs, p);
  if (setAside) console.log(RETRY_HINT);
  return setAside ? 1 : 0;
}

/**
 * Retries the set-aside events of the chosen read models (those that have any, when none is
 * named). Applying an old event late, over documents later events have changed since, would not
 * give what the log gives, so a retry is a rebuild of each such read model (beside the live one,
 * so a running server goes on serving it): the events that now apply are applied in their place,
 * those that still fail stay set aside. Exit 1 while any does.
 */
async function retryReadModels(stores: Stores, chosen: AnyProjection[]): Promise<number> {
  const before = await stores.docs.countSetAside();
  await rebuild(stores, chosen);
  const after = await stores.docs.countSetAside();
  let left = 0;
  for (const p of chosen) {
    const [was, is] = [before.get(collectionOf(p)) ?? 0, after.get(collectionOf(p)) ?? 0];
    console.log(`${p.name}: ${was} event(s) were set aside; ${is} still are`);
    left += is;
  }
  return left ? 1 : 0;
}

/** What `projections retry` may name: the read models, and the reactors (see cli/reactors). */
export interface Retryable {
  projections: readonly AnyProjection[];
  reactors: ReadonlyArray<AnyReactor<Runtime>>;
  /** A runtime of this process, for the reactions. */
  open: () => Promise<Runtime>;
}

/** `projections retry [name]`: the named read model or reactor, else every one with set-aside events. */
export async function retry(
  stores: Stores,
  { projections, reactors, open }: Retryable,
  name?: string,
): Promise<number> {
  const counts = await stores.docs.countSetAside();
  const reactor = name ? reactors.filter((r) => r.name === name) : [];
  const models = reactor.length
    ? []
    : name
      ? select(projections, name)
      : projections.filter((p) => counts.has(collectionOf(p)));
  const react = name && name !== 'all' ? reactor : reactors.filter((r) => counts.has(reactorCheckpoint(r)));
  if (models.length === 0 && react.length === 0) {
    console.log('No events are set aside.');
    return 0;
  }
  const failed = models.length ? await retryReadModels(stores, models) : 0;
  return (react.length ? await retryReactors(react, open) : 0) || failed;
}

/**
 * Exit 1 when a read model differs from its rebuild, or has events set aside (it lacks them), or
 * one of `reactors` has (their reactions were not done).
 */
export async function verify(
  { events, docs }: Stores,
  chosen: AnyProjection[],
  reactors: readonly string[] = [],
): Promise<number> {
  let failures = 0;
  let setAside = 0;
  for (const p of chosen) {
    const differences = await verifyProjection(events, docs, p);
    const skipped = await printSetAside(docs, p);
    setAside += skipped;
    if (differences.length === 0) {
      if (!skipped) console.log(`${p.name}: ok`);
      else failures += 1;
      continue;
    }
    failures += 1;
    console.log(`${p.name}: ${differences.length} document(s) differ`);
    for (const d of differences.slice(0, 20)) console.log(JSON.stringify(d));
  }
  if (setAside) console.log(RETRY_HINT);
  const reactions = await printReactorSetAside(docs, reactors);
  if (reactions) console.log(REACTOR_RETRY_HINT);
  return failures || reactions ? 1 : 0;
}
