/** `npm start`: open the stores, start every feature (an empty store is bootstrapped), serve the API. */
import { loadConfig } from './config.js';
import { features } from './features.js';
import { createLogger } from './log.js';
import { boundHeapGrowth } from './heap.js';
import { openServer } from './server.js';
import { serveMetricsPort } from './metrics/port.js';

boundHeapGrowth();
const config = loadConfig();
const log = createLogger(config);
const server = await openServer(config, log, features);
await server.app.listen({ host: config.HOST, port: config.PORT });
const metricsPort = config.METRICS_PORT === undefined ? null : await serveMetricsPort(config, server.rt.metrics);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    log.info({ signal }, 'shutting down');
    await metricsPort?.close();
    await server.close();
    process.exit(0);
  });
}
