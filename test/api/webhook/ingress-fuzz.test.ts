/** Hostile bodies never crash the ingress and get the statuses the spec names. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, type TestApp } from '../../helpers/app.js';
import { deliveryLog, makeHook, postToken, type Hook } from './ingress-helpers.js';

const LIMIT = 262_144;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** A JSON string value padded to exactly `size` bytes. */
const jsonOfSize = (size: number) => JSON.stringify('x'.repeat(size - 2));

/** A fresh webhook every 50 posts, so the delivery rate limit stays out of the way. */
let current: { hook: Hook; used: number } | null = null;
async function hook() {
  if (!current || current.used >= 50) current = { hook: await makeHook(t), used: 0 };
  current.used++;
  return current.hook;
}

describe('fuzzed bodies', () => {
  it('random bytes: 400 when not JSON, 202 when they happen to be; never a 5xx', async () => {
    // Seeded: a failing body is the same on every run.
    for (const bytes of fc.sample(fc.uint8Array({ minLength: 1, maxLength: 2000 }), { seed: 30, numRuns: 60 })) {
      const res = await postToken(t, await hook(), Buffer.from(bytes), { 'content-type': 'application/octet-stream' });
      expect([202, 400], res.body).toContain(res.statusCode);
      if (res.statusCode === 400) expectProblem(res, 400, 'invalid_json');
    }
  });

  it('deep nesting, huge numbers, odd encodings', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const deepObject = `${'{"a":'.repeat(40_000)}1${'}'.repeat(40_000)}`;
    const cases: Array<[string | Buffer, number]> = [
      // Valid JSON, but nested past 64 levels: refused, as reading it back (the delivery log) would fail.
      [deep, 400],
      [deepObject, 400],
      ['['.repeat(64) + ']'.repeat(64), 202],
      ['['.repeat(65) + ']'.repeat(65), 400],
      ['['.repeat(200_000), 400],
      // Numbers JSON.parse reads as ±Infinity (automations would see null): refused (issue #30).
      ['1e999999', 400],
      [`-${'9'.repeat(200_000)}`, 400],
      // Finite, if only as 0 (the nearest double): taken.
      ['{"n": 123456789012345678901234567890.5e-400}', 202],
      ['NaN', 400],
      ['{"a":1}{"b":2}', 400],
      ['\uFEFF{"bom":true}', 400],
      [Buffer.from([0x22, 0xff, 0xfe, 0x22]), 400], // a JSON string holding invalid UTF-8
      ['"\\ud800"', 202], // a lone surrogate escape is valid JSON
      [' \n\t{"spaces":true}\n ', 202],
      ['', 400],
    ];
    for (const [body, status] of cases) {
      const res = await postToken(t, await hook(), body);
      expect(res.statusCode, `${String(body).slice(0, 40)}: ${res.body}`).toBe(status);
    }
  });

  it('a body nested deeper than 64 levels is 400 invalid_json, logged so; the log still reads', async () => {
    const h = await makeHook(t);
    const res = await postToken(t, h, `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`);
    expect(expectProblem(res, 400, 'invalid_json').detail).toBe('a webhook body nests at most 64 levels deep');
    const ok = await postToken(t, h, `${'{"a":'.repeat(63)}[1]${'}'.repeat(63)}`);
    expect(ok.statusCode, ok.body).toBe(202);
    const log = (await deliveryLog(t, h)).deliveries;
    expect(log.map((d) => d.status)).toEqual(['accepted', 'rejected_invalid_json']);
  });

  it('exactly 262,144 bytes is accepted; one byte more is 413 and logged as too large', async () => {
    const h = await makeHook(t);
    const exact = await postToken(t, h, jsonOfSize(LIMIT));
    expect(exact.statusCode, exact.body).toBe(202);
    const over = await postToken(t, h, jsonOfSize(LIMIT + 1));
    expectProblem(over, 413, 'payload_too_large');
    const log = (await deliveryLog(t, h)).deliveries;
    expect(log.map((d) => [d.status, d.size_bytes])).toEqual([
      ['rejected_too_large', LIMIT + 1],
      ['accepted', LIMIT],
    ]);
    expect(log[0]!.label).toBe('Rejected (too large)');
  });

  it('the server keeps answering after all of that', async () => {
    expect((await postToken(t, await makeHook(t), '{"still":"alive"}')).statusCode).toBe(202);
  });
});

describe('streaming limit on a real listening server', () => {
  it('answers 413 to a huge chunked body without reading it all', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const h = await makeHook(t);
    const total = 64 * 1024 * 1024;
    let pulled = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const source = new Readable({
      read() {
        if (pulled >= total) return this.push(null);
        pulled += chunk.length;
        this.push(chunk);
      },
    });
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/webhooks/w/${h.uid}`,
          headers: { authorization: `Bearer ${h.secret}`, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          resolve(res.statusCode!);
          res.resume();
          source.destroy();
          req.destroy();
        },
      );
      req.on('error', (e) => (pulled < total ? undefined : reject(e)));
      source.pipe(req);
    });
    expect(status).toBe(413);
    expect(pulled).toBeLessThan(total);

    // A declared Content-Length over the limit is refused before any byte is read.
    const declared = await fetch(`http://127.0.0.1:${port}/webhooks/w/${h.uid}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.secret}`, 'content-length': String(LIMIT + 1) },
      body: 'x'.repeat(LIMIT + 1),
    });
    expect(declared.status).toBe(413);
    const log = (await deliveryLog(t, h)).deliveries;
    expect(log.map((d) => d.status)).toEqual(['rejected_too_large', 'rejected_too_large']);
  });
});
