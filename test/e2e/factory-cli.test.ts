// @vitest-environment node
/**
 * `shopfloor factory validate|push|apply` as a repository's CI and deploy job run them: validate
 * offline with file:line:column diagnostics and exit 1 when invalid; push and apply a folder to a
 * running server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { edit, type Files, fixture, variant } from '../helpers/factory-files.js';
import { call, makeDataDir, removeDir, runCli, type ServerProcess, startServer } from './server-process.js';

const dirs: string[] = [];
/** Writes files into a new folder, as a checkout would hold them. */
function folder(files: Files): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-factory-'));
  dirs.push(dir);
  for (const [p, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), content);
  }
  return dir;
}

describe.sequential('shopfloor factory', () => {
  const dataDir = makeDataDir();
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.kill('SIGKILL');
    removeDir(dataDir);
    for (const d of dirs) removeDir(d);
  });

  it('validate: exit 0 on the example factory, with nothing on stdout', async () => {
    const dir = folder(
      variant(fixture('sdlc-issue-to-pr'), { 'README.md': '# ours', '.github/workflows/ci.yml': 'on: push' }),
    );
    const res = await runCli(['factory', 'validate', dir], { dataDir });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe('');
    // Only factory.yaml and the definition's folders are read: not the README, not CI settings.
    expect(res.stderr).toContain(
      `a valid v1alpha1 definition (${Object.keys(fixture('sdlc-issue-to-pr')).length} files)`,
    );
  });

  it('validate: exit 1 with one file:line:column CODE message line per problem', async () => {
    const broken = edit(
      edit(fixture('sdlc-issue-to-pr'), 'factory.yaml', 'alias: Acme', 'alias: !!str Acme'),
      'agents/spec/agent.md',
      'agentType: SPEC',
      'agentType: SPEC\nmodle: x',
    );
    const dir = folder(broken);
    const res = await runCli(['factory', 'validate', dir], { dataDir });
    expect(res.code).toBe(1);
    expect(res.stdout.trim().split('\n')).toEqual([
      `${path.join(dir, 'agents/spec/agent.md')}:4:1 FF_UNKNOWN_FIELD unknown field modle`,
      `${path.join(dir, 'factory.yaml')}:7:8 FF_TAG explicit tags are not allowed (!!str)`,
    ]);
  });

  it("push, then apply: the folder becomes the factory's definition", { timeout: 60_000 }, async () => {
    server = await startServer({ dataDir });
    const factory = String((await call(server, 'POST', '/factory', { name: 'Payments' })).body!.uid);
    const env = { dataDir, extra: { SHOPFLOOR_URL: server.baseUrl, SHOPFLOOR_API_KEY: server.apiKey! } };
    const dir = folder(fixture('small'));

    const pushed = await runCli(['factory', 'push', dir, '--factory', factory, '--branch', 'main'], env);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stdout).toMatch(/^branch main \(\S+\): OPEN, valid\n {2}agents: added foreman, reviewer\n/);
    expect((await call(server, 'GET', `/factory/${factory}`)).body!.definition).toBeNull();

    // A second push replaces the branch's files; apply pushes and applies.
    fs.writeFileSync(
      path.join(dir, 'agents/reviewer/agent.md'),
      fs.readFileSync(path.join(dir, 'agents/reviewer/agent.md'), 'utf8').replace('gpt-5-4-high', 'gpt-5-4-mini'),
    );
    const applied = await runCli(['factory', 'apply', dir, '--factory', factory], env);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/applied: the factory's definition is version 1/);
    const branches = (await call(server, 'GET', `/factory/${factory}/branches`)).body!.branches as Array<{
      name: string;
      status: string;
    }>;
    expect(branches.map((b) => [b.name, b.status])).toEqual([['main', 'APPLIED']]);
    const agents = (await call(server, 'GET', `/agent/identities?factory_uid=${factory}`)).body!.agents as Array<{
      name: string;
      base_model: string;
    }>;
    expect(agents.find((a) => a.name === 'reviewer')!.base_model).toBe('gpt-5-4-mini');

    // What only the server can check fails the deploy, with the line, and changes nothing.
    fs.mkdirSync(path.join(dir, 'webhooks'));
    fs.writeFileSync(path.join(dir, 'webhooks/deploys.yaml'), 'secretName: NO_SUCH_SECRET\n');
    const refused = await runCli(['factory', 'apply', dir, '--factory', factory], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`${path.join(dir, 'webhooks/deploys.yaml')}:1:13 FF_INVALID_REFERENCE`);
    expect(refused.stderr).toMatch(/^400 invalid_request: /m);
    expect(((await call(server, 'GET', `/factory/${factory}`)).body!.definition as { version: number }).version).toBe(
      1,
    );
  });

  it('says what is missing, with exit 2', async () => {
    const res = await runCli(['factory', 'push', '.'], { dataDir });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--factory <uid> is required/);
  });
});
