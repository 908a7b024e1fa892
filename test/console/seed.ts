/**
 * What the browser tests find in the console: made through the public API of a real server
 * process, as a team would make it. Each page's test looks for one of these values.
 */
import { call, type ServerProcess } from '../e2e/server-process.js';

type Server = Pick<ServerProcess, 'baseUrl' | 'apiKey'>;

/** One API call that must answer `status`; its JSON body. */
async function ok(server: Server, method: string, url: string, body?: unknown, status = 200, key = server.apiKey) {
  const res = await call(server, method, url, body, key);
  if (res.status !== status) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
  // biome-ignore lint/suspicious/noExplicitAny: an answer's shape is the route's; the caller reads what it asked for
  return res.body as Record<string, any>;
}

/** Posts `body` to a url_token webhook's ingress, as its sender would; it must be accepted. */
async function deliver(server: Server, hook: Record<string, string>, body: unknown): Promise<void> {
  const delivered = await fetch(`${server.baseUrl}/webhooks/w/${hook.uid}/${hook.secret}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (delivered.status !== 202) throw new Error(`delivery: ${delivered.status}`);
}

/** Waits until `probe` answers something (the reactors are asynchronous); bounded. */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An agent's worker fails the run, as `shopfloor worker` would report it. */
async function failRun(server: Server, agentKey: string, runId: string) {
  const worker = (await ok(server, 'POST', '/agent/workers', { host: 'browser-test' }, 201, agentKey)).worker_id;
  const run = await eventually(async () => {
    const res = await call(server, 'POST', `/agent/workers/${worker}/claim`, undefined, agentKey);
    const claimed = res.status === 200 ? (res.body!.run as { run_id: string; execution_id: string }) : undefined;
    return claimed?.run_id === runId ? claimed : undefined;
  });
  const step = async (what: string, body?: unknown) => {
    const res = await fetch(`${server.baseUrl}/api/v1/agent/workers/${worker}/runs/${runId}/${what}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${agentKey}`,
        'x-execution-id': run.execution_id,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  };
  await step('claim');
  await step('start');
  await step('messages', { role: 'assistant', content: [{ type: 'text', text: 'The tests fail on the paint step' }] });
  await step('finish', { state: 'FAILED' });
}

export type Seeded = Awaited<ReturnType<typeof seed>>;

export async function seed(server: Server) {
  const team = (await ok(server, 'GET', '/teams')).teams[0].uid as string;
  const factory = (await ok(server, 'POST', '/factory', { name: 'Assembly line', description: 'Widgets' }, 201)).uid;
  const agent = (
    await ok(
      server,
      'POST',
      '/agent/identities',
      { name: 'Implementer', agent_type: 'IMPLEMENT', factory_uid: factory },
      201,
    )
  ).uid;
  const agentKey = (await ok(server, 'POST', `/agent/identities/${agent}/api-keys`, undefined, 201)).api_key;
  const outbound = await ok(
    server,
    'POST',
    `/teams/${team}/outbound-webhooks`,
    { url: 'http://127.0.0.1:9/hook', event_types: ['run.failed'], description: 'Release notes' },
    201,
  );

  // A factory task whose run fails: the inbox says so, the outbound webhook is called, analytics count it.
  const failing = await ok(server, 'POST', '/agent/runs', {
    prompt: 'Paint the widgets',
    title: 'Paint run',
    agent_identity_uid: agent,
  });
  const task = (
    await ok(
      server,
      'POST',
      `/factory/${factory}/tasks`,
      { title: 'Paint the widgets', conversation_id: failing.conversation_id, stage: 'IMPLEMENT' },
      201,
    )
  ).uid;
  await failRun(server, agentKey, failing.run_id);
  await eventually(async () => {
    const inbox = await ok(server, 'GET', '/factory-inbox');
    return inbox.notifications.length ? true : undefined;
  });

  const run = await ok(server, 'POST', '/agent/runs', { prompt: 'Count the widgets', title: 'Visible run' });
  const hook = await ok(
    server,
    'POST',
    `/factory/${factory}/webhooks`,
    { name: 'Deploy hook', authMode: 'url_token' },
    201,
  );
  await deliver(server, hook, { deployed: 'widget-service' });
  await ok(
    server,
    'POST',
    `/factory/${factory}/automations`,
    {
      name: 'On deploy',
      prompt: 'Check the deployment',
      enabled: false,
      triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
    },
    201,
  );
  await ok(
    server,
    'POST',
    '/agent/schedules',
    { name: 'Nightly sweep', cron_schedule: '0 3 * * *', prompt: 'Sweep' },
    201,
  );
  await ok(
    server,
    'POST',
    `/factory/${factory}/branches`,
    { name: 'first-draft', files: [{ path: 'factory.yaml', content: 'name: 1\n' }] },
    201,
  );
  await ok(
    server,
    'POST',
    `/factory/${factory}/scorers`,
    {
      name: 'Task compliance',
      scoring_prompt: 'Did the agent do what the task asked?',
      model_id: 'claude-4-6-sonnet',
      threshold: 1,
      allowed_classifications: [
        { value: 'compliant', score: 1 },
        { value: 'non_compliant', score: 0 },
      ],
      scope_mode: 'all_agents',
    },
    201,
  );
  const suite = await ok(
    server,
    'POST',
    `/factory/${factory}/benchmarks`,
    {
      name: 'Nightly suite',
      agent_uid: agent,
      tasks: [{ title: 'Task 01', prompt: 'Solve task-1', success_criteria: 'Prints OK-1' }],
    },
    201,
  );
  const benchmark = await ok(
    server,
    'POST',
    `/factory/${factory}/benchmarks/${suite.uid}/runs`,
    {
      repetition_count: 1,
      configurations: [
        { role: 'baseline', display_name: 'Sonnet', model: 'claude-4-6-sonnet' },
        { role: 'candidate', display_name: 'Opus', model: 'claude-4-6-opus-high' },
      ],
    },
    201,
  );
  const member = await ok(
    server,
    'POST',
    `/teams/${team}/members`,
    { email: 'second@example.com', display_name: 'Second Person' },
    201,
  );
  return {
    team,
    factory,
    task,
    failingRun: failing.run_id as string,
    run: run.run_id as string,
    webhook: hook.uid as string,
    outbound: outbound.uid as string,
    benchmark: benchmark.uid as string,
    invitation: member.invitation_code as string,
  };
}

export { deliver, eventually, ok };
