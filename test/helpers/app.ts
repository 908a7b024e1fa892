/**
 * The real application on real SQLite stores in a temporary directory, driven through
 * `fastify.inject`. Bootstrapped like a fresh install, with a known admin key.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { DestinationStream } from 'pino';
import { expect } from 'vitest';
import type { Bootstrapped } from '../../commands/team/bootstrap.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { comparePositions } from '../../src/eventstore/port.js';
import type { Feature } from '../../src/feature.js';
import { features } from '../../src/features.js';
import { createLogger } from '../../src/log.js';
import { openServer } from '../../src/server.js';
import { eventually } from './task-fixtures.js';

export const ADMIN_KEY = 'sf_test_admin_key_0123456789abcdef';

export type TestApp = Awaited<ReturnType<typeof startTestApp>>;

/**
 * With EVENTSTORE_URL or MONGODB_URL in the environment (CI's production-stores workflow), the app
 * runs on those servers instead, in a store of its own named after its data directory (a restart on
 * the same directory finds the same store): its own stream prefix and database.
 */
function productionStores(dir: string): Record<string, string> {
  const own = path
    .basename(dir)
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(-60);
  const { EVENTSTORE_URL, MONGODB_URL } = process.env;
  return {
    ...(EVENTSTORE_URL ? { EVENTSTORE_URL, EVENTSTORE_STREAM_PREFIX: `${own}-` } : {}),
    ...(MONGODB_URL ? { MONGODB_URL, MONGODB_DB: own } : {}),
  };
}

/**
 * The app on a fresh data directory (or `env.DATA_DIR`); `clock` stands in for the server's time;
 * `more` features (test routes) are served beside the real ones; the log goes to `logTo` when given.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  clock?: Clock,
  more: readonly Feature[] = [],
  logTo?: DestinationStream,
) {
  const dir = env.DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'shopfloor-api-'));
  const config = loadConfig({
    DATA_DIR: dir,
    BOOTSTRAP_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'silent',
    RESPONSE_SCHEMAS: process.env.TEST_RESPONSE_SCHEMAS ?? 'strict',
    // A test process starved of CPU by its neighbours sees its event loop lag: no shedding for that
    // (test/api/load-shedding.test.ts sheds on purpose).
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
    ...productionStores(dir),
    // The guardrail sweeper compares the injected clock, which tests move by hours, with real
    // intervals: it sweeps only in the tests that ask for it (test/api/guardrail).
    GUARDRAIL_SWEEP_SECONDS: '3600',
    ...env,
  });
  const server = await openServer(config, createLogger(config, logTo), [...features, ...more], clock);
  const { app, rt } = server;
  // A second app on a data directory bootstrapped before finds nothing to bootstrap.
  const boot = (server.started.get('team') as Bootstrapped | null) ?? {
    team_uid: '',
    user_uid: '',
    generated_api_key: null,
  };

  /** Sends a request as `key` (the admin by default); JSON bodies are encoded for you. */
  const call = (
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    key: string | null = ADMIN_KEY,
    headers: Record<string, string> = {},
  ) =>
    app.inject({
      method,
      url: `/api/v1${url}`,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });

  /**
   * Adds a member to `team` as the admin and redeems the invitation, as the new member would:
   * the member with their first key. Throws when the invitation gives no key (an existing user).
   */
  const addMember = async (team: string, body: { email: string; display_name?: string; role?: string }) => {
    const added = await call('POST', `/teams/${team}/members`, body);
    if (added.statusCode !== 201) throw new Error(added.body);
    const redeemed = await call('POST', '/invitations/redeem', { code: added.json().invitation_code }, null);
    if (redeemed.statusCode !== 201) throw new Error(redeemed.body);
    return { ...added.json(), api_key: redeemed.json().api_key as string } as {
      user: { uid: string; email: string; display_name: string };
      role: string;
      api_key: string;
    };
  };

  return {
    app,
    rt,
    dir,
    addMember,
    teamUid: boot.team_uid,
    adminUid: boot.user_uid,
    /** The key a bootstrap without BOOTSTRAP_API_KEY generated and printed. */
    generatedKey: boot.generated_api_key,
    call,
    /** The global position of the newest event: equal before and after means nothing was written. */
    head: async () => (await rt.events.headPosition()).commit,
    /** Stops this server and keeps its data directory, for another to start on (a restart). */
    stop: () => server.close(),
    /** Stops the server and deletes its data directory, unless another app on it goes on (`keepData`). */
    async close({ keepData = false } = {}) {
      await server.close();
      if (!keepData) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Asserts a problem+json answer with this status (and code, when given). */
export function expectProblem(res: LightMyRequestResponse, status: number, code?: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({
    status,
    title: expect.any(String),
    detail: expect.any(String),
    type: expect.any(String),
  });
  if (code) expect(body.code).toBe(code);
  return body;
}

/** Waits until every reactor has reacted to the whole log, so nothing more is written in the background. */
export async function quiet(t: TestApp): Promise<void> {
  await eventually(async () => {
    const head = await t.rt.events.headPosition();
    const reactors = (await t.rt.docs.listCheckpoints()).filter((c) => c.name.startsWith('reactor_'));
    if (reactors.some((c) => comparePositions(c.position, head) < 0)) return undefined;
    return comparePositions(await t.rt.events.headPosition(), head) === 0 ? true : undefined;
  });
}

/**
 * Runs `request` and asserts it was refused with `status` and wrote no event. Reactions to what
 * came before end first: the head must not move for their sake while the request is judged.
 */
export async function expectRefused(
  t: TestApp,
  request: () => Promise<LightMyRequestResponse>,
  status: number,
  code?: string,
) {
  await quiet(t);
  const before = await t.head();
  const res = await request();
  const body = expectProblem(res, status, code);
  expect(await t.head()).toBe(before);
  return body;
}

/** A new environment of the active team, for runs that name one. */
export async function newEnvironment(t: TestApp, name = 'Build box'): Promise<string> {
  const res = await t.call('POST', '/agent/environments', { name, docker_image: 'node:20-bookworm' });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().uid;
}
