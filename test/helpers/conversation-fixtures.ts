/**
 * Runs for the conversation, artifact and history tests: created through `createRun` and driven
 * through the run decider's worker commands, exactly as a worker would, on the real app.
 */
import { v4 as uuidv4 } from 'uuid';
import { expect } from 'vitest';
import { createRun } from '../../commands/run/create.js';
import { type RunCommand, runDecider } from '../../commands/run/run-decider.js';
import { type Artifact, type FinishState, runStream } from '../../commands/run/events.js';
import { runRequestSchema } from '../../commands/run/schema.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { TestApp } from './app.js';

const context = (
  actor: CommandContext['actor'],
  teams: CommandContext['teams'],
  team_uid: string | null,
): CommandContext => ({
  now: new Date().toISOString(),
  actor,
  teams,
  team_uid,
  correlation_id: `test-${uuidv4()}`,
  causation_id: null,
  request_id: null,
});

/** The bootstrap admin, acting in the default team. */
export const adminContext = (t: TestApp) =>
  context({ type: 'user', uid: t.adminUid }, { [t.teamUid]: 'admin' }, t.teamUid);

/** The worker side: the system, as a worker's commands are recorded. */
export const workerContext = () => context({ type: 'system', uid: 'test' }, {}, null);

/** Creates a run as the admin in the default team (`team: false` for a personal run). */
export async function newRun(t: TestApp, request: Record<string, unknown> = {}) {
  const run = await createRun(t.rt, runRequestSchema.parse({ prompt: 'Fix the build', ...request }), adminContext(t), {
    source: 'API',
    team_uid: t.teamUid,
  });
  return { run_id: run.run_id, conversation_id: run.conversation_id };
}

export type Held = { worker_id: string; execution_id: string };

export const runCommand = (t: TestApp, runId: string, command: RunCommand, ctx = workerContext()) =>
  t.rt.execute(runStream(runId), runDecider, command, ctx);

/** Leases, claims and starts the run on a fresh execution; returns what the worker holds. */
export async function startRun(t: TestApp, runId: string): Promise<Held> {
  const held = { worker_id: 'w-1', execution_id: uuidv4() };
  const run_id = runId;
  await runCommand(t, runId, {
    type: 'LeaseRun',
    data: { run_id, ...held, lease_expires_at: new Date(Date.now() + 60_000).toISOString() },
  });
  await runCommand(t, runId, { type: 'ClaimRun', data: { run_id, ...held } });
  await runCommand(t, runId, { type: 'StartRun', data: { run_id, ...held } });
  return held;
}

export async function say(
  t: TestApp,
  runId: string,
  held: Held,
  message: {
    role?: string;
    text: string;
    step_id?: string | null;
    parent_step_id?: string | null;
    message_id?: string;
  },
) {
  await runCommand(t, runId, {
    type: 'RecordMessage',
    data: {
      run_id: runId,
      ...held,
      message_id: message.message_id ?? uuidv4(),
      step_id: message.step_id ?? null,
      parent_step_id: message.parent_step_id ?? null,
      role: message.role ?? 'assistant',
      content: [{ type: 'text', text: message.text }],
    },
  });
}

export const addArtifact = (t: TestApp, runId: string, held: Held, artifact: Artifact) =>
  runCommand(t, runId, { type: 'AddArtifact', data: { run_id: runId, ...held, artifact } });

export const finishRun = (t: TestApp, runId: string, held: Held, state: FinishState = 'SUCCEEDED', message?: string) =>
  runCommand(t, runId, {
    type: 'FinishRun',
    data: { run_id: runId, ...held, state, status_message: message ? { message } : null },
  });

/** A member of a new team the admin also belongs to: sees that team's runs, not the default team's. */
export async function outsiderKey(t: TestApp): Promise<string> {
  const team = (await t.call('POST', '/teams', { name: `Other ${uuidv4()}` })).json();
  return (await t.addMember(team.uid, { email: `outsider-${uuidv4()}@example.com` })).api_key;
}

/** A plain member of the default team. */
export async function teammateKey(t: TestApp): Promise<string> {
  return (await t.addMember(t.teamUid, { email: `mate-${uuidv4()}@example.com` })).api_key;
}

/** The path and query of a signed URL, and whether it signs the blob route for `blob`. */
export function signedPath(t: TestApp, location: string | undefined) {
  expect(location).toBeDefined();
  const url = new URL(location!);
  const expires = url.searchParams.get('expires')!;
  const signature = url.searchParams.get('signature')!;
  const signed = `${url.pathname}${url.search.replace(/[?&]expires=.*$/, '')}`;
  expect(t.rt.urls.verify(signed, expires, signature)).toBe(true);
  return {
    url,
    blob: url.pathname.replace('/api/v1/blobs/', ''),
    filename: url.searchParams.get('filename'),
    mime: url.searchParams.get('mime'),
  };
}
