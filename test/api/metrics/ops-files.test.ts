/**
 * The Prometheus alert rules and the Grafana dashboard in ops/: every expression parses as PromQL
 * (the Prometheus project's own grammar, @prometheus-io/lezer-promql) and names only metrics the
 * server exposes, so a renamed metric cannot leave an alert that never fires.
 */
import fs from 'node:fs';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startTestApp } from '../../helpers/app.js';

const t = await startTestApp();
afterAll(() => t.close());

/** Metrics Prometheus itself makes, which rules may use. */
const FROM_PROMETHEUS = new Set(['up']);
const HISTOGRAM_SERIES = /_(bucket|count|sum)$/;

/** The metric names `expr` selects; throws when it does not parse. */
function metricsOf(expr: string): string[] {
  const names: string[] = [];
  let error: number | null = null;
  parser.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) error = node.from;
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        names.push(expr.slice(node.from, node.to));
    },
  });
  if (error !== null) throw new Error(`not PromQL at ${error}: ${expr}`);
  return names;
}

async function exposed(): Promise<Set<string>> {
  const families = await t.rt.metrics.registry.getMetricsAsJSON();
  return new Set(families.map((f) => f.name));
}

const known = (names: Set<string>, metric: string) =>
  FROM_PROMETHEUS.has(metric) || names.has(metric) || names.has(metric.replace(HISTOGRAM_SERIES, ''));

describe('ops files', () => {
  it('alert rules: each names its severity and summary, parses, and uses metrics the server exposes', async () => {
    const names = await exposed();
    const rules = YAML.parse(fs.readFileSync('ops/prometheus/shopfloor-alerts.yml', 'utf8')).groups.flatMap(
      (g: { rules: unknown[] }) => g.rules,
    ) as Array<{ alert: string; expr: string; labels: { severity: string }; annotations: { summary: string } }>;
    expect(rules.length).toBeGreaterThanOrEqual(5);
    for (const rule of rules) {
      expect(rule.alert).toMatch(/^Shopfloor[A-Z]\w+$/);
      expect(['warning', 'critical']).toContain(rule.labels.severity);
      expect(rule.annotations.summary).toBeTruthy();
      const used = metricsOf(rule.expr);
      expect(used.length, rule.alert).toBeGreaterThan(0);
      for (const metric of used) expect(known(names, metric), `${rule.alert}: ${metric}`).toBe(true);
    }
  });

  it('the dashboard: every panel query parses and uses metrics the server exposes', async () => {
    const names = await exposed();
    const dashboard = JSON.parse(fs.readFileSync('ops/grafana/shopfloor-dashboard.json', 'utf8'));
    const queries = dashboard.panels.flatMap((p: { targets: Array<{ expr: string }> }) => p.targets.map((q) => q.expr));
    expect(queries.length).toBeGreaterThan(10);
    for (const expr of queries)
      for (const metric of metricsOf(expr.replaceAll('$__rate_interval', '5m').replaceAll('$__range', '1h')))
        expect(known(names, metric), `${expr}: ${metric}`).toBe(true);
  });

  it('tells a broken expression and an unknown metric', async () => {
    expect(() => metricsOf('sum(rate(shopfloor_http_requests_total[5m]')).toThrow(/not PromQL/);
    expect(known(await exposed(), 'shopfloor_no_such_metric')).toBe(false);
  });
});
