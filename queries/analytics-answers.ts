/**
 * What the metrics, cost and pull-request routes share: the factory they answer for, a cache of
 * their answers, CSV for spreadsheets, dollars.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { visibleFactory } from '../commands/factory/resource.js';
import type { Dollars } from '../commands/analytics/resource.js';
import type { Usd } from '../commands/analytics/events.js';
import type { AnyProjection } from '../src/projector/projection.js';
import type { Runtime } from '../src/runtime.js';
import { factoriesProjection, type FactoryDoc } from '../projections/factories.js';
import { factoryRollupsProjection } from '../projections/factory-rollups.js';
import { pullRequestsProjection } from '../projections/pull-requests.js';
import { identitiesProjection } from '../projections/identities.js';
import { usersProjection } from '../projections/users.js';
import { modelsProjection } from '../projections/models.js';
import { teamMembersProjection } from '../projections/team-members.js';

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
 * nothing twice. A year of figures is summed once per change, not once per request.
 */
export function answerCache(rt: Runtime) {
  const cache = new LRUCache<string, Promise<unknown>>({ max: CACHED_ANSWERS });
  const generation = () => SOURCES.reduce((sum, p) => sum + rt.projector.changes(p), 0);
  let cachedAt = generation();
  return <T>(key: string, make: () => Promise<T>): Promise<T> => {
    const now = generation();
    if (now !== cachedAt) {
      cache.clear();
      cachedAt = now;
    }
    let found = cache.get(key) as Promise<T> | undefined;
    if (!found) {
      found = make();
      cache.set(key, found);
      // A failed answer is not kept: the next request asks again.
      found.catch(() => cache.delete(key));
    }
    return found;
  };
}

/** The factory a request names, if the caller may see it (else 404). */
export const factoryOf = (rt: Runtime, req: FastifyRequest, uid: string): Promise<FactoryDoc> =>
  visibleFactory(rt.readModel(factoriesProjection), req, uid);

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;

/** US dollars by category, with their total, to the millionth of a dollar. */
export const dollarsOf = (usd: Usd): Dollars => ({
  inference: round(usd.inference),
  compute: round(usd.compute),
  platform: round(usd.platform),
  total: round(usd.inference + usd.compute + usd.platform),
});

export const addUsd = (a: Usd, b: Usd): Usd => ({
  inference: a.inference + b.inference,
  compute: a.compute + b.compute,
  platform: a.platform + b.platform,
});

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
