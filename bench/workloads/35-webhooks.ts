/**
 * 4. Webhook ingress through the real server: deliveries signed as their providers sign them,
 * spread over many webhooks of all six signature schemes (verification, the per-webhook delivery
 * budget, identity dedup on its reservation stream, the delivery log): all new, then half of them
 * repeats, then badly signed ones, then a flood of badly signed ones at one webhook past its
 * failed-authentication budget; against a bare Fastify hello-world process measured in the same
 * run. Afterwards the delivery log, read through the API, must hold exactly one accepted delivery
 * per identity sent, and the flooded webhook must still accept its real sender.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { MAX_WEBHOOKS_PER_FACTORY } from '../../commands/webhook/webhooks-decider.js';
import { type SignatureScheme, signatureSchemes } from '../../commands/webhook/events.js';
import { loadConfig } from '../../src/config.js';
import type { PageInfo } from '../../src/http/cursor.js';
import { DELIVERIES_PER_MINUTE } from '../../commands/webhook/ingress/ingress.js';
import { params } from '../lib/config.js';
import { fmt, log } from '../lib/measure.js';
import { cachedHistory, copyHistory } from '../lib/seed.js';
import { authHeaders, load, type LoadCase, type LoadResult, startBare, startServer } from '../lib/server.js';
import { tempDir } from '../lib/tmp.js';
import type { Figure, Workload } from '../lib/workload.js';

/** The server's budget of failed authentications per webhook and minute (it inherits this environment). */
const FAILED_AUTH_PER_MINUTE = loadConfig({
  WEBHOOK_FAILED_AUTH_PER_MINUTE: process.env.WEBHOOK_FAILED_AUTH_PER_MINUTE,
}).WEBHOOK_FAILED_AUTH_PER_MINUTE;
/** A repeat resends one of this many latest new deliveries: some still in flight, so they race for the reservation. */
const RECENT = 100;

interface Hook {
  uid: string;
  factory: string;
  scheme: SignatureScheme;
  secret: string;
  /** Signs the badly signed case: the right shape, the wrong key. */
  wrongSecret: string;
  /** Requests sent to it, to show how much of its budget a case used. */
  sent: number;
}

interface Delivery {
  hook: Hook;
  /** The provider's delivery id; also in the body, whose hash is the identity when the provider sends no id (Stripe). */
  id: string;
  body: string;
}

/** The deliveries of one accepted case: identities sent, and those not yet answered 202. */
interface Tally {
  identities: number;
  unanswered: Map<string, Delivery>;
}

const newTally = (): Tally => ({ identities: 0, unanswered: new Map() });

const secretOf = (scheme: SignatureScheme) =>
  scheme === 'standard_webhooks'
    ? `whsec_${randomBytes(24).toString('base64')}`
    : `whsec_${randomBytes(24).toString('hex')}`;

const hmac = (algorithm: 'sha256' | 'sha1', key: string, data: string) =>
  createHmac(algorithm, key).update(data).digest('hex');

const standardSigners = new Map<string, Webhook>();
const standardSigner = (secret: string) =>
  standardSigners.get(secret) ?? standardSigners.set(secret, new Webhook(secret)).get(secret)!;

/** The headers a provider sends with `body`, signed now (a resend is signed anew, as providers retry). */
function signed(scheme: SignatureScheme, secret: string, id: string, body: string): Record<string, string> {
  const at = Math.floor(Date.now() / 1000);
  const json = { 'content-type': 'application/json' };
  switch (scheme) {
    case 'standard_webhooks':
      return {
        ...json,
        'webhook-id': id,
        'webhook-timestamp': String(at),
        'webhook-signature': standardSigner(secret).sign(id, new Date(at * 1000), body),
      };
    case 'stripe':
      return { ...json, 'stripe-signature': `t=${at},v1=${hmac('sha256', secret, `${at}.${body}`)}` };
    case 'github':
      return {
        ...json,
        'x-github-event': 'issues',
        'x-github-delivery': id,
        'x-hub-signature-256': `sha256=${hmac('sha256', secret, body)}`,
      };
    case 'sentry':
      return {
        ...json,
        'sentry-hook-resource': 'issue',
        'sentry-hook-timestamp': String(at),
        'request-id': id,
        'sentry-hook-signature': hmac('sha256', secret, body),
      };
    case 'pagerduty':
      return { ...json, 'x-webhook-id': id, 'x-pagerduty-signature': `v1=${hmac('sha256', secret, body)}` };
    case 'vercel':
      return { ...json, 'x-vercel-id': id, 'x-vercel-signature': hmac('sha1', secret, body) };
  }
}

