/**
 * Issue #32: what a schedule's firing tells the event streams, through the real app on real SQLite
 * files: the event the firing recorded, mapped by the type its feature registered, gives a payload
 * its schema takes strictly (no field it does not declare), and the schedule's own read check
 * decides who may read it: its team's members, within that team only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fireDueSchedules } from '../../../commands/schedule/scheduler.js';
import { manualClock } from '../../../src/clock.js';
import { START } from '../../../src/eventstore/port.js';
import type { Principal } from '../../../src/http/principal.js';
import { streamsOf } from '../../../src/streams/live-streams.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

const clock = manualClock('2026-03-25T12:00:00Z');
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({}, clock);
});

afterAll(async () => {
  await t?.close();
});

const someone = (teams: Array<[string, 'admin' | 'member']>): Principal => ({
  type: 'user',
  uid: 'someone-else',
  teams: new Map(teams),
});

describe('schedule.fired', () => {
  it('maps a firing to its documented payload, readable by its team only', async () => {
    const made = await t.call('POST', '/agent/schedules', {
      prompt: 'Hourly check',
      name: 'hourly',
      cron_schedule: '@hourly',
    });
    expect(made.statusCode, made.body).toBe(201);
    clock.set('2026-03-25T13:00:30Z');
    await fireDueSchedules(t.rt);
    const [fired] = await t.rt.events.readAll(START, 10, ['ScheduleFired']);
    const hub = streamsOf(t.rt).hub;
    const [sent] = await hub.map(fired!);
    expect(sent!.item.type).toBe('schedule.fired');
    expect(sent!.item.data).toEqual({
      schedule_id: made.json().id,
      name: 'hourly',
      kind: 'agent',
      due_at: '2026-03-25T13:00:00.000Z',
      run_id: expect.any(String),
      skipped_count: 0,
      next_run_at: '2026-03-25T14:00:00.000Z',
    });
    expect(() => hub.types.get('schedule.fired')!.schema.strict().parse(sent!.item.data)).not.toThrow();
    expect(sent!.frame).toMatch(/^id: [\w-]+\nevent: schedule\.fired\ndata: \{.*\}\n\n$/);
    const member = someone([[t.teamUid, 'member']]);
    expect(sent!.item.readable({ principal: member, team: t.teamUid })).toBe(true);
    expect(sent!.item.readable({ principal: member, team: null })).toBe(true);
    expect(sent!.item.readable({ principal: someone([['another-team', 'admin']]), team: 'another-team' })).toBe(false);
    // Within another of the member's teams it is not that team's activity.
    const both = someone([
      [t.teamUid, 'member'],
      ['another-team', 'member'],
    ]);
    expect(sent!.item.readable({ principal: both, team: 'another-team' })).toBe(false);
  });
});
