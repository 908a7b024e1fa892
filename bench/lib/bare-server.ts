/** The ceiling of every HTTP figure: a bare Fastify hello-world route, no logger, no validation. */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
app.get('/readyz', async () => ({ status: 'ready' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });

process.once('SIGTERM', async () => {
  await app.close();
  process.exit(0);
});
