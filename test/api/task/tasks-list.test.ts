import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v4 as uuidv4 } from 'uuid';
import { createRun } from '../../../commands/run/create.js';
import { runRequestSchema } from '../../../commands/run/schema.js';
import { tasksProjection } from '../../../projections/task/tasks.js';
import { taskListItem } from '../../../commands/task/resource.js';
import { expectProblem, startTestApp, type TestApp } from '../../helpers/app.js';
import { addArtifact, newRun, outsiderKey, startRun } from '../../helpers/conversation-fixtures.js';
import { eventually, newFactory, newMember } from '../../helpers/task-fixtures.js';

type Task = {
  uid: string;
  title: string;
  stage: string;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
};
type Page = { tasks: Task[]; page_info: { has_next_page: boolean; next_cursor: string | null } };

let t: TestApp;
let factory: string;
let mate: Awaited<ReturnType<typeof newMember>>;
/** Tasks of `factory` in creation order. */
const made: Task[] = [];
let seedRunOfFirst: string;

const list = async (query = '', factoryUid = factory, key?: string) => {
  const res = await t.call('GET', `/factory/${factoryUid}/tasks${query ? `?${query}` : ''}`, undefined, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
};
const titles = (page: Page) => page.tasks.map((task) => task.title);
/** Waits until the clock is a millisecond past the newest event, so each task has its own time. */
const tick = () => {
  const now = Date.now();
  return eventually(async () => (Date.now() > now ? true : undefined));
};

beforeAll(async () => {
  t = await startTestApp();
  factory = await newFactory(t);
  mate = await newMember(t);
  const seeds: Array<[string, string, 'admin' | 'mate']> = [
    ['Fix login bug', 'TRIAGE', 'admin'],
    ['Add dark mode', 'SPEC', 'mate'],
    ['Refactor LOGIN form', 'IMPLEMENT', 'admin'],
    ['Write docs', 'REVIEW', 'mate'],
    ['Ship release', 'COMPLETE', 'admin'],
  ];
  for (const [title, stage, who] of seeds) {
    await tick();
    const run =
      who === 'admin'
        ? await newRun(t, { prompt: title, metadata: { ticket_source: 'linear', ticket_id: `PAY-${made.length}` } })
        : await createRun(t.rt, runRequestSchema.parse({ prompt: title }), mate.context, {
            source: 'API',
            team_uid: t.teamUid,
          });
    const res = await t.call('POST', `/factory/${factory}/tasks`, {
      title,
      stage,
      conversation_id: run.conversation_id,
    });
    expect(res.statusCode, res.body).toBe(201);
    made.push(res.json());
    if (!seedRunOfFirst) seedRunOfFirst = run.run_id;
  }
  // A task of another factory never shows up here.
  const elsewhere = await newFactory(t);
  const run = await newRun(t);
  expect(
    (
      await t.call('POST', `/factory/${elsewhere}/tasks`, {
        title: 'Fix login elsewhere',
        conversation_id: run.conversation_id,
      })
    ).statusCode,
  ).toBe(201);
});
afterAll(() => t.close());

describe('GET /factory/{uid}/tasks', () => {
  it('lists the factory’s tasks newest first, lean by default', async () => {
    const page = await list();
    expect(titles(page)).toEqual(made.map((m) => m.title).reverse());
    expect(page.page_info).toEqual({ has_next_page: false, next_cursor: null });
    const [newest] = page.tasks;
    expect(newest).not.toHaveProperty('outputs');
    expect(newest).not.toHaveProperty('current_run');
    expect(newest).not.toHaveProperty('ticket_id');
    expect(newest).toMatchObject({
      uid: made[4]!.uid,
      factory_uid: factory,
      stage: 'COMPLETE',
      author: { uid: t.adminUid },
    });
  });

  it('filters by stage (any of), title substring, teammate and dates', async () => {
    expect(titles(await list('stage=SPEC&stage=COMPLETE'))).toEqual(['Ship release', 'Add dark mode']);
    expect(titles(await list('q=login'))).toEqual(['Refactor LOGIN form', 'Fix login bug']);
    expect(titles(await list(`created_by=${encodeURIComponent(mate.email)}`))).toEqual(['Write docs', 'Add dark mode']);
    expect(
      titles(await list(`created_by=${encodeURIComponent(mate.email.toUpperCase())}&created_by=admin@example.com`)),
    ).toHaveLength(5);
    expect(titles(await list('created_by=nobody@example.com'))).toEqual([]);
    expect(titles(await list(`created_after=${encodeURIComponent(made[2]!.created_at)}`))).toEqual([
      'Ship release',
      'Write docs',
    ]);
    expect(titles(await list(`created_before=${encodeURIComponent(made[1]!.created_at)}`))).toEqual(['Fix login bug']);
    expect(
      titles(
        await list(
          `created_after=${encodeURIComponent(made[0]!.created_at)}&created_before=${encodeURIComponent(made[2]!.created_at)}`,
        ),
      ),
    ).toEqual(['Add dark mode']);
    expect(titles(await list('stage=TRIAGE&q=login&created_by=admin%40example.com'))).toEqual(['Fix login bug']);
  });

  it('sorts by updated_at and filters updated_after', async () => {
    await tick();
    const touched = await t.call('PATCH', `/factory/${factory}/tasks/${made[1]!.uid}`, { description: 'touched' });
    expect(touched.statusCode).toBe(200);
    const updatedAt = touched.json().updated_at;
    expect(titles(await list('sort_by=updated_at'))[0]).toBe('Add dark mode');
    expect(titles(await list('sort_by=updated_at&sort_order=asc')).at(-1)).toBe('Add dark mode');
    expect(titles(await list(`updated_after=${encodeURIComponent(made[4]!.updated_at)}`))).toEqual(['Add dark mode']);
    expect(titles(await list(`updated_after=${encodeURIComponent(updatedAt)}`))).toEqual([]);
    expect(titles(await list('sort_order=asc'))).toEqual(made.map((m) => m.title));
  });

  it('pages with a cursor bound to its sort', async () => {
    for (const sort of ['', 'sort_order=asc', 'sort_by=updated_at', 'sort_by=updated_at&sort_order=asc']) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Page = await list(`limit=2${sort ? `&${sort}` : ''}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.tasks.length).toBeLessThanOrEqual(2);
        seen.push(...titles(page));
        cursor = page.page_info.next_cursor;
        expect(page.page_info.has_next_page).toBe(cursor !== null);
      } while (cursor);
      expect(seen).toHaveLength(5);
      expect(new Set(seen).size).toBe(5);
    }
    const first = await list('limit=2');
    const cursor = first.page_info.next_cursor!;
    expect(titles(await list(`limit=2&cursor=${cursor}`))).toEqual(
      made
        .map((m) => m.title)
        .reverse()
        .slice(2, 4),
    );
    for (const other of ['sort_order=asc', 'sort_by=updated_at']) {
      expectProblem(await t.call('GET', `/factory/${factory}/tasks?${other}&cursor=${cursor}`), 400, 'invalid_cursor');
    }
  });

  it('adds ticket fields and the conversation’s outputs with full_list', async () => {
    const child = await newRun(t, { parent_run_id: seedRunOfFirst });
    for (const [runId, url] of [
      [seedRunOfFirst, 'https://github.com/acme/pay/pull/1'],
      [child.run_id, 'https://github.com/acme/pay/pull/2'],
    ] as const) {
      const held = await startRun(t, runId);
      await addArtifact(t, runId, held, {
        artifact_uid: uuidv4(),
        artifact_type: 'PULL_REQUEST',
        public: false,
        url,
        branch: 'b',
      });
    }
    const page = await list('full_list=true&q=fix login');
    const [task] = page.tasks;
    expect(task).toMatchObject({ ticket_source: 'linear', ticket_id: 'PAY-0' });
    // From the bound conversation only: the child run's pull request is not in the list.
    expect(task!.outputs).toEqual([
      {
        artifact_type: 'PULL_REQUEST',
        created_at: expect.any(String),
        data: expect.objectContaining({ url: 'https://github.com/acme/pay/pull/1' }),
      },
    ]);
    const single = (await t.call('GET', `/factory/${factory}/tasks/${task!.uid}`)).json();
    expect(single.outputs).toHaveLength(2);
    // A task whose seed run has no ticket has no ticket fields, and no outputs.
    const docs = (await list('full_list=true&q=dark mode')).tasks[0]!;
    expect(docs).not.toHaveProperty('ticket_id');
    expect(docs.outputs).toEqual([]);
  });

  it('adds each task’s current run with include_current_run, in one batch per page', async () => {
    const page = await list('include_current_run=true');
    for (const task of page.tasks)
      expect(task.current_run).toMatchObject({
        state: expect.stringMatching(/^(QUEUED|INPROGRESS)$/),
        is_run_type_cancellable: true,
      });

    // A page is its task documents and nothing else: each holds its current run, resolved by the projection.
    const docs = (
      await t.rt.readModel(tasksProjection).find({ filter: { factory_uid: factory }, sort: [['id', 'asc']], limit: 50 })
    ).items;
    const shown = docs.map((d) => taskListItem(d, { full_list: false, include_current_run: true }));
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((s) => s.current_run)).toBe(true);
  });

  it('refuses every invalid filter, sort, limit, cursor and flag with 400', async () => {
    const bad = [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=1.5',
      'stage=DONE',
      'stage=TRIAGE&stage=nope',
      'sort_by=title',
      'sort_order=up',
      'created_after=yesterday',
      'created_before=2026-13-01T00:00:00Z',
      'updated_after=1',
      'full_list=yes',
      'include_current_run=1',
      'created_by=not-an-email',
      'q=',
      `q=${'x'.repeat(201)}`,
      'cursor=%%%',
      'cursor=eyJzIjoib3RoZXIiLCJ2IjpbXX0',
      'bogus=1',
      Array.from({ length: 51 }, (_, i) => `created_by=u${i}%40example.com`).join('&'),
    ];
    for (const query of bad) expectProblem(await t.call('GET', `/factory/${factory}/tasks?${query}`), 400);
    expect((await list('limit=100&created_by=a%40example.com')).tasks).toEqual([]);
    expect((await list('limit=1')).tasks).toHaveLength(1);
  });

  it('answers 404 for an unknown factory or one of another team', async () => {
    expectProblem(await t.call('GET', '/factory/nope/tasks'), 404);
    expectProblem(await t.call('GET', `/factory/${factory}/tasks`, undefined, await outsiderKey(t)), 404);
  });
});
