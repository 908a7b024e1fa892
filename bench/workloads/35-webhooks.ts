/**
 * 4. Webhook ingress through the real server: signed deliveries spread over many webhooks
 * (signature verification, the per-webhook rate budget, identity dedup on its reservation
 * stream), against a bare Fastify hello-world process measured in the same run. Afterwards the
 * event log is checked: no delivery identity may have been accepted twice.
 */
import { createHmac } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { DELIVERIES_PER_MINUTE } from '../../src/webhooks/ingress.js';
import { params } from '../lib/config.js';
import { fmt, log } from '../lib/measure.js';
import { cachedHistory, copyHistory } from '../lib/seed.js';
import { authHeaders, load, type LoadCase, type LoadResult, startBare, startServer } from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

/** The spec's limit of webhooks per factory. */
const WEBHOOKS_PER_FACTORY = 20;

interface Hook {
  uid: string;
  scheme: 'github' | 'standard_webhooks';
  secret: string;
  /** The last delivery sent, to send again as a duplicate. */
  last: { body: string; headers: Record<string, string> } | null;
}

const json = { 'content-type': 'application/json' };

/** A delivery as its provider signs it; `id` is the provider's delivery id (the identity). */
function signed(hook: Hook, id: string, body: string): Record<string, string> {
  if (hook.scheme === 'github') {
    const signature = `sha256=${createHmac('sha256', hook.secret).update(body).digest('hex')}`;
    return { ...json, 'x-github-event': 'push', 'x-github-delivery': id, 'x-hub-signature-256': signature };
  }
  const at = new Date();
  return {
    ...json,
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(hook.secret).sign(id, at, body),
  };
}

