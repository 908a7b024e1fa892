/**
 * Finds the user who owns an email address, or registers one with a first API key. The email
 * reservation stream is appended with no_stream, so two concurrent registrations of one address
 * yield one user.
 */
import { createHash } from 'node:crypto';
import { timeOrderedId } from '../../src/ids.js';
import { ConcurrencyError, type EventStore } from '../../src/eventstore/port.js';
import { type CommandContext, metadataOf } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { newApiKey } from '../../src/http/api-key.js';
import { normalizeEmail } from '../../src/http/schemas.js';
import { userDecider } from './decider.js';
import { type EmailReserved, userStream } from './events.js';

const emailStream = (email: string) => `email-${createHash('sha256').update(email).digest('hex')}`;

async function reservedOwner(events: EventStore, email: string): Promise<string | null> {
  const [reservation] = await events.readStream(emailStream(email), { maxCount: 1 });
  return reservation ? (reservation.data as EmailReserved['data']).user_uid : null;
}

/** Claims `email` for `uid`; returns the owner, which is another user when one was first. */
export async function reserveEmail(
  events: EventStore,
  email: string,
  uid: string,
  context: CommandContext,
): Promise<string> {
  const reserved: EmailReserved = { type: 'EmailReserved', data: { email, user_uid: uid } };
  try {
    await events.append(
      emailStream(email),
      [{ id: timeOrderedId(), ...reserved, metadata: metadataOf(context) }],
      'no_stream',
    );
    return uid;
  } catch (error) {
    if (!(error instanceof ConcurrencyError)) throw error;
    return (await reservedOwner(events, email))!;
  }
}

export interface Registration {
  user_uid: string;
  /** The new user's first key, or null when the address already belonged to a user. */
  api_key: string | null;
}

export async function findOrRegisterUser(
  rt: Runtime,
  rawEmail: string,
  displayName: string | undefined,
  context: CommandContext,
): Promise<Registration> {
  const email = normalizeEmail(rawEmail);
  const existing = await reservedOwner(rt.events, email);
  if (existing) return { user_uid: existing, api_key: null };
  const uid = timeOrderedId();
  const owner = await reserveEmail(rt.events, email, uid, context);
  if (owner !== uid) return { user_uid: owner, api_key: null };
  const key = newApiKey();
  await rt.execute(
    userStream(uid),
    userDecider,
    {
      type: 'RegisterUser',
      data: {
        uid,
        email,
        display_name: displayName ?? email.split('@')[0]!,
        key_id: timeOrderedId(),
        key_hash: key.hash,
      },
    },
    context,
  );
  return { user_uid: uid, api_key: key.key };
}
