/** The `shopfloor` CLI: operations on the stores of the configured data directory or servers. */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openStores } from '../runtime.js';
import { projections } from '../../projections/index.js';
import { rebuild, select, status, verify } from './projections.js';
import { HISTORY_USAGE, historyCommand } from './history.js';
import { WORKER_USAGE, workerCommand } from './worker.js';

const USAGE = `usage:
  shopfloor projections status              position and lag of every read model
  shopfloor projections rebuild <name|all>  rebuild beside the live collection, then swap it in
  shopfloor projections verify [name]       rebuild into a shadow and diff; exit 1 on any difference
${HISTORY_USAGE}
${WORKER_USAGE}`;

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'history') return historyCommand(argv.slice(1));
  if (argv[0] === 'worker') return workerCommand(argv.slice(1));
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true });
  const [group, action, name] = positionals;
  if (group !== 'projections' || !action) {
    console.error(USAGE);
    return 2;
  }
  const stores = await openStores(loadConfig());
  try {
    switch (action) {
      case 'status':
        return await status(stores, projections);
      case 'rebuild':
        if (!name) throw new Error('name the projection to rebuild, or all');
        return await rebuild(stores, select(projections, name));
      case 'verify':
        return await verify(stores, select(projections, name));
      default:
        console.error(USAGE);
        return 2;
    }
  } finally {
    await stores.events.close();
    await stores.docs.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
