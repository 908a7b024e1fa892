/**
 * The ceilings of every HTTP figure: a bare Fastify hello-world route, no logger, no validation;
 * and a bare route that answers with one of a query case's own answers (the real server's, posted
 * by the harness), so that what serializing and sending those bytes costs is measured too.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
app.get('/readyz', async () => ({ status: 'ready' }));

let answers: unknown[] = [];
app.post('/answers', { bodyLimit: 256 * 1024 * 1024 }, async (req) => {
  answers = req.body as unknown[];
  return { count: answers.length };
});
// Held as parsed objects, so each request serializes its answer as any Fastify route would.
app.get('/answer', async () => answers[Math.floor(Math.random() * answers.length)]);

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });

process.once('SIGTERM', async () => {
  await app.close();
  process.exit(0);
});
