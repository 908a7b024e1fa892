/** `shopfloor worker --exec "<command>"`: the reference worker, against a running server. */
import { parseArgs } from 'node:util';
import type { CliCommand } from '../../feature.js';
import { Worker } from './worker.js';

const USAGE = `  shopfloor worker --exec "<command>" [--url URL] [--api-key KEY] [--concurrency N]
                   [--host NAME] [--capability C]... [--worker-id ID] [--skills-repo OWNER/REPO=DIR]...
                   [--judge-exec "<command>"]
                                            execute runs with <command>; --skills-repo reports the
                                            SKILL.md files of a checkout; judge runs (scorers) use
                                            --judge-exec, else <command>; the key (an agent API key)
                                            defaults to $SHOPFLOOR_API_KEY, the URL to $SHOPFLOOR_URL`;

const MAX_CONCURRENCY = 64;

async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      exec: { type: 'string' },
      'judge-exec': { type: 'string' },
      url: { type: 'string', default: process.env.SHOPFLOOR_URL ?? 'http://127.0.0.1:8080' },
      'api-key': { type: 'string', default: process.env.SHOPFLOOR_API_KEY },
      concurrency: { type: 'string', default: '1' },
      host: { type: 'string' },
      capability: { type: 'string', multiple: true, default: [] },
      'worker-id': { type: 'string' },
      'skills-repo': { type: 'string', multiple: true, default: [] },
    },
  });
  const concurrency = Number(values.concurrency);
  const skillRepos = Object.fromEntries(
    values['skills-repo'].map((r) => [r.split('=')[0]!, r.split('=').slice(1).join('=')]),
  );
  const problems = [
    !values.exec && '--exec "<command>" is required',
    !values['api-key'] && 'an agent API key is required: --api-key or SHOPFLOOR_API_KEY',
    !(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= MAX_CONCURRENCY) &&
      `--concurrency is a whole number from 1 to ${MAX_CONCURRENCY}`,
    ...Object.entries(skillRepos)
      .filter(([repo, dir]) => !/^[\w.-]+\/[\w.-]+$/.test(repo) || !dir)
      .map(([repo]) => `--skills-repo takes owner/repo=directory (got ${repo})`),
  ].filter(Boolean);
  if (problems.length) {
    console.error(`${problems.join('\n')}\nusage:\n${USAGE}`);
    return 2;
  }
  const worker = new Worker({
    url: values.url,
    apiKey: values['api-key']!,
    command: values.exec!,
    ...(values['judge-exec'] ? { judgeCommand: values['judge-exec'] } : {}),
    concurrency,
    capabilities: values.capability,
    ...(values.host ? { host: values.host } : {}),
    ...(values['worker-id'] ? { workerId: values['worker-id'] } : {}),
    skillRepos,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void worker.stop());
  await worker.run();
  return 0;
}

export const workerCommand: CliCommand = { name: 'worker', usage: USAGE, run };
