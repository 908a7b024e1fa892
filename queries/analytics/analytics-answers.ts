/**
 * What the metrics, cost and pull-request routes share: the factory they answer for, a cache of
 * their answers, the order of grouped figures, CSV for spreadsheets, dollars.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { z } from 'zod';
import { compileAnswerEncoder, encodeAnswer } from '../../src/http/serializer.js';
import { visibleFactory, factoriesProjection, type FactoryDoc } from '../../commands/factory/public.js';
import type { Dollars } from '../../commands/analytics/public.js';
import type { Usd } from '../../commands/analytics/events.js';
import type { AnyProjection } from '../../src/projector/projection.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { factoryRollupsProjection, UNKNOWN_KEY } from '../../projections/analytics/factory-rollups.js';
import { pullRequestsProjection } from '../../projections/analytics/pull-requests.js';
import { identitiesProjection } from '../../commands/identity/public.js';
import { usersProjection } from '../../commands/user/public.js';
import { modelsProjection } from '../../commands/model/public.js';
import { teamMembersProjection } from '../../commands/team/public.js';

const CACHED_ANSWERS = 1000;

/** The read models an answer is made of: any change of them and cached answers are made again. */
const SOURCES: AnyProjection[] = [
  factoryRollupsProjection,
  pullRequestsProjection,
  factoriesProjection,
  identitiesProjection,
  usersProjection,
  modelsProjection,
  teamMembersProjection,
];

/**
 * Answers kept until one of the read models they are made of changes (this process's projector
 * counts every change): a dashboard asking again, or many people looking at one factory, reads
 * nothing twice, and a year of figures is summed once per change, not once per request. An answer
 * is kept as made, and as its JSON (encoded by the route's response schema once, `as_of` aside),
 * so a cached answer costs no encoding: `as_of`, the moment of the request, is put in front.
 */
export function answerCache(rt: Runtime) {
  interface Kept {
    answer: { team_uid: string };
    json?: string;
  }
  const factories = rt.readModel(factoriesProjection);
  const cache = new LRUCache<string, Promise<Kept>>({ max: CACHED_ANSWERS });
  const generation = () => SOURCES.reduce((sum, p) => sum + rt.projector.changes(p), 0);
  const strict = rt.config.RESPONSE_SCHEMAS === 'strict';
  let cachedAt = generation();
  // Each route's encoder of its answers without `as_of`, made once (a zod schema, and a compiled
  // serializer where its JSON Schema says all: an answer never asked before costs no compiling).
  const encoders = new Map<z.ZodObject, (answer: object, key: string) => string>();
  const encoderOf = (schema: z.ZodObject) => {
    let encode = encoders.get(schema);
    if (!encode) {
      const rest = schema.omit({ as_of: true });
      const fast = strict ? null : compileAnswerEncoder(rest);
      encode = fast ? (answer) => fast(answer) : (answer, key) => encodeAnswer(rest, answer, strict, 'GET', key);
      encoders.set(schema, encode);
    }
    return encode;
  };

  /**
   * The answer about the factory `uid` kept under `key`, else made by `make` from the factory (a
   * factory the caller may not see is a 404). A kept answer names its team: a caller outside it
   * gets the same 404, without the factory being read again (a change of any factory clears them).
   */
  async function kept(req: FastifyRequest, uid: string, key: string, make: Make<object>): Promise<Kept> {
    const now = generation();
    if (now !== cachedAt) {
      cache.clear();
      cachedAt = now;
    }
    let found = cache.get(key);
    if (!found) {
      found = visibleFactory(factories, req, uid).then(async (factory) => ({
        answer: { team_uid: factory.team_uid, ...(await make(factory)) },
      }));
      cache.set(key, found);
      // A failed answer is not kept: the next request asks again.
      found.catch(() => cache.delete(key));
    }
    const entry = await found;
    if (!req.principal?.teams.has(entry.answer.team_uid)) throw new NotFound('factory', uid);
    return entry;
  }

  return {
    /** The answer about factory `uid` kept under `key`, made by `make` unless kept. */
    get: async <T extends object>(req: FastifyRequest, uid: string, key: string, make: Make<T>): Promise<T> =>
      (await kept(req, uid, key, make)).answer as T,
    /** Sends that answer as JSON, with `as_of` the request's moment. */
    async send<T extends object>(
      req: FastifyRequest,
      reply: FastifyReply,
      uid: string,
      key: string,
      schema: z.ZodObject,
      make: Make<T>,
    ): Promise<FastifyReply> {
      const entry = await kept(req, uid, key, make);
      entry.json ??= encoderOf(schema)(entry.answer, key);
      const asOf = JSON.stringify(rt.clock.now().toISOString());
      return reply.type('application/json; charset=utf-8').send(`{"as_of":${asOf},${entry.json.slice(1)}`);
    },
  };
}

export type AnswerCache = ReturnType<typeof answerCache>;

/** The fields every answer of a factory's range begins with (`as_of` is added when sent). */
export const scopeOf = (factory: FactoryDoc, range: { start_date: string; end_date: string }) => ({
  team_uid: factory.team_uid,
  factory_uid: factory.uid,
  start_date: range.start_date,
  end_date: range.end_date,
});

type Make<T> = (factory: FactoryDoc) => Promise<T>;

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;

/** US dollars by category, with their total, to the millionth of a dollar. */
export const dollarsOf = (usd: Usd): Dollars => ({
  inference: round(usd.inference),
  compute: round(usd.compute),
  platform: round(usd.platform),
  total: round(usd.inference + usd.compute + usd.platform),
});

export const noUsd = (): Usd => ({ inference: 0, compute: 0, platform: 0 });

export const addUsd = (a: Usd, b: Usd): Usd => ({
  inference: a.inference + b.inference,
  compute: a.compute + b.compute,
  platform: a.platform + b.platform,
});

/** Largest first, UNKNOWN last, then by key. */
export const byTotalUnknownLast =
  <T extends { key: string }>(total: (g: T) => number) =>
  (a: T, b: T) =>
    Number(a.key === UNKNOWN_KEY) - Number(b.key === UNKNOWN_KEY) || total(b) - total(a) || a.key.localeCompare(b.key);

/** Whether the client asked for CSV (`Accept: text/csv`) rather than JSON. */
export function wantsCsv(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? '';
  const csv = accept.indexOf('text/csv');
  const json = accept.indexOf('application/json');
  return csv >= 0 && (json < 0 || csv < json);
}

type Cell = string | number | boolean | null | undefined;

/**
 * A cell as RFC 4180 writes it: quoted when it holds a comma, quote or line break. Text a
 * spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, carriage return first) is
 * prefixed with an apostrophe, so a pull request titled `=HYPERLINK(...)` stays text.
 */
function cell(value: Cell): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A CSV document: a header row, then one line per row (CRLF line ends). */
export const toCsv = (header: readonly string[], rows: ReadonlyArray<readonly Cell[]>): string =>
  `${[header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n')}\r\n`;

/** Sends a CSV answer (its schema is the JSON one: the route documents both). */
export const sendCsv = (reply: FastifyReply, name: string, csv: string) =>
  reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}.csv"`).send(csv);
