/**
 * Ids a request names are looked up as own keys of a stream's state: `constructor`, `__proto__`
 * and the other names every JavaScript object answers to name nothing. Found by the property test
 * (fuzz-routes.test.ts): PATCH of automation `__proto__` was a 500, and DELETE of secret
 * `constructor` appended a deletion of a secret that never existed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRefused, startTestApp, type TestApp } from '../helpers/app.js';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

let t: TestApp;
let factory: string;
beforeAll(async () => {
  t = await startTestApp();
  factory = (await t.call('POST', '/factory', { name: 'F' })).json().uid;
});
afterAll(() => t.close());

describe('a name every object answers to', () => {
  it('names no automation, webhook or team secret (404), and nothing is written', async () => {
    for (const name of NAMES) {
      await expectRefused(t, () => t.call('PATCH', `/factory/${factory}/automations/${name}`, { name: 'x' }), 404);
      await expectRefused(t, () => t.call('DELETE', `/factory/${factory}/automations/${name}`), 404);
      await expectRefused(t, () => t.call('PATCH', `/factory/${factory}/webhooks/${name}`, { name: 'x' }), 404);
      await expectRefused(t, () => t.call('DELETE', `/factory/${factory}/webhooks/${name}`), 404);
      await expectRefused(t, () => t.call('POST', `/factory/${factory}/webhooks/${name}/rotate-secret`), 404);
      await expectRefused(t, () => t.call('DELETE', `/teams/${t.teamUid}/secrets/${name}`), 404);
      await expectRefused(t, () => t.app.inject({ method: 'POST', url: `/webhooks/w/${name}`, payload: '{}' }), 404);
    }
  });

  it('is no prepared attachment of a follow-up (422), and no team secret a webhook may use (400)', async () => {
    const conversation = (await t.call('POST', '/agent/runs', { prompt: 'p' })).json().conversation_id;
    for (const name of NAMES) {
      const followup = { message: 'm', attachments: [name] };
      await expectRefused(t, () => t.call('POST', `/agent/conversations/${conversation}/followups`, followup), 422);
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
    expect((await t.call('DELETE', `/teams/${t.teamUid}/secrets/constructor`)).statusCode).toBe(204);
  });
});
