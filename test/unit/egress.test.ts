/** The SSRF guard: only public unicast unless allowed, checked when connecting, redirects never followed. */
import { describe, expect, it } from 'vitest';
import { addressAllowed, EgressRefused, guardedPost, parseAllowedRanges, urlProblem } from '../../src/net/egress.js';
import { startReceiver } from '../helpers/receiver.js';

describe('egress guard', () => {
  it('allows public unicast only, unless a range is allowed', () => {
    const none = parseAllowedRanges('');
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '100.64.0.1',
    ])
      expect(addressAllowed(a, none), a).toBe(false);
    for (const a of ['93.184.216.34', '2606:4700::1111']) expect(addressAllowed(a, none), a).toBe(true);
    const loopback = parseAllowedRanges('127.0.0.0/8, ::1');
    expect(addressAllowed('127.0.0.1', loopback)).toBe(true);
    expect(addressAllowed('::1', loopback)).toBe(true);
    expect(addressAllowed('10.0.0.1', loopback)).toBe(false);
    expect(() => parseAllowedRanges('nonsense')).toThrow(/OUTBOUND_ALLOWED_RANGES/);
  });

  it('refuses names that resolve to refused addresses, when registering and when connecting', async () => {
    const receiver = await startReceiver();
    try {
      expect(await urlProblem(`http://localhost:${receiver.port}/`, [])).toMatch(/may not reach/);
      expect(await urlProblem('gopher://example.com/', [])).toMatch(/http/);
      await expect(
        guardedPost(`http://localhost:${receiver.port}/`, '{}', {}, { allowed: [], timeoutMs: 2000 }),
      ).rejects.toThrow(EgressRefused);
      await expect(
        guardedPost(`http://127.0.0.1:${receiver.port}/`, '{}', {}, { allowed: [], timeoutMs: 2000 }),
      ).rejects.toThrow(EgressRefused);
      expect(receiver.received).toHaveLength(0);
      const allowed = parseAllowedRanges('127.0.0.0/8,::1');
      expect(
        (await guardedPost(`http://localhost:${receiver.port}/`, '{}', {}, { allowed, timeoutMs: 2000 })).status,
      ).toBe(204);
    } finally {
      await receiver.close();
    }
  });

  it('answers a redirect as it is, never following it', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver(() => ({ status: 307, headers: { location: target.url } }));
    try {
      const allowed = parseAllowedRanges('127.0.0.0/8');
      expect((await guardedPost(redirecting.url, '{}', {}, { allowed, timeoutMs: 2000 })).status).toBe(307);
      expect(target.received).toHaveLength(0);
    } finally {
      await target.close();
      await redirecting.close();
    }
  });
});
