/**
 * `shopfloor history task|run|team|user <id> [--table]`: the history entries the API serves, read
 * from the stores directly (no server needed), one JSON line each or a table for people. A task's
 * or run's come from the event log; a team's are its access audit (the read model behind
 * GET /teams/{team_uid}/audit); a user's are the events of the account's stream (registration,
 * invitations, keys issued and revoked), as recorded.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import type { CliCommand } from '../../src/feature.js';
import { collectionOf } from '../../src/projector/projection.js';
import type { DocumentStore } from '../../src/readstore/port.js';
import { withStores } from '../../src/runtime.js';
import { userStream } from '../../commands/user/events.js';
import { type AuditEntryDoc, accessAuditProjection, teamAudit } from '../../commands/team/public.js';
import { type RunCreatedData, runStream } from '../../commands/run/events.js';
import { type HistoryEntry, toHistoryEntry } from '../../src/http/history.js';
import { taskHistory } from './history.js';

const USAGE = [
  '  shopfloor history task|run <id> [--table]  the events of a task (with its conversation) or a run',
  "  shopfloor history team|user <id> [--table] a team's access audit, or a user account's events",
].join('\n');

const KINDS = ['task', 'run', 'team', 'user'];

/** The run's creation (who may see it) and its events, or null for an unknown run. */
async function runHistory(
  events: EventStore,
  runId: string,
): Promise<{ run: RunCreatedData; events: RecordedEvent[] } | null> {
  const all = await events.readStream(runStream(runId));
  return all[0]?.type === 'RunCreated' ? { run: all[0].data as RunCreatedData, events: all } : null;
}

/** The entries of one task, run, team or user; null when there is none. */
async function entriesOf(
  stores: { events: EventStore; docs: DocumentStore },
  kind: string,
  id: string,
): Promise<HistoryEntry[] | null> {
  if (kind === 'task' || kind === 'run') {
    const found = kind === 'task' ? await taskHistory(stores.events, id) : await runHistory(stores.events, id);
    return found ? found.events.map(toHistoryEntry) : null;
  }
  if (kind === 'user') {
    const events = await stores.events.readStream(userStream(id));
    return events.length ? events.map(toHistoryEntry) : null;
  }
  const audit = stores.docs.collection<AuditEntryDoc>(collectionOf(accessAuditProjection));
  const entries: HistoryEntry[] = [];
  for (let cursor: string | undefined; ; ) {
    const page = await teamAudit(audit, id, 1000, cursor);
    entries.push(...page.entries);
    if (!page.page_info.next_cursor) break;
    cursor = page.page_info.next_cursor;
  }
  return entries.length ? entries : null;
}

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

/** Prints the history; 1 when there is no such task, run, team or user, 2 on a usage error. */
export async function history(
  stores: { events: EventStore; docs: DocumentStore },
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
  if (!kind || !KINDS.includes(kind) || !id || positionals.length > 2) {
    console.error(`usage:\n${USAGE}`);
    return 2;
  }
  const entries = await entriesOf(stores, kind, id);
  if (!entries) {
    console.error(`no ${kind} ${id}`);
    return 1;
  }
  if (values.table) console.table(entries.map(row));
  else for (const entry of entries) out(JSON.stringify(entry));
  return 0;
}

/** The command on the stores of the configuration. */
export const historyCommand: CliCommand = {
  name: 'history',
  usage: USAGE,
  run: (argv) => withStores(loadConfig(), (stores) => history(stores, argv)),
};
