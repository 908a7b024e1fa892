/**
 * The reactors' part of `shopfloor projections status | verify | retry`: the events a reactor set
 * aside (its reaction threw on every try, see projector/reactor-run), and running those reactions
 * once more. A retry is not a rebuild: the reaction's effect is a command, and its ids derive from
 * the event, so doing it late, in this process beside a running server, does it once.
 */
import type { Logger } from 'pino';
import type { DocumentStore, SetAside } from '../readstore/port.js';
import { type AnyReactor, reactorCheckpoint } from '../projector/reactor.js';
import { reactTo } from '../projector/reactor-run.js';
import type { Runtime } from '../runtime.js';

const LIST_SET_ASIDE = 20;

export const describeSetAside = ({
  position,
  stream,
  revision,
  event_type,
  event_id,
  metadata: m,
  at,
  error,
}: SetAside) =>
  `position ${position.commit < 0n ? '-' : position.commit}  ${stream}@${revision}  ${event_type}  event ${event_id}  team ${m.team_uid ?? '-'}  request ${m.request_id ?? '-'}  set aside ${at}: ${error}`;

export const REACTOR_RETRY_HINT =
  'Fix the cause, then `shopfloor projections retry <reactor>` runs those reactions once more (not a rebuild).';

/** Prints the events each of `reactors` set aside (the first few); returns how many there are in all. */
export async function printReactorSetAside(docs: DocumentStore, reactors: readonly string[]): Promise<number> {
  const counts = await docs.countSetAside();
  let total = 0;
  for (const name of reactors) {
    const n = counts.get(reactorCheckpoint({ name })) ?? 0;
    if (n === 0) continue;
    total += n;
    console.log(`reactor ${name}: ${n} event(s) set aside, its reaction failed every try:`);
    for (const e of await docs.listSetAside(reactorCheckpoint({ name }), LIST_SET_ASIDE))
      console.log(`  ${describeSetAside(e)}`);
    if (n > LIST_SET_ASIDE) console.log(`  … and ${n - LIST_SET_ASIDE} more`);
  }
  return total;
}

/** Runs the reaction to one set-aside event once; forgets the record when it succeeds. */
async function retryOne(rt: Runtime, reactor: AnyReactor<Runtime>, log: Logger, setAside: SetAside): Promise<boolean> {
  const [event] = await rt.events.readStream(setAside.stream, { fromRevision: setAside.revision, maxCount: 1 });
  if (!event || event.id !== setAside.event_id) {
    console.log(`reactor ${reactor.name}: event ${setAside.event_id} is no longer in the log; left set aside`);
    return false;
  }
  const failed = await reactTo(
    {
      reactor,
      deps: rt,
      events: rt.events,
      docs: rt.docs,
      log,
      signal: new AbortController().signal,
      before: (e) => rt.projector.waitFor(e.position),
      settings: { attempts: 1, backoffMs: 0 },
    },
    event,
  );
  if (failed) {
    console.log(`reactor ${reactor.name}: ${describeSetAside({ ...setAside, ...failed })}`);
    return false;
  }
  await rt.docs.clearSetAside(reactorCheckpoint(reactor), setAside.position);
  return true;
}

/**
 * Retries the set-aside events of `chosen` reactors in a runtime of this process (`open`), each
 * reaction once. Exit 1 while any stays set aside.
 */
export async function retryReactors(
  chosen: ReadonlyArray<AnyReactor<Runtime>>,
  open: () => Promise<Runtime>,
): Promise<number> {
  const rt = await open();
  let left = 0;
  try {
    for (const reactor of chosen) {
      const all = await rt.docs.listSetAside(reactorCheckpoint(reactor));
      let done = 0;
      for (const setAside of all) if (await retryOne(rt, reactor, rt.log, setAside)) done += 1;
      console.log(`reactor ${reactor.name}: ${all.length} event(s) were set aside; ${all.length - done} still are`);
      left += all.length - done;
    }
  } finally {
    await rt.close();
  }
  return left ? 1 : 0;
}
