/**
 * `shopfloor history task|run <id> [--table]`: the history entries the API serves, read from the
 * event store directly (no server needed), one JSON line each or a table for people.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import type { EventStore } from '../src/eventstore/port.js';
import type { CliCommand } from '../src/feature.js';
import { openStores } from '../src/runtime.js';
import { type HistoryEntry, runHistory, taskHistory, toHistoryEntry } from './history.js';

const USAGE = '  shopfloor history task|run <id> [--table]  the events of a task (with its conversation) or a run';

const brief = (value: unknown, width = 80) => {
  const text = JSON.stringify(value);
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
};

const row = (e: HistoryEntry) => ({
  position: e.position,
  stream: e.stream,
  revision: e.revision,
  type: e.type,
  occurred_at: e.occurred_at,
  actor: `${e.actor.type}:${e.actor.uid}`,
  correlation_id: e.correlation_id,
  data: brief(e.data),
});

/** Prints the history; 1 when there is no such task or run, 2 on a usage error. */
export async function history(
  events: EventStore,
  argv: string[],
  out: (line: string) => void = console.log,
): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { table: { type: 'boolean', default: false } },
  });
  const [kind, id] = positionals;
  if ((kind !== 'task' && kind !== 'run') || !id || positionals.length > 2) {
    console.error(`usage:\n${USAGE}`);
    return 2;
  }
  const found = kind === 'task' ? await taskHistory(events, id) : await runHistory(events, id);
  if (!found) {
    console.error(`no ${kind} ${id}`);
    return 1;
  }
  const entries = found.events.map(toHistoryEntry);
  if (values.table) console.table(entries.map(row));
  else for (const entry of entries) out(JSON.stringify(entry));
  return 0;
}

/** The command on the stores of the configuration. */
export const historyCommand: CliCommand = {
  name: 'history',
  usage: USAGE,
  async run(argv) {
    const stores = await openStores(loadConfig());
    try {
      return await history(stores.events, argv);
    } finally {
      await stores.events.close();
      await stores.docs.close();
    }
  },
};
