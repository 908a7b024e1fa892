/**
 * The console in a real browser (headless Chromium) against a real server process, with data
 * made through the public API (seed.ts): signing in, every page showing what the API made (and
 * passing an accessibility scan, and photographed), live updates without a reload, actions seen
 * through the API, signing out, a revoked key's session, a cross-site form post, and no request to
 * another origin. Without a Chromium the tests are skipped (one line says so), except in CI.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeDataDir, removeDir, type ServerProcess, startServer } from '../e2e/server-process.js';
import {
  consoleContext,
  findChromium,
  launch,
  screenshot,
  seriousViolations,
  sessionCookie,
  signIn,
} from './browser.js';
import { deliver, eventually, ok, type Seeded, seed } from './seed.js';

const CHROMIUM = findChromium();
const SKIP = !CHROMIUM && !process.env.CI;
if (SKIP)
  console.log(
    'Browser tests skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH to enable them)',
  );

let server: ServerProcess;
let data: Seeded;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let foreign: () => string[];
let refusedByPolicy: () => string[];
let apiRequests: () => string[];

/** A run of the seeded factory, which then requires approval: it waits for a team admin. */
const waiting = async (title: string): Promise<string> =>
  (await ok(server, 'POST', `/factory/${data.factory}/runs`, { prompt: title, title }, 201)).run_id;

