/**
 * Ids a request names are looked up as own keys: `constructor`, `__proto__` and the other names
 * every JavaScript object answers to name nothing (issue #30). Found first by the property test
 * (fuzz-routes.test.ts): PATCH of automation `__proto__` was a 500, and DELETE of secret
 * `constructor` appended a deletion of a secret that never existed; then `DELETE
 * /me/api-keys/constructor` recorded a revocation, and an outbound webhook `constructor` handed out
 * a fresh secret.
 *
 * Every operation of the OpenAPI document with a path parameter is sent, for each parameter in
 * turn, with that parameter set to each of these names and every other one naming something that
 * exists, with a valid body, as a caller who may do it: each is answered as a plain unknown id is,
 * a 4xx problem (but for the few routes listed that answer any id), and nothing is appended to the
 * event log (but for the rejected delivery a wrong url_token records, as any wrong token does).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { ADMIN_KEY, expectProblem, expectRefused, newEnvironment, quiet, startTestApp } from '../helpers/app.js';
import { factoryAgent, newScorer } from '../helpers/scorer-fixtures.js';
import { eventually, newMember } from '../helpers/task-fixtures.js';

const NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'];

// A clock that stands still: nothing falls due (a schedule, a lost worker) while the test counts writes.
const t = await startTestApp({}, manualClock('2026-05-04T09:30:00Z'));
afterAll(() => t.close());

const ok = async (res: Awaited<ReturnType<typeof t.call>>, status = [200, 201]) => {
  expect(status, res.body).toContain(res.statusCode);
  return res.json();
};

// ---- something real for every path parameter to name ------------------------------------------

const factory = (await ok(await t.call('POST', '/factory', { name: 'Prototypes' }))).uid as string;
const agent = await factoryAgent(t, factory);
await ok(await t.call('POST', '/agent/identities', { name: 'Foreman', agent_type: 'FOREMAN', factory_uid: factory }));
const agentKeyId = (await ok(await t.call('GET', `/agent/identities/${agent.uid}/api-keys`))).api_keys[0].key_id;
const myKeyId = (await ok(await t.call('POST', '/me/api-keys', { label: 'spare' }))).key_id as string;
const member = await newMember(t);
const webhook = await ok(await t.call('POST', `/factory/${factory}/webhooks`, { name: 'hook' }));
const urlHook = await ok(await t.call('POST', `/factory/${factory}/webhooks`, { name: 'url', authMode: 'url_token' }));
const delivery = (
  await ok(
    await t.app.inject({
      method: 'POST',
      url: `/webhooks/w/${webhook.uid}`,
      headers: { authorization: `Bearer ${webhook.secret}` },
      payload: { action: 'opened' },
    }),
    [202],
  )
).delivery_id as string;
const automation = (
  await ok(
    await t.call('POST', `/factory/${factory}/automations`, {
      name: 'On any',
      prompt: 'Look',
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [webhook.uid] } }],
    }),
  )
).id as string;
const outbound = (
  await ok(
    await t.call('POST', `/teams/${t.teamUid}/outbound-webhooks`, {
      url: 'https://1.1.1.1/x',
      event_types: ['run.blocked'],
    }),
  )
).uid as string;
await ok(await t.call('POST', `/teams/${t.teamUid}/secrets`, { name: 'real_secret', value: 'v' }));
const environment = await newEnvironment(t);
const schedule = (
  await ok(await t.call('POST', '/agent/schedules', { name: 'Weekly', prompt: 'p', cron_schedule: '0 9 * * 1' }))
).id as string;
const scorer = (await newScorer(t, factory)).uid;
const suite = await ok(
  await t.call('POST', `/factory/${factory}/benchmarks`, {
    name: 'Smoke',
    agent_uid: agent.uid,
    tasks: [{ title: 'One', prompt: 'p', success_criteria: 'ok' }],
  }),
);
const LAUNCH = { repetition_count: 1, configurations: [{ role: 'baseline' }] };
const benchmarkRun = (await ok(await t.call('POST', `/factory/${factory}/benchmarks/${suite.uid}/runs`, LAUNCH)))
  .uid as string;
const trial = await eventually(async () => {
  const res = await t.call('GET', `/factory/${factory}/benchmarks/${suite.uid}/runs/${benchmarkRun}/trials`);
  return res.statusCode === 200 ? (res.json().data[0]?.uid as string | undefined) : undefined;
});
const branch = (await ok(await t.call('POST', `/factory/${factory}/branches`, { name: 'main', files: [] })))
  .uid as string;
const dispatched = await ok(await t.call('POST', `/factory/${factory}/runs`, { prompt: 'Dispatched' }));
const task = await eventually(async () => {
  const res = await t.call('GET', `/factory/${factory}/task-by-run?run_id=${dispatched.run_id}`);
  return res.statusCode === 200 ? (res.json().uid as string) : undefined;
});

// A run held by a worker of the agent, claimed and started, for the worker's reports.
const worker = (await ok(await t.call('POST', '/agent/workers', { host: 'h' }, agent.key))).worker_id as string;
const held = await ok(await t.call('POST', '/agent/runs', { prompt: 'Held', agent_identity_uid: agent.uid }));
let execution = '';
while (!execution) {
  const claimed = await ok(await t.call('POST', `/agent/workers/${worker}/claim`, undefined, agent.key));
  if (claimed.run?.run_id === held.run_id) execution = claimed.run.execution_id;
}
const report = (what: string, body?: unknown) =>
  t.call('POST', `/agent/workers/${worker}/runs/${held.run_id}/${what}`, body, agent.key, {
    'x-execution-id': execution,
  });
await ok(await report('claim'));
await ok(await report('start'));
const artifact = (await ok(await report('artifacts', { artifact_type: 'PLAN', content: 'Plan' })))
  .artifact_uid as string;
// The reactors are done with all that (the benchmark's trials, the dispatched task): no write after is theirs.
await quiet(t);

/** The thing a parameter names where `path` uses it. */
function existing(path: string, param: string): string {
  const under = (prefix: string) => path.startsWith(`/api/v1${prefix}`) || path.startsWith(prefix);
  const named: Record<string, string> = {
    team_uid: t.teamUid,
    factory_uid: factory,
    agent_uid: agent.uid,
    key_id: under('/me/') ? myKeyId : agentKeyId,
    user_uid: member.uid,
    webhook_uid: under('/teams/') ? outbound : under('/webhooks/w/{webhook_uid}/') ? urlHook.uid : webhook.uid,
    token: urlHook.secret,
    delivery_id: delivery,
    automation_id: automation,
    secret_name: 'real_secret',
    environment_id: environment,
    schedule_id: schedule,
    scorer_uid: scorer,
    suite_uid: suite.uid,
    run_uid: benchmarkRun,
    trial_uid: trial,
    task_uid: path.includes('/benchmarks/') ? suite.tasks[0].uid : task,
    branch_uid: branch,
    run_id: held.run_id,
    conversation_id: held.conversation_id,
    worker_id: worker,
    artifact_uid: artifact,
    screenshot_uid: artifact,
    session_uuid: held.conversation_id,
    schema_version: '1',
    document: 'factory',
    blob: artifact,
  };
  const value = named[param];
  if (value === undefined) throw new Error(`no fixture for ${param} (${path}): add one`);
  return value;
}

