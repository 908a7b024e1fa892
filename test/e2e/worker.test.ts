// @vitest-environment node
/**
 * The issue's "Must hold": a run goes from creation to SUCCEEDED through the reference worker,
 * both as real processes (`npm start`'s server and `shopfloor worker --exec`), with a small shell
 * script as the agent; then its conversation, its artifacts (a downloadable file, a pull request
 * the script printed) and the outputs of the task bound to its conversation are checked. A second
 * run hears a follow-up on its stdin and is cancelled, which ends its process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  childEnv,
  makeDataDir,
  readEvents,
  removeDir,
  type ServerProcess,
  sleep,
  startServer,
  startWorker,
  type WorkerProcess,
} from './server-process.js';
import { runTraceparent } from '../../src/tracing/ids.js';

/**
 * The agent. Asked to wait, it asks which one (a question line), then echoes the follow-ups it reads on stdin until it is stopped;
 * otherwise it reads its prompt, prints a pull request link, leaves a file and says something
 * on stderr.
 */
const SCRIPT = `case "$SHOPFLOOR_PROMPT" in
  Wait*) echo $$ > "$E2E_PID_DIR/waiting.pid"; echo "::question options=blue|red::Which one?"; echo ready; while read line; do echo "got: $line"; done ;;
  *) echo "Working on: $SHOPFLOOR_PROMPT"
     echo "notes for $SHOPFLOOR_RUN_ID" > "$SHOPFLOOR_ARTIFACTS_DIR/notes.txt"
     echo "Opened https://github.com/acme/widgets/pull/42 for review"
     echo "all checks passed" >&2
     echo "traced as $TRACEPARENT" ;;
esac`;

const DEADLINE_MS = 20_000;

let dataDir: string;
let server: ServerProcess;
let worker: WorkerProcess | null = null;

/** Polls `check` every 100 ms until it returns a value, for at most `ms`. */
async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  ms = DEADLINE_MS,
): Promise<T> {
  for (const deadline = Date.now() + ms; ; await sleep(100)) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(
        `${what} did not happen in ${ms} ms; worker said:\n${worker?.log() ?? ''}\nserver said:\n${server.stderr()}`,
      );
  }
}

beforeAll(async () => {
  dataDir = makeDataDir();
  server = await startServer({ dataDir, via: 'npm', extra: { WORKER_HEARTBEAT_SECONDS: '1' } });
});

afterAll(async () => {
  await worker?.stop();
  await server?.stop();
  removeDir(dataDir);
});

