import { runCreatedData } from '../../helpers/run-fixtures.js';
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDecider } from '../../../commands/run/run-decider.js';
import { type RunCreatedData, runStream } from '../../../commands/run/events.js';
import { expectProblem, expectRefused, newEnvironment, startTestApp, type TestApp } from '../../helpers/app.js';
import {
  addArtifact,
  adminContext,
  outsiderKey,
  runCommand,
  startRun,
  teammateKey,
} from '../../helpers/conversation-fixtures.js';

let t: TestApp;
let outsider: string;
let otherTeam: string;
let ENV = '';
const OLD = '2020-01-01T00:00:00.000Z';
const ids: Record<string, string> = {};
let factoryUid: string;
let agentUid: string;

const list = (query: string, key?: string, headers?: Record<string, string>) =>
  t.call('GET', `/agent/runs?${query}`, undefined, key, headers);
/** The ids of the runs a query lists, as fixture names, in order. */
async function names(query: string, key?: string, headers?: Record<string, string>): Promise<string[]> {
  const res = await list(query, key, headers);
  expect(res.statusCode, res.body).toBe(200);
  const byId = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
  return (res.json().runs as Array<{ run_id: string }>).map((r) => byId[r.run_id] ?? r.run_id);
}

async function create(name: string, body: Record<string, unknown>, key?: string) {
  const res = await t.call('POST', '/agent/runs', body, key);
  expect(res.statusCode, res.body).toBe(200);
  ids[name] = res.json().run_id;
}

/** A run written straight through the decider, with fields no API sets yet, at a chosen time. */
async function createDirect(name: string, fields: Partial<RunCreatedData>, now = new Date().toISOString()) {
  const run_id = uuidv4();
  const data = runCreatedData(run_id, {
    conversation_id: uuidv4(),
    title: name,
    prompt: name,
    team_uid: t.teamUid,
    executing_team_uid: t.teamUid,
    creator: { type: 'user', uid: t.adminUid },
    ...fields,
  });
  await t.rt.execute(runStream(run_id), runDecider, { type: 'CreateRun', data }, { ...adminContext(t), now });
  ids[name] = run_id;
}

beforeAll(async () => {
  t = await startTestApp();
  ENV = await newEnvironment(t);
  outsider = await outsiderKey(t);
  otherTeam = (await t.call('GET', '/teams', undefined, outsider)).json().teams[0].uid;
  factoryUid = (
    await t.call('POST', '/factory', { name: 'Payments' }, undefined, { 'x-service-team-uid': t.teamUid })
  ).json().uid;
  agentUid = (
    await t.call('POST', '/agent/identities', { name: 'Builder' }, undefined, { 'x-service-team-uid': t.teamUid })
  ).json().uid;
  // Scheduled, local, of a factory, created long ago.
  await createDirect(
    'epsilon',
    {
      title: 'Epsilon nightly',
      prompt: 'Nightly dependency check',
      factory_uid: factoryUid,
      source: 'SCHEDULED_AGENT',
      execution_location: 'LOCAL',
      schedule_id: 'sch-1',
    },
    OLD,
  );
  const team = { 'x-service-team-uid': t.teamUid };
  const post = async (name: string, body: Record<string, unknown>) => {
    const res = await t.call('POST', '/agent/runs', body, undefined, team);
    expect(res.statusCode, res.body).toBe(200);
    ids[name] = res.json().run_id;
  };
  await post('alpha', {
    title: 'Alpha deploy',
    prompt: 'Deploy the payments service',
    config: { name: 'Deployer', model_id: 'gpt-5-4-high', environment_id: ENV },
    metadata: { ticket_id: 'VIS-1', 'team.area': 'pay', automation_id: 'au-1' },
  });
  await post('beta', {
    title: 'beta lint',
    skill: 'acme/tools:skills/lint/SKILL.md',
    metadata: { ticket_id: 'VIS-2' },
  });
  await post('gamma', { title: 'Gamma', prompt: 'Refactor the LEDGER', team: false });
  await post('delta', { title: 'delta sub', prompt: 'A sub task', parent_run_id: ids.alpha });
  await post('agent', { title: 'Built by an agent', prompt: 'Build', agent_identity_uid: agentUid });
  await create('foreign', { prompt: 'Another team’s work' }, outsider);
  await create('mate', { prompt: 'A teammate’s own run', team: false }, await teammateKey(t));

  // alpha finished, its sub-run still works; beta runs and opened a pull request.
  const alpha = await startRun(t, ids.alpha!);
  await runCommand(t, ids.alpha!, {
    type: 'FinishRun',
    data: { run_id: ids.alpha!, ...alpha, state: 'SUCCEEDED', status_message: null },
  });
  await startRun(t, ids.delta!);
  const beta = await startRun(t, ids.beta!);
  await addArtifact(t, ids.beta!, beta, {
    artifact_uid: uuidv4(),
    artifact_type: 'PULL_REQUEST',
    public: false,
    url: 'https://github.com/acme/app/pull/1',
    branch: 'lint',
  });
});
afterAll(() => t.close());

