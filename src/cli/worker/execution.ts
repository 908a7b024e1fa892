/**
 * One execution of a run by the reference worker: the command runs with `sh -c` in a fresh
 * working directory, in a process group of its own. Its output becomes conversation messages
 * (batched) and timeline entries, the pull request links it prints become PULL_REQUEST
 * artifacts, the files it leaves in the artifacts folder become FILE artifacts, and its exit code
 * finishes the run. Signals from the server reach it: follow-ups on stdin, interrupts as SIGINT,
 * cancellation as the end of the process group.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiError, type Assignment, type Report, type Signal, type WorkerClient, withRetries } from './client.js';
import { type Judgement, MAX_JUDGE_OUTPUT, parseJudgement, prepareJudge } from './judge.js';
import { filesUnder, lineSplitter, mimeTypeOf, pullRequestUrls, questionOf, usageOf } from './output.js';

/** Output is sent at most this often, or sooner when a batch fills up. */
const FLUSH_MS = 500;
const MAX_BATCH_LINES = 200;
const MAX_BATCH_CHARS = 64 * 1024;
/** After the command exits, how long its output pipes may stay open (a background child). */
const DRAIN_MS = 2000;
/** How long a cancelled command has between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 5000;

export interface ExecutionOptions {
  client: WorkerClient;
  workerId: string;
  command: string;
  /** The command for judge runs (RUN_SCORER); `command` when not given. */
  judgeCommand?: string | undefined;
  log(message: string): void;
}

type Line = { stream: 'stdout' | 'stderr'; text: string };

/** The worker's own credential: the command must not see it. */
const PRIVATE_ENV = /^SHOPFLOOR_API_KEY$/;

export class Execution {
  private child: ChildProcess | null = null;
  private lines: Line[] = [];
  private chars = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly prLinks = new Set<string>();
  /** Reports go out one after another, in the order they were made. */
  private reports: Promise<void> = Promise.resolve();
  /** Set when the run was taken away (cancelled, lost): nothing more is reported. */
  private stopped: string | null = null;
  private workdir = '';
  /** A judge's stdout, kept for its answer instead of being reported (null for other runs). */
  private judgeOutput: string | null = null;
  private judgeLines = { stdout: 0, stderr: 0 };

  constructor(
    readonly run: Assignment,
    private readonly o: ExecutionOptions,
  ) {}

  get runId(): string {
    return this.run.run_id;
  }

