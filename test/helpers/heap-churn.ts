/**
 * A child process for test/unit/heap.test.ts: keeps about 60 MiB of small objects alive while
 * making ten times as much garbage, as a catch-up does, and prints the largest heap V8 committed
 * meanwhile (MiB). With `bound` it first calls the server's boundHeapGrowth.
 */
import v8 from 'node:v8';
import { boundHeapGrowth } from '../../src/heap.js';

if (process.argv[2] === 'bound') boundHeapGrowth();
const alive: object[] = [];
for (let i = 0; i < 400_000; i++) alive.push({ id: `doc-${i}`, n: i, tags: ['a', 'b'] });
let peak = 0;
let last: object[] = [];
for (let round = 0; round < 400; round++) {
  last = [];
  for (let i = 0; i < 20_000; i++) last.push({ id: `garbage-${round}-${i}`, n: i, pair: [i, i + 1] });
  peak = Math.max(peak, v8.getHeapStatistics().total_heap_size);
}
process.stdout.write(JSON.stringify({ peakMiB: peak / 2 ** 20, alive: alive.length, last: last.length }));