const MINE = ['agent', 'alpha', 'beta', 'delta', 'epsilon', 'gamma'];
const team = () => ({ 'x-service-team-uid': t.teamUid });

describe('GET /agent/runs: who sees what', () => {
  it('lists the active team’s runs and the caller’s personal runs, newest update first', async () => {
    expect((await names('', undefined, team())).sort()).toEqual(MINE);
    const page = (await list('', undefined, team())).json();
    expect(page.page_info).toEqual({ has_next_page: false, next_cursor: null });
    const updated = (page.runs as Array<{ updated_at: string }>).map((r) => r.updated_at);
    expect(updated).toEqual([...updated].sort().reverse());
  });

  it('lists another team of the caller’s with the team header, and never a teammate’s personal run', async () => {
    expect(await names('', undefined, { 'x-service-team-uid': otherTeam })).toEqual(
      expect.arrayContaining(['foreign', 'gamma']),
    );
    expect(await names('', undefined, { 'x-service-team-uid': otherTeam })).not.toContain('alpha');
    expect(await names('', outsider)).toEqual(['foreign']);
  });
});

describe('GET /agent/runs: filters', () => {
  const inTeam = (query: string) => names(query, undefined, team()).then((n) => n.sort());

  it('by state, repeatable, with IN_PROGRESS as an alias', async () => {
    expect(await inTeam('state=INPROGRESS')).toEqual(['beta', 'delta']);
    expect(await inTeam('state=QUEUED&state=SUCCEEDED')).toEqual(['agent', 'alpha', 'epsilon', 'gamma']);
    expect(await inTeam('state=IN_PROGRESS')).toEqual(['beta', 'delta']);
    await expectRefused(t, () => list('state=DONE'), 400);
  });

  it('by task_status: a root is running while it or any descendant works', async () => {
    expect(await inTeam('task_status=running')).toEqual(['agent', 'alpha', 'beta', 'epsilon', 'gamma']);
    expect(await inTeam('task_status=complete')).toEqual([]);
    await runCommand(t, ids.delta!, { type: 'CancelRun', data: { run_id: ids.delta!, reason: 'test' } });
    expect(await inTeam('task_status=complete')).toEqual(['alpha']);
    expect(await inTeam('task_status=running&task_status=complete')).toEqual([
      'agent',
      'alpha',
      'beta',
      'epsilon',
      'gamma',
    ]);
    await expectRefused(t, () => list('task_status=done'), 400);
  });

  it('by agent config name, model, creator and executor', async () => {
    expect(await inTeam('name=Deployer')).toEqual(['alpha']);
    expect(await inTeam('name=lint')).toEqual(['beta']);
    expect(await inTeam('model_id=gpt-5-4-high')).toEqual(['alpha']);
    expect(await inTeam(`creator=${t.adminUid}`)).toEqual(MINE);
    expect(await inTeam(`executor=${agentUid}`)).toEqual(['agent']);
    expect(await inTeam(`executor=${t.adminUid}`)).toEqual(MINE.filter((n) => n !== 'agent'));
  });

  it('by source (repeatable) and execution location', async () => {
    expect(await inTeam('source=SCHEDULED_AGENT')).toEqual(['epsilon']);
    expect(await inTeam('source=SCHEDULED_AGENT&source=API')).toEqual(MINE);
    expect(await inTeam('execution_location=LOCAL')).toEqual(['epsilon']);
    expect(await inTeam('execution_location=REMOTE')).toEqual(MINE.filter((n) => n !== 'epsilon'));
    await expectRefused(t, () => list('source=EMAIL'), 400);
    await expectRefused(t, () => list('execution_location=MOON'), 400);
  });

  it('by creation and update time', async () => {
    expect(await inTeam(`created_before=${encodeURIComponent('2021-01-01T00:00:00Z')}`)).toEqual(['epsilon']);
    expect(await inTeam(`created_after=${encodeURIComponent('2021-01-01T00:00:00+02:00')}`)).toEqual(
      MINE.filter((n) => n !== 'epsilon'),
    );
    expect(
      await inTeam(
        `created_after=${encodeURIComponent('2019-12-31T23:00:00Z')}&created_before=${encodeURIComponent('2020-01-01T00:00:00.001Z')}`,
      ),
    ).toEqual(['epsilon']);
    expect(await inTeam(`updated_after=${encodeURIComponent('2021-01-01T00:00:00Z')}`)).toEqual(
      MINE.filter((n) => n !== 'epsilon'),
    );
    await expectRefused(t, () => list('created_after=yesterday'), 400);
  });

  it('by environment, with empty-environment for runs without one', async () => {
    expect(await inTeam(`environment_id=${ENV}`)).toEqual(['alpha']);
    expect(await inTeam('environment_id=empty-environment')).toEqual(MINE.filter((n) => n !== 'alpha'));
    await expectRefused(t, () => list('environment_id=short'), 400);
  });

  it('by skill or skill_spec, and schedule', async () => {
    expect(await inTeam('skill=acme/tools:skills/lint/SKILL.md')).toEqual(['beta']);
    expect(await inTeam('skill_spec=acme/tools:skills/lint/SKILL.md')).toEqual(['beta']);
    await expectRefused(t, () => list('skill=a:b&skill_spec=c:d'), 400);
    expect(await inTeam('schedule_id=sch-1')).toEqual(['epsilon']);
  });

  it('by factory, repeatable; a factory the caller cannot see matches nothing', async () => {
    const otherFactory = (await t.call('POST', '/factory', { name: 'Theirs' }, outsider)).json().uid;
    expect(await inTeam(`factory_uid=${factoryUid}`)).toEqual(['epsilon']);
    expect(await inTeam(`factory_uid=${factoryUid}&factory_uid=${otherFactory}`)).toEqual(['epsilon']);
    expect(await inTeam('factory_uid=no-such-factory')).toEqual([]);
    // A stranger's own run, stamped with a factory of a team the stranger is not in.
    const team = (await t.call('POST', '/teams', { name: 'Strangers' })).json();
    const stranger = await t.addMember(team.uid, { email: 'stranger@example.com' });
    await createDirect('stray', {
      team_uid: null,
      executing_team_uid: team.uid,
      creator: { type: 'user', uid: stranger.user.uid },
      factory_uid: factoryUid,
    });
    expect(await names('', stranger.api_key)).toEqual(['stray']);
    expect(await names(`factory_uid=${factoryUid}`, stranger.api_key)).toEqual([]);
  });

  it('by ancestor, which must exist and be visible', async () => {
    expect(await inTeam(`ancestor_run_id=${ids.alpha}`)).toEqual(['delta']);
    expect(await inTeam(`ancestor_run_id=${ids.beta}`)).toEqual([]);
    await expectRefused(t, () => list('ancestor_run_id=no-such-run'), 404);
    await expectRefused(t, () => list(`ancestor_run_id=${ids.alpha}`, outsider), 404);
  });

  it('by metadata pairs, all of them, at most five', async () => {
    expect(await inTeam('metadata[ticket_id]=VIS-1')).toEqual(['alpha', 'delta']); // delta inherited it
    expect(await inTeam('metadata[ticket_id]=VIS-1&metadata[team.area]=pay')).toEqual(['alpha', 'delta']);
    expect(await inTeam('metadata[ticket_id]=VIS-2&metadata[team.area]=pay')).toEqual([]);
    expect(await inTeam(`metadata[${encodeURIComponent('team.area')}]=pay`)).toEqual(['alpha', 'delta']);
    const five = Array.from({ length: 5 }, (_, i) => `metadata[k${i}]=v`).join('&');
    expect(await inTeam(five)).toEqual([]);
    await expectRefused(t, () => list(`${five}&metadata[k5]=v`), 400);
    await expectRefused(t, () => list('metadata[bad key]=v'), 400);
    await expectRefused(t, () => list('metadata[]=v'), 400);
    await expectRefused(t, () => list('metadata[k]=a&metadata[k]=b'), 400);
    await expectRefused(t, () => list('tiket_id=VIS-1'), 400);
  });

  it('by automation and artifact type', async () => {
    expect(await inTeam('automation_id=au-1')).toEqual(['alpha', 'delta']);
    expect(await inTeam('artifact_type=PULL_REQUEST')).toEqual(['beta']);
    expect(await inTeam('artifact_type=PLAN')).toEqual([]);
    await expectRefused(t, () => list('artifact_type=VIDEO'), 400);
  });

  it('by q: a run id or run URL exactly, else text in the title, prompt or skill spec', async () => {
    const base = t.rt.config.publicBaseUrl;
    expect(await inTeam(`q=${ids.beta}`)).toEqual(['beta']);
    expect(await inTeam(`q=${encodeURIComponent(`${base}/runs/${ids.beta}`)}`)).toEqual(['beta']);
    expect(await inTeam(`q=${encodeURIComponent(`${base}/api/v1/agent/runs/${ids.gamma}/?tab=timeline`)}`)).toEqual([
      'gamma',
    ]);
    expect(await inTeam(`q=${ids.foreign}`)).toEqual([]);
    expect(await inTeam('q=ALPHA')).toEqual(['alpha']);
    expect(await inTeam('q=ledger')).toEqual(['gamma']);
    expect(await inTeam('q=tools%3Askills')).toEqual(['beta']);
    expect(await inTeam(`q=${encodeURIComponent('https://elsewhere.example/runs/x')}`)).toEqual([]);
  });

  it('combines filters', async () => {
    expect(await inTeam('state=INPROGRESS&artifact_type=PULL_REQUEST&name=lint')).toEqual(['beta']);
    expect(await inTeam('state=QUEUED&execution_location=REMOTE&q=refactor')).toEqual(['gamma']);
  });
});

