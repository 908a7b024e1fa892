/**
 * Readiness while a reactor passes the stored log (issue #34): the process serves, and `/readyz`
 * and `rt.reactors()` (what the metrics read) say which reactor is still catching up and how far
 * behind it is. A reactor of a test feature holds its reaction to the bootstrap's TeamCreated
 * until the test lets it go, in the real app on real SQLite files.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TeamEvent } from '../../commands/team/events.js';
import { manualClock } from '../../src/clock.js';
import { START } from '../../src/eventstore/port.js';
import { feature } from '../../src/feature.js';
import { reactor } from '../../src/projector/reactor.js';
import type { Runtime } from '../../src/runtime.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let release = () => {};
afterEach(async () => {
  release();
  await t.close();
});

describe('/readyz while a reactor catches up', () => {
  it('answers 200, names the reactor catching up and how far behind it is, and stops naming it once it has passed', async () => {
    const held = new Promise<void>((resolve) => (release = resolve));
    let reacting = false;
    const gate = reactor<TeamEvent, Runtime>({
      name: 'gate',
      replay: 'all',
      on: {
        TeamCreated: async () => {
          reacting = true;
          await held;
        },
      },
    });
    const clock = manualClock('2026-03-01T09:00:00.000Z');
    t = await startTestApp({}, clock, [feature({ name: 'gate', reactors: [gate] })]);
    await expect.poll(() => reacting).toBe(true);
    // A minute after the first event the reactor has not passed.
    const [first] = await t.rt.events.readAll(START, 1);
    clock.set(new Date(Date.parse(first!.metadata.occurred_at) + 60_000));

    const head = await t.rt.events.headPosition();
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json()).toMatchObject({
      status: 'ready',
      detail: 'Reactors are still catching up with the event log; their reactions lag',
      reactors: { catching_up: [{ reactor: 'gate', behind_events: Number(head.commit) }], set_aside: [] },
    });
    // It serves meanwhile.
    expect((await t.call('GET', '/teams')).statusCode).toBe(200);
    const status = (await t.rt.reactors()).find((r) => r.name === 'gate');
    expect(status).toMatchObject({
      running_here: true,
      catching_up: true,
      behind_events: Number(head.commit),
      behind_seconds: 60,
      set_aside: 0,
    });

    release();
    await expect.poll(async () => (await t.app.inject({ url: '/readyz' })).json().reactors.catching_up).toEqual([]);
    expect((await t.app.inject({ url: '/readyz' })).json().detail).toBeUndefined();
    await expect
      .poll(async () => (await t.rt.reactors()).find((r) => r.name === 'gate'))
      .toMatchObject({ catching_up: false, behind_seconds: 0 });
  });
});