describe.skipIf(SKIP)('the console in a real browser', () => {
  beforeAll(async () => {
    if (!CHROMIUM)
      throw new Error('CI needs a Chromium for the browser tests: apt-get install chromium (.ci/run does)');
    server = await startServer({ dataDir: makeDataDir(), extra: { OUTBOUND_ALLOWED_RANGES: '127.0.0.0/8' } });
    [data, browser] = await Promise.all([seed(server), launch(CHROMIUM)]);
    ({ context, foreign, refusedByPolicy, apiRequests } = await consoleContext(browser, server.baseUrl));
    page = await context.newPage();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    removeDir(server?.dataDir);
  });

  it('signs in with an API key', async () => {
    await page.goto(`${server.baseUrl}/runs`);
    await expect(page.getByRole('button', { name: 'Sign in' })).toBeDefined();
    await screenshot(page, 'sign-in');
    expect(await seriousViolations(page)).toEqual([]);
    // The scan finds what it should: a field without a label is one.
    await page.evaluate(() => document.body.append(document.createElement('input')));
    expect((await seriousViolations(page)).join()).toMatch(/^label \(critical\)/);
    await signIn(page, server.baseUrl, server.apiKey!);
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
  });

  it('shows on every page what the API made, with no serious accessibility violation', async () => {
    const pages: Array<[name: string, path: string, shows: string]> = [
      ['runs', '/runs', 'Visible run'],
      ['run', `/runs/${data.failingRun}`, 'The tests fail on the paint step'],
      ['factories', '/factories', 'Assembly line'],
      ['factory-board', `/factories/${data.factory}`, 'Paint the widgets'],
      ['task', `/factories/${data.factory}/tasks/${data.task}`, 'Move task'],
      ['factory-agents', `/factories/${data.factory}?tab=agents`, 'Implementer'],
      ['factory-automations', `/factories/${data.factory}?tab=automations`, 'On deploy'],
      ['factory-definitions', `/factories/${data.factory}?tab=definitions`, 'No definition applied yet'],
      ['factory-branches', `/factories/${data.factory}?tab=branches`, 'first-draft'],
      ['schedules', '/schedules', 'Nightly sweep'],
      ['webhooks', `/webhooks?factory=${data.factory}`, 'Deploy hook'],
      ['deliveries', `/factories/${data.factory}/webhooks/${data.webhook}`, 'Payload'],
      ['outbound-deliveries', `/outbound-webhooks/${data.outbound}`, 'run.failed'],
      ['analytics', `/analytics?factory=${data.factory}`, 'Cost by component'],
      ['scorers', `/scorers?factory=${data.factory}`, 'Task compliance'],
      ['benchmarks', `/benchmarks?factory=${data.factory}`, 'Nightly suite'],
      ['benchmark-run', `/benchmarks/${data.factory}/${data.benchmark}`, 'Not enough scored trials yet'],
      ['inbox', '/inbox', 'Paint the widgets'],
      ['audit', `/audit?kind=run&id=${data.failingRun}`, 'RunCreated'],
      ['team', '/team', 'second@example.com'],
    ];
    const problems: string[] = [];
    for (const [name, path, shows] of pages) {
      await page.goto(`${server.baseUrl}${path}`);
      await page
        .getByText(shows)
        .first()
        .waitFor({ timeout: 10_000 })
        // What the page showed instead is the clue.
        .catch(async (e) => Promise.reject((await screenshot(page, `${name}-failed`), e)));
      await page.getByRole('heading', { level: 1 }).waitFor();
      // Nothing is left loading, so the scan and the picture see the page complete.
      await page.locator('.loading').first().waitFor({ state: 'detached', timeout: 10_000 });
      await screenshot(page, name);
      for (const v of await seriousViolations(page)) problems.push(`${name}: ${v}`);
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it("shows the team's guardrails made through the API; sets a budget, approves and denies in the console", async () => {
    await ok(server, 'PUT', `/teams/${data.team}/budget`, { monthly_usd: 500, notify_at: [0.5, 0.9] });
    await ok(server, 'PUT', `/teams/${data.team}/limits`, { max_concurrent_runs: 7 });
    await ok(server, 'PUT', `/factory/${data.factory}/limits`, { requires_approval: true });
    const foreman = { name: 'Foreman', agent_type: 'FOREMAN', factory_uid: data.factory };
    await ok(server, 'POST', '/agent/identities', foreman, 201);
    const [approved, denied] = [await waiting('Ship the widgets'), await waiting('Melt the widgets')];
    await page.goto(`${server.baseUrl}/team`);
    const guardrails = page.getByRole('region', { name: 'Budgets, limits and approvals' });
    await guardrails
      .getByRole('link', { name: 'Ship the widgets' })
      .waitFor()
      .catch(async (e) => Promise.reject((await screenshot(page, 'team-guardrails-failed'), e)));
    await guardrails.getByText('$500.00').first().waitFor();
    await guardrails.getByText('50 %, 90 %').waitFor();
    await page.locator('.loading').first().waitFor({ state: 'detached' });
    expect(await guardrails.locator('dd', { hasText: /^7 runs$/ }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(guardrails, 'team-guardrails');

    await page.getByText('Set the budget of Assembly line').click();
    const factoryForm = page.locator('form', {
      has: page.getByRole('button', { name: 'Save budget of Assembly line' }),
    });
    await factoryForm.getByLabel('Monthly amount (US dollars)').fill('250');
    await factoryForm.getByLabel(/^Notify at/).fill('half');
    await factoryForm.getByRole('button', { name: 'Save budget of Assembly line' }).click();
    // A bad field is the server's problem, named, and nothing is written.
    await factoryForm.getByRole('alert').getByText('notify_at').first().waitFor();
    expect((await call(server, 'GET', `/factory/${data.factory}/budget`)).status).toBe(404);
    await factoryForm.getByLabel(/^Notify at/).fill('');
    await factoryForm.getByLabel('Cap per run (US dollars, optional)').fill('20');
    await factoryForm.getByRole('button', { name: 'Save budget of Assembly line' }).click();
    await page.getByText('Budget saved: $250.00 a month').waitFor();
    const factoryBudget = await ok(server, 'GET', `/factory/${data.factory}/budget`);
    expect([factoryBudget.monthly_usd, factoryBudget.per_run_usd]).toEqual([250, 20]);

    await page.getByRole('button', { name: 'Approve Ship the widgets' }).click();
    await page.getByText('Approved “Ship the widgets”: the run is QUEUED').waitFor();
    await page.getByRole('button', { name: 'Deny Melt the widgets' }).click();
    await page.getByText('Denied “Melt the widgets”: the run is CANCELLED.').waitFor();
    const [a, d] = [
      await ok(server, 'GET', `/agent/runs/${approved}`),
      await ok(server, 'GET', `/agent/runs/${denied}`),
    ];
    expect([a.state, a.approval.state, typeof a.queue_position]).toEqual(['QUEUED', 'approved', 'number']);
    expect([d.state, d.approval.state]).toEqual(['CANCELLED', 'denied']);
    // The approved run's page says where it waits and who let it.
    await page.goto(`${server.baseUrl}/runs/${approved}`);
    const place = page.locator('dt:text-is("Place in the queue") + dd');
    expect(await place.textContent()).toBe(a.queue_position === 1 ? '1 (next)' : String(a.queue_position));
    await page.getByText(`approved by user ${a.approval.decided_by.uid}`).waitFor();
  }, 60_000);

  it('offers a member none of the guardrail writes; an admin denies a run from its page, with a reason', async () => {
    const painted = await waiting('Paint it red');
    const invited = await ok(server, 'POST', `/teams/${data.team}/members`, { email: 'third@example.com' }, 201);
    const memberKey = (await ok(server, 'POST', '/invitations/redeem', { code: invited.invitation_code }, 201, ''))
      .api_key;
    const { context: asMember } = await consoleContext(browser, server.baseUrl);
    const tab = await asMember.newPage();
    await signIn(tab, server.baseUrl, memberKey);
    await tab.goto(`${server.baseUrl}/team`);
    await tab.getByRole('link', { name: 'Paint it red' }).waitFor();
    await tab.getByText('$500.00').first().waitFor();
    await tab.locator('.loading').first().waitFor({ state: 'detached' });
    expect(await tab.getByRole('button', { name: /^(Approve|Deny) / }).count()).toBe(0);
    expect(await tab.getByText(/^(Set|Change) the /).count()).toBe(0);
    await tab.goto(`${server.baseUrl}/runs/${painted}`);
    await tab.getByText('waiting for a team admin').waitFor();
    expect(await tab.getByRole('button', { name: /^(Approve|Deny) run$/ }).count()).toBe(0);
    await asMember.close();

    // An approval the factory's budget has no room for is refused in words; the run waits on.
    await ok(server, 'PUT', `/factory/${data.factory}/budget`, { monthly_usd: 10, per_run_usd: 20 });
    await page.goto(`${server.baseUrl}/runs/${painted}`);
    await page.getByRole('button', { name: 'Approve run' }).click();
    await page.getByRole('alert').getByText('Budget exceeded').waitFor();
    expect((await ok(server, 'GET', `/agent/runs/${painted}`)).approval.state).toBe('pending');
    await ok(server, 'DELETE', `/factory/${data.factory}/budget`, undefined, 204);

    // An admin denies it from its page, with a reason the run's history keeps.
    await page.getByLabel('Reason for denying (optional)').fill('Too bright');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Deny run' }).click();
    await page.getByText('Denied “Paint it red”: the run is CANCELLED.').waitFor();
    expect((await ok(server, 'GET', `/agent/runs/${painted}`)).approval.state).toBe('denied');
    expect(JSON.stringify(await ok(server, 'GET', `/agent/runs/${painted}/history`))).toContain('Too bright');
    await ok(server, 'PUT', `/factory/${data.factory}/limits`, {});
  }, 60_000);

  it("shows on a delivery the automation run it fired that its factory's budget refused", async () => {
    const factory = (await ok(server, 'POST', '/factory', { name: 'Budget line' }, 201)).uid;
    await ok(
      server,
      'POST',
      '/agent/identities',
      { name: 'Foreman', agent_type: 'FOREMAN', factory_uid: factory },
      201,
    );
    const hook = await ok(
      server,
      'POST',
      `/factory/${factory}/webhooks`,
      { name: 'Alerts', authMode: 'url_token' },
      201,
    );
    const triggers = [{ provider: 'webhook', event: 'received', filter: { webhook_ids: [hook.uid] } }];
    await ok(server, 'POST', `/factory/${factory}/automations`, { name: 'Triage', prompt: 'Triage', triggers }, 201);
    // A run's estimate is at least $1: a month of $0.001 has no room for one.
    await ok(server, 'PUT', `/factory/${factory}/budget`, { monthly_usd: 0.001 });
    await deliver(server, hook, { alert: 'disk full' });
    await eventually(async () => {
      const log = await ok(server, 'GET', `/factory/${factory}/webhooks/${hook.uid}/deliveries`);
      return log.deliveries[0]?.refused_runs ? true : undefined;
    });
    await page.goto(`${server.baseUrl}/factories/${factory}/webhooks/${hook.uid}`);
    await page.getByText('1 automation run refused').waitFor();
    await page.getByText('budget_exceeded').waitFor();
    expect(await page.locator('li', { hasText: 'budget_exceeded' }).getByText('Triage').count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('shows a run created through the API on Runs without a reload, told by the team stream', async () => {
    // Once the stream is open the console stops polling: the new run can only come through it.
    const stream = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/events');
    await page.goto(`${server.baseUrl}/runs`);
    const opened = await stream;
    expect(opened.status()).toBe(200);
    expect(opened.headers()['content-type']).toMatch(/^text\/event-stream/);
    expect(new URL(opened.url()).searchParams.get('team_uid')).toBeTruthy();
    await page.getByText('Visible run').waitFor();
    await page.evaluate(() => Object.assign(window, { sameDocument: true }));
    await ok(server, 'POST', '/agent/runs', { prompt: 'Arrive live', title: 'Arrived without a reload' });
    await page.getByText('Arrived without a reload').waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  });

  it('cancels a run from its page, as the API then says', async () => {
    const run = await ok(server, 'POST', '/agent/runs', { prompt: 'Wait', title: 'To be cancelled' });
    await page.goto(`${server.baseUrl}/runs/${run.run_id}`);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByText('The run is cancelled.').waitFor();
    expect((await ok(server, 'GET', `/agent/runs/${run.run_id}`)).state).toBe('CANCELLED');
  });

  it('moves a task to another stage from its page, as the API then says', async () => {
    await page.goto(`${server.baseUrl}/factories/${data.factory}/tasks/${data.task}`);
    await page.getByLabel('Stage').selectOption('REVIEW');
    await page.getByRole('button', { name: 'Move task' }).click();
    await page.getByText('Task moved to REVIEW.').waitFor();
    expect((await ok(server, 'GET', `/factory/${data.factory}/tasks/${data.task}`)).stage).toBe('REVIEW');
  });

  it('holds its layout at 360 px wide and is reachable by keyboard', async () => {
    const narrow = await context.newPage();
    await narrow.setViewportSize({ width: 360, height: 780 });
    const wide: string[] = [];
    for (const path of [
      `/runs/${data.failingRun}`,
      `/factories/${data.factory}`,
      `/factories/${data.factory}/tasks/${data.task}`,
      `/analytics?factory=${data.factory}`,
      `/audit?kind=run&id=${data.failingRun}`,
      '/team',
      '/runs',
    ]) {
      await narrow.goto(`${server.baseUrl}${path}`);
      await narrow.getByRole('heading', { level: 1 }).waitFor();
      await narrow.locator('.loading').first().waitFor({ state: 'detached' });
      const width = await narrow.evaluate(() => document.documentElement.scrollWidth);
      if (width > 360) wide.push(`${path}: ${width} px`);
    }
    expect(wide).toEqual([]);
    await screenshot(narrow, 'runs-phone');
    await narrow.keyboard.press('Tab');
    expect(await narrow.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await narrow.keyboard.press('Enter');
    await narrow.keyboard.press('Tab');
    await narrow.keyboard.press('Tab');
    expect(await narrow.evaluate(() => document.activeElement?.closest('main') !== null)).toBe(true);
    await narrow.close();
  });

  it('makes as many requests for a page of many runs as for a page of few', async () => {
    // Distinct requests: a poll falling within the load asks the same again.
    const load = async () => {
      const before = apiRequests().length;
      await page.goto(`${server.baseUrl}/runs`);
      await page.getByText('Visible run').waitFor();
      await page.locator('.loading').first().waitFor({ state: 'detached' });
      return new Set(apiRequests().slice(before)).size;
    };
    const few = await load();
    for (let i = 0; i < 10; i++) await ok(server, 'POST', '/agent/runs', { prompt: 'More', title: `More ${i}` });
    expect(await load()).toBe(few);
  });

  it('sent no request to another origin, and did nothing its security policy refused', () => {
    expect(foreign()).toEqual([]);
    expect(refusedByPolicy()).toEqual([]);
  });

  it('signs out, ending the session on the server', async () => {
    const cookie = await sessionCookie(context);
    await page.goto(`${server.baseUrl}/runs`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const res = await fetch(`${server.baseUrl}/api/v1/session`, { headers: { cookie } });
    expect(res.status).toBe(401);
  });

  it('redeems an invitation on the sign-in page, and signs in with the key it gives', async () => {
    const { context: invited } = await consoleContext(browser, server.baseUrl);
    const tab = await invited.newPage();
    await tab.goto(`${server.baseUrl}/team`);
    await tab.getByLabel('Invitation code').fill(data.invitation);
    await tab.getByRole('button', { name: 'Redeem invitation' }).click();
    await tab.getByText('Invitation redeemed for second@example.com').waitFor();
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByRole('heading', { level: 1, name: /^Team / }).waitFor();
    await tab.getByText('member', { exact: true }).first().waitFor();
    // A member is not offered what only admins may do.
    expect(await tab.getByRole('button', { name: 'Invite' }).count()).toBe(0);
    await invited.close();
  });

  it('refuses the session of a key revoked meanwhile', async () => {
    const key = await ok(server, 'POST', '/me/api-keys', { label: 'browser' }, 201);
    const { context: other } = await consoleContext(browser, server.baseUrl);
    const tab = await other.newPage();
    await signIn(tab, server.baseUrl, key.api_key);
    await ok(server, 'DELETE', `/me/api-keys/${key.key_id}`, undefined, 204);
    await tab.goto(`${server.baseUrl}/factories`);
    await tab.getByRole('button', { name: 'Sign in' }).waitFor();
    const res = await fetch(`${server.baseUrl}/api/v1/session`, { headers: { cookie: await sessionCookie(other) } });
    expect(res.status).toBe(401);
    await other.close();
  });

  it('refuses a form posted from another site to the API with the session cookie', async () => {
    const { context: victim } = await consoleContext(browser, server.baseUrl);
    const tab = await victim.newPage();
    await signIn(tab, server.baseUrl, server.apiKey!);
    // Another origin on the same host (another port: the same site, so SameSite lets the cookie go).
    const attacker = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<form method="post" action="${server.baseUrl}/api/v1/factory" enctype="text/plain">` +
          `<input name='{"name":"Forged","x":"' value='"}'><button>Win a prize</button></form>`,
      );
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
    try {
      await tab.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
      await Promise.all([tab.waitForURL(`${server.baseUrl}/api/v1/factory`), tab.getByRole('button').click()]);
      expect(await tab.textContent('body')).toContain('cross_site_request');
    } finally {
      attacker.close();
      await victim.close();
    }
    const factories = (await call(server, 'GET', '/factory')).body!.factories as Array<{ name: string }>;
    expect(factories.map((f) => f.name)).not.toContain('Forged');
  });
});