describe('the reference worker', () => {
  it('drives a run from creation to SUCCEEDED with a script as the agent', async () => {
    // An agent identity of the team, and its key for the worker.
    const agent = await call(server, 'POST', '/agent/identities', { name: 'Script runner' });
    expect(agent.status).toBe(201);
    const key = await call(server, 'POST', `/agent/identities/${agent.body!.uid}/api-keys`);
    const factory = await call(server, 'POST', '/factory', { name: 'Widgets' });

    // A checkout with one skill and one malformed SKILL.md, which the worker reports when it connects.
    const checkout = path.join(dataDir, 'checkout');
    fs.mkdirSync(path.join(checkout, '.claude/skills/deploy'), { recursive: true });
    fs.mkdirSync(path.join(checkout, 'skills/broken'), { recursive: true });
    fs.writeFileSync(
      path.join(checkout, '.claude/skills/deploy/SKILL.md'),
      '---\nname: deploy\ndescription: Deploys the service\n---\nRun the deploy script.\n',
    );
    fs.writeFileSync(path.join(checkout, 'skills/broken/SKILL.md'), 'no front matter here\n');
    worker = startWorker(
      [
        ...['--exec', SCRIPT, '--url', server.baseUrl, '--host', 'e2e-box'],
        ...['--skills-repo', `acme/widgets=${checkout}`],
      ],
      { ...childEnv({ dataDir }), SHOPFLOOR_API_KEY: String(key.body!.api_key), E2E_PID_DIR: dataDir },
    );
    await until('the worker connecting', async () => {
      const listed = await call(server, 'GET', '/agent/connected-self-hosted-workers');
      return (listed.body!.workers as Array<{ host: string }>).some((w) => w.host === 'e2e-box');
    });

    const skills = await until('the skills reported', async () => {
      const listed = await call(server, 'GET', '/agent?include_malformed_skills=true');
      const agents = listed.body!.agents as Array<{ name: string; variants: Array<Record<string, unknown>> }>;
      return agents.length === 2 ? agents : undefined;
    });
    expect(skills).toEqual([
      {
        name: 'broken',
        variants: [expect.objectContaining({ id: 'acme/widgets:skills/broken/SKILL.md', error: expect.any(String) })],
      },
      {
        name: 'deploy',
        variants: [
          expect.objectContaining({
            id: 'acme/widgets:.claude/skills/deploy/SKILL.md',
            description: 'Deploys the service',
            base_prompt: 'Run the deploy script.',
            source: { owner: 'acme', name: 'widgets', skill_path: '.claude/skills/deploy/SKILL.md' },
          }),
        ],
      },
    ]);
    expect((await call(server, 'GET', '/agent')).body!.agents).toHaveLength(1);

    const created = await call(server, 'POST', '/agent/runs', { prompt: 'Add a changelog entry' });
    expect(created.status).toBe(200);
    const runId = String(created.body!.run_id);
    const task = await call(server, 'POST', `/factory/${factory.body!.uid}/tasks`, {
      title: 'Changelog',
      conversation_id: created.body!.conversation_id,
    });
    expect(task.status).toBe(201);

    const run = await until('the run succeeding', async () => {
      const res = await call(server, 'GET', `/agent/runs/${runId}`);
      expect(['QUEUED', 'PENDING', 'CLAIMED', 'INPROGRESS', 'SUCCEEDED']).toContain(res.body!.state);
      return res.body!.state === 'SUCCEEDED' && res.body!;
    });

    // The conversation holds the prompt and the script's output, as the worker streamed it.
    const conversation = await call(server, 'GET', `/agent/runs/${runId}/conversation`);
    expect(conversation.status).toBe(200);
    const texts = (
      conversation.body!.steps as Array<{ messages: Array<{ role: string; content: Array<{ text?: string }> }> }>
    ).flatMap((s) => s.messages.flatMap((m) => m.content.map((c) => `${m.role}: ${c.text}`)));
    expect(texts[0]).toBe('user: Add a changelog entry');
    expect(texts.join('\n')).toContain('assistant: Working on: Add a changelog entry');
    expect(texts.join('\n')).toContain('all checks passed');
    // The command was given the run's trace context (W3C), so its own spans join the run's trace.
    expect(texts.join('\n')).toContain(`traced as ${runTraceparent(runId, runId)}`);
    const recorded = readEvents(dataDir, { stream: `run-${runId}` }).map((e) => e.type);
    expect(recorded).toEqual(
      expect.arrayContaining([
        'RunLeased',
        'RunClaimed',
        'RunStarted',
        'RunMessageRecorded',
        'RunTimelineRecorded',
        'RunArtifactAdded',
        'RunFinished',
      ]),
    );

    // The printed link became one PULL_REQUEST artifact; the file left behind, a FILE artifact.
    const artifacts = run.artifacts as Array<{ artifact_type: string; data: Record<string, string> }>;
    expect(artifacts.filter((a) => a.artifact_type === 'PULL_REQUEST').map((a) => a.data.url)).toEqual([
      'https://github.com/acme/widgets/pull/42',
    ]);
    const file = artifacts.find((a) => a.artifact_type === 'FILE');
    expect(file?.data).toMatchObject({ filename: 'notes.txt', mime_type: 'text/plain' });
    const described = await call(server, 'GET', `/agent/artifacts/${file!.data.artifact_uid}`);
    const download = await fetch(String((described.body!.data as Record<string, unknown>).download_url));
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(`notes for ${runId}\n`);

    // The task bound to the conversation shows them as its outputs.
    const outputs = (await call(server, 'GET', `/factory/${factory.body!.uid}/tasks/${task.body!.uid}`)).body!
      .outputs as Array<{ artifact_type: string }>;
    expect(outputs.map((o) => o.artifact_type).sort()).toEqual(['FILE', 'PULL_REQUEST']);
  });

  it('delivers a follow-up to the running command, and ends it when the run is cancelled', async () => {
    const created = await call(server, 'POST', '/agent/runs', { prompt: 'Wait for instructions' });
    const runId = String(created.body!.run_id);
    const texts = async () => {
      const conversation = await call(server, 'GET', `/agent/runs/${runId}/conversation`);
      return (conversation.body!.steps as Array<{ messages: Array<{ content: Array<{ text?: string }> }> }>).flatMap(
        (s) => s.messages.flatMap((m) => m.content.map((c) => c.text)),
      );
    };
    await until('the command starting', async () => (await texts()).includes('ready'));
    // The question line became a question of the run, which the follow-up below answers.
    const asked = readEvents(dataDir, { stream: `run-${runId}` }).find((e) => e.type === 'RunQuestionAsked');
    expect(asked?.data.questions).toEqual([
      { id: 'q1', question: 'Which one?', options: ['blue', 'red'], type: 'single_select' },
    ]);
    const followup = await call(server, 'POST', `/agent/runs/${runId}/followups`, { message: 'use the blue one' });
    expect(followup.body!.routed_to).toBe('live_execution');
    await until('the command reading the follow-up', async () => (await texts()).includes('got: use the blue one'));

    const pid = Number(fs.readFileSync(path.join(dataDir, 'waiting.pid'), 'utf8'));
    expect((await call(server, 'POST', `/agent/runs/${runId}/cancel`)).status).toBe(200);
    await until('the command ending', async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    expect((await call(server, 'GET', `/agent/runs/${runId}`)).body!.state).toBe('CANCELLED');
  });
});