  /** Runs the command to its end and finishes the run (unless it was taken away). */
  async execute(): Promise<void> {
    const { client, workerId } = this.o;
    // Behind a load balancer a report may get no answer (the process that had it died), applied or
    // not: it is sent again. A step found already taken on a retry is confirmed by the next one,
    // which the server accepts only from the execution holding the run.
    const taken = (again: boolean, error: unknown) =>
      again && error instanceof ApiError && error.code === 'not_claimed' ? null : Promise.reject(error);
    try {
      // The acknowledgement's prompt is authoritative: follow-ups may have joined it since the claim.
      const ack = (await withRetries((again) =>
        client.report(workerId, this.run, 'claim').catch((e: unknown) => taken(again, e)),
      )) as { run: Assignment } | null;
      if (ack?.run) Object.assign(this.run, { prompt: ack.run.prompt, mode: ack.run.mode });
      const started = await withRetries((again) =>
        client.report(workerId, this.run, 'start').catch((e: unknown) => taken(again, e)),
      );
      if (started === null)
        await withRetries(() =>
          client.report(workerId, this.run, 'timeline', { name: 'start_confirmed', detail: { retried: true } }),
        );
    } catch (error) {
      this.o.log(`run ${this.runId}: could not take it up (${String(error)})`);
      return;
    }
    this.workdir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'shopfloor-run-'));
    try {
      const artifactsDir = path.join(this.workdir, 'shopfloor-artifacts');
      await fs.promises.mkdir(artifactsDir);
      if (this.stopped) return;
      const judge = this.run.source === 'RUN_SCORER';
      const judgeEnv = judge ? await prepareJudge(this.o.client, this.run, this.workdir) : {};
      if (judge) this.judgeOutput = '';
      const command = judge ? (this.o.judgeCommand ?? this.o.command) : this.o.command;
      const exit = await this.spawn(artifactsDir, command, judgeEnv).catch((error: unknown) => ({
        code: null,
        signal: null,
        error: String(error),
      }));
      this.flush();
      this.timeline('command_exited', { exit_code: exit.code, signal: exit.signal });
      await this.uploadArtifacts(artifactsDir);
      if (this.stopped) return;
      if (judge) return await this.finishJudge(exit);
      const succeeded = exit.code === 0;
      const message =
        'error' in exit
          ? `The command could not be started: ${exit.error}`
          : exit.code !== null
            ? `The command exited with code ${exit.code}`
            : `The command was ended by ${exit.signal}`;
      this.send('finish', {
        state: succeeded ? 'SUCCEEDED' : 'FAILED',
        ...(succeeded ? {} : { status_message: message }),
      });
      await this.reports;
      this.o.log(`run ${this.runId}: ${succeeded ? 'succeeded' : 'failed'} (${succeeded ? 'exit code 0' : message})`);
    } finally {
      await fs.promises.rm(this.workdir, { recursive: true, force: true });
    }
  }

  /**
   * A judge's end: its answer reported as the judgement, then the run finished (FAILED when there
   * was no answer, or one the scorer does not allow).
   */
  private async finishJudge(exit: { code: number | null; signal?: NodeJS.Signals | null; error?: string }) {
    this.timeline('judge_output', this.judgeLines);
    await this.reports;
    const answer: Judgement | null = exit.code === 0 ? parseJudgement(this.judgeOutput ?? '') : null;
    let failure: string | null =
      exit.code !== 0
        ? `The judge command ${exit.code === null ? 'did not exit normally' : `exited with code ${exit.code}`}`
        : answer
          ? null
          : 'The judge printed no JSON object with a classification';
    if (answer && !failure) {
      try {
        const recorded = (await this.o.client.report(this.o.workerId, this.run, 'judgement', answer)) as {
          status: string;
          error: string | null;
        } | null;
        if (recorded?.status !== 'scored') failure = recorded?.error ?? 'The judgement was not accepted';
      } catch (error) {
        if (error instanceof ApiError && error.code === 'not_claimed')
          return this.stop('the run is no longer held by this execution');
        failure = `The judgement could not be reported: ${String(error)}`;
      }
    }
    this.send('finish', failure ? { state: 'FAILED', status_message: failure } : { state: 'SUCCEEDED' });
    await this.reports;
    this.o.log(`run ${this.runId}: judge ${failure ? `failed (${failure})` : 'answered'}`);
  }

  private spawn(
    artifactsDir: string,
    command: string,
    extraEnv: Record<string, string>,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !PRIVATE_ENV.test(k)));
    const child = spawn('sh', ['-c', command], {
      cwd: this.workdir,
      env: {
        ...env,
        ...extraEnv,
        SHOPFLOOR_RUN_ID: this.run.run_id,
        SHOPFLOOR_EXECUTION_ID: this.run.execution_id,
        SHOPFLOOR_PROMPT: this.run.prompt,
        SHOPFLOOR_TITLE: this.run.title,
        SHOPFLOOR_CONVERSATION_ID: this.run.conversation_id,
        SHOPFLOOR_ARTIFACTS_DIR: artifactsDir,
        // The model and configuration the run asks for (a benchmark's configurations differ in them).
        SHOPFLOOR_MODEL_ID: typeof this.run.config?.model_id === 'string' ? this.run.config.model_id : '',
        SHOPFLOOR_RUN_CONFIG: JSON.stringify(this.run.config ?? {}),
        // W3C trace context (the OpenTelemetry convention for a child process): its spans join the run's trace.
        ...(this.run.traceparent ? { TRACEPARENT: this.run.traceparent } : {}),
      },
      // Its own process group, so that cancelling ends everything it started.
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdin!.on('error', () => undefined); // a command that closed its stdin misses follow-ups
    this.timeline('command_started', { pid: child.pid ?? null });
    const streams = (['stdout', 'stderr'] as const).map((name) => {
      const split = lineSplitter((text) => this.onLine({ stream: name, text }));
      const stream = child[name]!;
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => split.push(chunk));
      return new Promise<void>((resolve) => stream.once('close', () => (split.end(), resolve())));
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', async (code, signal) => {
        // Let the last output arrive, but not wait for background children holding the pipes.
        await Promise.race([Promise.all(streams), new Promise((r) => setTimeout(r, DRAIN_MS))]);
        this.killGroup('SIGKILL');
        resolve({ code, signal });
      });
    });
  }

  /** Acts on a signal for this execution. */
  handle(signal: Signal): void {
    if (signal.type === 'cancel') {
      this.stop(`${signal.cause}: ${signal.reason}`);
      return;
    }
    if (signal.execution_id !== this.run.execution_id || this.stopped) return;
    if (signal.type === 'interrupt') {
      this.timeline('interrupted', {});
      this.killGroup('SIGINT');
    } else {
      this.timeline('followup_delivered', { signal_id: signal.signal_id });
      this.child?.stdin?.write(`${signal.message}\n`);
    }
  }

  /** The run was taken away: end the command, report nothing more. */
  stop(why: string): void {
    if (this.stopped) return;
    this.stopped = why;
    this.o.log(`run ${this.runId}: stopping (${why})`);
    this.killGroup('SIGTERM');
    setTimeout(() => this.killGroup('SIGKILL'), KILL_GRACE_MS).unref();
  }

  private killGroup(signal: NodeJS.Signals): void {
    if (!this.child?.pid) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // the group is gone already
    }
  }

  private onLine(line: Line): void {
    const usage = line.stream === 'stdout' ? usageOf(line.text) : null;
    if (usage) {
      // A protocol line, not output (judges report what they spent too).
      this.send('usage', usage);
      return;
    }
    if (this.judgeOutput !== null) {
      // A judge's output stays here: only its answer leaves, as the judgement.
      this.judgeLines[line.stream]++;
      if (line.stream === 'stdout' && this.judgeOutput.length < MAX_JUDGE_OUTPUT) this.judgeOutput += `${line.text}\n`;
      return;
    }
    const asked = line.stream === 'stdout' ? questionOf(line.text) : null;
    if (asked) {
      // A protocol line, not output: the question comes after the output before it.
      this.flush();
      this.send('questions', { questions: [asked] });
      this.timeline('question_asked', { question: asked.question });
      return;
    }
    for (const url of pullRequestUrls(line.text)) {
      if (this.prLinks.has(url)) continue;
      this.prLinks.add(url);
      this.flush(); // the artifact comes after the output that named it
      this.send('artifacts', { artifact_type: 'PULL_REQUEST', url, branch: '' });
      this.timeline('pull_request_detected', { url });
    }
    this.lines.push(line);
    this.chars += line.text.length;
    if (this.lines.length >= MAX_BATCH_LINES || this.chars >= MAX_BATCH_CHARS) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Sends the batched output: one assistant message, a text block per stretch of one stream. */
  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (!this.lines.length) return;
    const batch = this.lines;
    this.lines = [];
    this.chars = 0;
    const blocks: Line[] = [];
    for (const line of batch) {
      const last = blocks.at(-1);
      if (last?.stream === line.stream) last.text += `\n${line.text}`;
      else blocks.push({ ...line });
    }
    this.send('messages', { role: 'assistant', content: blocks.map((b) => ({ type: 'text', text: b.text })) });
    const count = (stream: Line['stream']) => batch.filter((l) => l.stream === stream).length;
    this.timeline('output', { stdout_lines: count('stdout'), stderr_lines: count('stderr') });
  }

  private timeline(name: string, detail: Record<string, unknown>): void {
    this.send('timeline', { name, detail });
  }

  /**
   * Queues a report, sent again through failures that leave it unknown whether it was applied (an
   * output message may then be recorded twice); a 409 `not_claimed` means the run was taken away,
   * or, for a finish sent again, that the first one was applied.
   */
  private send(what: Report, body: unknown, upload?: () => Promise<unknown>): void {
    this.reports = this.reports.then(async () => {
      if (this.stopped) return;
      let retried = false;
      try {
        await withRetries((again) => {
          retried = again;
          return upload ? upload() : this.o.client.report(this.o.workerId, this.run, what, body);
        });
      } catch (error) {
        if (error instanceof ApiError && error.code === 'not_claimed' && what === 'finish' && retried) return;
        if (error instanceof ApiError && error.code === 'not_claimed')
          this.stop('the run is no longer held by this execution');
        else this.o.log(`run ${this.runId}: ${what} report failed (${String(error)})`);
      }
    });
  }

  private async uploadArtifacts(dir: string): Promise<void> {
    for (const rel of await filesUnder(dir)) {
      const query = { filename: path.basename(rel), filepath: rel, mime_type: mimeTypeOf(rel), artifact_type: 'FILE' };
      const upload = async () =>
        this.o.client.upload(
          this.o.workerId,
          this.run,
          'files',
          query,
          await fs.promises.readFile(path.join(dir, rel)),
        );
      this.send('artifacts', null, upload);
      this.timeline('artifact_uploaded', { filepath: rel });
    }
    await this.reports;
  }
}