describe('GET /agent/runs: sorting and paging', () => {
  const all = async (query: string) => names(`${query}&limit=500`, undefined, team());

  /** Every page of `limit` 2, followed by its cursor. */
  async function paged(query: string): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`${query}&limit=2${cursor ? `&cursor=${cursor}` : ''}`, undefined, team());
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      const byId = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
      seen.push(...(body.runs as Array<{ run_id: string }>).map((r) => byId[r.run_id]!));
      cursor = body.page_info.next_cursor;
      expect(body.page_info.has_next_page).toBe(cursor !== null);
    } while (cursor);
    return seen;
  }

  it.each(['updated_at', 'created_at', 'title', 'agent'].flatMap((by) => ['asc', 'desc'].map((order) => [by, order])))(
    'pages by %s %s through every run once, in the order of one page',
    async (by, order) => {
      const query = `sort_by=${by}&sort_order=${order}`;
      const whole = await all(query);
      expect(whole.sort()).toEqual(MINE);
      expect(await paged(query)).toEqual(await all(query));
    },
  );

  it('sorts titles without regard to case', async () => {
    expect(await all('sort_by=title&sort_order=asc')).toEqual(['alpha', 'beta', 'agent', 'delta', 'epsilon', 'gamma']);
  });

  it('sorts by agent name with the runs without one last, in either order', async () => {
    const asc = await all('sort_by=agent&sort_order=asc');
    const desc = await all('sort_by=agent&sort_order=desc');
    expect(asc.slice(0, 2)).toEqual(['alpha', 'beta']); // Deployer, lint
    expect(desc.slice(0, 2)).toEqual(['beta', 'alpha']);
    expect(asc.slice(2).sort()).toEqual(['agent', 'delta', 'epsilon', 'gamma']);
    expect(desc.slice(2).sort()).toEqual(['agent', 'delta', 'epsilon', 'gamma']);
  });

  it('sorts by creation time', async () => {
    expect((await all('sort_by=created_at&sort_order=asc'))[0]).toBe('epsilon');
    expect((await all('sort_by=created_at&sort_order=desc')).at(-1)).toBe('epsilon');
  });

  it('refuses a cursor issued under another sort, a broken cursor, and a limit out of 1-500', async () => {
    const cursor = (await list('sort_by=title&limit=1', undefined, team())).json().page_info.next_cursor;
    expect((await list(`sort_by=title&limit=1&cursor=${cursor}`, undefined, team())).statusCode).toBe(200);
    await expectRefused(t, () => list(`sort_by=created_at&limit=1&cursor=${cursor}`), 400, 'invalid_cursor');
    await expectRefused(t, () => list(`sort_by=title&sort_order=asc&limit=1&cursor=${cursor}`), 400, 'invalid_cursor');
    await expectRefused(t, () => list('cursor=garbage'), 400, 'invalid_cursor');
    await expectRefused(t, () => list('limit=0'), 400);
    await expectRefused(t, () => list('limit=501'), 400);
    await expectRefused(t, () => list('sort_by=name'), 400);
    expect((await list('limit=500', undefined, team())).statusCode).toBe(200);
  });

  it('answers 20 runs a page by default', async () => {
    for (let i = 0; i < 15; i++) await t.call('POST', '/agent/runs', { prompt: `filler ${i}`, team: false });
    const page = (await list('', undefined, team())).json();
    expect(page.runs).toHaveLength(20);
    expect(page.page_info.has_next_page).toBe(true);
  });
});

describe('GET /agent/runs: metadata filtering switched off', () => {
  it('answers metadata filters 403 feature_not_available, and other filters as usual', async () => {
    const off = await startTestApp({ RUN_METADATA_FILTERING: 'false' });
    try {
      await expectRefused(
        off,
        () => off.call('GET', '/agent/runs?metadata[ticket_id]=VIS-1'),
        403,
        'feature_not_available',
      );
      expect((await off.call('GET', '/agent/runs?state=QUEUED')).statusCode).toBe(200);
    } finally {
      await off.close();
    }
  });

  it('needs a credential', async () => {
    expectProblem(await t.call('GET', '/agent/runs', undefined, null), 401);
  });
});
