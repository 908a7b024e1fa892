/**
 * The CRUD peer: what a user would build instead of event sourcing for the same three commands,
 * a plain state-stored Fastify + better-sqlite3 app. One row per run and per task (the resource
 * as JSON beside the columns it is looked up by), each request one transaction, with the same
 * durability as Shopfloor's event store (WAL, synchronous=FULL: an fsync per commit), the same
 * authentication (a Bearer key looked up by its SHA-256, with its team) and the same validation
 * (Shopfloor's own zod body schemas through fastify-type-provider-zod). No event, no read model,
 * no history: the row is the state.
 *
 * POST /api/v1/agent/runs → 200 {run_id, task_id, state, conversation_id}
 * POST /api/v1/factory/:factory_uid/tasks → 201 task (on a conversation with a run and no task)
 * PATCH /api/v1/factory/:factory_uid/tasks/:task_uid → 200 task
 *
 * Seeded by the harness (`seedCrudPeer`) with the HTTP history's key, factories, tasks and free
 * conversations; started with `DB_FILE` and `PORT`.
 */
import { createHash, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { runRequestSchema } from '../../commands/run/schema.js';
import { STAGES } from '../../commands/task/events.js';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS api_keys (key_hash TEXT PRIMARY KEY, user_uid TEXT NOT NULL, team_uid TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS factories (uid TEXT PRIMARY KEY, team_uid TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, team_uid TEXT NOT NULL, state TEXT NOT NULL,
    created_at TEXT NOT NULL, doc TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS runs_conversation ON runs (conversation_id);
  CREATE TABLE IF NOT EXISTS tasks (
    uid TEXT PRIMARY KEY, factory_uid TEXT NOT NULL, conversation_id TEXT NOT NULL UNIQUE,
    stage TEXT NOT NULL, updated_at TEXT NOT NULL, doc TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS tasks_factory ON tasks (factory_uid);
`;

function open(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.exec(SCHEMA);
  return db;
}

export interface CrudSeed {
  keyHash: string;
  userUid: string;
  teamUid: string;
  factories: string[];
  tasks: Array<{ uid: string; factory: string; conversation: string; stage: string }>;
  /** Conversations with a run and no task: POST /factory/{uid}/tasks binds them. */
  freeConversations: string[];
}

/** Writes the peer's starting state: the key, the factories, the tasks with their runs, the free conversations' runs. */
export function seedCrudPeer(file: string, seed: CrudSeed): void {
  const db = open(file);
  db.pragma('synchronous = OFF');
  const at = new Date().toISOString();
  db.transaction(() => {
    db.prepare('INSERT INTO api_keys VALUES (?, ?, ?)').run(seed.keyHash, seed.userUid, seed.teamUid);
    const factory = db.prepare('INSERT INTO factories VALUES (?, ?)');
    for (const f of seed.factories) factory.run(f, seed.teamUid);
    const run = db.prepare('INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)');
    const task = db.prepare('INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?)');
    for (const t of seed.tasks) {
      const runId = randomUUID();
      run.run(runId, t.conversation, seed.teamUid, 'SUCCEEDED', at, JSON.stringify({ run_id: runId, title: 'Seed' }));
      task.run(
        t.uid,
        t.factory,
        t.conversation,
        t.stage,
        at,
        JSON.stringify({
          uid: t.uid,
          factory_uid: t.factory,
          conversation_id: t.conversation,
          run_id: runId,
          stage: t.stage,
          title: 'Seed task',
          description: null,
          created_at: at,
          updated_at: at,
        }),
      );
    }
    for (const c of seed.freeConversations) {
      const runId = randomUUID();
      run.run(runId, c, seed.teamUid, 'SUCCEEDED', at, JSON.stringify({ run_id: runId, title: 'Seed' }));
    }
  })();
  db.close();
}

const taskSchema = z.object({
  uid: z.string(),
  factory_uid: z.string(),
  conversation_id: z.string(),
  run_id: z.string(),
  stage: z.enum(STAGES),
  title: z.string(),
  description: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
type Task = z.infer<typeof taskSchema>;

const uid = z.string().min(1).max(100);
const title = z.string().trim().min(1).max(500);
const description = z.string().max(10_000).nullable();
const createTaskBody = z
  .object({ title, conversation_id: uid, stage: z.enum(STAGES).default('TRIAGE'), description: description.optional() })
  .strict();
const patchTaskBody = z
  .object({ title: title.optional(), description: description.optional(), stage: z.enum(STAGES).optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: 'give at least one of title, description, stage' });

class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

async function main() {
  const db = open(process.env.DB_FILE!);
  const app = Fastify({ logger: false }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const keyOf = db.prepare<[string], { user_uid: string; team_uid: string }>(
    'SELECT user_uid, team_uid FROM api_keys WHERE key_hash = ?',
  );
  const factoryOf = db.prepare<[string], { team_uid: string }>('SELECT team_uid FROM factories WHERE uid = ?');
  const taskOf = db.prepare<[string], { doc: string; factory_uid: string }>(
    'SELECT doc, factory_uid FROM tasks WHERE uid = ?',
  );
  const runOfConversation = db.prepare<[string], { run_id: string; team_uid: string }>(
    'SELECT run_id, team_uid FROM runs WHERE conversation_id = ? ORDER BY created_at DESC LIMIT 1',
  );
  const taskOfConversation = db.prepare<[string], { uid: string }>('SELECT uid FROM tasks WHERE conversation_id = ?');
  const insertRun = db.prepare('INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)');
  const insertTask = db.prepare('INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?)');
  const updateTask = db.prepare('UPDATE tasks SET stage = ?, updated_at = ?, doc = ? WHERE uid = ?');

  /** Each request's principal: its team. */
  const teams = new WeakMap<object, string>();
  app.addHook('onRequest', async (req) => {
    if (req.url === '/readyz') return;
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const found = key ? keyOf.get(createHash('sha256').update(key).digest('hex')) : undefined;
    if (!found) throw new HttpError(401, 'unauthenticated');
    teams.set(req, found.team_uid);
  });
  app.setErrorHandler((error: Error & { statusCode?: number }, _req, reply) => {
    reply.code(error.statusCode ?? 500).send({ status: error.statusCode ?? 500, detail: error.message });
  });
  const teamOf = (req: object) => teams.get(req)!;
  const visibleFactory = (req: object, factoryUid: string) => {
    if (factoryOf.get(factoryUid)?.team_uid !== teamOf(req)) throw new HttpError(404, 'no such factory');
  };

  app.get('/readyz', async () => ({ status: 'ready' }));

  const createRun = db.transaction((row: unknown[]) => insertRun.run(...row));
  app.post(
    '/api/v1/agent/runs',
    {
      schema: {
        body: runRequestSchema,
        response: {
          200: z.object({ run_id: z.string(), task_id: z.string(), state: z.string(), conversation_id: z.string() }),
        },
      },
    },
    async (req) => {
      const run_id = randomUUID();
      const conversation_id = req.body.conversation_id ?? randomUUID();
      const at = new Date().toISOString();
      const doc = { run_id, conversation_id, title: req.body.title ?? 'Run', prompt: req.body.prompt, state: 'QUEUED' };
      createRun([run_id, conversation_id, teamOf(req), 'QUEUED', at, JSON.stringify(doc)]);
      return { run_id, task_id: run_id, state: 'QUEUED', conversation_id };
    },
  );

  const createTask = db.transaction((req: object, factoryUid: string, body: z.infer<typeof createTaskBody>): Task => {
    visibleFactory(req, factoryUid);
    const run = runOfConversation.get(body.conversation_id);
    if (!run || run.team_uid !== teamOf(req)) throw new HttpError(404, 'no such conversation');
    if (taskOfConversation.get(body.conversation_id)) throw new HttpError(409, 'the conversation has a task');
    const at = new Date().toISOString();
    const task: Task = {
      uid: randomUUID(),
      factory_uid: factoryUid,
      conversation_id: body.conversation_id,
      run_id: run.run_id,
      stage: body.stage,
      title: body.title,
      description: body.description || null,
      created_at: at,
      updated_at: at,
    };
    insertTask.run(task.uid, factoryUid, task.conversation_id, task.stage, at, JSON.stringify(task));
    return task;
  });
  app.post(
    '/api/v1/factory/:factory_uid/tasks',
    { schema: { params: z.object({ factory_uid: uid }), body: createTaskBody, response: { 201: taskSchema } } },
    async (req, reply) => reply.code(201).send(createTask(req, req.params.factory_uid, req.body)),
  );

  const patchTask = db.transaction(
    (req: object, factoryUid: string, taskUid: string, body: z.infer<typeof patchTaskBody>): Task => {
      visibleFactory(req, factoryUid);
      const row = taskOf.get(taskUid);
      if (!row || row.factory_uid !== factoryUid) throw new HttpError(404, 'no such task');
      const task: Task = {
        ...(JSON.parse(row.doc) as Task),
        ...body,
        ...(body.description === '' ? { description: null } : {}),
        updated_at: new Date().toISOString(),
      };
      updateTask.run(task.stage, task.updated_at, JSON.stringify(task), taskUid);
      return task;
    },
  );
  app.patch(
    '/api/v1/factory/:factory_uid/tasks/:task_uid',
    {
      schema: {
        params: z.object({ factory_uid: uid, task_uid: uid }),
        body: patchTaskBody,
        response: { 200: taskSchema },
      },
    },
    async (req) => patchTask(req, req.params.factory_uid, req.params.task_uid, req.body),
  );

  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
  process.once('SIGTERM', async () => {
    await app.close();
    db.close();
    process.exit(0);
  });
}

if (process.env.DB_FILE) await main();