/** About 1 KB of JSON, an issue event as trackers send them; unique through its id. */
const payload = (id: string, n: number) =>
  JSON.stringify({
    id,
    type: 'issue.opened',
    created_at: new Date().toISOString(),
    data: {
      number: n,
      title: `Checkout fails with a 502 when the cart holds more than ${n % 50} items`,
      body: 'Steps to reproduce: add the items, open the cart, press pay. Expected: the order is placed. Actual: a 502 from the payment gateway after 30 s; the gateway log shows the request never arrived. '.repeat(
        3,
      ),
      labels: ['bug', 'checkout', 'p1'],
      repository: { full_name: 'acme/shop', default_branch: 'main' },
      sender: { login: 'octo-reporter', type: 'User' },
    },
  });

async function post(base: string, url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(base + url, { method: 'POST', headers: authHeaders, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** `count` webhooks through the API, 20 to a factory, the schemes in turn; factories in parallel. */
async function createHooks(base: string, factories: string[], count: number): Promise<Hook[]> {
  const hooks: Hook[] = [];
  const jobs = factories.map((factory, f) => async () => {
    for (let i = f * MAX_WEBHOOKS_PER_FACTORY; i < Math.min(count, (f + 1) * MAX_WEBHOOKS_PER_FACTORY); i++) {
      const scheme = signatureSchemes[i % signatureSchemes.length]!;
      const secret = secretOf(scheme);
      const hook = await post(base, `/api/v1/factory/${factory}/webhooks`, {
        name: `${scheme} ${i}`,
        authMode: 'signature',
        signatureScheme: scheme,
        secret,
      });
      hooks[i] = { uid: String(hook.uid), factory, scheme, secret, wrongSecret: secretOf(scheme), sent: 0 };
    }
  });
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let job = jobs.shift(); job; job = jobs.shift()) await job();
    }),
  );
  return hooks;
}

/** New deliveries round-robin over `hooks`; a `repeat` share of the requests resends a recent one instead. */
function deliveries(hooks: Hook[], repeat: number, tally: Tally): LoadCase {
  const recent: Delivery[] = [];
  let n = 0;
  return {
    method: 'POST',
    path: '/webhooks/w/{uid}',
    vary: (context) => {
      let d = recent.length && Math.random() < repeat ? recent[Math.floor(Math.random() * recent.length)] : undefined;
      if (!d) {
        const id = randomUUID();
        d = { hook: hooks[n++ % hooks.length]!, id, body: payload(id, n) };
        tally.identities += 1;
        tally.unanswered.set(id, d);
        if (recent.push(d) > RECENT) recent.shift();
      }
      d.hook.sent += 1;
      context.delivery = d;
      return {
        path: `/webhooks/w/${d.hook.uid}`,
        body: d.body,
        headers: signed(d.hook.scheme, d.hook.secret, d.id, d.body),
      };
    },
    // 202 answers both Accepted and Duplicate: either way the identity is in the log.
    onResponse: (status, context) => {
      if (status === 202) tally.unanswered.delete((context.delivery as Delivery).id);
    },
  };
}

