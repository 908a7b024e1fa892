/** The `shopfloor` CLI: operations on the stores of the configured data directory or servers. */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { projectionsOf, streamSourcesOf } from '../feature.js';
import { features } from '../features.js';
import { pino } from 'pino';
import { createLogger } from '../log.js';
import { openRuntime, withStores } from '../runtime.js';
import { EXPORT_USAGE, exportReadModel } from './export.js';
import { BACKUP_USAGE, backupCommand, restoreCommand } from './backup.js';
import { rebuild, retry, select, status, verify } from './projections.js';
import { workerCommand } from './worker/command.js';
import { eventsTailCommand } from './events-tail.js';
import { streamEventTypes } from '../streams/stream-events.js';

const projections = projectionsOf(features);
const reactors = features.flatMap((f) => f.reactors ?? []);
const reactorNames = reactors.map((r) => r.name);
const teamStreamTypes = [...streamEventTypes(streamSourcesOf(features))]
  .filter(([, t]) => t.feeds.includes('team'))
  .map(([name]) => name);
const commands = [workerCommand, eventsTailCommand(teamStreamTypes), ...features.flatMap((f) => f.cli ?? [])];

const USAGE = `usage:
  shopfloor projections status              position, lag and owning process of every read model and reactor
  shopfloor projections rebuild <name|all>  rebuild beside the live collection, then swap it in
  shopfloor projections verify [name]       rebuild into a shadow and diff; exit 1 on any difference or set-aside event (of a reactor too)
  shopfloor projections retry [name]        rebuild the read models with set-aside events, run the reactors' set-aside reactions once more; exit 1 if any stays set aside
${EXPORT_USAGE}
${BACKUP_USAGE}
${commands.map((c) => c.usage).join('\n')}`;

async function main(argv: string[]): Promise<number> {
  const command = commands.find((c) => c.name === argv[0]);
  if (command) return command.run(argv.slice(1));
  if (argv[0] === 'backup') return backupCommand(loadConfig(), argv[1], reactorNames);
  if (argv[0] === 'restore') return restoreCommand(loadConfig(), argv[1], projections);
  if (argv[0] === 'export') {
    return withStores(loadConfig(), (stores) => exportReadModel(stores.docs, projections, argv.slice(1)));
  }
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true });
  const [group, action, name] = positionals;
  if (group !== 'projections' || !action) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  return withStores(config, async (stores) => {
    switch (action) {
      case 'status':
        return await status(stores, projections, reactorNames);
      case 'rebuild':
        if (!name) throw new Error('name the projection to rebuild, or all');
        return await rebuild(stores, select(projections, name));
      case 'verify':
        // Reactors' set-aside events count when every read model is verified.
        return await verify(stores, select(projections, name), name && name !== 'all' ? [] : reactorNames);
      case 'retry': {
        // The runtime's log goes to stderr: stdout is the command's report.
        const open = () => openRuntime(config, createLogger(config, pino.destination(2)), projections);
        return await retry(stores, { projections, reactors, open }, name);
      }
      default:
        console.error(USAGE);
        return 2;
    }
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
