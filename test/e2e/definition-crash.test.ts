// @vitest-environment node
/**
 * A definition version is applied whole or not at all, across SIGKILL: a real server applying a
 * branch (dozens of agents, automations and webhooks to change) is killed the moment the version
 * is decided, with its resources half carried out on disk; started again, it serves the new
 * definition, whole, before it answers anything. Killed before the version is decided, it serves
 * the old one. Never a mix.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { asList, type Files, fixture, variant } from '../helpers/factory-files.js';
import { call, makeDataDir, readEvents, removeDir, type ServerProcess, sleep, startServer } from './server-process.js';

const AGENTS = 20;
const AUTOMATIONS = 20;
const WEBHOOKS = 5;
const SECRET = 'DEPLOY_TOKEN';
const pad = (i: number) => String(i).padStart(2, '0');

/** Two definitions of one factory that differ in nearly every resource. */
function definition(version: 'A' | 'B'): Files {
  const files: Record<string, string | null> = {
    'factory.yaml': fixture('small')['factory.yaml']!.replace('name: Payments', `name: Payments ${version}`),
  };
  for (let i = 0; i < AGENTS; i++)
    files[`agents/a${pad(i)}/agent.md`] =
      `---\nmodel: ${version === 'A' ? 'gpt-5-4-high' : 'gpt-5-4-mini'}\n---\nAgent ${i}, definition ${version}.\n`;
  const automation = (name: string) =>
    `---\ntriggers:\n  - provider: factory\n    event: work_item_stage_changed\n    filter:\n      stages: [REVIEW]\n---\nAutomation ${name}, definition ${version}.\n`;
  // B keeps the first half of A's automations, retires the rest and adds as many.
  for (let i = 0; i < AUTOMATIONS; i++)
    if (version === 'A' || i < AUTOMATIONS / 2)
      files[`automations/x${pad(i)}/automation.md`] = automation(`x${pad(i)}`);
  if (version === 'B')
    for (let i = 0; i < AUTOMATIONS / 2; i++) files[`automations/y${pad(i)}/automation.md`] = automation(`y${pad(i)}`);
  for (let i = 0; i < WEBHOOKS; i++)
    files[`webhooks/w${i}.yaml`] = `secretName: ${SECRET}\nenabled: ${version === 'A'}\n`;
  return variant(fixture('small'), files);
}

type Seen = 'A' | 'B' | 'mix';

/** Which definition the factory serves: every resource of A, every resource of B, or a mix. */
async function inForce(server: ServerProcess, factory: string): Promise<{ seen: Seen; why: string[] }> {
  const votes: Array<[string, 'A' | 'B' | '?']> = [];
  const vote = (what: string, a: boolean, b: boolean) => votes.push([what, a && !b ? 'A' : b && !a ? 'B' : '?']);
  const name = (await call(server, 'GET', `/factory/${factory}`)).body!.name;
  vote('factory name', name === 'Payments A', name === 'Payments B');
  const agents = (await call(server, 'GET', `/agent/identities?factory_uid=${factory}`)).body!.agents as Array<{
    name: string;
    base_model: string;
    prompt: string;
  }>;
  for (const a of agents.filter((x) => /^a\d\d$/.test(x.name)))
    vote(
      `agent ${a.name}`,
      a.base_model === 'gpt-5-4-high' && /A\.$/.test(a.prompt),
      a.base_model === 'gpt-5-4-mini' && /B\.$/.test(a.prompt),
    );
  const automations = (
    (await call(server, 'GET', `/factory/${factory}/automations`)).body!.automations as Array<{
      name: string;
      prompt: string;
    }>
  ).filter((a) => /^[xy]\d\d$/.test(a.name));
  const names = automations.map((a) => a.name).sort();
  vote(
    'automation names',
    names.length === AUTOMATIONS && names.every((n) => n.startsWith('x')),
    names.filter((n) => n.startsWith('y')).length === AUTOMATIONS / 2 && names.length === AUTOMATIONS,
  );
  for (const a of automations) vote(`automation ${a.name}`, /A\.$/.test(a.prompt), /B\.$/.test(a.prompt));
  const hooks = (await call(server, 'GET', `/factory/${factory}/webhooks`)).body!.webhooks as Array<{
    enabled: boolean;
  }>;
  vote(
    'webhooks',
    hooks.length === WEBHOOKS && hooks.every((h) => h.enabled),
    hooks.length === WEBHOOKS && hooks.every((h) => !h.enabled),
  );
  const all = new Set(votes.map(([, v]) => v));
  const seen: Seen = all.size === 1 && !all.has('?') ? ([...all][0] as 'A' | 'B') : 'mix';
  return { seen, why: votes.filter(([, v]) => v !== [...all][0]).map(([w, v]) => `${w}: ${v}`) };
}

