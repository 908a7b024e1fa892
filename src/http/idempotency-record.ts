/**
 * The record of one Idempotency-Key of one principal: a reservation stream (`idempotency-<hash>`)
 * whose first append is made with `no_stream`, so of two requests racing with one key, in one
 * process or two, one reserves it and the other finds it taken. The stream holds the request's
 * fingerprint, then the answer (sealed) or its release. Events are forever, so expiry is a rule
 * applied when the stream is read: a reservation older than its window is free to take again.
 */
import { createHash } from 'node:crypto';
import type { Decider } from '../kernel/decider.js';
import { Conflict, Unprocessable } from '../kernel/errors.js';

/** How long a key answers with its first answer, counted from the request that reserved it. */
export const KEY_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * How long a reservation without an answer holds: the process that made it may have died between
 * its change and the record of its answer. After this a retry takes the key over.
 */
export const LEASE_MS = 60 * 1000;

interface RecordedAnswer {
  status: number;
  content_type: string | null;
  /** The body as sent, sealed under a key derived from SECRETS_KEY and the Idempotency-Key. */
  sealed_body: string;
}

export type IdempotencyEvent =
  | {
      type: 'IdempotencyKeyReserved';
      data: {
        /** Names this attempt: an answer is recorded only by the attempt that still holds the key. */
        attempt: string;
        fingerprint: string;
        method: string;
        /** The route (its pattern, no ids), for auditors. */
        route: string;
        reserved_at: string;
        expires_at: string;
      };
    }
  | { type: 'IdempotentAnswerRecorded'; data: RecordedAnswer & { attempt: string } }
  | { type: 'IdempotencyKeyReleased'; data: { attempt: string; status: number } };

export type IdempotencyCommand =
  | { type: 'Reserve'; data: { attempt: string; fingerprint: string; method: string; route: string } }
  | { type: 'RecordAnswer'; data: RecordedAnswer & { attempt: string } }
  | { type: 'Release'; data: { attempt: string; status: number } };

export type IdempotencyState = {
  attempt: string;
  fingerprint: string;
  reserved_at: string;
  expires_at: string;
  answer: RecordedAnswer | null;
  released: boolean;
} | null;

/** The stream of a key: hashed with its principal, so any key makes a safe name and keys of two principals never meet. */
export const idempotencyStream = (scope: string, key: string) =>
  `idempotency-${createHash('sha256').update(`${scope}\n${key}`).digest('hex')}`;

const later = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

export const idempotencyDecider: Decider<IdempotencyCommand, IdempotencyEvent, IdempotencyState> = {
  initialState: () => null,

  evolve: (state, event) => {
    switch (event.type) {
      case 'IdempotencyKeyReserved': {
        const { attempt, fingerprint, reserved_at, expires_at } = event.data;
        return { attempt, fingerprint, reserved_at, expires_at, answer: null, released: false };
      }
      case 'IdempotentAnswerRecorded': {
        if (state?.attempt !== event.data.attempt) return state;
        const { status, content_type, sealed_body } = event.data;
        return { ...state, answer: { status, content_type, sealed_body } };
      }
      case 'IdempotencyKeyReleased':
        return state?.attempt === event.data.attempt ? { ...state, released: true } : state;
    }
  },

  decide: (command, state, { now }) => {
    switch (command.type) {
      case 'Reserve': {
        const reserve: IdempotencyEvent[] = [
          {
            type: 'IdempotencyKeyReserved',
            data: { ...command.data, reserved_at: now, expires_at: later(now, KEY_WINDOW_MS) },
          },
        ];
        if (!state || state.released || now >= state.expires_at) return reserve;
        if (state.fingerprint !== command.data.fingerprint) throw keyReused();
        // Answered: the caller replays the answer from the state.
        if (state.answer) return [];
        if (now >= later(state.reserved_at, LEASE_MS)) return reserve;
        throw new Conflict(
          'A request with this Idempotency-Key is still being processed; retry once it has been answered',
          'idempotency_key_in_use',
          true,
        );
      }
      case 'RecordAnswer':
      case 'Release': {
        // Taken over (or answered) since: the key's answer is another attempt's to record.
        if (state?.attempt !== command.data.attempt || state.answer || state.released) return [];
        return command.type === 'RecordAnswer'
          ? [{ type: 'IdempotentAnswerRecorded', data: command.data }]
          : [{ type: 'IdempotencyKeyReleased', data: command.data }];
      }
    }
  },
};

const keyReused = () =>
  new Unprocessable(
    'This Idempotency-Key was used for another request (another body, path or team) in the last 24 hours; use a new key for a new request',
    'idempotency_key_reused',
  );