/** A body each operation would accept, so that the named id is what the request turns on. */
const BODIES: Record<string, unknown> = {
  'POST /teams/{team_uid}/members': { email: 'new-member@example.com' },
  'PUT /agent/identities/{agent_uid}': { description: 'd' },
  'POST /agent/identities/{agent_uid}/api-keys': {},
  'PUT /agent/environments/{environment_id}': { name: 'Box', docker_image: 'node:20' },
  'POST /teams/{team_uid}/secrets': { name: 'another_secret', value: 'v' },
  'PATCH /factory/{factory_uid}': { description: 'd' },
  'POST /agent/runs/{run_id}/attachments': { file_name: 'a.txt', mime_type: 'text/plain', data: 'aGk=' },
  'POST /agent/runs/{run_id}/followups': { message: 'm' },
  'POST /agent/conversations/{conversation_id}/followups': { message: 'm' },
  'POST /agent/conversations/{conversation_id}/attachments': {
    file_name: 'a.txt',
    mime_type: 'text/plain',
    data: 'aGk=',
  },
  'POST /factory/{factory_uid}/tasks': { title: 't', conversation_id: 'a-conversation' },
  'PATCH /factory/{factory_uid}/tasks/{task_uid}': { title: 't' },
  'POST /factory/{factory_uid}/runs': { prompt: 'p' },
  'POST /factory/{factory_uid}/webhooks': { name: 'W' },
  'PATCH /factory/{factory_uid}/webhooks/{webhook_uid}': { name: 'W2' },
  'POST /factory/{factory_uid}/webhooks/{webhook_uid}/rotate-secret': {},
  'POST /factory/{factory_uid}/automations': {
    name: 'A',
    prompt: 'p',
    triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [webhook.uid] } }],
  },
  'PATCH /factory/{factory_uid}/automations/{automation_id}': { name: 'A2' },
  'POST /factory/{factory_uid}/automations/{automation_id}/test-filter': { delivery_id: delivery },
  'PUT /agent/schedules/{schedule_id}': { name: 'S', prompt: 'p', enabled: true, cron_schedule: '0 9 * * 1' },
  'PUT /factory/{factory_uid}/inbox-routes': { routes: [] },
  'PUT /teams/{team_uid}/budget': { monthly_usd: 100 },
  'PUT /factory/{factory_uid}/budget': { monthly_usd: 100 },
  'PUT /teams/{team_uid}/members/{user_uid}/budget': { monthly_usd: 100 },
  'PUT /teams/{team_uid}/limits': {},
  'PUT /factory/{factory_uid}/limits': {},
  'POST /agent/runs/{run_id}/deny': {},
  'POST /teams/{team_uid}/outbound-webhooks': { url: 'https://1.1.1.1/y', event_types: ['run.blocked'] },
  'PATCH /teams/{team_uid}/outbound-webhooks/{webhook_uid}': { description: 'd' },
  'POST /factory/{factory_uid}/scorers': {
    name: 'S',
    scoring_prompt: 'Did it?',
    model_id: 'claude-4-6-sonnet',
    threshold: 1,
    allowed_classifications: [{ value: 'yes', score: 1 }],
    scope_mode: 'all_agents',
  },
  'PATCH /factory/{factory_uid}/scorers/{scorer_uid}': { name: 'S2' },
  'POST /factory/{factory_uid}/runs/{run_id}/scorer_dispatch': { scorer_uids: [scorer] },
  'POST /factory/{factory_uid}/scorers/{scorer_uid}/dispatch': { run_ids: [held.run_id] },
  'POST /agent/workers/{worker_id}/runs/{run_id}/judgement': { classification: 'compliant' },
  'POST /factory/{factory_uid}/branches': { name: 'other', files: [] },
  'PUT /factory/{factory_uid}/branches/{branch_uid}/files': { files: [] },
  'POST /factory/{factory_uid}/branches/{branch_uid}/apply': {},
  'POST /factory/{factory_uid}/benchmarks': { name: 'B' },
  'POST /factory/{factory_uid}/benchmarks/suites': { name: 'B' },
  'PATCH /factory/{factory_uid}/benchmarks/{suite_uid}': { name: 'B2' },
  'POST /factory/{factory_uid}/benchmarks/{suite_uid}/tasks': { title: 'Two', prompt: 'p', success_criteria: 'ok' },
  'PATCH /factory/{factory_uid}/benchmarks/{suite_uid}/tasks/{task_uid}': { tags: ['x'] },
  'POST /factory/{factory_uid}/benchmarks/{suite_uid}/runs': LAUNCH,
  'POST /factory/{factory_uid}/benchmarks/suites/{suite_uid}/runs': LAUNCH,
  'POST /factory/{factory_uid}/benchmarks/{suite_uid}/runs/{run_uid}/cancel': {},
  'PUT /agent/workers/{worker_id}/skills': { repos: [], skills: [] },
  'POST /agent/workers/{worker_id}/heartbeat': { runs: [], acks: [] },
  'POST /agent/workers/{worker_id}/runs/{run_id}/timeline': { name: 'n' },
  'POST /agent/workers/{worker_id}/runs/{run_id}/messages': { role: 'assistant', content: [] },
  'POST /agent/workers/{worker_id}/runs/{run_id}/artifacts': { artifact_type: 'PLAN', content: 'Plan' },
  'POST /agent/workers/{worker_id}/runs/{run_id}/questions': { questions: [{ question: 'q?' }] },
  'POST /agent/workers/{worker_id}/runs/{run_id}/usage': { model_token_usage: [] },
  'POST /agent/workers/{worker_id}/runs/{run_id}/finish': { state: 'SUCCEEDED' },
  'POST /webhooks/w/{webhook_uid}': { action: 'opened' },
  'POST /webhooks/w/{webhook_uid}/{token}': { action: 'opened' },
};

