/**
 * The features' metrics as an operator scrapes them: workers connected and runs queued, claimed and
 * running (the condition "runs wait and no worker" is readable), and webhook deliveries by outcome.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../../helpers/app.js';
import { sample, scrape } from '../../helpers/prometheus.js';

const t = await startTestApp();
afterAll(() => t.close());

const runs = async (state: string) => sample(await scrape(t.app), 'shopfloor_runs', { state });
const newRun = async () => (await t.call('POST', '/agent/runs', { prompt: 'Do it' })).json().run_id as string;

describe('worker and run metrics', () => {
  it('count runs waiting with no worker, then claimed and running as a worker takes them', async () => {
    await newRun();
    await newRun();
    expect(await runs('queued')).toBe(2);
    expect(sample(await scrape(t.app), 'shopfloor_workers_connected')).toBe(0);

    const agent = (await t.call('POST', '/agent/identities', { name: 'Runner' })).json().uid as string;
    const key = (await t.call('POST', `/agent/identities/${agent}/api-keys`)).json().api_key as string;
    const worker = (await t.call('POST', '/agent/workers', { host: 'builder-1' }, key)).json().worker_id as string;
    expect(sample(await scrape(t.app), 'shopfloor_workers_connected')).toBe(1);
    const claimed = (await t.call('POST', `/agent/workers/${worker}/claim?wait_seconds=0`, undefined, key)).json().run;
    expect([await runs('queued'), await runs('claimed'), await runs('running')]).toEqual([1, 1, 0]);
    const report = (what: string) =>
      t.call('POST', `/agent/workers/${worker}/runs/${claimed.run_id}/${what}`, undefined, key, {
        'x-execution-id': claimed.execution_id,
      });
    expect((await report('claim')).statusCode).toBe(200);
    expect((await report('start')).statusCode).toBe(200);
    expect([await runs('queued'), await runs('claimed'), await runs('running')]).toEqual([1, 0, 1]);
  });
});

describe('webhook delivery metrics', () => {
  it('count deliveries by outcome, never by webhook', async () => {
    const factory = (await t.call('POST', '/factory', { name: 'F' })).json().uid as string;
    const hook = (await t.call('POST', `/factory/${factory}/webhooks`, { name: 'u', authMode: 'url_token' })).json();
    const post = (token: string, payload: string) =>
      t.app.inject({
        method: 'POST',
        url: `/webhooks/w/${hook.uid}/${token}`,
        headers: { 'content-type': 'application/json' },
        payload,
      });
    expect((await post(hook.secret, '{"n":1}')).statusCode).toBe(202);
    expect((await post(hook.secret, '{"n":1}')).statusCode).toBe(202);
    expect((await post(hook.secret, '{"n":')).statusCode).toBe(400);
    expect((await post(`${hook.secret}x`, '{"n":2}')).statusCode).toBe(401);
    const s = await scrape(t.app);
    const outcome = (o: string) => sample(s, 'shopfloor_webhook_deliveries_total', { outcome: o });
    expect([
      outcome('accepted'),
      outcome('duplicate'),
      outcome('rejected_invalid_json'),
      outcome('rejected_auth'),
    ]).toEqual([1, 1, 1, 1]);
  });
});
