/**
 * The hosted service's own TypeScript SDK (`oz-agent-sdk`) against Shopfloor, unchanged: the
 * endpoints it covers (runs, schedules, the agent list), called as its users call them.
 */
import type { AddressInfo } from 'node:net';
import OzAPI, { BadRequestError, NotFoundError } from 'oz-agent-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let client: OzAPI;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = t.app.server.address() as AddressInfo;
  client = new OzAPI({ apiKey: ADMIN_KEY, baseURL: `http://127.0.0.1:${port}/api/v1`, maxRetries: 0 });
});
afterAll(() => t.close());

describe('oz-agent-sdk', () => {
  it('runs: start, read, list and cancel', async () => {
    const started = await client.agent.run({ prompt: 'Fix the bug in auth.go', title: 'Auth fix' });
    expect(started).toMatchObject({ run_id: expect.any(String), task_id: started.run_id, state: 'QUEUED' });
    const run = await client.agent.runs.retrieve(started.run_id);
    expect(run).toMatchObject({
      run_id: started.run_id,
      title: 'Auth fix',
      prompt: 'Fix the bug in auth.go',
      state: 'QUEUED',
    });
    const listed = await client.agent.runs.list({ limit: 5 });
    expect(listed.runs.map((r) => r.run_id)).toContain(started.run_id);
    expect(await client.agent.runs.cancel(started.run_id)).toBe(started.run_id);
    expect((await client.agent.runs.retrieve(started.run_id)).state).toBe('CANCELLED');
  });

  it('schedules: create, list, retrieve, update, pause, resume and delete', async () => {
    const created = await client.agent.schedules.create({
      cron_schedule: '0 9 * * *',
      name: 'Daily Code Review',
      prompt: 'Review open pull requests and provide feedback',
      enabled: true,
    });
    expect(created).toMatchObject({ name: 'Daily Code Review', cron_schedule: '0 9 * * *', enabled: true });
    expect(created.history?.next_run).toEqual(expect.any(String));
    expect((await client.agent.schedules.list()).schedules.map((s) => s.id)).toContain(created.id);
    expect((await client.agent.schedules.retrieve(created.id)).prompt).toBe(
      'Review open pull requests and provide feedback',
    );
    const updated = await client.agent.schedules.update(created.id, {
      cron_schedule: '30 9 * * 1-5',
      enabled: true,
      name: 'Weekday Code Review',
      prompt: 'Review open pull requests',
    });
    expect(updated).toMatchObject({ name: 'Weekday Code Review', cron_schedule: '30 9 * * 1-5' });
    expect((await client.agent.schedules.pause(created.id)).enabled).toBe(false);
    expect((await client.agent.schedules.resume(created.id)).enabled).toBe(true);
    expect(await client.agent.schedules.delete(created.id)).toEqual({ success: true });
    await expect(client.agent.schedules.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('schedules: a bad cron line is the SDK’s BadRequestError', async () => {
    const refused = client.agent.schedules.create({ cron_schedule: '0 0 9 * * *', name: 'x', prompt: 'x' });
    await expect(refused).rejects.toBeInstanceOf(BadRequestError);
  });

  it('the agent list', async () => {
    expect(await client.agent.list({ sort_by: 'name' })).toEqual({ agents: [] });
  });
});
