/** Creating webhooks and posting to their ingress in the ingress tests. */
import type { TestApp } from '../helpers/app.js';

export type Hook = { uid: string; factory: string; secret: string | null; ingress_url: string };

export async function makeHook(t: TestApp, body: Record<string, unknown> = {}): Promise<Hook> {
  const factory = (await t.call('POST', '/factory', { name: `F ${Math.random()}` })).json().uid as string;
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
