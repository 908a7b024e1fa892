/**
 * One of everything, start to end, carrying hostile content: people, keys, agents, environments,
 * secrets, a factory with its inbox routes, webhooks and their deliveries (accepted, duplicate,
 * rejected, replayed, a replay whose automation run the budget refuses), GitHub pull-request facts,
 * runs executed by a worker that reports every kind of thing, follow-ups, interrupts and cancels,
 * tasks through their stages, a scorer and its judge runs, a benchmark suite run to its verdict, a
 * factory branch applied, schedules paused, resumed and fired, an outbound endpoint that fails
 * until it is disabled, and the deletion of it all. Each request sends the hostile content first
 * and, when that is refused, plain content, so that the story goes on; `after` runs once every
 * request the server accepted (the totality test settles the projector and reactors there).
 */
import { createHmac } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { ADMIN_KEY, quiet, type TestApp } from './app.js';
import { asList, fixture } from './factory-files.js';
import { startReceiver } from './receiver.js';
import { type Assigned, CLASSIFICATIONS, simulatedWorker } from './scorer-fixtures.js';
import { FACTORY_BUDGET, guardrailSteps } from './lifecycle-guardrails.js';

/** What the story is told with: a string, a free-form JSON value, recurrences. */
export interface Content {
  text: string;
  json: unknown;
  cron: string;
  rrule: string;
}

const PLAIN: Content = {
  text: 'plain',
  json: { k: 'v' },
  cron: '0 9 * * 1',
  rrule: 'DTSTART:20260504T090000Z\nRRULE:FREQ=DAILY',
};

/** Numbers names and addresses: unique across lifecycles of one store. */
let n = 0;

type Send = (key?: string) => Promise<LightMyRequestResponse>;

