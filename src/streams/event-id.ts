/**
 * A stream event's `id:`: its position in the store's log, opaque to clients (base64url of both
 * halves), so that `Last-Event-ID` or `?after=` resumes exactly after it on any process of the store.
 */
import { InvalidRequest } from '../kernel/errors.js';
import type { Position } from '../eventstore/port.js';

const FORMAT = /^(\d{1,20})\.(\d{1,20})$/;

export const encodeEventId = (p: Position): string =>
  Buffer.from(`${p.commit}.${p.prepare}`, 'utf8').toString('base64url');

/** The position an id stands for; a 400 naming `field` for anything this server never sent. */
function decodeEventId(id: string, field: string): Position {
  const match =
    id.length <= 64 && /^[A-Za-z0-9_-]+$/.test(id) ? FORMAT.exec(Buffer.from(id, 'base64url').toString('utf8')) : null;
  if (!match) {
    throw new InvalidRequest(`${field} is not an event id this server sent`, [
      { path: field, message: 'must be the id of an event of this stream' },
    ]);
  }
  return { commit: BigInt(match[1]!), prepare: BigInt(match[2]!) };
}

/** Where a stream resumes: after `Last-Event-ID` (a reconnecting EventSource sends it) or else `?after=`; null: neither. */
export function resumeFrom(req: { headers: Record<string, unknown>; query: unknown }): Position | null {
  const header = req.headers['last-event-id'];
  if (typeof header === 'string' && header !== '') return decodeEventId(header, 'headers.last-event-id');
  const after = (req.query as { after?: unknown } | undefined)?.after;
  return typeof after === 'string' && after !== '' ? decodeEventId(after, 'query.after') : null;
}
