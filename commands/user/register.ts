/**
 * Finds the user who owns an email address, or registers one. The email reservation stream is
 * appended with no_stream, so two concurrent registrations of one address yield one user.
 */
import { createHash, randomUUID } from 'node:crypto';
import { timeOrderedId } from '../../src/ids.js';
import { ConcurrencyError, type EventStore } from '../../src/eventstore/port.js';
import { type CommandContext, metadataOf } from '../../src/kernel/handle.js';
import type { Runtime } from '../../src/runtime.js';
import { normalizeEmail } from '../../src/http/schemas.js';
import { userDecider } from './user-decider.js';
import { type EmailReserved, userStream } from './events.js';

const emailStream = (email: string) => `email-${createHash('sha256').update(email).digest('hex')}`;

/** The user who owns `email` (normalised), if any. */
export async function ownerOf(events: EventStore, email: string): Promise<string | null> {
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
    return (await ownerOf(events, email))!;
  }
}

/**
 * The user who owns `email`, registered now (without a key) when there is none. A new user's uid
 * is random, not time-ordered: a UUIDv7 would tell the admin who added them when the account was
 * made, and so whether it existed before.
 */
export async function findOrRegisterUser(
  rt: Runtime,
  rawEmail: string,
  displayName: string | undefined,
  context: CommandContext,
): Promise<string> {
  const email = normalizeEmail(rawEmail);
  const existing = await ownerOf(rt.events, email);
  if (existing) return existing;
  const uid = randomUUID();
  const owner = await reserveEmail(rt.events, email, uid, context);
  if (owner !== uid) return owner;
  await rt.handle(
    userStream(uid),
    userDecider,
    { type: 'RegisterUser', data: { uid, email, display_name: displayName ?? email.split('@')[0]! } },
    context,
  );
  return uid;
}
