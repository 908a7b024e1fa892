/**
 * POST /factory/{factory_uid}/runs: a run for the factory's foreman, created like any other run, and
 * marked as a dispatch so that a reactor creates its task asynchronously (see task-reactor.ts).
 */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { Conflict } from '../../src/kernel/errors.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import type { Collection } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { type IdentityDoc, identityDecider } from '../identity/public.js';
import { identityStream } from '../identity/events.js';
import { createRun } from '../run/public.js';
import { RUN_STATES } from '../run/events.js';
import { type LiveFactory, liveFactory } from '../factory/public.js';

const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');
/** Ticket fields become run metadata, whose values are at most 256 bytes. */
const metadataValue = (s: string) => utf8Bytes(s) <= 256;

export const dispatchBody = z
  .object({
    prompt: z
      .string()
      .max(1_000_000)
      .refine((p) => p.trim() !== '', 'the prompt must not be empty'),
    title: z.string().trim().min(1).max(500).optional(),
    ticket_ref: z
      .string()
      .max(256)
      .regex(/^[A-Za-z][\w.-]{0,63}:\S+$/, 'a ticket reference is <source>:<id>, such as linear:PAY-123')
      .refine(metadataValue, 'at most 256 bytes')
      .optional(),
    ticket_url: z.url().max(256).refine(metadataValue, 'at most 256 bytes').optional(),
  })
  .strict();

export type DispatchBody = z.infer<typeof dispatchBody>;

/** The answer of a dispatch; its task is created asynchronously (find it with task-by-run). */
export const dispatchedRun = z.object({
  factory_uid: z.string(),
  foreman_agent: z.string().describe("The foreman agent's name"),
  run_id: z.string(),
  state: z.enum(RUN_STATES),
  ticket_ref: z.string().describe('`<source>:<id>`: the given ticket_ref, else `adhoc:<run_id>`'),
  run_url: z.string().describe('The run in the API: `<PUBLIC_BASE_URL>/api/v1/agent/runs/<run_id>`'),
});

/**
 * The factory's foreman, newest first. The identities read model only names the candidates;
 * each is confirmed from its own stream (live, a FOREMAN, linked to this factory, same team).
 */
export async function foremanOf(
  rt: Runtime,
  identities: Collection<IdentityDoc>,
  factory: LiveFactory,
): Promise<{ uid: string; name: string } | null> {
  const candidates = await identities.find({
    filter: { factory_uid: factory.uid, agent_type: 'FOREMAN' },
    sort: [
      ['created_at', 'desc'],
      ['id', 'desc'],
    ],
    limit: 20,
  });
  for (const { uid } of candidates.items) {
    const agent = await rt.state(identityDecider, identityStream(uid));
    const profile = agent.status === 'live' ? { ...agent.profile, team_uid: agent.team_uid } : null;
    if (
      profile?.agent_type === 'FOREMAN' &&
      profile.factory_uid === factory.uid &&
      profile.team_uid === factory.team_uid
    ) {
      return { uid, name: profile.name };
    }
  }
  return null;
}

export async function dispatchRun(
  rt: Runtime,
  identities: Collection<IdentityDoc>,
  factoryUid: string,
  body: DispatchBody,
  context: CommandContext,
): Promise<z.infer<typeof dispatchedRun>> {
  const factory = await liveFactory(rt, factoryUid, context);
  const foreman = await foremanOf(rt, identities, factory);
  if (!foreman) throw new Conflict(`factory ${factoryUid} has no foreman agent`, 'no_foreman');
  const run_id = timeOrderedId();
  // Without a ticket, the run gets an adhoc reference of its own.
  const ticket_ref = body.ticket_ref ?? `adhoc:${run_id}`;
  const split = ticket_ref.indexOf(':');
  const run = await createRun(
    rt,
    {
      prompt: body.prompt,
      title: body.title,
      agent_identity_uid: foreman.uid,
      team: true,
      interactive: false,
      mode: 'normal',
    },
    context,
    {
      source: 'API',
      team_uid: factory.team_uid,
      run_id,
      factory_uid: factory.uid,
      factory_dispatch: true,
      automatic_metadata: {
        ticket_source: ticket_ref.slice(0, split),
        ticket_id: ticket_ref.slice(split + 1),
        ...(body.ticket_url ? { ticket_url: body.ticket_url } : {}),
      },
    },
  );
  return {
    factory_uid: factory.uid,
    foreman_agent: foreman.name,
    run_id,
    state: run.state,
    ticket_ref,
    run_url: `${rt.config.publicBaseUrl}/api/v1/agent/runs/${run_id}`,
  };
}
