/** Scrapes `/metrics` and parses it with a Prometheus text-format parser (the prom2json shape). */
import parsePrometheusTextFormat, { type MetricFamily } from 'parse-prometheus-text-format';
import { expect } from 'vitest';
import type { TestApp } from './app.js';

export type Scrape = Map<string, MetricFamily>;

export function parseExposition(text: string): Scrape {
  return new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
}

export async function scrape(
  app: Pick<TestApp['app'], 'inject'>,
  headers: Record<string, string> = {},
): Promise<Scrape> {
  const res = await app.inject({ url: '/metrics', headers });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(res.body);
}

/** The value of the sample of `name` whose labels include `labels` (undefined when there is none). */
export function sample(s: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = s.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  if (!found) return undefined;
  return Number(found.value ?? found.count);
}
