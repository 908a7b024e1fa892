/**
 * Scheduled agents through the API, on a clock the test moves: each due time fires once, with a
 * run of its own; downtime fires the latest due time and records the rest; a paused schedule
 * neither fires nor catches up; RRULE schedules keep their local time across daylight saving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fireDueSchedules } from '../../../commands/schedule/scheduler.js';
import { manualClock } from '../../../src/clock.js';
import { eventually } from '../../helpers/task-fixtures.js';
import { expectRefused, quiet, startTestApp, type TestApp } from '../../helpers/app.js';

const clock = manualClock('2026-03-25T12:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, clock);
});
afterAll(() => t.close());

const create = async (body: Record<string, unknown>) => {
  const res = await t.call('POST', '/agent/schedules', { prompt: 'Review open pull requests', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
};
const get = async (id: string) => (await t.call('GET', `/agent/schedules/${id}`)).json();
/** The runs a schedule started, oldest first. */
const runsOf = async (id: string) =>
  (await t.call('GET', `/agent/runs?schedule_id=${id}&sort_by=created_at&sort_order=asc&limit=500`)).json().runs;
/**
 * Moves the clock and fires what is due now, then waits for what the firings start. Schedules of
 * earlier tests fall due too: fired here, not by the background scheduler at some later moment
 * (say, while a test checks that a refused request wrote nothing).
 */
async function at(iso: string) {
  clock.set(iso);
  await fireDueSchedules(t.rt);
  await quiet(t);
}
const runsSettle = async (id: string, count: number) =>
  eventually(async () => {
    const runs = await runsOf(id);
    return runs.length === count ? runs : undefined;
  });