// ---- every operation with a path parameter -----------------------------------------------------

type Operation = { parameters?: Array<{ in: string; name: string }>; requestBody?: unknown };
const doc = (await ok(await t.call('GET', '/openapi.json'))) as { paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).flatMap(([method, op]) => {
    const params = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
    return params.length ? [{ method: method.toUpperCase(), path, params, op }] : [];
  }),
);

function headersFor(path: string): Record<string, string> {
  if (path.startsWith('/webhooks/w/{webhook_uid}/')) return {};
  if (path.startsWith('/webhooks/')) return { authorization: `Bearer ${webhook.secret}` };
  if (path.startsWith('/api/v1/agent/workers/'))
    return { authorization: `Bearer ${agent.key}`, 'x-execution-id': execution };
  return { authorization: `Bearer ${ADMIN_KEY}` };
}

function requestFor(o: (typeof operations)[number], param: string, name: string) {
  const url = o.params.reduce(
    (at, p) => at.replace(`{${p}}`, encodeURIComponent(p === param ? name : existing(o.path, p))),
    o.path,
  );
  const body = BODIES[`${o.method} ${o.path.replace(/^\/api\/v1/, '')}`];
  if (o.op.requestBody && body === undefined) throw new Error(`no body for ${o.method} ${o.path}: add one`);
  return () =>
    t.app.inject({
      method: o.method as 'GET',
      url,
      headers: { ...headersFor(o.path), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
}

/** An id nothing has, spelled as plainly as the names are: what they must be answered like. */
const UNKNOWN = 'nothing_here';

/**
 * The public session checks say `{}` of any id they do not know, and a suite's runs are listed
 * (none) for any suite: everything else refuses an unknown id.
 */
const ANSWER_ANY_ID = [
  '/api/v1/agent/sessions/{session_uuid}/redirect',
  '/api/v1/agent/conversations/{conversation_id}/redirect',
  '/api/v1/factory/{factory_uid}/benchmarks/{suite_uid}/runs',
];

/** A wrong token is logged as a rejected delivery, as any is. */
const RECORDS_REFUSALS = ['POST /webhooks/w/{webhook_uid}/{token} token'];

/** How a request was answered, as far as it tells the caller anything. */
async function outcome(o: (typeof operations)[number], param: string, name: string) {
  const before = await t.head();
  const res = await requestFor(o, param, name)();
  const problem = res.statusCode >= 400;
  return {
    status: res.statusCode,
    problem: problem && /^application\/problem\+json/.test(String(res.headers['content-type'])),
    answer: problem ? res.json().code : res.body,
    wrote: (await t.head()) !== before,
  };
}

describe('a name every object answers to', () => {
  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))(
    '%s: is answered as an unknown id (a 4xx problem, or what a public check says of any id), writing nothing',
    async (_name, o) => {
      const wrong: string[] = [];
      for (const param of o.params) {
        const unknown = await outcome(o, param, UNKNOWN);
        expect(unknown.wrote, `${param} = ${UNKNOWN}`).toBe(
          RECORDS_REFUSALS.includes(`${o.method} ${o.path} ${param}`),
        );
        if (unknown.status < 400) expect(ANSWER_ANY_ID, `${param} = ${UNKNOWN}: ${unknown.status}`).toContain(o.path);
        for (const name of NAMES) {
          const got = await outcome(o, param, name);
          const fine = got.status === unknown.status && got.answer === unknown.answer && got.wrote === unknown.wrote;
          if (!fine || (got.status >= 400 && (got.status >= 500 || !got.problem)))
            wrong.push(`${param} = ${name}: ${JSON.stringify(got)}, but ${UNKNOWN}: ${JSON.stringify(unknown)}`);
        }
      }
      expect(wrong).toEqual([]);
    },
  );

  it('is no team to act for (X-Service-Team-Uid)', async () => {
    for (const name of NAMES)
      await expectRefused(
        t,
        () => t.call('POST', '/factory', { name: 'F' }, ADMIN_KEY, { 'x-service-team-uid': name }),
        403,
      );
  });

  it('is no prepared attachment of a follow-up (422), and no team secret a webhook may use (400)', async () => {
    for (const name of NAMES) {
      const followup = { message: 'm', attachments: [name] };
      await expectRefused(
        t,
        () => t.call('POST', `/agent/conversations/${held.conversation_id}/followups`, followup),
        422,
      );
      const hook = { name: 'w', secretName: name };
      await expectRefused(t, () => t.call('POST', `/factory/${factory}/webhooks`, hook), 400);
    }
  });

  it('can be a secret name but __proto__, which would be the prototype of the team secrets', async () => {
    await expectRefused(t, () => t.call('POST', `/teams/${t.teamUid}/secrets`, { name: '__proto__', value: 'v' }), 400);
    const made = await t.call('POST', `/teams/${t.teamUid}/secrets`, { name: 'constructor', value: 'v' });
    expect(made.statusCode, made.body).toBe(201);
    const listed = (await t.call('GET', `/teams/${t.teamUid}/secrets`)).json();
    expect(JSON.stringify(listed)).toContain('"constructor"');
    expectProblem(await t.call('DELETE', `/teams/${t.teamUid}/secrets/toString`), 404);
    expect((await t.call('DELETE', `/teams/${t.teamUid}/secrets/constructor`)).statusCode).toBe(204);
  });
});
