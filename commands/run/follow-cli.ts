/**
 * `shopfloor runs follow <run_id>`: prints a run (and the runs below it) as it happens, from its
 * event stream, one line per event for people or `--json` (one JSON object a line); exits once
 * every run of the tree is terminal, with a code that tells how the run ended. A client of the API.
 */
import { parseArgs } from 'node:util';
import type { CliCommand } from '../../src/feature.js';
import { follow, humanLine } from '../../src/streams/client.js';
import type { RunState } from './events.js';
import { runDetailEvents } from './run-detail-events.js';
import { runStateEvents } from './stream-events.js';

const USAGE = `  shopfloor runs follow <run_id> [--json] [--url URL] [--api-key KEY]
                                            print the run as it happens until it ends; exit 0 when
                                            it succeeded, 1 failed or errored, 3 cancelled,
                                            4 blocked, 5 could not follow it`;

/** The exit code of a run that ended in `state`. */
const EXIT: Partial<Record<RunState, number>> = { SUCCEEDED: 0, FAILED: 1, ERROR: 1, CANCELLED: 3, BLOCKED: 4 };
const CANNOT_FOLLOW = 5;

const TYPES = [...Object.keys(runStateEvents.types), ...Object.keys(runDetailEvents.types)];

async function run(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: 'boolean', default: false },
      url: { type: 'string', default: process.env.SHOPFLOOR_URL ?? 'http://127.0.0.1:8080' },
      'api-key': { type: 'string', default: process.env.SHOPFLOOR_API_KEY },
    },
  });
  const [runId] = positionals;
  if (action !== 'follow' || !runId || positionals.length > 1 || !values['api-key']) {
    console.error(`usage (the key defaults to $SHOPFLOOR_API_KEY, the URL to $SHOPFLOOR_URL):\n${USAGE}`);
    return 2;
  }
  const runUrl = `${values.url.replace(/\/$/, '')}/api/v1/agent/runs/${encodeURIComponent(runId)}`;
  const ended = await follow({
    url: `${runUrl}/events`,
    apiKey: values['api-key'],
    types: TYPES,
    onEvent: (e) =>
      console.log(values.json ? JSON.stringify({ id: e.id, type: e.type, data: e.data }) : humanLine(e, new Date())),
  });
  if (ended.refused !== null) {
    console.error(`cannot follow run ${runId}: ${ended.refused ?? ''} ${ended.message ?? ''}`.trim());
    return CANNOT_FOLLOW;
  }
  const res = await fetch(runUrl, { headers: { authorization: `Bearer ${values['api-key']}` } });
  const state = res.ok ? ((await res.json()) as { state: RunState }).state : null;
  if (!values.json) console.error(`run ${runId} ended: ${state ?? 'unknown'}`);
  return (state && EXIT[state]) ?? CANNOT_FOLLOW;
}

export const runsFollowCommand: CliCommand = { name: 'runs', usage: USAGE, run };
