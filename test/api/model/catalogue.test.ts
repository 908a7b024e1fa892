/**
 * The catalogue runs are configured from: the models (the operator's file, recorded as an event
 * when it changes) and the team's environments; runs and schedules may name only what it holds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRefused, newEnvironment, startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-models-'));
const modelsFile = path.join(dir, 'models.yaml');
const catalogue = (extra = '') => `
default_model_id: fast
models:
  - { id: fast, display_name: Fast, provider: OPENAI, vision_supported: false, prices: { input: 1, cache_read: 0.1, cache_write: 1, output: 4 } }
  - { id: retired, display_name: Retired, provider: ANTHROPIC, vision_supported: true, disable_reason: ADMIN_DISABLED, prices: { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 } }
${extra}`;

beforeAll(async () => {
  fs.writeFileSync(modelsFile, catalogue());
  t = await startTestApp({ MODELS_FILE: modelsFile });
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const changes = () => t.rt.events.readStream('models');

describe('models', () => {
  it('lists the configured catalogue with its default and prices', async () => {
    const res = await t.call('GET', '/agent/models');
    expect(res.json()).toEqual({
      default_model_id: 'fast',
      models: [
        {
          id: 'fast',
          display_name: 'Fast',
          provider: 'OPENAI',
          vision_supported: false,
          prices: { input: 1, cache_read: 0.1, cache_write: 1, output: 4 },
        },
        expect.objectContaining({ id: 'retired', disable_reason: 'ADMIN_DISABLED' }),
      ],
    });
  });

  it('refuses runs and schedules naming an unknown or disabled model, writing nothing', async () => {
    for (const model of ['no-such-model', 'retired']) {
      const run = await expectRefused(
        t,
        () => t.call('POST', '/agent/runs', { prompt: 'x', config: { model_id: model } }),
        400,
      );
      expect(run.errors).toEqual([{ path: 'body.config.model_id', message: expect.stringContaining(model) }]);
      const schedule = await expectRefused(
        t,
        () =>
          t.call('POST', '/agent/schedules', {
            name: 's',
            cron_schedule: '@daily',
            prompt: 'x',
            agent_config: { model_id: model },
          }),
        400,
      );
      expect(schedule.errors[0].path).toBe('body.agent_config.model_id');
    }
    expect((await t.call('POST', '/agent/runs', { prompt: 'x', config: { model_id: 'fast' } })).statusCode).toBe(200);
  });

  it('records a change of the file once, at the next start, and none when it did not change', async () => {
    expect(await changes()).toHaveLength(1);
    const same = await startTestApp({ DATA_DIR: t.dir, MODELS_FILE: modelsFile });
    await same.app.close();
    expect(await changes()).toHaveLength(1);
    fs.writeFileSync(
      modelsFile,
      catalogue(
        `  - { id: new, display_name: New, provider: GOOGLE, vision_supported: true, prices: { input: 2, cache_read: 0.2, cache_write: 2, output: 8 } }`,
      ),
    );
    const changed = await startTestApp({ DATA_DIR: t.dir, MODELS_FILE: modelsFile });
    expect((await changed.call('GET', '/agent/models')).json().models.map((m: { id: string }) => m.id)).toEqual([
      'fast',
      'retired',
      'new',
    ]);
    await changed.app.close();
    expect(await changes()).toHaveLength(2);
  });

  it('will not start on a broken catalogue, and says why', async () => {
    const broken = path.join(dir, 'broken.yaml');
    fs.writeFileSync(broken, 'default_model_id: gone\nmodels: []\n');
    await expect(startTestApp({ MODELS_FILE: broken })).rejects.toThrow(/models: .*default_model_id/s);
  });
});

describe('environments', () => {
  it('creates, lists by name or last update, reads, updates in part and deletes', async () => {
    const a = await newEnvironment(t, 'b-env');
    const b = await newEnvironment(t, 'A-env');
    expect(a).toMatch(/^[A-Za-z0-9]{22}$/);
    const byName = (await t.call('GET', '/agent/environments?sort_by=name'))
      .json()
      .environments.map((e: { uid: string }) => e.uid);
    expect(byName.indexOf(b)).toBeLessThan(byName.indexOf(a));
    const byUpdate = (await t.call('GET', '/agent/environments'))
      .json()
      .environments.map((e: { uid: string }) => e.uid);
    expect(byUpdate.indexOf(b)).toBeLessThan(byUpdate.indexOf(a));

    const updated = await t.call('PUT', `/agent/environments/${a}`, {
      setup_commands: ['npm ci'],
      description: 'CI box',
    });
    expect(updated.json()).toMatchObject({
      uid: a,
      config: { name: 'b-env', docker_image: 'node:20-bookworm', setup_commands: ['npm ci'], description: 'CI box' },
      scope: { type: 'Team', uid: t.teamUid },
      creator: { type: 'user', uid: t.adminUid },
      setup_failed: false,
    });
    expect((await t.call('DELETE', `/agent/environments/${a}`)).statusCode).toBe(204);
    expect((await t.call('GET', `/agent/environments/${a}`)).statusCode).toBe(404);
  });

  it('shows the newest run that used each', async () => {
    const env = await newEnvironment(t);
    await t.call('POST', '/agent/runs', { prompt: 'first', config: { environment_id: env } });
    const { run_id } = (
      await t.call('POST', '/agent/runs', { prompt: 'second', title: 'Second', config: { environment_id: env } })
    ).json();
    expect((await t.call('GET', `/agent/environments/${env}`)).json()).toMatchObject({
      last_task_run_timestamp: expect.any(String),
      last_task_created: { id: run_id, title: 'Second', state: 'QUEUED', started_at: null },
    });
  });

  it('refuses runs naming an unknown environment, and bad environments, writing nothing', async () => {
    const run = await expectRefused(
      t,
      () => t.call('POST', '/agent/runs', { prompt: 'x', config: { environment_id: 'Z'.repeat(22) } }),
      400,
    );
    expect(run.errors[0].path).toBe('body.config.environment_id');
    await expectRefused(t, () => t.call('POST', '/agent/environments', { name: 'x', docker_image: 'alpine:3' }), 400);
    await expectRefused(t, () => t.call('POST', '/agent/environments', { name: '' }), 400);
    await expectRefused(t, () => t.call('PUT', `/agent/environments/${'Z'.repeat(22)}`, { name: 'y' }), 404);
    await expectRefused(t, () => t.call('PUT', '/agent/environments/short', { name: 'y' }), 400);
  });
});
