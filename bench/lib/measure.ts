/** Timing, number formatting and small statistics. */

export const now = (): number => performance.now();

/** Whether an answer has the status a case expects: `expect` if given, else any 2xx. */
export const statusExpected = (status: number, expect?: number): boolean =>
  expect ? status === expect : status >= 200 && status < 300;

/** Runs `fn` and returns its result with the wall time in milliseconds. */
export async function timed<T>(fn: () => Promise<T> | T): Promise<{ result: T; ms: number }> {
  const start = now();
  const result = await fn();
  return { result, ms: now() - start };
}

export const perSecond = (count: number, ms: number): number => (ms > 0 ? (count * 1000) / ms : 0);

/** 123456.7 → "123,457"; small values keep a few significant digits. */
export function fmt(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return String(n);
  if (digits === 0 && Math.abs(n) < 10 && n !== Math.trunc(n)) return n.toPrecision(3);
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export const pct = (ratio: number): string =>
  Number.isFinite(ratio) ? `${(ratio * 100).toFixed(ratio < 0.1 ? 1 : 0)}%` : '—';

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

/** Latencies (ms) of individual operations → p50 / p99 / max. */
export function latencySummary(samples: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? NaN };
}

export const log = (message: string): void => {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
};