describe('schedules', () => {
  it('creates, lists by name, reads, replaces, pauses, resumes and deletes', async () => {
    const b = await create({ name: 'b nightly', cron_schedule: '0 2 * * *' });
    const a = await create({ name: 'A weekly', cron_schedule: '@weekly', enabled: false, metadata: { area: 'ci' } });
    expect(b).toMatchObject({
      name: 'b nightly',
      cron_schedule: '0 2 * * *',
      rrule: null,
      enabled: true,
      prompt: 'Review open pull requests',
      scope: { type: 'Team', uid: t.teamUid },
      created_by: { type: 'user', uid: t.adminUid, email: 'admin@example.com' },
      history: { last_ran: null, next_run: '2026-03-26T02:00:00.000Z', firings: [] },
      next_run_time: '2026-03-26T02:00:00.000Z',
      last_spawn_error: null,
    });
    expect(a.history.next_run).toBeNull();
    const listed = (await t.call('GET', '/agent/schedules')).json().schedules.map((s: { id: string }) => s.id);
    expect(listed.indexOf(a.id)).toBeLessThan(listed.indexOf(b.id));

    const replaced = await t.call('PUT', `/agent/schedules/${b.id}`, {
      name: 'b nightly',
      cron_schedule: '30 3 * * *',
      enabled: true,
      prompt: 'Review again',
    });
    expect(replaced.json()).toMatchObject({
      cron_schedule: '30 3 * * *',
      prompt: 'Review again',
      next_run_time: '2026-03-26T03:30:00.000Z',
    });
    expect((await t.call('POST', `/agent/schedules/${b.id}/pause`)).json()).toMatchObject({
      enabled: false,
      next_run_time: null,
    });
    expect((await t.call('POST', `/agent/schedules/${b.id}/resume`)).json()).toMatchObject({ enabled: true });
    expect((await t.call('DELETE', `/agent/schedules/${b.id}`)).json()).toEqual({ success: true });
    expect((await t.call('GET', `/agent/schedules/${b.id}`)).statusCode).toBe(404);
  });

  it.each([
    [{ name: 'x', cron_schedule: '0 0 9 * * *' }, 'body.cron_schedule'],
    [{ name: 'x', cron_schedule: 'CRON_TZ=Europe/Berlin 0 9 * * *' }, 'body.cron_schedule'],
    [{ name: 'x', rrule: 'RRULE:FREQ=DAILY' }, 'body.rrule'],
    [{ name: 'x', rrule: 'DTSTART;TZID=Atlantis/Capital:20260101T090000\nRRULE:FREQ=DAILY' }, 'body.rrule'],
    [{ name: 'x', cron_schedule: '@daily', rrule: 'DTSTART:20260101T090000Z\nRRULE:FREQ=DAILY' }, 'body.cron_schedule'],
    [{ name: 'x' }, 'body.cron_schedule'],
    [{ name: 'x', cron_schedule: '@daily', prompt: ' ' }, 'body.prompt'],
    [{ name: '', cron_schedule: '@daily' }, 'body.name'],
  ])('refuses %j, naming %s, writing nothing', async (body, path) => {
    const problem = await expectRefused(t, () => t.call('POST', '/agent/schedules', { prompt: 'p', ...body }), 400);
    expect(problem.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  // Issue #30: each of these was appended, then set aside by the read model (or froze the server).
  const twoDaysAgo = 'DTSTART:20260323T120000Z';
  it.each([
    [{ cron_schedule: '0 0 30 2 *' }, 'body.cron_schedule', /no time in the next 5 years/],
    [{ cron_schedule: '0 0 31 4 *', enabled: false }, 'body.cron_schedule', /no time in the next 5 years/],
    [{ rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30' }, 'body.rrule', /no time/],
    [{ rrule: 'DTSTART:20260101T000000Z\nRRULE:FREQ=DAILY;UNTIL=20260301T000000Z' }, 'body.rrule', /no time/],
    [{ rrule: `${twoDaysAgo}\nRRULE:FREQ=SECONDLY;UNTIL=20260324T120000Z` }, 'body.rrule', /SECONDLY/],
    [{ rrule: 'DTSTART:20260101T000000Z\nRRULE:FREQ=HOURLY;INTERVAL=2;BYHOUR=1' }, 'body.rrule', /BYHOUR/],
  ])('refuses a recurrence that never falls due or costs unbounded work: %j', async (body, path, reason) => {
    const problem = await expectRefused(
      t,
      () => t.call('POST', '/agent/schedules', { name: 'x', prompt: 'p', ...body }),
      400,
    );
    expect(problem.errors).toEqual([{ path, message: expect.stringMatching(reason) }]);
  });

  it('refuses a new recurrence without due times on PUT, and keeps an ended one while other fields change', async () => {
    await at('2026-03-25T12:00:00Z');
    const s = await create({
      name: 'ends soon',
      rrule: 'DTSTART:20260301T090000Z\nRRULE:FREQ=DAILY;UNTIL=20260326T090000Z',
    });
    expect(s.next_run_time).toBe('2026-03-26T09:00:00.000Z');
    const put = (fields: Record<string, unknown>) =>
      t.call('PUT', `/agent/schedules/${s.id}`, { name: 'ends soon', prompt: 'p', enabled: true, ...fields });
    const refused = await expectRefused(t, () => put({ cron_schedule: '0 0 30 2 *' }), 400);
    expect(refused.errors[0].path).toBe('body.cron_schedule');
    await at('2026-03-27T00:00:00Z'); // fires its last due time
    const renamed = await put({ rrule: s.rrule, prompt: 'still here' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ prompt: 'still here', next_run_time: null });
  });

  it('fires each due time once, with its own run, and the run says which schedule started it', async () => {
    await at('2026-03-25T12:00:00Z');
    const s = await create({ name: 'daily review', cron_schedule: '0 9 * * *', metadata: { area: 'review' } });
    await at('2026-03-26T09:00:30Z');
    await at('2026-03-26T09:00:45Z'); // again: nothing new is due
    const [run] = await runsSettle(s.id, 1);
    expect(run).toMatchObject({
      source: 'SCHEDULED_AGENT',
      title: 'daily review',
      prompt: 'Review open pull requests',
    });
    const item = (await t.call('GET', `/agent/runs/${run.run_id}`)).json();
    expect(item.metadata).toEqual({ area: 'review' });
    const read = await get(s.id);
    expect(read.history).toMatchObject({
      last_ran: '2026-03-26T09:00:00.000Z',
      next_run: '2026-03-27T09:00:00.000Z',
      firings: [{ due_at: '2026-03-26T09:00:00.000Z', run_id: run.run_id, skipped_count: 0, error: null }],
    });
  });

  it('after downtime fires the latest due time once and records the missed ones', async () => {
    await at('2026-04-01T00:00:00Z');
    const s = await create({ name: 'hourly', cron_schedule: '0 * * * *' });
    await at('2026-04-01T03:10:00Z');
    await runsSettle(s.id, 1);
    expect((await get(s.id)).history.firings[0]).toMatchObject({
      due_at: '2026-04-01T03:00:00.000Z',
      skipped_count: 2,
      skipped: ['2026-04-01T01:00:00.000Z', '2026-04-01T02:00:00.000Z'],
    });
  });

  it('does not fire while paused, nor catch up on resume', async () => {
    await at('2026-05-01T00:00:00Z');
    const s = await create({ name: 'paused', cron_schedule: '0 * * * *' });
    await t.call('POST', `/agent/schedules/${s.id}/pause`);
    await at('2026-05-01T05:30:00Z');
    await t.call('POST', `/agent/schedules/${s.id}/resume`);
    await at('2026-05-01T05:40:00Z');
    expect(await runsOf(s.id)).toEqual([]);
    expect((await get(s.id)).next_run_time).toBe('2026-05-01T06:00:00.000Z');
    await at('2026-05-01T06:00:00Z');
    expect((await runsSettle(s.id, 1))[0]).toMatchObject({ source: 'SCHEDULED_AGENT' });
  });

  it('keeps an RRULE at 09:00 Europe/Berlin across daylight saving, and a cron line at 09:00 UTC', async () => {
    await at('2026-03-26T12:00:00Z');
    const local = await create({
      name: 'berlin mornings',
      rrule: 'DTSTART;TZID=Europe/Berlin:20260301T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR',
    });
    const utc = await create({ name: 'utc mornings', cron_schedule: '0 9 * * 1-5' });
    // Friday 27 March (winter time), then Monday 30 March (summer time began on the 29th).
    for (const now of ['2026-03-27T08:00:00Z', '2026-03-27T09:00:00Z', '2026-03-30T07:00:00Z', '2026-03-30T09:00:00Z'])
      await at(now);
    const due = async (id: string) =>
      (await get(id)).history.firings.map((f: { due_at: string }) => f.due_at).reverse();
    expect(await due(local.id)).toEqual(['2026-03-27T08:00:00.000Z', '2026-03-30T07:00:00.000Z']);
    expect(await due(utc.id)).toEqual(['2026-03-27T09:00:00.000Z', '2026-03-30T09:00:00.000Z']);
    await runsSettle(local.id, 2);
  });

  it('two schedulers firing the same due time at once start one run', async () => {
    await at('2026-06-01T00:00:00Z');
    const s = await create({ name: 'raced', cron_schedule: '@hourly' });
    clock.set('2026-06-01T01:00:05Z');
    const other = await startTestApp({ DATA_DIR: t.dir }, clock);
    try {
      // The background schedulers of both processes race these three passes too: one firing in all.
      await Promise.all([fireDueSchedules(t.rt), fireDueSchedules(other.rt), fireDueSchedules(t.rt)]);
      const firings = (await t.rt.events.readStream(`schedule-${s.id}`)).filter((e) => e.type === 'ScheduleFired');
      expect(firings.map((e) => (e.data as { due_at: string }).due_at)).toEqual(['2026-06-01T01:00:00.000Z']);
      await runsSettle(s.id, 1);
    } finally {
      await other.app.close();
    }
  });
});

describe('automations fired by schedules', () => {
  const factoryRuns = async (factory: string) =>
    (await t.call('GET', `/agent/runs?factory_uid=${factory}&sort_by=created_at&sort_order=asc&limit=500`)).json().runs;

  it('start their factory runs once per firing of an inline schedule or of a named scheduled agent', async () => {
    await at('2026-07-01T00:00:00Z');
    const factory = (await t.call('POST', '/factory', { name: 'Nightly factory' })).json().uid;
    await t.call('POST', '/agent/identities', { name: 'Foreman', agent_type: 'FOREMAN', factory_uid: factory });
    const agentSchedule = await create({ name: 'named', cron_schedule: '0 6 * * *' });
    const created = await t.call('POST', `/factory/${factory}/automations`, {
      name: 'Nightly sweep',
      prompt: 'Sweep the flaky tests.',
      triggers: [
        { provider: 'schedule', event: 'cron_fired', schedule: { name: 'nightly', cron: '0 2 * * *' } },
        { provider: 'schedule', event: 'cron_fired', filter: { schedule_ids: [agentSchedule.id] } },
      ],
    });
    expect(created.statusCode, created.body).toBe(201);
    await quiet(t); // the inline schedule is created in the background
    const never = { provider: 'schedule', event: 'cron_fired', schedule: { name: 'never', cron: '0 0 30 2 *' } };
    const refused = await expectRefused(
      t,
      () => t.call('POST', `/factory/${factory}/automations`, { name: 'Never', prompt: 'p', triggers: [never] }),
      400,
    );
    expect(refused.errors).toEqual([
      { path: 'body.triggers.0.schedule.cron', message: expect.stringMatching(/no time/) },
    ]);
    await expectRefused(
      t,
      () => t.call('PATCH', `/factory/${factory}/automations/${created.json().id}`, { triggers: [never] }),
      400,
    );
    // The inline schedule is the automation's own: not a scheduled agent of the team.
    const listed = (await t.call('GET', '/agent/schedules')).json().schedules.map((s: { name: string }) => s.name);
    expect(listed).not.toContain('Nightly sweep: nightly');

    await at('2026-07-01T02:00:10Z');
    await at('2026-07-01T06:00:10Z');
    await at('2026-07-01T06:00:20Z');
    const runs = await factoryRuns(factory);
    expect(runs).toHaveLength(2);
    for (const run of runs)
      expect(run).toMatchObject({
        source: 'SCHEDULED_AGENT',
        title: 'Nightly sweep',
        prompt: expect.stringContaining('Sweep the flaky tests.'),
      });
    const items = await Promise.all(
      runs.map(async (r: { run_id: string }) => (await t.call('GET', `/agent/runs/${r.run_id}`)).json()),
    );
    expect(items.map((i) => i.schedule.schedule_name).sort()).toEqual(['Nightly sweep: nightly', 'named']);
    expect(items[0].metadata.automation_id).toBe(created.json().id);

    // Deleting the automation removes its inline schedule: nothing fires for it any more.
    await t.call('DELETE', `/factory/${factory}/automations/${created.json().id}`);
    await quiet(t);
    await at('2026-07-02T02:00:10Z');
    expect(await factoryRuns(factory)).toHaveLength(2);
  });
});
