/**
 * `GET /events`: the active team's activity as an event stream (`text/event-stream`), of every
 * type a feature registered for the team's feed, each sent only when the resource's own read check
 * lets the caller list it in that team. Without `Last-Event-ID` or `?after=` it starts now. The team
 * may be named by `?team_uid=` as by the team header (a browser's EventSource sends no headers).
 */
import { z } from 'zod';
import type { Api } from '../http/api.js';
import { activeTeam } from '../http/auth.js';
import { repeatable, uidParam } from '../http/schemas.js';
import { InvalidRequest } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import { resumeFrom } from './event-id.js';
import { streamsOf } from './live-streams.js';
import type { StreamEventType, StreamItem } from './stream-events.js';

const afterParam = z.string().max(64).optional().describe('Resume after this event id (Last-Event-ID wins)');

export const streamHeaders = z.object({
  'last-event-id': z.string().max(64).optional().describe('The id of the last event received: resume after it'),
});

const teamEventsQuery = z
  .object({
    factory_uid: repeatable(uidParam).describe('Only events of these factories'),
    types: repeatable(z.string().min(1).max(100)).describe('Only these types; `run.*` names a group, `*` all'),
    after: afterParam,
    team_uid: uidParam.optional().describe('The active team, as the X-Service-Team-Uid header names it'),
  })
  .strict();

/** Whether a subscription (`run.succeeded`, `run.*`, `*`) takes a type, as outbound webhooks read it. */
const matches = (wanted: readonly string[], type: string) =>
  wanted.some((w) => w === '*' || w === type || (w.endsWith('.*') && type.startsWith(w.slice(0, -1))));

/** The types asked for, each of which must name a type (or group) of the stream; a 400 naming it otherwise. */
function typeFilter(wanted: string[] | undefined, types: ReadonlyMap<string, StreamEventType>) {
  if (!wanted) return () => true;
  wanted.forEach((w, i) => {
    if (![...types.keys()].some((t) => matches([w], t)))
      throw new InvalidRequest(`types: ${w} is no event type of this stream`, [
        {
          path: `query.types.${i}`,
          message: `must be one of ${[...types.keys()].join(', ')}, a group such as run.*, or *`,
        },
      ]);
  });
  return (item: StreamItem) => matches(wanted, item.type);
}

export const feedTypes = (rt: Runtime, feed: 'team' | 'run') =>
  new Map([...streamsOf(rt).hub.types].filter(([, t]) => t.feeds.includes(feed)));

export default function eventStreamRoutes(api: Api, rt: Runtime): void {
  const types = feedTypes(rt, 'team');
  api.addHook('preClose', async () => streamsOf(rt).connections.closeAll());
  api.get(
    '/events',
    {
      config: { teamInQuery: true, eventStream: types },
      schema: { querystring: teamEventsQuery, headers: streamHeaders, tags: ['events'] },
    },
    async (req, reply) => {
      const team = activeTeam(req).uid;
      const wantedType = typeFilter(req.query.types, types);
      const factories = req.query.factory_uid && new Set(req.query.factory_uid);
      const viewer = { principal: req.principal!, team };
      await streamsOf(rt).open(req, reply, {
        after: resumeFrom(req) ?? streamsOf(rt).hub.position,
        takes: (item) =>
          types.has(item.type) &&
          wantedType(item) &&
          (!factories || (item.factory_uid !== null && factories.has(item.factory_uid))) &&
          item.readable(viewer),
      });
    },
  );
}