describe.sequential('applying a definition across SIGKILL', () => {
  const dataDir = makeDataDir();
  const servers: ServerProcess[] = [];
  const start = async () => {
    const s = await startServer({ dataDir });
    servers.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    removeDir(dataDir);
  });

  it('leaves the old definition or the new one in force, never a mix', { timeout: 120_000 }, async () => {
    let server = await start();
    const factory = String((await call(server, 'POST', '/factory', { name: 'Payments' })).body!.uid);
    const team = String((await call(server, 'GET', `/factory/${factory}`)).body!.team_uid);
    expect(
      (await call(server, 'POST', `/teams/${team}/secrets`, { name: SECRET, value: 'a-long-enough-token' })).status,
    ).toBe(201);
    const branches: Record<'A' | 'B', string> = { A: '', B: '' };
    for (const version of ['A', 'B'] as const) {
      const res = await call(server, 'POST', `/factory/${factory}/branches`, {
        name: version,
        files: asList(definition(version)),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      branches[version] = String(res.body!.uid);
    }
    const applied = await call(server, 'POST', `/factory/${factory}/branches/${branches.A}/apply`);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const first = await inForce(server, factory);
    expect(first.seen, first.why.join('; ')).toBe('A');

    const events = new Database(path.join(dataDir, 'events.db'), { readonly: true, fileMustExist: true });
    const decided = events.prepare<[string], { n: number }>(
      "SELECT count(*) AS n FROM events WHERE stream = ? AND type = 'FactoryDefinitionApplied'",
    );
    const stream = `definition-${factory}`;
    let live: 'A' | 'B' = 'A';
    let killedMidway = 0;
    let killedBefore = 0;
    const halfway: number[] = [];
    /** Events caused by carrying the version out (agents, automations, webhooks, the factory). */
    const caused = events.prepare<[string], { n: number }>(
      "SELECT count(*) AS n FROM events WHERE json_extract(metadata, '$.causation_id') = ?",
    );
    const carriedOut = (decision: string) => caused.get(decision)!.n;
    const lastDecision = events.prepare<[string], { id: string }>(
      "SELECT id FROM events WHERE stream = ? AND type = 'FactoryDefinitionApplied' ORDER BY position DESC LIMIT 1",
    );
    try {
      for (let round = 0; round < 10 && (killedMidway < 3 || killedBefore < 1); round++) {
        const next = live === 'A' ? 'B' : 'A';
        const versionsBefore = decided.get(stream)!.n;
        // Kill before the version is decided (at once), or the moment it is (while it is carried out).
        const early = killedBefore < 1 && round % 2 === 1;
        const request = fetch(`${server.baseUrl}/api/v1/factory/${factory}/branches/${branches[next]}/apply`, {
          method: 'POST',
          headers: { authorization: `Bearer ${server.apiKey}` },
        }).catch(() => null);
        // Midway: once the version is decided and some of its changes are written (more each time).
        const midway = () =>
          decided.get(stream)!.n > versionsBefore && carriedOut(lastDecision.get(stream)!.id) >= 3 + 10 * killedMidway;
        if (!early) for (const deadline = Date.now() + 10_000; !midway() && Date.now() < deadline; ) await sleep(1);
        await server.kill('SIGKILL');
        await request;
        const written = readEvents(dataDir, { stream });
        const isDecided =
          written.length > 0 && written.filter((e) => e.type === 'FactoryDefinitionApplied').length > versionsBefore;
        const completed = written.at(-1)?.type === 'FactoryDefinitionCompleted';
        if (isDecided && !completed) {
          killedMidway++;
          // On disk, the version is decided and its resources only partly carried out.
          const carried = carriedOut(lastDecision.get(stream)!.id);
          expect(carried).toBeGreaterThan(0);
          expect(carried).toBeLessThan(AGENTS + AUTOMATIONS + WEBHOOKS);
          halfway.push(carried);
        }
        if (!isDecided) killedBefore++;

        server = await start();
        const { seen, why } = await inForce(server, factory);
        expect(seen, `round ${round}: ${why.join('; ')}`).not.toBe('mix');
        expect(seen).toBe(isDecided ? next : live);
        const definition = (await call(server, 'GET', `/factory/${factory}`)).body!.definition as { state: string };
        expect(definition.state).toBe('applied');
        live = seen as 'A' | 'B';
      }
    } finally {
      events.close();
    }
    // Both cases were met: killed with the version decided and half carried out, and before it was decided.
    expect(killedMidway).toBeGreaterThanOrEqual(3);
    expect(killedBefore).toBeGreaterThanOrEqual(1);
    // Every version decided was completed once, and no resource was created twice.
    const log = readEvents(dataDir, { stream: `definition-${factory}` });
    const versions = log.filter((e) => e.type === 'FactoryDefinitionApplied').map((e) => e.data.version);
    expect(log.filter((e) => e.type === 'FactoryDefinitionCompleted').map((e) => e.data.version)).toEqual(versions);
    const created = readEvents(dataDir, { prefix: 'identity-' }).filter((e) => e.type === 'AgentIdentityCreated');
    expect(new Set(created.map((e) => e.stream)).size).toBe(created.length);
  });
});
