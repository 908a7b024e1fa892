/** Creating webhooks and posting to their ingress in the ingress tests. */
import { v4 as uuidv4 } from 'uuid';
import type { TestApp } from '../../helpers/app.js';

export type Hook = { uid: string; factory: string; secret: string | null; ingress_url: string };

export async function makeHook(t: TestApp, body: Record<string, unknown> = {}): Promise<Hook> {
  const factory = (await t.call('POST', '/factory', { name: `F ${uuidv4()}` })).json().uid as string;
  const res = await t.call('POST', `/factory/${factory}/webhooks`, { name: 'hook', ...body });
  if (res.statusCode !== 201) throw new Error(res.body);
  return { ...res.json(), factory };
}

export const post = (t: TestApp, path: string, payload: string | Buffer, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: path, payload, headers });

export const postToken = (t: TestApp, hook: Hook, payload: string | Buffer, headers: Record<string, string> = {}) =>
  post(t, `/webhooks/w/${hook.uid}`, payload, {
    authorization: `Bearer ${hook.secret}`,
    'content-type': 'application/json',
    ...headers,
  });

export async function deliveryLog(t: TestApp, hook: Hook, query = '') {
  const res = await t.call('GET', `/factory/${hook.factory}/webhooks/${hook.uid}/deliveries${query}`);
  if (res.statusCode !== 200) throw new Error(res.body);
  return res.json() as {
    deliveries: Array<Record<string, unknown>>;
    page_info: { has_next_page: boolean; next_cursor: string | null };
  };
}

/** Gives the hook's factory a foreman and an automation that starts a run for every delivery. */
export async function automate(t: TestApp, hook: Hook): Promise<void> {
  const foreman = await t.call('POST', '/agent/identities', {
    name: 'Foreman',
    agent_type: 'FOREMAN',
    factory_uid: hook.factory,
  });
  if (foreman.statusCode !== 201) throw new Error(foreman.body);
  const res = await t.call('POST', `/factory/${hook.factory}/automations`, {
    name: 'On delivery',
    prompt: 'Handle the delivery.',
    triggers: [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }],
  });
  if (res.statusCode !== 201) throw new Error(res.body);
}

/** The runs of the hook's factory, once the automation reactor has passed every event written so far. */
export async function factoryRuns(t: TestApp, hook: Hook): Promise<Array<{ metadata: Record<string, string> }>> {
  const head = await t.rt.events.headPosition();
  for (let i = 0; ; i++) {
    const at = await t.rt.docs.readCheckpoint('reactor_automation-runs');
    if (at && at.commit >= head.commit) break;
    if (i === 500) throw new Error('the automation reactor did not catch up');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const res = await t.call('GET', `/agent/runs?factory_uid=${hook.factory}&limit=100`);
  if (res.statusCode !== 200) throw new Error(res.body);
  return res.json().runs;
}