/** New deliveries round-robin over `hooks`, each signed with a key that is not the webhook's. */
function badlySigned(hooks: Hook[]): LoadCase {
  let n = 0;
  return {
    method: 'POST',
    path: '/webhooks/w/{uid}',
    expect: 401,
    vary: () => {
      const hook = hooks[n++ % hooks.length]!;
      const id = randomUUID();
      const body = payload(id, n);
      hook.sent += 1;
      return { path: `/webhooks/w/${hook.uid}`, body, headers: signed(hook.scheme, hook.wrongSecret, id, body) };
    },
  };
}

/** Sends one delivery to `hook` as its sender (`secret`) or a stranger (`wrongSecret`); returns the status. */
async function sendOne(base: string, hook: Hook, key: 'secret' | 'wrongSecret'): Promise<number> {
  const id = randomUUID();
  const body = payload(id, 0);
  const res = await fetch(`${base}/webhooks/w/${hook.uid}`, {
    method: 'POST',
    headers: signed(hook.scheme, hook[key], id, body),
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * A stranger's flood at one webhook: its failed-authentication budget is spent first (401s), then
 * the flood is answered 429 and counted, not logged; afterwards its real sender is still accepted.
 */
async function flood(base: string, hook: Hook, seconds: number) {
  for (let i = 0; i < FAILED_AUTH_PER_MINUTE; i++) {
    const status = await sendOne(base, hook, 'wrongSecret');
    if (status !== 401) throw new Error(`spending the failed-authentication budget: ${status}`);
  }
  const result = await load(base, { ...badlySigned([hook]), expect: 429 }, seconds);
  const sender = await sendOne(base, hook, 'secret');
  const url = `/api/v1/factory/${hook.factory}/webhooks/${hook.uid}/deliveries?limit=100`;
  const res = await fetch(base + url, { headers: authHeaders });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  const entries = ((await res.json()) as { deliveries: Array<{ status: string; count?: number }> }).deliveries;
  const counted = entries.reduce((n, d) => n + (d.count ?? 0), 0);
  return { result, sender, entries: entries.length, counted };
}

/** Resends, once, each delivery whose answer was cut off when a run stopped, as its provider would; returns how many. */
async function resendUnanswered(base: string, tally: Tally): Promise<number> {
  const resent = tally.unanswered.size;
  for (const d of [...tally.unanswered.values()]) {
    const res = await fetch(`${base}/webhooks/w/${d.hook.uid}`, {
      method: 'POST',
      headers: signed(d.hook.scheme, d.hook.secret, d.id, d.body),
      body: d.body,
    });
    await res.arrayBuffer();
    if (res.status === 202) tally.unanswered.delete(d.id);
  }
  return resent;
}

/** Entries of the webhooks' delivery logs by status, paged through GET …/webhooks/{uid}/deliveries. */
async function deliveryLog(base: string, hooks: Hook[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const hook of hooks) {
    let cursor = '';
    do {
      const url = `/api/v1/factory/${hook.factory}/webhooks/${hook.uid}/deliveries?limit=100${cursor}`;
      const res = await fetch(base + url, { headers: authHeaders });
      if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
      const page = (await res.json()) as { deliveries: Array<{ status: string }>; page_info: PageInfo };
      for (const d of page.deliveries) counts[d.status] = (counts[d.status] ?? 0) + 1;
      cursor = page.page_info.next_cursor ? `&cursor=${page.page_info.next_cursor}` : '';
    } while (cursor);
  }
  return counts;
}

const mostSent = (hooks: Hook[]) => Math.max(...hooks.map((h) => h.sent));

const workload: Workload = {
  title: '4. Webhook ingress',
  async run() {
    const n = params.webhooksPerCase;
    // The rejection case gets four times the webhooks: the failed-authentication budget is half the
    // delivery budget, and a rejection is answered about three times as fast as a delivery (with
    // twice the webhooks, 3,000 rejections/s spent a budget in 10 s and drew 429s).
    const hookCount = 6 * n + 1;
    const { file, info } = await cachedHistory('one-team', Math.ceil(hookCount / MAX_WEBHOOKS_PER_FACTORY));
    const db = new Database(file, { readonly: true });
    const factories = db
      .prepare(`SELECT json_extract(data, '$.uid') FROM events WHERE type = 'FactoryCreated' ORDER BY position`)
      .pluck()
      .all() as string[];
    db.close();
    const dir = tempDir('webhooks');
    copyHistory(file, dir);
    const server = await startServer(dir, 'server-webhooks');
    const bare = await startBare();
    const seconds = params.webhookSeconds;
    const tallies = { unique: newTally(), repeats: newTally() };
    try {
      log(`creating ${fmt(hookCount)} webhooks in ${fmt(factories.length)} factories`);
      const hooks = await createHooks(server.base, factories, hookCount);
      const sets = { unique: hooks.slice(0, n), repeats: hooks.slice(n, 2 * n), bad: hooks.slice(2 * n, 6 * n) };
      const hello: LoadCase = { method: 'GET', path: '/' };
      const bareBefore = await load(bare.base, hello, seconds);
      const unique = await load(server.base, deliveries(sets.unique, 0, tallies.unique), seconds);
      const uniqueResent = await resendUnanswered(server.base, tallies.unique);
      const repeats = await load(server.base, deliveries(sets.repeats, 0.5, tallies.repeats), seconds);
      const repeatsResent = await resendUnanswered(server.base, tallies.repeats);
      const bad = await load(server.base, badlySigned(sets.bad), seconds);
      const flooded = await flood(server.base, hooks[6 * n]!, seconds);
      const bareAfter = await load(bare.base, hello, seconds);
      const logs = {
        unique: await deliveryLog(server.base, sets.unique),
        repeats: await deliveryLog(server.base, sets.repeats),
        bad: await deliveryLog(server.base, sets.bad),
      };

      const ceiling = { name: 'bare Fastify hello world', value: (bareBefore.rps + bareAfter.rps) / 2 };
      const lat = (r: LoadResult) =>
        `p50 ${r.p50} ms, p99 ${r.p99} ms${r.failures ? `, **${fmt(r.failures)} failed: ${r.failureDetail}**` : ''}`;
      const identities = tallies.unique.identities + tallies.repeats.identities;
      const accepted = (logs.unique.accepted ?? 0) + (logs.repeats.accepted ?? 0);
      const unanswered = tallies.unique.unanswered.size + tallies.repeats.unanswered.size;
      const figures: Figure[] = [
        {
          name: 'Bare Fastify hello world (before the cases)',
          value: bareBefore.rps,
          unit: 'req/s',
          detail: lat(bareBefore),
        },
        {
          name: 'Bare Fastify hello world (after the cases)',
          value: bareAfter.rps,
          unit: 'req/s',
          detail: lat(bareAfter),
        },
        {
          name: `Signed deliveries, each new, over ${fmt(n)} webhooks of the six signature schemes`,
          value: unique.rps,
          unit: 'deliveries/s',
          detail: lat(unique),
          ceiling,
        },
        {
          name: `Signed deliveries over ${fmt(n)} other webhooks, half of them repeating a recent delivery (202, logged Duplicate)`,
          value: repeats.rps,
          unit: 'deliveries/s',
          detail: lat(repeats),
          ceiling,
        },
        {
          name: `Badly signed deliveries over ${fmt(sets.bad.length)} other webhooks (401)`,
          value: bad.rps,
          unit: 'rejections/s',
          detail: lat(bad),
          ceiling,
        },
        {
          name: `A stranger's flood of badly signed deliveries at one webhook past its ${FAILED_AUTH_PER_MINUTE} failed authentications a minute (429, counted)`,
          value: flooded.result.rps,
          unit: 'rejections/s',
          detail: lat(flooded.result),
          ceiling,
        },
        {
          name: "Flood check: the flooded webhook's real sender afterwards, and its delivery log",
          value: flooded.entries,
          unit: 'log entries',
          detail:
            `the real sender's delivery answered ${flooded.sender === 202 ? '202' : `**${flooded.sender}**`}; ` +
            `${fmt(FAILED_AUTH_PER_MINUTE)} refusals logged one by one, ${fmt(flooded.counted)} counted in one entry (the flood and its warm-up)`,
        },
        {
          name: 'Dedup under load: deliveries logged Accepted (delivery log through the API), against the distinct identities sent',
          value: accepted,
          unit: 'accepted',
          detail:
            `${fmt(identities)} identities sent, ${accepted === identities && unanswered === 0 ? 'equal' : `**not equal${unanswered ? `: ${fmt(unanswered)} never answered 202` : ''}**`}; ` +
            `${fmt((logs.unique.duplicate ?? 0) + (logs.repeats.duplicate ?? 0))} logged Duplicate; ${fmt(uniqueResent + repeatsResent)} resent after their run`,
        },
      ];
      return {
        figures,
        notes: [
          `Server: \`node --import tsx src/main.ts\` (LOG_LEVEL=${params.logLevel}) on a \`one-team\` history of ${fmt(factories.length)} factories ` +
            `(${fmt(info.events)} events); ${fmt(hookCount)} webhooks created through the API, ${MAX_WEBHOOKS_PER_FACTORY} to a factory (the spec's limit), ` +
            `authMode signature, the six schemes in turn (${signatureSchemes.join(', ')}). Each case has webhooks of its own, as both 429 budgets are per webhook ` +
            `(there is no global one): ${DELIVERIES_PER_MINUTE} deliveries a minute, and ${FAILED_AUTH_PER_MINUTE} failed authentications a minute, ` +
            `past which a failed signature is 429 and counted (a good one still passes). The most any webhook got: ${mostSent(sets.unique)} requests in the all-new case, ` +
            `${mostSent(sets.repeats)} in the repeat case, ${mostSent(sets.bad)} in the rejection case; a 429 would show as a failure.`,
          `Each request is signed as its provider does, at send time, with node:crypto HMACs (GitHub's X-Hub-Signature-256, Stripe-Signature over ` +
            `\`t.body\`, Sentry, PagerDuty v1, Vercel's SHA-1) and the standardwebhooks library; each carries the provider's delivery id where it has one ` +
            `(the identity; Stripe sends none, so its identity is the body's hash), in a ~1 KB JSON body. New deliveries go round-robin over the case's webhooks; ` +
            `a repeat resends one of the ${RECENT} latest new deliveries, re-signed as a provider's retry (some of them still in flight, racing for the reservation). ` +
            `The rejection case signs with a key of the right shape that is not the webhook's; each rejection is logged too (${fmt(logs.bad.rejected_auth ?? 0)} entries).`,
          `No automation is attached: the automation reactor still reads each accepted delivery's factory, webhooks and automations in the server process, and ` +
            `starts nothing. So a delivery costs what every delivery costs: the webhook's state and secret, the signature, the rate budget, the body written as a blob, ` +
            `the reservation stream appended, and the answer once the delivery log has projected it.`,
          `Load: autocannon in the benchmark process, ${params.httpConnections} connections, ${seconds} s per case after a short warm-up (whose deliveries count in ` +
            `the log too). Dedup check: a delivery whose answer was cut off when a run stopped is resent once after it, as its provider would; then every identity ` +
            `has been answered 202, so the logs must hold exactly one Accepted entry per identity (${fmt(tallies.unique.identities)} in the all-new case, ` +
            `logged ${fmt(logs.unique.accepted ?? 0)}; ${fmt(tallies.repeats.identities)} in the repeat case, logged ${fmt(logs.repeats.accepted ?? 0)}).`,
        ],
      };
    } finally {
      await server.proc.stop();
      await bare.proc.stop();
    }
  },
};
export default workload;