export async function lifecycle(
  t: TestApp,
  c: Content,
  after: (what: string) => Promise<void>,
  moveClock: (ms: number) => Promise<void>,
) {
  /** Sends `make(c)`, or `make(PLAIN)` when that is refused; the answer must be a success. */
  const send = async (what: string, make: (c: Content) => Send, key = ADMIN_KEY) => {
    let res = await make(c)(key);
    expect(res.statusCode, `${what}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
    if (res.statusCode >= 400) res = await make(PLAIN)(key);
    expect(res.statusCode, `${what} (plain): ${res.body.slice(0, 300)}`).toBeLessThan(300);
    await after(what);
    return res.body ? res.json() : null;
  };
  /** A request whose answer is one of `statuses` (a refusal that is itself recorded, say). */
  const expectAnswer = async (what: string, request: () => Promise<LightMyRequestResponse>, statuses: number[]) => {
    const res = await request();
    expect(statuses, `${what}: ${res.body.slice(0, 300)}`).toContain(res.statusCode);
    await after(what);
  };
  const json =
    (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: (c: Content) => unknown) =>
    (c: Content) =>
    (key?: string) =>
      t.call(method, url, body?.(c), key);
  const label = (c: Content) => `${c.text}`.slice(0, 60) || 'x';
  const unique = (c: Content) => `${label(c)} ${++n}`;

  // People and keys.
  const member = await send(
    'add a member',
    json('POST', `/teams/${t.teamUid}/members`, (c) => ({ email: `m${++n}@example.com`, display_name: label(c) })),
  );
  const redeemed = await send(
    'redeem',
    json('POST', '/invitations/redeem', () => ({ code: member.invitation_code })),
    '',
  );
  const myKey = await send(
    'a key of mine',
    json('POST', '/me/api-keys', (c) => ({ label: label(c) })),
    redeemed.api_key,
  );
  await send('revoke it', json('DELETE', `/me/api-keys/${myKey.key_id ?? myKey.uid ?? myKey.id}`), redeemed.api_key);
  await send('remove the member', json('DELETE', `/teams/${t.teamUid}/members/${member.user.uid}`));

  // A factory, its agent and worker, an environment and a secret.
  const factory = (
    await send(
      'a factory',
      json('POST', '/factory', (c) => ({ name: unique(c), description: c.text })),
    )
  ).uid as string;
  await send(
    'its description',
    json('PATCH', `/factory/${factory}`, (c) => ({ description: `${c.text}!` })),
  );
  const agent = await send(
    'an agent',
    json('POST', '/agent/identities', (c) => ({
      name: unique(c),
      agent_type: 'IMPLEMENT',
      factory_uid: factory,
      memory: c.json,
    })),
  );
  await send(
    'the agent changed',
    json('PUT', `/agent/identities/${agent.uid}`, (c) => ({ description: c.text })),
  );
  await send(
    'a foreman',
    json('POST', '/agent/identities', (c) => ({ name: unique(c), agent_type: 'FOREMAN', factory_uid: factory })),
  );
  const agentKey = (await send('its key', json('POST', `/agent/identities/${agent.uid}/api-keys`))).api_key as string;
  const guardrailsExpire = await guardrailSteps(t, factory, agent.uid, { send, expectAnswer, after });
  const env = await send(
    'an environment',
    json('POST', '/agent/environments', (c) => ({ name: unique(c), docker_image: 'node:20' })),
  );
  await send(
    'the environment changed',
    json('PUT', `/agent/environments/${env.uid}`, (c) => ({ name: unique(c), docker_image: 'node:22' })),
  );
  await send(
    'a secret',
    json('POST', `/teams/${t.teamUid}/secrets`, () => ({ name: `secret_${++n}`, value: 'v' })),
  );
  await send(
    'inbox routes',
    json('PUT', `/factory/${factory}/inbox-routes`, () => ({
      routes: [{ kinds: ['pr_review'], recipient_uids: [t.adminUid] }],
    })),
  );

  // An outbound endpoint that fails (until it is disabled), and one that fails once, then recovers.
  const receiver = await startReceiver(() => 503);
  const flaky = await startReceiver((_r, i) => (i === 0 ? 503 : 204));
  await send(
    'a flaky endpoint',
    json('POST', `/teams/${t.teamUid}/outbound-webhooks`, () => ({ url: flaky.url, event_types: ['run.*'] })),
  );
  const outbound = await send(
    'an outbound endpoint',
    json('POST', `/teams/${t.teamUid}/outbound-webhooks`, (c) => ({
      url: receiver.url,
      event_types: ['*'],
      description: c.text,
    })),
  );

  // Webhooks and deliveries.
  const hook = await send(
    'a webhook',
    json('POST', `/factory/${factory}/webhooks`, (c) => ({ name: unique(c), deliveryIdHeader: 'X-Event-Id' })),
  );
  const automation = await send(
    'an automation',
    json('POST', `/factory/${factory}/automations`, (c) => ({
      name: unique(c),
      prompt: c.text || 'p',
      agent: agent.uid,
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    })),
  );
  const deliver = (body: unknown, auth = hook.secret) =>
    t.app.inject({
      method: 'POST',
      url: `/webhooks/w/${hook.uid}`,
      headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json', 'x-event-id': 'evt-1' },
      payload: JSON.stringify(body),
    });
  const delivered = await send('a delivery', (c) => () => deliver({ payload: c.json }));
  await send('the same again', () => () => deliver({ payload: 'again' }));
  await expectAnswer('a bad credential', () => deliver({}, 'wrong'), [401]);
  await send(
    'a replay',
    json('POST', `/factory/${factory}/webhooks/${hook.uid}/deliveries/${delivered.delivery_id}/replay`),
  );
  // A replay the factory's budget has no room for: the automation's refusal is in the delivery log.
  await send(
    'no room',
    json('PUT', `/factory/${factory}/budget`, () => ({ monthly_usd: 0.001 })),
  );
  await send(
    'a replay refused',
    json('POST', `/factory/${factory}/webhooks/${hook.uid}/deliveries/${delivered.delivery_id}/replay`),
  );
  await send(
    'room again',
    json('PUT', `/factory/${factory}/budget`, () => FACTORY_BUDGET),
  );
  await send(
    'a new secret',
    json('POST', `/factory/${factory}/webhooks/${hook.uid}/rotate-secret`, () => ({})),
  );

  // GitHub pull-request facts.
  const github = await send(
    'a GitHub webhook',
    json('POST', `/factory/${factory}/webhooks`, () => ({
      name: `github ${++n}`,
      authMode: 'signature',
      signatureScheme: 'github',
      secret: 'gh-secret',
    })),
  );
  const prUrl = `https://github.com/acme/api/pull/${++n}`;
  await send('pull-request facts', (c) => () => {
    const payload = JSON.stringify({
      action: 'opened',
      pull_request: {
        html_url: prUrl,
        number: n,
        title: c.text,
        user: { login: c.text || 'x', type: 'User' },
        state: 'open',
        draft: false,
        merged: false,
        created_at: '2026-05-04T09:00:00Z',
        updated_at: '2026-05-04T09:00:00Z',
        additions: 1,
        deletions: 1,
        changed_files: 1,
        commits: 1,
        head: { ref: 'fix' },
      },
    });
    const signature = `sha256=${createHmac('sha256', 'gh-secret').update(payload).digest('hex')}`;
    return t.app.inject({
      method: 'POST',
      url: `/webhooks/w/${github.uid}`,
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': signature,
        'x-github-event': 'pull_request',
        'x-github-delivery': `gh-${n}`,
      },
      payload,
    });
  });

  // Runs a worker executes, reporting every kind of thing.
  const worker = await simulatedWorker(t, agentKey).announce();
  const run = await send(
    'a run',
    json('POST', '/agent/runs', (c) => ({
      prompt: c.text || 'p',
      title: label(c),
      agent_identity_uid: agent.uid,
      config: { extra: c.json },
      metadata: { k: label(c) },
    })),
  );
  const assigned = await worker.claimWhere((r) => r.run_id === run.run_id);
  const report = (what: string, body?: (c: Content) => unknown) => (c: Content) => () =>
    worker.report(assigned, what, body?.(c), [200, 201, 202, 400, 409, 413, 422]);
  await send('claim', report('claim'));
  await send('start', report('start'));
  await send(
    'a timeline step',
    report('timeline', (c) => ({ name: label(c), detail: c.json })),
  );
  await send(
    'a message',
    report('messages', (c) => ({
      role: 'assistant',
      content: [
        { type: 'text', text: c.text || 't' },
        { type: 'event', name: label(c), data: c.json },
      ],
    })),
  );
  await send(
    'a question',
    report('questions', (c) => ({ questions: [{ id: 'q1', question: c.text || 'q' }] })),
  );
  await send(
    'a pull request',
    report('artifacts', () => ({ artifact_type: 'PULL_REQUEST', url: prUrl, branch: 'fix' })),
  );
  await send(
    'a reference',
    report('artifacts', (c) => ({
      artifact_type: 'EXTERNAL_REFERENCE',
      reference_type: 'doc',
      url: 'https://x.dev',
      metadata: { k: label(c) },
    })),
  );
  await send(
    'usage',
    report('usage', () => ({
      model_token_usage: [{ model_id: 'claude-4-6-sonnet', total_tokens: 10, tokens_by_category: { input: 10 } }],
    })),
  );
  await send(
    'a follow-up',
    json('POST', `/agent/runs/${run.run_id}/followups`, (c) => ({ message: c.text || 'm' })),
  );
  await send('an interrupt', json('POST', `/agent/runs/${run.run_id}/interrupt`));
  await send(
    'a handoff file',
    (c) => () =>
      t.app.inject({
        method: 'PUT',
        url: `/api/v1/agent/workers/${worker.id}/runs/${run.run_id}/handoff?filename=${encodeURIComponent(label(c))}`,
        headers: {
          authorization: `Bearer ${agentKey}`,
          'x-execution-id': assigned.execution_id,
          'content-type': 'application/octet-stream',
        },
        payload: Buffer.from(c.text),
      }),
  );
  await send(
    'finish',
    report('finish', (c) => ({ state: 'SUCCEEDED', status_message: c.text })),
  );
  await send(
    'a follow-up that resumes it',
    json('POST', `/agent/runs/${run.run_id}/followups`, (c) => ({ message: `${c.text} more` })),
  );
  const other = await send(
    'a run to cancel',
    json('POST', '/agent/runs', (c) => ({ prompt: c.text || 'p' })),
  );
  await send('cancel it', json('POST', `/agent/runs/${other.run_id}/cancel`));

  // Tasks through their stages.
  const forTask = await send(
    'a run for a task',
    json('POST', '/agent/runs', (c) => ({ prompt: c.text || 'p' })),
  );
  const task = await send(
    'a task',
    json('POST', `/factory/${factory}/tasks`, (c) => ({
      title: unique(c),
      description: c.text,
      conversation_id: forTask.conversation_id,
    })),
  );
  await send(
    'its stage',
    json('PATCH', `/factory/${factory}/tasks/${task.uid}`, () => ({ stage: 'IMPLEMENT' })),
  );
  const dispatched = await send(
    'a dispatched run',
    json('POST', `/factory/${factory}/runs`, (c) => ({ prompt: c.text || 'p' })),
  );
  await send('cancel a task', json('POST', `/factory/${factory}/tasks/${task.uid}/cancel`));
  await send('delete a task', json('DELETE', `/factory/${factory}/tasks/${task.uid}`));

  // A scorer judges a run.
  const scorer = await send(
    'a scorer',
    json('POST', `/factory/${factory}/scorers`, (c) => ({
      name: unique(c),
      scoring_prompt: c.text || 'Judge it',
      model_id: 'claude-4-6-sonnet',
      threshold: 1,
      allowed_classifications: CLASSIFICATIONS,
      scope_mode: 'all_agents',
      self_improvement_enabled: true,
    })),
  );
  await send(
    'the scorer changed',
    json('PATCH', `/factory/${factory}/scorers/${scorer.uid}`, (c) => ({ scoring_prompt: `${c.text} again` })),
  );
  await send(
    'dispatch it',
    json('POST', `/factory/${factory}/scorers/${scorer.uid}/dispatch`, () => ({ run_ids: [run.run_id] })),
  );
  const judge = await worker.claimWhere((r) => r.source === 'RUN_SCORER');
  const judged = (what: string, body?: (c: Content) => unknown) => (c: Content) => () =>
    worker.report(judge, what, body?.(c), [200, 201, 400, 409, 422]);
  await send('judge claims', judged('claim'));
  await send('judge starts', judged('start'));
  await send(
    'a judgement',
    judged('judgement', (c) => ({ classification: 'non_compliant', reasoning: c.text })),
  );
  await send(
    'judge finishes',
    judged('finish', () => ({ state: 'SUCCEEDED' })),
  );
  await send('improve it', json('POST', `/factory/${factory}/scorers/${scorer.uid}/self-improvement/run`));

  // A benchmark suite, run to its verdict.
  const suite = await send(
    'a suite',
    json('POST', `/factory/${factory}/benchmarks`, (c) => ({
      name: unique(c),
      agent_uid: agent.uid,
      tasks: [{ title: unique(c), prompt: `${c.text} always-fails`, success_criteria: 'OK' }],
    })),
  );
  await send(
    'the suite changed',
    json('PATCH', `/factory/${factory}/benchmarks/${suite.uid}`, (c) => ({ description: c.text })),
  );
  const added = await send(
    'a suite task',
    json('POST', `/factory/${factory}/benchmarks/${suite.uid}/tasks`, (c) => ({
      title: unique(c),
      prompt: 'p',
      success_criteria: c.text || 'OK',
    })),
  );
  await send(
    'the task edited',
    json('PATCH', `/factory/${factory}/benchmarks/${suite.uid}/tasks/${added.uid}`, (c) => ({ prompt: `${c.text} p` })),
  );
  const bench = await send(
    'a benchmark run',
    json('POST', `/factory/${factory}/benchmarks/${suite.uid}/runs`, (c) => ({
      repetition_count: 1,
      configurations: [
        { role: 'baseline', display_name: label(c), model: 'claude-4-6-sonnet' },
        { role: 'candidate', display_name: 'B', model: 'gpt-5-4-mini' },
      ],
    })),
  );
  // Trials of the first task always fail (retried, then failed); the others pass their judge.
  // Each claim waits for the reactions to what came before (a retry, a judge run), so the loop
  // ends when nothing is left to run, not when a reactor is merely behind. Judges answer only once
  // no trial is left to run, so the suite run always passes through `scoring` (in whatever order
  // the claims come, a judge answering before the last trial ends would skip it).
  const judges: Assigned[] = [];
  for (;;) {
    await quiet(t);
    const run = await worker.claim();
    if (!run && !judges.length) break;
    const current = run ?? judges.shift()!;
    const step = (what: string, body?: unknown) => () => () =>
      worker.report(current, what, body, [200, 201, 400, 409, 422]);
    if (run) {
      await send('a trial claimed', step('claim'));
      await send('a trial started', step('start'));
      if (run.source === 'RUN_SCORER') {
        judges.push(run);
        continue;
      }
    } else await send('a trial judged', step('judgement', { classification: 'pass' }));
    const fails = current.source !== 'RUN_SCORER' && current.prompt.includes('always-fails');
    await send('a trial finished', step('finish', { state: fails ? 'FAILED' : 'SUCCEEDED' }));
  }
  // Cancelled, or ended already.
  await expectAnswer(
    'cancel the benchmark',
    () => t.call('POST', `/factory/${factory}/benchmarks/${suite.uid}/runs/${bench.uid}/cancel`, {}),
    [200, 409],
  );
  const again = await send(
    'another benchmark run',
    json('POST', `/factory/${factory}/benchmarks/${suite.uid}/runs`, () => ({
      repetition_count: 1,
      configurations: [{ role: 'baseline', display_name: 'A', model: 'claude-4-6-sonnet' }],
    })),
  );
  // A person cancels one of its trial runs, then the whole benchmark run.
  const trial = await worker.claim();
  if (trial) {
    await send('a trial run acknowledged', () => () => worker.report(trial, 'claim'));
    await send('cancel a trial run', json('POST', `/agent/runs/${trial.run_id}/cancel`));
  }
  await send(
    'cancel the benchmark run',
    json('POST', `/factory/${factory}/benchmarks/${suite.uid}/runs/${again.uid}/cancel`, () => ({})),
  );
  await send('delete the suite task', json('DELETE', `/factory/${factory}/benchmarks/${suite.uid}/tasks/${added.uid}`));

  // A factory branch, applied.
  const files = asList(fixture('small'));
  const branch = await send(
    'a branch',
    json('POST', `/factory/${factory}/branches`, (c) => ({
      name: `b${++n}`,
      files: files.map((f) => ({ ...f, content: f.path.endsWith('.md') ? `${f.content}\n${c.text}` : f.content })),
    })),
  );
  await send(
    'its files',
    json('PUT', `/factory/${factory}/branches/${branch.uid}/files`, () => ({ files })),
  );
  await send(
    'apply it',
    json('POST', `/factory/${factory}/branches/${branch.uid}/apply`, () => ({})),
  );

  // Schedules, by cron and by recurrence; one whose agent goes away.
  const byCron = await send(
    'a cron schedule',
    json('POST', '/agent/schedules', (c) => ({
      name: unique(c),
      prompt: c.text || 'p',
      cron_schedule: c.cron,
      metadata: { k: label(c) },
    })),
  );
  const byRule = await send(
    'a recurrence',
    json('POST', '/agent/schedules', (c) => ({
      name: unique(c),
      prompt: 'p',
      rrule: c.rrule,
      agent_config: { extra: c.json },
    })),
  );
  await send('pause', json('POST', `/agent/schedules/${byCron.id}/pause`));
  await send('resume', json('POST', `/agent/schedules/${byCron.id}/resume`));
  await send(
    'replace',
    json('PUT', `/agent/schedules/${byRule.id}`, (c) => ({
      name: unique(c),
      prompt: 'p',
      cron_schedule: c.cron,
      enabled: true,
    })),
  );
  const orphan = await send(
    'a schedule of an agent',
    json('POST', '/agent/schedules', () => ({
      name: `orphan ${++n}`,
      prompt: 'p',
      cron_schedule: '* * * * *',
      agent_uid: agent.uid,
    })),
  );
  await send('delete the agent', json('DELETE', `/agent/identities/${agent.uid}`));
  await moveClock(2 * 86_400_000); // schedules fire (the orphan's run is refused), the endpoint fails for a day
  await guardrailsExpire();
  await send('delete a schedule', json('DELETE', `/agent/schedules/${orphan.id}`));

  // The inbox, then everything goes.
  const inbox = (await t.call('GET', '/factory-inbox?limit=100')).json().notifications as Array<{
    notification_uid: string;
  }>;
  if (inbox.length) {
    await send(
      'read',
      json('POST', '/factory-inbox/notifications/read', () => ({
        notification_uids: inbox.map((i) => i.notification_uid),
      })),
    );
    await send(
      'unread',
      json('POST', '/factory-inbox/notifications/unread', () => ({
        notification_uids: inbox.map((i) => i.notification_uid),
      })),
    );
  }
  await send(
    're-enable the endpoint',
    json('PATCH', `/teams/${t.teamUid}/outbound-webhooks/${outbound.uid}`, () => ({ enabled: true })),
  );
  await send('its new secret', json('POST', `/teams/${t.teamUid}/outbound-webhooks/${outbound.uid}/rotate-secret`));
  await send('delete the endpoint', json('DELETE', `/teams/${t.teamUid}/outbound-webhooks/${outbound.uid}`));
  await receiver.close();
  await flaky.close();
  await send('delete the branch', json('DELETE', `/factory/${factory}/branches/${branch.uid}`));
  await send('delete the scorer', json('DELETE', `/factory/${factory}/scorers/${scorer.uid}`));
  await send('delete the suite', json('DELETE', `/factory/${factory}/benchmarks/${suite.uid}`));
  await send('delete the automation', json('DELETE', `/factory/${factory}/automations/${automation.id}`));
  await send('delete the webhook', json('DELETE', `/factory/${factory}/webhooks/${hook.uid}`));
  await send('delete the environment', json('DELETE', `/agent/environments/${env.uid}`));
  await send('delete the factory', json('DELETE', `/factory/${factory}`));
  return { dispatched };
}
