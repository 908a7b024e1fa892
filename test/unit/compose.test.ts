/**
 * docker-compose.yml cannot be brought up where the tests run (no Docker engine), so its scaled
 * profile is checked as written: three replicas of one definition on the shared databases and
 * DATA_DIR, and a balancer that names exactly those replicas and checks their readiness.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';

type Service = {
  profiles?: string[];
  build?: string;
  image?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, unknown> | string[];
};
const compose = YAML.parse(fs.readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), {
  merge: true,
}) as { services: Record<string, Service> };
const { services } = compose;
const replicas = Object.keys(services).filter((name) => /^shopfloor-\d+$/.test(name));

describe('docker-compose.yml', () => {
  it('keeps the single shopfloor for a plain `up`, and puts the scaled services in their profile', () => {
    expect(services.shopfloor!.profiles).toBeUndefined();
    expect(services.shopfloor!.ports).toEqual(['8080:8080']);
    expect(replicas).toHaveLength(3);
    for (const name of [...replicas, 'balancer']) expect(services[name]!.profiles).toEqual(['scaled']);
  });

  it('runs three alike replicas on EventStoreDB, the MongoDB replica set and one shared DATA_DIR', () => {
    for (const name of replicas) {
      const replica = services[name]!;
      expect(replica).toEqual(services[replicas[0]!]);
      expect(replica.environment).toMatchObject({
        EVENTSTORE_URL: expect.stringMatching(/^esdb:\/\/eventstore:2113/),
        MONGODB_URL: expect.stringContaining('replicaSet=rs0'),
        PUBLIC_BASE_URL: 'http://localhost:8080',
      });
      expect(replica.volumes).toEqual(services.shopfloor!.volumes);
      expect(replica.ports).toBeUndefined();
    }
  });

  it('balances over exactly those replicas, by their readiness, on the published port', () => {
    const balancer = services.balancer!;
    expect(balancer.image).toMatch(/^caddy:/);
    expect(balancer.ports).toEqual(['8080:8080']);
    const caddyfile = balancer.environment!.CADDYFILE!;
    const upstreams = /reverse_proxy ([^{]+)\{/.exec(caddyfile)![1]!.trim().split(/\s+/);
    expect(upstreams).toEqual(replicas.map((name) => `${name}:8080`));
    expect(caddyfile).toMatch(/health_uri \/readyz/);
    expect(caddyfile).toMatch(/lb_policy round_robin/);
    expect(balancer.depends_on).toEqual(replicas);
  });
});
