/**
 * Commands on one stream from one process queue behind each other: however many arrive at once,
 * each folds the state the one before it left and lands, with no 409 from losing a race.
 */
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { workerContext } from '../helpers/conversation-fixtures.js';
import { counter } from '../helpers/counter.js';
import { newFactory } from '../helpers/task-fixtures.js';

describe('concurrent commands on one stream, in one process', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('100 at once through the runtime: every one lands, each decided on the state before it, in the order given', async () => {
    const stream = `counter-${uuidv4()}`;
    const handled = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        t.rt.handle(stream, counter, { type: 'Increment', data: { by: `c${i}` } }, workerContext()),
      ),
    );
    expect(handled.map((h) => h.state.count)).toEqual(handled.map((_, i) => i + 1));
    const stored = await t.rt.events.readStream(stream);
    expect(stored.map((e) => e.data)).toEqual(stored.map((_, i) => ({ expected_previous_count: i, by: `c${i}` })));
  });

  it('50 PATCHes of one factory at once all answer 200, on consecutive revisions', async () => {
    const uid = await newFactory(t);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => t.call('PATCH', `/factory/${uid}`, { name: `p${i}` })),
    );
    for (const a of answers) expect(a.statusCode, a.body).toBe(200);
    const stored = await t.rt.events.readStream(`factory-${uid}`);
    expect(stored.map((e) => e.revision)).toEqual(stored.map((_, i) => BigInt(i)));
    expect(
      stored
        .slice(1)
        .map((e) => (e.data as { changes: { name: string } }).changes.name)
        .sort(),
    ).toEqual(answers.map((_, i) => `p${i}`).sort());
  });
});
