/**
 * Deleting a scorer in an event-sourced store: once DELETE answers, none of its reasons can be
 * read through any endpoint (results, reasons, a run's scores, the judge runs, their conversations,
 * transcripts and histories, a self-improvement run handed to a worker), nor after
 * `projections rebuild all`, nor found in the raw files of DATA_DIR; what stays for auditors is
 * that the scorer existed and who deleted it when.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { v4 as uuidv4 } from 'uuid';
import { checkSelfImprovement } from '../../../commands/scorer/improvement-check.js';
import { rebuild } from '../../../src/cli/projections.js';
import { loadConfig } from '../../../src/config.js';
import { projectionsOf } from '../../../src/feature.js';
import { features } from '../../../src/features.js';
import { openStores } from '../../../src/runtime.js';
import { expectProblem, startTestApp, type TestApp } from '../../helpers/app.js';
import { agentRun, factoryAgent, judgeOf, newScorer, simulatedWorker } from '../../helpers/scorer-fixtures.js';
import { eventually, newFactory } from '../../helpers/task-fixtures.js';

/** Every file under `dir`, with its bytes. */
function* filesUnder(dir: string): Generator<[string, Buffer]> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(file);
    else yield [file, fs.readFileSync(file)];
  }
}

/** The files of DATA_DIR that hold `text` (as UTF-8), whatever their format. */
const filesHolding = (dir: string, text: string) =>
  [...filesUnder(dir)].filter(([, bytes]) => bytes.includes(Buffer.from(text, 'utf8'))).map(([f]) => f);

let t: TestApp;
let restarted: TestApp | undefined;
afterAll(async () => {
  await restarted?.close();
});

describe('deleting a scorer', () => {
  it('leaves none of its reasons in any endpoint, export, rebuilt read model or raw data file', async () => {
    // Short leases: the self-improvement run, left unclaimed, is handed out again after the delete.
    t = await startTestApp({ WORKER_LEASE_SECONDS: '2' });
    const dir = t.dir;
    const factory = await newFactory(t);
    const agent = await factoryAgent(t, factory);
    const scorer = await newScorer(t, factory, { self_improvement_enabled: true, failed_run_threshold: 1 });
    const worker = await simulatedWorker(t, agent.key).announce();
    const reason = `Reason ${uuidv4()}: the agent skipped the integration tests`;

    const runId = await agentRun(t, agent.uid);
    await worker.execute(await worker.claimWhere((r) => r.run_id === runId));
    const judge = await judgeOf(worker, runId);
    await worker.judge(judge, 'non_compliant', reason);
    const results = `/factory/${factory}/scorers/${scorer.uid}/results?include_reasons=true`;
    expect((await t.call('GET', results)).json().results[0]).toMatchObject({ reason, outcome: 'fail' });

    // One failure reaches the threshold of 1: a self-improvement run, whose worker gets the reason.
    expect(await checkSelfImprovement(t.rt)).toBe(1);
    const improvement = await worker.claimWhere((r) => r.source === 'SELF_IMPROVEMENT');
    expect(improvement.prompt).toContain(reason);
    const improvementRun = (await t.call('GET', `/agent/runs/${improvement.run_id}`)).json();
    expect(improvementRun.prompt).toContain(runId);
    expect(improvementRun.prompt).not.toContain(reason);
    // The failure is reviewed: the next check starts nothing.
    expect(await checkSelfImprovement(t.rt)).toBe(0);

    // Sealed from the start: no file ever held the reason in clear.
    expect(filesHolding(dir, reason)).toEqual([]);

    const deleted = await t.call('DELETE', `/factory/${factory}/scorers/${scorer.uid}`);
    expect(deleted.statusCode, deleted.body).toBe(204);

    /** Everything an API client can read that could hold the reason. */
    async function everythingReadable(app: TestApp): Promise<string> {
      const seen: string[] = [];
      const get = async (url: string) => {
        const res = await app.call('GET', url);
        seen.push(res.body);
        if (res.statusCode === 302) {
          const link = new URL(String(res.headers.location));
          seen.push((await app.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })).body);
        }
        return res;
      };
      expectProblem(await get(results), 404);
      expectProblem(await get(`/factory/scorers/${scorer.uid}/results/reasons?run_id=${runId}`), 404);
      expectProblem(await get(`/factory/${factory}/scorers/${scorer.uid}/metrics`), 404);
      expect((await get(`/factory/runs/${runId}/scores`)).json().scores).toEqual([]);
      expect((await get(`/factory/${factory}/scorers`)).json().scorers).toEqual([]);
      for (const run of [runId, judge.run_id, improvement.run_id]) {
        expect((await get(`/agent/runs/${run}`)).statusCode).toBe(200);
        await get(`/agent/runs/${run}/conversation`);
        await get(`/agent/runs/${run}/transcript`);
        await get(`/agent/runs/${run}/timeline`);
        await get(`/agent/runs/${run}/history`);
      }
      await get(`/agent/runs?limit=500`);
      const history = await get(`/factory/${factory}/scorers/${scorer.uid}/history`);
      expect(history.json().entries.map((e: { type: string }) => e.type)).toEqual(['ScorerCreated', 'ScorerDeleted']);
      return seen.join('\n');
    }

    const readable = await everythingReadable(t);
    expect(readable).not.toContain(reason);
    expect(filesHolding(dir, reason)).toEqual([]);
    // The self-improvement run, handed out again once its lease lapsed, has its reasons withdrawn.
    const other = await announce(t, agent.key);
    const again = await eventually(async () => {
      const res = await t.call('POST', `/agent/workers/${other}/claim`, undefined, agent.key);
      return res.statusCode === 200 ? (res.json().run as { run_id: string; prompt: string }) : undefined;
    }, 15_000);
    expect(again.run_id).toBe(improvement.run_id);
    expect(again.prompt).toContain('withdrawn: the scorer was deleted');
    expect(again.prompt).not.toContain(reason);
    expect(fs.readFileSync(path.join(dir, 'keys', `scorer-${scorer.uid}.key`), 'utf8')).toBe('destroyed\n');

    // Rebuild every read model from the log, then look again.
    await t.close({ keepData: true });
    const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' });
    const stores = await openStores(config);
    try {
      expect(await rebuild(stores, projectionsOf(features))).toBe(0);
    } finally {
      await stores.events.close();
      await stores.docs.close();
    }
    expect(filesHolding(dir, reason)).toEqual([]);
    restarted = await startTestApp({ DATA_DIR: dir });
    expect(await everythingReadable(restarted)).not.toContain(reason);
    expect(filesHolding(dir, reason)).toEqual([]);
  });
});

async function announce(app: TestApp, key: string) {
  return (await app.call('POST', '/agent/workers', { host: 'again' }, key)).json().worker_id as string;
}
