/**
 * The reference worker: announces itself, heartbeats (delivering the server's signals to its
 * executions), and long-polls for runs while it has a free slot; a p-queue bounds how many runs
 * execute at once. Shutting down ends the running commands and reports their runs as ERROR
 * (retryable), since they were cut short by the worker, not by the agent.
 */
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import PQueue from 'p-queue';
import { ApiError, type Signal, WorkerClient } from './client.js';
import { Execution } from './execution.js';
import { findSkills } from './skills.js';

export interface WorkerOptions {
  url: string;
  apiKey: string;
  command: string;
  /** The command for judge runs (RUN_SCORER); `command` when not given. */
  judgeCommand?: string;
  concurrency: number;
  host?: string;
  capabilities?: string[];
  /** A stable id (to reconnect as the same worker); the server picks one when absent. */
  workerId?: string;
  /** Checkouts of the repositories it serves (`owner/repo` → directory), searched for skills. */
  skillRepos?: Record<string, string>;
  log?(message: string): void;
}

const CLAIM_WAIT_SECONDS = 30;
const RETRY_MS = 1000;

export class Worker {
  private readonly client: WorkerClient;
  private readonly queue: PQueue;
  private readonly running = new Map<string, Execution>();
  /** Signals handled since the last heartbeat answered: acknowledged with the next one. */
  private acks: string[] = [];
  private readonly handled = new Set<string>();
  private readonly stopping = new AbortController();
  private workerId: string | undefined;
  private heartbeatMs = 10_000;
  private readonly log: (message: string) => void;

  constructor(private readonly o: WorkerOptions) {
    this.client = new WorkerClient(o.url.replace(/\/$/, ''), o.apiKey);
    this.queue = new PQueue({ concurrency: o.concurrency });
    this.workerId = o.workerId;
    this.log = o.log ?? ((m) => process.stderr.write(`${new Date().toISOString()} ${m}\n`));
  }

  /** Works until `stop()`; resolves once every execution has ended. */
  async run(): Promise<void> {
    await this.announce();
    await Promise.all([this.heartbeats(), this.claims()]);
    await this.queue.onIdle();
  }

  async stop(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.log('shutting down');
    this.stopping.abort();
    await Promise.all(
      [...this.running.values()].map(async (x) => {
        x.stop('the worker is shutting down');
        await this.client
          .report(this.workerId!, x.run, 'finish', {
            state: 'ERROR',
            status_message: {
              message: 'The worker shut down before the run ended',
              error_code: 'resource_unavailable',
              retryable: true,
            },
          })
          .catch(() => undefined);
      }),
    );
  }

  private async announce(): Promise<void> {
    const announced = await this.client.announce(
      this.o.host ?? os.hostname(),
      this.o.capabilities ?? [],
      this.workerId,
    );
    this.workerId = announced.worker_id;
    this.heartbeatMs = announced.heartbeat_interval_seconds * 1000;
    this.log(`worker ${this.workerId} connected to ${this.o.url}`);
    await this.reportSkills();
  }

  /** Each (re)connection tells the server the skills of the repositories served, as they are now. */
  private async reportSkills(): Promise<void> {
    const repos = Object.entries(this.o.skillRepos ?? {});
    if (!repos.length) return;
    const skills = repos.flatMap(([repo, dir]) => findSkills(repo, dir));
    await this.client
      .reportSkills(
        this.workerId!,
        repos.map(([repo]) => repo),
        skills,
      )
      .then(() => this.log(`reported ${skills.length} skill(s) of ${repos.length} repositories`))
      .catch((error: unknown) => this.log(`could not report skills: ${String(error)}`));
  }

  private async heartbeats(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      await delay(this.heartbeatMs, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      if (this.stopping.signal.aborted) return;
      try {
        const acks = this.acks;
        const signals = await this.client.heartbeat(this.workerId!, [...this.running.keys()], acks);
        this.acks = this.acks.filter((id) => !acks.includes(id));
        for (const signal of signals) this.deliver(signal);
      } catch (error) {
        // The server forgot us (a restart, or we were silent too long): announce again, same id.
        if (error instanceof ApiError && error.status === 404)
          await this.announce().catch((e: unknown) => this.log(`announce failed: ${String(e)}`));
        else this.log(`heartbeat failed: ${String(error)}`);
      }
    }
  }

  private deliver(signal: Signal): void {
    if (!this.handled.has(signal.signal_id)) {
      this.handled.add(signal.signal_id);
      this.running.get(signal.run_id)?.handle(signal);
    }
    this.acks.push(signal.signal_id);
  }

  private async claims(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      // Claim only with a free slot, so a run never waits here while another worker could take it.
      while (this.queue.pending + this.queue.size >= this.o.concurrency)
        await new Promise((r) => this.queue.once('next', r));
      if (this.stopping.signal.aborted) return;
      try {
        const run = await this.client.claim(this.workerId!, CLAIM_WAIT_SECONDS, this.stopping.signal);
        if (!run) continue;
        // A run this worker still executes was handed out again (its lease ran out): end the old one.
        this.running.get(run.run_id)?.stop('the run was handed out again');
        const execution = new Execution(run, {
          client: this.client,
          workerId: this.workerId!,
          command: this.o.command,
          judgeCommand: this.o.judgeCommand,
          log: this.log,
        });
        this.running.set(run.run_id, execution);
        this.log(`run ${run.run_id}: claimed (${run.title})`);
        void this.queue.add(async () => {
          try {
            await execution.execute();
          } catch (error) {
            this.log(`run ${run.run_id}: ${String(error)}`);
          } finally {
            if (this.running.get(run.run_id) === execution) this.running.delete(run.run_id);
          }
        });
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        if (error instanceof ApiError && error.status === 404) await this.announce().catch(() => undefined);
        else this.log(`claim failed: ${String(error)}`);
        await delay(RETRY_MS, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      }
    }
  }
}