async function post(base: string, url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(base + url, { method: 'POST', headers: authHeaders, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** `count` webhooks, 20 to a factory, alternating GitHub and Standard Webhooks signatures. */
async function createHooks(base: string, count: number): Promise<Hook[]> {
  const hooks: Hook[] = [];
  for (let f = 0; hooks.length < count; f++) {
    const factory = await post(base, '/api/v1/factory', { name: `Webhook factory ${f}` });
    for (let i = 0; i < WEBHOOKS_PER_FACTORY && hooks.length < count; i++) {
      const scheme = hooks.length % 2 ? 'standard_webhooks' : 'github';
      const secret = scheme === 'github' ? `gh-secret-${f}-${i}` : `whsec_${Buffer.from(`bench secret ${f} ${i}`).toString('base64')}`;
      const hook = await post(base, `/api/v1/factory/${factory.uid}/webhooks`, { name: `hook ${i}`, authMode: 'signature', signatureScheme: scheme, secret });
      hooks.push({ uid: String(hook.uid), scheme, secret, last: null });
    }
  }
  return hooks;
}

/** Deliveries round-robin over `hooks`; with `repeat`, that share of them resends the hook's last one. */
function deliveries(hooks: Hook[], repeat: number, sent: Set<string>): LoadCase {
  let n = 0;
  const next = () => {
    const hook = hooks[n % hooks.length]!;
    n += 1;
    if (hook.last && Math.random() < repeat) return { path: `/webhooks/w/${hook.uid}`, ...hook.last };
    const id = `bench-${hook.uid.slice(0, 8)}-${n}`;
    const body = JSON.stringify({ action: 'opened', number: n, repository: { full_name: 'acme/shop' }, sender: { login: 'bench' } });
    hook.last = { body, headers: signed(hook, id, body) };
    sent.add(`${hook.uid}:${id}`);
    return { path: `/webhooks/w/${hook.uid}`, ...hook.last };
  };
  return { method: 'POST', path: `/webhooks/w/${hooks[0]!.uid}`, vary: next };
}

const workload: Workload = {
  title: '4. Webhook ingress',
  async run() {
    const { file } = await cachedHistory('mixed', 20_000);
    const dir = tempDir('webhooks');
    copyHistory(file, dir);
    const server = await startServer(dir, 'server-webhooks');
    const bare = await startBare();
    const perCase = params.webhooksPerCase;
    const uniqueSent = new Set<string>();
    const repeatSent = new Set<string>();
    let results: { bareBefore: LoadResult; unique: LoadResult; repeats: LoadResult; bareAfter: LoadResult };
    try {
      log(`creating ${fmt(2 * perCase)} webhooks`);
      const hooks = await createHooks(server.base, 2 * perCase);
      // Each case has webhooks of its own: a webhook takes 60 deliveries a minute.
      const hello: LoadCase = { method: 'GET', path: '/' };
      const bareBefore = await load(bare.base, hello);
      const unique = await load(server.base, deliveries(hooks.slice(0, perCase), 0, uniqueSent));
      const repeats = await load(server.base, deliveries(hooks.slice(perCase), 0.5, repeatSent));
      const bareAfter = await load(bare.base, hello);
      results = { bareBefore, unique, repeats, bareAfter };
    } finally {
      await server.proc.stop();
      await bare.proc.stop();
    }

    // What the log says happened, read after the server stopped.
    const db = new Database(path.join(dir, 'events.db'), { readonly: true });
    const counts = Object.fromEntries(
      (db.prepare(`SELECT type, count(*) AS n FROM events WHERE type LIKE 'Delivery%' GROUP BY type`).all() as Array<{ type: string; n: number }>).map((r) => [r.type, r.n]),
    ) as Record<string, number>;
    const acceptedTwice = db
      .prepare(`SELECT count(*) FROM (SELECT stream FROM events WHERE type = 'DeliveryAccepted' GROUP BY stream HAVING count(*) > 1)`)
      .pluck()
      .get() as number;
    db.close();
    const accepted = counts.DeliveryAccepted ?? 0;
    const identities = uniqueSent.size + repeatSent.size;

    const { bareBefore, unique, repeats, bareAfter } = results;
    const ceiling = { name: 'bare Fastify hello world', value: (bareBefore.rps + bareAfter.rps) / 2 };
    const lat = (r: LoadResult) => `p50 ${r.p50} ms, p99 ${r.p99} ms` + (r.failures ? `, **${fmt(r.failures)} failed: ${r.failureDetail}**` : '');
    const figures: Figure[] = [
      { name: 'Bare Fastify hello world (before the cases)', value: bareBefore.rps, unit: 'req/s', detail: lat(bareBefore) },
      { name: 'Bare Fastify hello world (after the cases)', value: bareAfter.rps, unit: 'req/s', detail: lat(bareAfter) },
      {
        name: `Signed deliveries, each new, over ${fmt(perCase)} webhooks (half GitHub HMAC-SHA256, half Standard Webhooks)`,
        value: unique.rps,
        unit: 'deliveries/s',
        detail: lat(unique),
        ceiling,
      },
      {
        name: `Signed deliveries over ${fmt(perCase)} other webhooks, half of them repeating the webhook's previous delivery (202 Duplicate)`,
        value: repeats.rps,
        unit: 'deliveries/s',
        detail: lat(repeats),
        ceiling,
      },
      {
        name: 'Dedup under load: deliveries accepted, against the distinct identities sent',
        value: accepted,
        unit: 'accepted',
        detail:
          `${fmt(identities)} distinct identities sent (a few of them in requests cut off when a run ends), ` +
          `${fmt(counts.DeliveryDuplicated ?? 0)} duplicates recorded, ${fmt(counts.DeliveryRejected ?? 0)} rejected; identities accepted twice: ${acceptedTwice}`,
        target: { text: 'no identity accepted twice, none accepted beyond those sent', met: acceptedTwice === 0 && accepted <= identities },
      },
    ];
    return {
      figures,
      notes: [
        `Server: \`node --import tsx src/main.ts\` (LOG_LEVEL=${params.logLevel}) on a small mixed history; ${fmt(2 * perCase)} webhooks ` +
          `created through the API, ${WEBHOOKS_PER_FACTORY} to a factory (the spec's limit), with authMode signature. No automation is attached, ` +
          `so a delivery ends with its reservation stream written and the delivery log projected (what every delivery costs).`,
        `Each request is signed as its provider does (node:crypto HMAC for GitHub's X-Hub-Signature-256, the standardwebhooks library for ` +
          `Standard Webhooks) and carries the provider's delivery id, which is the delivery's identity. Deliveries go round-robin over ` +
          `the case's webhooks; each webhook takes ${DELIVERIES_PER_MINUTE} a minute, so a case spreads over enough of them to stay under that budget (a 429 would show as a failure).`,
        `Load: autocannon in the benchmark process, ${params.httpConnections} connections, ${params.httpSeconds} s per case after a short warm-up; the warm-up's deliveries count in the log too.`,
      ],
    };
  },
};
export default workload;
