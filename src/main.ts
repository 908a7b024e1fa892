/** `npm start`: open the stores, bootstrap an empty one, serve the API. */
import { loadConfig } from './config.js';
import { createLogger } from './log.js';
import { openRuntime } from './runtime.js';
import { buildApp } from './http/app.js';
import { apiModules } from './api.js';
import { projections } from '../projections/index.js';
import { bootstrap } from '../commands/team/bootstrap.js';
import { reactors } from './reactors.js';
import { startWorkers } from './workers/index.js';

const config = loadConfig();
const log = createLogger(config);
const rt = await openRuntime(config, log, projections);

const first = await bootstrap(rt);
if (first) {
  log.info({ team_uid: first.team_uid, user_uid: first.user_uid }, 'bootstrapped an empty store');
  // Printed once, on purpose outside the log stream: this is the only time the key is shown.
  if (first.generated_api_key) process.stdout.write(`\nAdmin API key (shown once): ${first.generated_api_key}\n\n`);
}

rt.startReactors(reactors);
const workers = startWorkers(rt);
const app = await buildApp(rt, apiModules(rt));
await app.listen({ host: config.HOST, port: config.PORT });

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    log.info({ signal }, 'shutting down');
    await app.close();
    await workers.stop();
    await rt.close();
    process.exit(0);
  });
}
