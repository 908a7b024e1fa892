/**
 * `shopfloor events tail`: the active team's activity as it happens (GET /events), one line per
 * event for people or `--json`; filtered by factory and type. Runs until interrupted, reconnecting
 * with the last id; exits 5 when the server refuses it (the key revoked, the member removed).
 */
import { parseArgs } from 'node:util';
import type { CliCommand } from '../feature.js';
import { follow, humanLine } from '../streams/client.js';

const USAGE = `  shopfloor events tail [--factory UID]… [--types TYPE]… [--team UID] [--after ID] [--json] [--url URL] [--api-key KEY]
                                            the team's activity as it happens (runs, tasks, inbox,
                                            deliveries, …) from now, or after the event
                                            ID; a type may be a group such as run.*`;

/** The command, listening for the team stream's `types` (every type the features register for it). */
export function eventsTailCommand(types: readonly string[]): CliCommand {
  async function run(argv: string[]): Promise<number> {
    const [action, ...rest] = argv;
    const { values } = parseArgs({
      args: rest,
      strict: true,
      options: {
        factory: { type: 'string', multiple: true },
        types: { type: 'string', multiple: true },
        team: { type: 'string' },
        after: { type: 'string' },
        json: { type: 'boolean', default: false },
        url: { type: 'string', default: process.env.SHOPFLOOR_URL ?? 'http://127.0.0.1:8080' },
        'api-key': { type: 'string', default: process.env.SHOPFLOOR_API_KEY },
      },
    });
    if (action !== 'tail' || !values['api-key']) {
      console.error(`usage (the key defaults to $SHOPFLOOR_API_KEY, the URL to $SHOPFLOOR_URL):\n${USAGE}`);
      return 2;
    }
    const query = new URLSearchParams([
      ...(values.factory ?? []).map((f) => ['factory_uid', f]),
      ...(values.types ?? []).flatMap((t) => t.split(',')).map((t) => ['types', t.trim()]),
      ...(values.after ? [['after', values.after]] : []),
    ]);
    const ended = await follow({
      url: `${values.url.replace(/\/$/, '')}/api/v1/events${query.size ? `?${query}` : ''}`,
      apiKey: values['api-key'],
      team: values.team,
      types,
      onEvent: (e) =>
        console.log(values.json ? JSON.stringify({ id: e.id, type: e.type, data: e.data }) : humanLine(e, new Date())),
    });
    if (ended.refused === null) return 0;
    console.error(`the server refused the stream: ${ended.refused} ${ended.message ?? ''}`.trim());
    return 5;
  }
  return { name: 'events', usage: USAGE, run };
}
