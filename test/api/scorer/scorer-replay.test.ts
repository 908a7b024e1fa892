/**
 * Reactions replayed: on a new read store every reactor reads the log from its start again. The
 * scorer reactors then start no judge a second time, and none for a scorer made after a run
 * finished; the read models rebuilt from the same log show the same results.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { comparePositions } from '../../../src/eventstore/port.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { agentRun, factoryAgent, judgeOf, newScorer, simulatedWorker } from '../../helpers/scorer-fixtures.js';
import { eventually, newFactory } from '../../helpers/task-fixtures.js';

const REACTORS = ['scoring_triggers', 'judge_runs', 'self_improvement_runs', 'scorer_keys'];

let second: TestApp | undefined;
afterAll(async () => {
  await second?.close();
});

describe('scoring reactions replayed', () => {
  it('start no judge twice, and none for a scorer made after the run finished', async () => {
    const t = await startTestApp();
    const factory = await newFactory(t);
    const agent = await factoryAgent(t, factory);
    const early = await newScorer(t, factory, { name: 'Early' });
    const worker = await simulatedWorker(t, agent.key).announce();
    const first = await agentRun(t, agent.uid);
    await worker.execute(await worker.claimWhere((r) => r.run_id === first));
    await worker.judge(await judgeOf(worker, first), 'compliant', 'fine');
    const late = await newScorer(t, factory, { name: 'Late' });
    const secondRun = await agentRun(t, agent.uid);
    await worker.execute(await worker.claimWhere((r) => r.run_id === secondRun));
    for (let i = 0; i < 2; i++) await worker.judge(await judgeOf(worker, secondRun), 'partial', 'so-so');
    const judges = async (app: TestApp) =>
      (await app.call('GET', `/agent/runs?source=RUN_SCORER&factory_uid=${factory}&limit=100`)).json().runs.length;
    const rows = async (app: TestApp, scorer: string) =>
      (await app.call('GET', `/factory/${factory}/scorers/${scorer}/results`))
        .json()
        .results.map((r: { run_id: string; classification: string }) => [r.run_id, r.classification]);
    expect(await judges(t)).toBe(3);
    const before = { early: await rows(t, early.uid), late: await rows(t, late.uid) };
    expect(before.late).toEqual([[secondRun, 'partial']]);

    // A new read store: read models are built again and every reactor starts from the log's start.
    await t.close({ keepData: true });
    for (const f of ['read.db', 'read.db-wal', 'read.db-shm']) fs.rmSync(path.join(t.dir, f), { force: true });
    second = await startTestApp({ DATA_DIR: t.dir });
    const app = second;
    const head = await app.rt.events.headPosition();
    await eventually(async () => {
      for (const name of REACTORS) {
        const at = await app.rt.docs.readCheckpoint(`reactor_${name}`);
        if (!at || comparePositions(at, head) < 0) return undefined;
      }
      return true;
    }, 15_000);
    expect(await app.rt.events.headPosition()).toEqual(head);
    expect(await judges(app)).toBe(3);
    expect({ early: await rows(app, early.uid), late: await rows(app, late.uid) }).toEqual(before);
  });
});
