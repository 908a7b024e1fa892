/**
 * A store written before issue #30: a ScheduleCreated whose cron never falls due, recorded without
 * `next_run_at`, which the schedules read model then could not apply (it reckoned the next due time
 * itself, and cron-parser threw). The event is appended the old way, straight to the event store;
 * the old read model's failure is its set-aside row. After the upgrade, a retry applies it.
 */
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleStream } from '../../../commands/schedule/events.js';
import { fireDueSchedules } from '../../../commands/schedule/scheduler.js';
import { manualClock } from '../../../src/clock.js';
import { collectionOf } from '../../../src/projector/projection.js';
import { schedulesProjection } from '../../../projections/schedule/schedules.js';
import { runCli } from '../../e2e/server-process.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

const clock = manualClock('2026-03-25T12:00:00Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, clock);
});
afterAll(() => t.close());

/** Appends a ScheduleCreated as the code before issue #30 wrote it: no `next_run_at`. */
async function appendLegacySchedule(cron: string) {
  const template = await t.call('POST', '/agent/schedules', { name: 'template', cron_schedule: '@daily', prompt: 'p' });
  expect(template.statusCode, template.body).toBe(201);
  const [created] = await t.rt.events.readStream(scheduleStream(template.json().id));
  const { next_run_at: _absentThen, ...data } = created!.data as Record<string, unknown>;
  const id = uuidv4();
  const event = { id: uuidv4(), type: 'ScheduleCreated', data: { ...data, id, name: 'never', cron_schedule: cron } };
  const { position } = await t.rt.events.append(
    scheduleStream(id),
    [{ ...event, metadata: created!.metadata }],
    'no_stream',
  );
  return { id, event, position, metadata: created!.metadata };
}

describe('a schedule recorded before its next due time was', () => {
  it('is applied with the bounded reckoning: a retry clears what the old read model set aside', async () => {
    const legacy = await appendLegacySchedule('0 0 30 2 *');
    await t.rt.projector.waitFor(legacy.position);
    // What the read model before the upgrade did with it: no document, the event set aside.
    const collection = collectionOf(schedulesProjection);
    const checkpoint = (await t.rt.docs.readCheckpoint(collection))!;
    await t.rt.docs.commitAll([
      {
        writes: [{ collection, id: legacy.id, doc: null, position: legacy.position }],
        checkpoint: collection,
        position: checkpoint,
        setAside: [
          {
            position: legacy.position,
            stream: scheduleStream(legacy.id),
            revision: 0n,
            event_id: legacy.event.id,
            event_type: 'ScheduleCreated',
            metadata: legacy.metadata,
            error: 'Error: Invalid explicit day of month definition',
            at: clock.now().toISOString(),
          },
        ],
      },
    ]);
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().set_aside).toEqual([{ projection: 'schedules', version: 2, events: 1 }]);
    expect((await t.call('GET', `/agent/schedules/${legacy.id}`)).statusCode).toBe(404);

    const retried = await runCli(['projections', 'retry'], { dataDir: t.dir });
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(/^schedules: 1 event\(s\) were set aside; 0 still are$/m);
    expect((await t.app.inject({ url: '/readyz' })).json().set_aside).toEqual([]);
    expect((await t.call('GET', `/agent/schedules/${legacy.id}`)).json()).toMatchObject({
      cron_schedule: '0 0 30 2 *',
      enabled: true,
      next_run_time: null,
    });
    // It never falls due, and asking costs the scheduler nothing.
    clock.set('2030-03-01T00:00:00Z');
    expect(await fireDueSchedules(t.rt)).toBe(1); // the template, daily
    expect((await t.rt.events.readStream(scheduleStream(legacy.id))).map((e) => e.type)).toEqual(['ScheduleCreated']);
    const verified = await runCli(['projections', 'verify'], { dataDir: t.dir });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 120_000);
});
