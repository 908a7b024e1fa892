/**
 * Recurrences that cost the server nothing much (issue #30). Against the real server: POST
 * /agent/schedules with the recurrences that used to cost the most (no due time until the year
 * 9999, FREQ=SECONDLY from two days back, DTSTART decades back, the largest RRULE accepted), each
 * several times, while a client asks /healthz every few milliseconds: the longest /healthz answer
 * is the longest the event loop stood still. Then, in this process, the scheduler's catch-up after
 * a year of downtime (`dueAt`) for the densest recurrences.
 */
import { dueAt } from '../../commands/schedule/due.js';
import { dueTimes, type Recurrence } from '../../commands/schedule/recurrence.js';
import { QUICK } from '../lib/config.js';
import { fmt, log, now } from '../lib/measure.js';
import { authHeaders, startServer } from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

const ROUNDS = QUICK ? 3 : 20;
const REQUEST_TARGET_MS = 100;
const STALL_TARGET_MS = 50;

const MINUTES = Array.from({ length: 60 }, (_, m) => m).join(',');
const HOURS = Array.from({ length: 24 }, (_, h) => h).join(',');
const EXDATES = Array.from({ length: 100 }, (_, i) => `2026${String(1 + (i % 12)).padStart(2, '0')}01T090000`).join(
  ',',
);

/** The recurrences, by what makes each one costly for plain rrule.js or cron-parser. */
const CASES: Array<[string, Record<string, string>]> = [
  ['cron 30 February', { cron_schedule: '0 0 30 2 *' }],
  ['SECONDLY from 2 days back', { rrule: 'DTSTART:20260101T000000Z\nRRULE:FREQ=SECONDLY;UNTIL=20260102T000000Z' }],
  ['MINUTELY on 30 February', { rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30' }],
  ['HOURLY since 1990', { rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=HOURLY' }],
  [
    'DAILY on 31 April, Berlin',
    { rrule: 'DTSTART;TZID=Europe/Berlin:19900101T090000\nRRULE:FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31' },
  ],
  [
    'DAILY every third day, on 29 February, a Tuesday',
    { rrule: 'DTSTART:19900101T000000Z\nRRULE:FREQ=DAILY;INTERVAL=3;BYDAY=TU;BYMONTH=2;BYMONTHDAY=29' },
  ],
  [
    'YEARLY every minute, last of the year, New York',
    {
      rrule: `DTSTART;TZID=America/New_York:20000101T000000\nRRULE:FREQ=YEARLY;BYHOUR=${HOURS};BYMINUTE=${MINUTES};BYSETPOS=-1`,
    },
  ],
  [
    'WEEKLY with BYSETPOS and 100 EXDATEs, Berlin',
    {
      rrule: `DTSTART;TZID=Europe/Berlin:20000101T090000\nRRULE:FREQ=WEEKLY;INTERVAL=3;BYMONTHDAY=-1,1;BYDAY=MO,SU;BYHOUR=0,9,12;BYMINUTE=15,6,59;BYSETPOS=-1\nEXDATE;TZID=Europe/Berlin:${EXDATES}`,
    },
  ],
];

/** Asks /healthz one after the other until stopped; the longest answer. */
function healthProbe(base: string): { stop(): Promise<number> } {
  let running = true;
  let longest = 0;
  const loop = (async () => {
    while (running) {
      const start = now();
      await fetch(`${base}/healthz`).then((r) => r.arrayBuffer());
      longest = Math.max(longest, now() - start);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return longest;
    },
  };
}

async function requestCases(base: string): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const [name, body] of CASES) {
    const probe = healthProbe(base);
    const latencies: number[] = [];
    const statuses = new Set<number>();
    for (let i = 0; i < ROUNDS; i++) {
      const start = now();
      const res = await fetch(`${base}/api/v1/agent/schedules`, {
        method: 'POST',
        headers: authHeaders,
        body: JSON.stringify({ name: `${name} ${i}`, prompt: 'p', ...body }),
      });
      await res.arrayBuffer();
      latencies.push(now() - start);
      statuses.add(res.status);
    }
    const stall = await probe.stop();
    const slowest = Math.max(...latencies);
    log(`${name}: ${[...statuses].join('/')} slowest ${fmt(slowest, 1)} ms, /healthz at most ${fmt(stall, 1)} ms`);
    const detail = `answered ${[...statuses].join(', ')}; ${ROUNDS} requests`;
    figures.push(
      {
        name: `POST ${name}: slowest answer`,
        value: slowest,
        unit: 'ms',
        detail,
        target: { text: `≤ ${REQUEST_TARGET_MS} ms`, met: slowest <= REQUEST_TARGET_MS },
      },
      {
        name: `POST ${name}: longest /healthz meanwhile`,
        value: stall,
        unit: 'ms',
        target: { text: `≤ ${STALL_TARGET_MS} ms`, met: stall <= STALL_TARGET_MS },
      },
    );
  }
  return figures;
}

/** The scheduler's work for one schedule a year behind: the most recent due time and the missed ones. */
function catchUp(): Figure[] {
  const cases: Array<[string, Recurrence]> = [
    ['cron every minute', { cron: '* * * * *' }],
    ['RRULE every minute, Berlin', { rrule: 'DTSTART;TZID=Europe/Berlin:20200101T000000\nRRULE:FREQ=MINUTELY' }],
    [
      'RRULE every minute of February 29th',
      { rrule: 'DTSTART:20200101T000000Z\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29' },
    ],
  ];
  const since = new Date('2025-03-25T12:00:00Z');
  const at = new Date('2026-03-25T12:34:56Z');
  return cases.map(([name, recurrence]) => {
    let slowest = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const start = now();
      dueAt(dueTimes(recurrence, since), since, at);
      slowest = Math.max(slowest, now() - start);
    }
    log(`catch-up ${name}: slowest ${fmt(slowest, 1)} ms`);
    return {
      name: `scheduler catch-up after a year, ${name}`,
      value: slowest,
      unit: 'ms',
      target: { text: `≤ ${STALL_TARGET_MS} ms`, met: slowest <= STALL_TARGET_MS },
    };
  });
}

const workload: Workload = {
  title: 'Schedules: costly recurrences (issue #30)',
  async run() {
    const server = await startServer(tempDir('schedules'), 'server-schedules');
    try {
      const figures = [...(await requestCases(server.base)), ...catchUp()];
      return {
        figures,
        notes: [
          `Each POST ${ROUNDS} times on a fresh store, the first one included (code not yet optimised by the JIT).`,
          'Refused ones answer 400 (no due time in five years, SECONDLY); the others 201.',
          '/healthz is asked one request after the other (2 ms apart) while the POSTs run: its longest answer bounds how long the event loop stood still.',
        ],
      };
    } finally {
      await server.proc.stop();
    }
  },
};

export default workload;
