import { describe, expect, it } from 'vitest';
import { oneAtATime } from '../../src/kernel/per-key-queue.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('oneAtATime', () => {
  it('runs the work of one key one at a time, in the order given', async () => {
    const inTurn = oneAtATime();
    const log: string[] = [];
    let running = 0;
    const work = (name: string) => async () => {
      running += 1;
      expect(running).toBe(1);
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
      running -= 1;
      return name;
    };
    expect(await Promise.all(['a', 'b', 'c'].map((name) => inTurn('k', work(name))))).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
  });

  it('gives a failure to its own caller only; the next work still runs', async () => {
    const inTurn = oneAtATime();
    const failed = inTurn('k', async () => {
      await tick();
      throw new Error('boom');
    });
    const next = inTurn('k', async () => 'ran');
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('ran');
  });

  it('runs the work of different keys side by side', async () => {
    const inTurn = oneAtATime();
    let release!: () => void;
    const held = inTurn('a', () => new Promise<string>((resolve) => (release = () => resolve('a'))));
    expect(await inTurn('b', async () => 'b')).toBe('b');
    release();
    expect(await held).toBe('a');
  });

  it('starts the work at once when nothing of its key is waiting', () => {
    const inTurn = oneAtATime();
    let started = false;
    void inTurn('k', async () => {
      started = true;
    });
    expect(started).toBe(true);
  });
});
