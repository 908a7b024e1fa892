// @vitest-environment node
/**
 * The "Must hold", with real processes: a server, and `shopfloor worker --exec` whose one
 * script is both the agent and, for judge runs, the judge (it reads the rubric and the conversation
 * from the files it is given and prints one JSON object). A scorer judges two runs of a factory
 * agent; its pass rate moves when its threshold does; deleting it leaves its reasons in no raw file
 * of DATA_DIR, also after `shopfloor projections rebuild all`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { v4 as uuidv4 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  childEnv,
  makeDataDir,
  removeDir,
  runCli,
  type ServerProcess,
  untilWithLogs,
  startServer,
  startWorker,
  type WorkerProcess,
} from './server-process.js';

const MARK = uuidv4();

/**
 * The agent says whether it ran the tests (as its prompt asks); the judge finds out from the
 * conversation file, and checks it was given the rubric.
 */
const SCRIPT = `if [ "$SHOPFLOOR_RUN_KIND" = judge ]; then
  grep -q "run the tests" "$SHOPFLOOR_JUDGE_RUBRIC_FILE" || { echo "no rubric" >&2; exit 3; }
  grep -q '"value": "partial"' "$SHOPFLOOR_JUDGE_CLASSIFICATIONS_FILE" || exit 4
  if grep -q "Skipped the tests" "$SHOPFLOOR_JUDGE_CONVERSATION_FILE"; then c=partial; else c=compliant; fi
  echo "thinking it over"
  printf '{"classification":"%s","reasoning":"Reason ${MARK} %s for $SHOPFLOOR_RUN_ID"}\\n' "$c" "$c"
else
  echo "$SHOPFLOOR_PROMPT"
fi`;

const DEADLINE_MS = 30_000;

let dataDir: string;
let server: ServerProcess;
let worker: WorkerProcess | null = null;

const until = <T>(what: string, check: () => Promise<T | null | undefined | false>) =>
  untilWithLogs(what, check, () => ({ server, worker }), DEADLINE_MS);

function* filesUnder(dir: string): Generator<[string, Buffer]> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(file);
    else yield [file, fs.readFileSync(file)];
  }
}
const filesHolding = (text: string) =>
  [...filesUnder(dataDir)].filter(([, bytes]) => bytes.includes(Buffer.from(text))).map(([f]) => f);

beforeAll(async () => {
  dataDir = makeDataDir();
  server = await startServer({ dataDir, extra: { WORKER_HEARTBEAT_SECONDS: '1' } });
});

afterAll(async () => {
  await worker?.stop();
  await server?.stop();
  removeDir(dataDir);
});

describe('a scorer judged by the reference worker', () => {
  it('scores runs with a command-line judge; the pass rate follows the threshold; deletion leaves no reason behind', async () => {
    const factory = (await call(server, 'POST', '/factory', { name: 'Widgets' })).body!.uid as string;
    const agent = await call(server, 'POST', '/agent/identities', {
      name: 'Implementer',
      agent_type: 'IMPLEMENT',
      factory_uid: factory,
    });
    const key = await call(server, 'POST', `/agent/identities/${agent.body!.uid}/api-keys`);
    const scorer = await call(server, 'POST', `/factory/${factory}/scorers`, {
      name: 'Tests first',
      scoring_prompt: 'Did the agent run the tests before finishing?',
      model_id: 'claude-4-6-sonnet',
      threshold: 1,
      allowed_classifications: [
        { value: 'compliant', score: 1 },
        { value: 'partial', score: 0.5 },
        { value: 'non_compliant', score: 0 },
      ],
      scope_mode: 'all_agents',
    });
    expect(scorer.status).toBe(201);
    const scorerUid = scorer.body!.uid as string;

    worker = startWorker(['--exec', SCRIPT, '--url', server.baseUrl], {
      ...childEnv({ dataDir }),
      SHOPFLOOR_API_KEY: String(key.body!.api_key),
    });

    const runs: string[] = [];
    for (const prompt of ['Ran the tests: all green', 'Skipped the tests: no time'])
      runs.push(
        String(
          (await call(server, 'POST', '/agent/runs', { prompt, agent_identity_uid: agent.body!.uid })).body!.run_id,
        ),
      );

    const results = `/factory/${factory}/scorers/${scorerUid}/results?include_reasons=true`;
    const scored = await until('both runs scored', async () => {
      const rows = (await call(server, 'GET', results)).body!.results as Array<Record<string, unknown>>;
      return rows.length === 2 && rows.every((r) => r.status === 'scored' && r.scoring_run_time) ? rows : null;
    });
    const byRun = Object.fromEntries(scored.map((r) => [r.run_id as string, r]));
    expect(byRun[runs[0]!]).toMatchObject({ classification: 'compliant', outcome: 'pass', trigger: 'automatic' });
    expect(byRun[runs[1]!]).toMatchObject({ classification: 'partial', score: 0.5, outcome: 'fail' });
    expect(byRun[runs[1]!]!.reason).toMatch(new RegExp(`^Reason ${MARK} partial for `));
    // The judge's output is no conversation: its reasoning went to the judgement alone.
    const judgeRun = String(byRun[runs[1]!]!.scoring_run_id);
    const judgeConversation = await call(server, 'GET', `/agent/runs/${judgeRun}/conversation`);
    expect(JSON.stringify(judgeConversation.body)).not.toContain(MARK);
    expect((await call(server, 'GET', `/agent/runs/${judgeRun}`)).body).toMatchObject({
      source: 'RUN_SCORER',
      state: 'SUCCEEDED',
    });

    const metrics = `/factory/${factory}/scorers/${scorerUid}/metrics`;
    expect((await call(server, 'GET', metrics)).body).toMatchObject({ pass_count: 1, fail_count: 1, pass_rate: 0.5 });
    const patched = await call(server, 'PATCH', `/factory/${factory}/scorers/${scorerUid}`, { threshold: 0.5 });
    expect(patched.body).toMatchObject({ version: 2, threshold: 0.5 });
    expect((await call(server, 'GET', metrics)).body).toMatchObject({ pass_count: 2, fail_count: 0, pass_rate: 1 });
    expect(
      ((await call(server, 'GET', results)).body!.results as Array<{ outcome: string }>).map((r) => r.outcome),
    ).toEqual(['pass', 'pass']);

    // Sealed all along, and gone with the scorer.
    expect(filesHolding(MARK)).toEqual([]);
    expect((await call(server, 'DELETE', `/factory/${factory}/scorers/${scorerUid}`)).status).toBe(204);
    expect((await call(server, 'GET', results)).status).toBe(404);
    await worker!.stop();
    await server.stop();

    const rebuilt = await runCli(['projections', 'rebuild', 'all'], { dataDir });
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(filesHolding(MARK)).toEqual([]);
    server = await startServer({ dataDir });
    expect((await call(server, 'GET', results)).status).toBe(404);
    expect((await call(server, 'GET', `/factory/runs/${runs[1]}/scores`)).body).toEqual({ scores: [] });
  });
});
