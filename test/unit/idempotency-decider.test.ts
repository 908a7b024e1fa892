import { describe, expect, it } from 'vitest';
import { parseIdempotencyKey } from '../../src/http/idempotency.js';
import {
  type IdempotencyEvent,
  idempotencyDecider,
  KEY_WINDOW_MS,
  LEASE_MS,
} from '../../src/http/idempotency-record.js';
import { Conflict, Unprocessable } from '../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../helpers/decider-spec.js';

const spec = deciderSpec(idempotencyDecider);
const T0 = '2026-01-01T00:00:00.000Z';
const at = (ms: number) => ({ ...userContext(), now: new Date(Date.parse(T0) + ms).toISOString() });

const reserved = (attempt = 'a-1', fingerprint = 'f-1'): IdempotencyEvent => ({
  type: 'IdempotencyKeyReserved',
  data: {
    attempt,
    fingerprint,
    method: 'POST',
    route: '/api/v1/factory',
    reserved_at: T0,
    expires_at: new Date(Date.parse(T0) + KEY_WINDOW_MS).toISOString(),
  },
});
const answered = (attempt = 'a-1'): IdempotencyEvent => ({
  type: 'IdempotentAnswerRecorded',
  data: { attempt, status: 201, content_type: 'application/json', sealed_body: 'v1.x.y.z' },
});
const released = (attempt = 'a-1'): IdempotencyEvent => ({
  type: 'IdempotencyKeyReleased',
  data: { attempt, status: 500 },
});
const reserve = (fingerprint = 'f-1', attempt = 'a-2') => ({
  type: 'Reserve' as const,
  data: { attempt, fingerprint, method: 'POST', route: '/api/v1/factory' },
});

describe('idempotency decider', () => {
  it('reserves a key never used, for 24 hours from now', () =>
    spec
      .given([])
      .when(reserve(), at(5))
      .then([
        {
          type: 'IdempotencyKeyReserved',
          data: { attempt: 'a-2', reserved_at: at(5).now, expires_at: at(5 + KEY_WINDOW_MS).now },
        },
      ]));

  it('answers an answered key with nothing to write: the caller replays the answer', () =>
    spec
      .given([reserved(), answered()])
      .when(reserve(), at(KEY_WINDOW_MS - 1))
      .thenNothingHappened());

  it('refuses the key for another request (422), answered or not', () => {
    spec
      .given([reserved(), answered()])
      .when(reserve('f-2'), at(1000))
      .thenThrows(Unprocessable, /another request/);
    spec
      .given([reserved()])
      .when(reserve('f-2'), at(LEASE_MS + 1))
      .thenThrows(Unprocessable);
  });

  it('refuses a retry while the first request is in flight (409, retryable), and takes the key over after the lease', () => {
    const run = () =>
      idempotencyDecider.decide(reserve(), idempotencyDecider.evolve(null, reserved()), at(LEASE_MS - 1));
    expect(run).toThrow(Conflict);
    try {
      run();
    } catch (error) {
      expect(error).toMatchObject({ status: 409, code: 'idempotency_key_in_use', retryable: true });
    }
    spec
      .given([reserved()])
      .when(reserve(), at(LEASE_MS))
      .then([{ type: 'IdempotencyKeyReserved', data: { attempt: 'a-2', reserved_at: at(LEASE_MS).now } }]);
  });

  it('frees the key after its window, or once released, for any request', () => {
    spec
      .given([reserved(), answered()])
      .when(reserve('f-2'), at(KEY_WINDOW_MS))
      .then([{ type: 'IdempotencyKeyReserved' }]);
    spec
      .given([reserved(), released()])
      .when(reserve('f-2'), at(1))
      .then([{ type: 'IdempotencyKeyReserved' }]);
  });

  it('records an answer only for the attempt that holds the key, once', () => {
    const answer = { status: 201, content_type: null, sealed_body: 'v1.a.b.c' };
    spec
      .given([reserved('a-1')])
      .when({ type: 'RecordAnswer', data: { attempt: 'a-1', ...answer } })
      .then([{ type: 'IdempotentAnswerRecorded' }]);
    // Taken over by a-2 meanwhile: a-1's late answer is not the key's.
    spec
      .given([reserved('a-1'), reserved('a-2')])
      .when({ type: 'RecordAnswer', data: { attempt: 'a-1', ...answer } })
      .thenNothingHappened();
    spec
      .given([reserved('a-1'), answered('a-1')])
      .when({ type: 'Release', data: { attempt: 'a-1', status: 500 } })
      .thenNothingHappened();
  });
});

describe('parseIdempotencyKey', () => {
  it('takes 1-255 visible ASCII characters, bare or as a Structured Fields string', () => {
    expect(parseIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(parseIdempotencyKey('"8e03978e"')).toBe('8e03978e');
    expect(parseIdempotencyKey('"a\\"b\\\\c"')).toBe('a"b\\c');
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
    for (const bad of ['', '""', 'k'.repeat(256), 'a b', 'a, b', '"a", "b"', '"open', '"a"b"', 'é', 'tab\there'])
      expect(parseIdempotencyKey(bad), bad).toBeNull();
  });
});
