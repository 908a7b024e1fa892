/**
 * History entries: an event as auditors read it, in the answers of every history endpoint (a
 * task's, a run's, a scorer's, a team's audit) and of `shopfloor history`, and the pages they come
 * in when read straight from the event log.
 *
 * Entries are oldest first. `position` is the event's global commit position as a decimal
 * string (it outgrows JSON numbers on EventStoreDB); `revision` is its number in its stream.
 */
import { z } from 'zod';
import type { RecordedEvent } from '../eventstore/port.js';
import { decodeCursor, pageInfo } from './cursor.js';
import { limitParam, pageInfoSchema } from './schemas.js';
import { InvalidRequest } from '../kernel/errors.js';
import type { Sort } from '../readstore/port.js';

export const historyEntry = z.object({
  id: z.string().describe("The event's id"),
  position: z.string().describe("The event's global commit position, a decimal string (it outgrows JSON numbers)"),
  stream: z.string(),
  revision: z.number().int().describe("The event's number in its stream, from 0"),
  type: z.string().describe('The event type, such as RunCreated or TaskUpdated'),
  occurred_at: z.string(),
  actor: z.object({ type: z.enum(['user', 'agent', 'system']), uid: z.string() }),
  correlation_id: z.string(),
  causation_id: z.string().nullable(),
  request_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).describe('The event as recorded'),
});

export type HistoryEntry = z.infer<typeof historyEntry>;

export const historyResponse = z.object({ entries: z.array(historyEntry), page_info: pageInfoSchema });

export const toHistoryEntry = (e: RecordedEvent): HistoryEntry => ({
  id: e.id,
  position: e.position.commit.toString(),
  stream: e.stream,
  revision: Number(e.revision),
  type: e.type,
  occurred_at: e.metadata.occurred_at,
  actor: e.metadata.actor,
  correlation_id: e.metadata.correlation_id,
  causation_id: e.metadata.causation_id,
  request_id: e.metadata.request_id,
  data: e.data as Record<string, unknown>, // every event's data is a JSON object (NewEvent)
});

export const historyQuery = z
  .object({ limit: limitParam(1000, 500), cursor: z.string().max(1000).optional() })
  .strict();

/** The cursor's keyset as non-negative integers; anything else was not issued here. */
export function cursorNumbers(cursor: string | undefined, sort: Sort): bigint[] | undefined {
  const values = decodeCursor(cursor, sort);
  if (values && !values.every((v) => /^\d{1,20}$/.test(String(v)))) {
    throw new InvalidRequest(
      'cursor is not valid: malformed cursor',
      [{ path: 'querystring.cursor', message: 'malformed cursor' }],
      'invalid_cursor',
    );
  }
  return values?.map((v) => BigInt(String(v)));
}

export function historyPage(
  events: RecordedEvent[],
  limit: number,
  sort: Sort,
  key: (e: RecordedEvent) => Array<string | number>,
): z.infer<typeof historyResponse> {
  const shown = events.slice(0, limit);
  const last = shown.at(-1);
  return {
    entries: shown.map(toHistoryEntry),
    page_info: pageInfo(sort, events.length > limit && last ? key(last) : null),
  };
}
