/**
 * A team with one of everything a path parameter can name: a factory and its foreman, webhooks of
 * both kinds with a delivery, automations, a secret, a schedule, a dispatched run and its task, and
 * a run held (claimed and started) by a worker of the agent with an artifact. Request-driving
 * property tests (test/api/fuzz-routes, test/api/projection-totality) point their requests at it.
 */
import { expect } from 'vitest';
import { ADMIN_KEY, type TestApp } from './app.js';
import { eventually } from './task-fixtures.js';

export async function prepareWorld(t: TestApp) {
  const ok = async (res: Awaited<ReturnType<typeof t.call>>, status: number) => {
    expect(res.statusCode, res.body).toBe(status);
    return res.json();
  };

  const factory = (await ok(await t.call('POST', '/factory', { name: 'Fuzzed' }), 201)).uid as string;
  const agent = (
    await ok(
      await t.call('POST', '/agent/identities', { name: 'Foreman', agent_type: 'FOREMAN', factory_uid: factory }),
      201,
    )
  ).uid as string;
  const agentKey = (await ok(await t.call('POST', `/agent/identities/${agent}/api-keys`), 201)).api_key as string;
  const tokenHook = await ok(await t.call('POST', `/factory/${factory}/webhooks`, { name: 'token' }), 201);
  const urlHook = await ok(
    await t.call('POST', `/factory/${factory}/webhooks`, { name: 'url', authMode: 'url_token' }),
    201,
  );
  // Accepted deliveries start runs, with and without a payload filter.
  const automation = (
    await ok(
      await t.call('POST', `/factory/${factory}/automations`, {
        name: 'On any',
        prompt: 'Look',
        agent,
        triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [tokenHook.uid] } }],
      }),
      201,
    )
  ).id as string;
  await ok(
    await t.call('POST', `/factory/${factory}/automations`, {
      name: 'On opened',
      prompt: 'Look',
      agent,
      triggers: [
        {
          provider: 'webhook',
          event: 'received',
          filter: {
            webhook_ids: [tokenHook.uid],
            payload: { action: ['opened'], pr: { draft: { exists: false } } },
          },
        },
      ],
    }),
    201,
  );
  const delivery = (
    await ok(
      await t.app.inject({
        method: 'POST',
        url: `/webhooks/w/${tokenHook.uid}`,
        headers: { authorization: `Bearer ${tokenHook.secret}` },
        payload: { action: 'opened' },
      }),
      202,
    )
  ).delivery_id as string;
  await ok(await t.call('POST', `/teams/${t.teamUid}/secrets`, { name: 'fuzz_secret', value: 's3cret-value' }), 201);
  const schedule = (
    await ok(await t.call('POST', '/agent/schedules', { name: 'Weekly', prompt: 'p', cron_schedule: '0 9 * * 1' }), 201)
  ).id as string;
  const dispatched = await ok(await t.call('POST', `/factory/${factory}/runs`, { prompt: 'Dispatched' }), 201);

  // A run held by a worker of the agent, claimed and started, for the reports.
  const worker = (await ok(await t.call('POST', '/agent/workers', { host: 'fuzz' }, agentKey), 201))
    .worker_id as string;
  const held = await ok(await t.call('POST', '/agent/runs', { prompt: 'Held', config: { worker_host: worker } }), 200);
  let execution = '';
  while (!execution) {
    const claimed = await ok(await t.call('POST', `/agent/workers/${worker}/claim`, undefined, agentKey), 200);
    if (claimed.run.run_id === held.run_id) execution = claimed.run.execution_id;
  }
  // Made after the claims, so that no worker holds it.
  const run = await ok(await t.call('POST', '/agent/runs', { prompt: 'Someone else runs this' }), 200);
  const report = (what: string, body?: unknown) =>
    t.call('POST', `/agent/workers/${worker}/runs/${held.run_id}/${what}`, body, agentKey, {
      'x-execution-id': execution,
    });
  await ok(await report('claim'), 200);
  await ok(await report('start'), 200);
  const artifact = (await ok(await report('artifacts', { artifact_type: 'PLAN', content: 'Plan' }), 201))
    .artifact_uid as string;
  // The reactor makes the dispatched run's task.
  const task = await eventually(async () => {
    const res = await t.call('GET', `/factory/${factory}/task-by-run?run_id=${dispatched.run_id}`);
    return res.statusCode === 200 ? (res.json().uid as string) : undefined;
  });

  /** The existing thing a path parameter names; worker routes name the held run. */
  const existing = (path: string, param: string): string | undefined =>
    ({
      team_uid: t.teamUid,
      factory_uid: factory,
      agent_uid: agent,
      webhook_uid: path.startsWith('/webhooks/w/{webhook_uid}/') ? urlHook.uid : tokenHook.uid,
      token: urlHook.secret,
      automation_id: automation,
      delivery_id: delivery,
      schedule_id: schedule,
      secret_name: 'fuzz_secret',
      run_id: path.startsWith('/api/v1/agent/workers/') ? held.run_id : run.run_id,
      conversation_id: run.conversation_id,
      task_uid: task,
      worker_id: worker,
      artifact_uid: artifact,
    })[param];

  /** The credential that reaches an operation's handler: the webhook's own, the agent's, the admin's. */
  const credentialFor = (path: string): Record<string, string> => {
    if (path === '/webhooks/w/{webhook_uid}') return { authorization: `Bearer ${tokenHook.secret}` };
    if (path.startsWith('/webhooks/')) return {};
    return { authorization: `Bearer ${path.startsWith('/api/v1/agent/workers') ? agentKey : ADMIN_KEY}` };
  };

  /** Normal requests that read what the operation may have written: each answers 200 right after it. */
  const readsAfter = (path: string): string[] => {
    if (path.startsWith('/webhooks/')) {
      const hook = path === '/webhooks/w/{webhook_uid}' ? tokenHook.uid : urlHook.uid;
      return [`/api/v1/factory/${factory}/webhooks/${hook}/deliveries`];
    }
    if (path.startsWith('/api/v1/agent/workers')) {
      const at = `/api/v1/agent/runs/${held.run_id}`;
      return [at, `${at}/timeline`, `${at}/conversation`];
    }
    if (path.startsWith('/api/v1/agent/identities')) return ['/api/v1/agent/identities'];
    if (path.startsWith('/api/v1/agent/schedules')) return ['/api/v1/agent/schedules'];
    if (path.startsWith('/api/v1/agent/')) return ['/api/v1/agent/runs?limit=100'];
    if (path.startsWith('/api/v1/factory')) return ['/api/v1/factory'];
    return ['/api/v1/teams'];
  };

  return { factory, agent, agentKey, worker, held, execution, existing, credentialFor, readsAfter };
}
