/**
 * GET /factory-inbox: one page of the active team's unresolved notifications, newest first.
 * `mine` (users only) seeks the caller's own copies, with `is_read`; `team` lists those of every
 * live recipient (with `recipient_uid`, one person's copies), without `is_read`. And
 * GET /factory/{factory_uid}/inbox-routes.
 */
import type { Api } from '../../src/http/api.js';
import { activeTeam } from '../../src/http/auth.js';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { InvalidRequest } from '../../src/kernel/errors.js';
import type { Filter, Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import {
  type InboxItem,
  inboxListQuery,
  inboxPage,
  inboxRoutesAnswer,
  routesParams,
  toInboxItem,
} from '../../commands/inbox/public.js';
import { visibleFactory, factoriesProjection } from '../../commands/factory/public.js';
import { inboxEntriesProjection } from '../../projections/inbox/inbox-entries.js';
import {
  type InboxNotificationDoc,
  inboxNotificationsProjection,
} from '../../projections/inbox/inbox-notifications.js';
import { inboxRoutesProjection } from '../../projections/inbox/inbox-routes.js';
import { usersProjection } from '../../commands/user/public.js';

const NEWEST_FIRST: Sort = [
  ['created_at', 'desc'],
  ['id', 'desc'],
];

export default function inboxQueries(api: Api, rt: Runtime): void {
  const tags = ['inbox'];
  const entries = rt.readModel(inboxEntriesProjection);
  const notifications = rt.readModel(inboxNotificationsProjection);
  const users = rt.readModel(usersProjection);
  const factories = rt.readModel(factoriesProjection);
  const routes = rt.readModel(inboxRoutesProjection);

  /** The page's recipients who are members of the notification's team now, with their emails (one read). */
  async function liveRecipients(docs: readonly InboxNotificationDoc[]) {
    const people = await users.getMany([...new Set(docs.flatMap((d) => d.recipients))]);
    return (d: InboxNotificationDoc): InboxItem['recipients'] =>
      d.recipients
        .map((uid) => people.get(uid))
        .filter((u) => u?.memberships.some((m) => m.team_uid === d.team_uid))
        .map((u) => ({ uid: u!.uid, ...(u!.email ? { email: u!.email } : {}) }));
  }

  const invalid = (path: string, message: string) =>
    new InvalidRequest(message, [{ path: `querystring.${path}`, message }]);

  api.get(
    '/factory-inbox',
    { schema: { querystring: inboxListQuery, response: { 200: inboxPage }, tags } },
    async (req) => {
      const principal = req.principal!;
      const q = req.query;
      if (q.scope === 'mine' && principal.type !== 'user')
        throw invalid('scope', 'the mine scope needs user credentials');
      const team = activeTeam(req).uid;
      const after = decodeCursor(q.cursor, NEWEST_FIRST);
      const where: Filter = { team_uid: team, ...(q.factory_uid ? { factory_uid: q.factory_uid } : {}) };
      const recipient = q.scope === 'mine' ? principal.uid : q.recipient_uid;
      // In `mine` scope only the caller matches recipient_uid.
      if (q.scope === 'mine' && q.recipient_uid !== undefined && q.recipient_uid !== principal.uid)
        return { notifications: [], page_info: pageInfo(NEWEST_FIRST, null) };
      if (recipient !== undefined) {
        const page = await entries.find({
          filter: { recipient_uid: recipient, ...where },
          sort: NEWEST_FIRST,
          limit: q.limit,
          after,
          maxScan: rt.config.LIST_MAX_SCAN,
        });
        const live = await liveRecipients(page.items);
        const items = page.items
          .map((d) => ({ d, recipients: live(d) }))
          .filter(({ d, recipients }) => recipients.some((r) => r.uid === d.recipient_uid))
          .map(({ d, recipients }) => toInboxItem(d, recipients, q.scope === 'mine' ? d.is_read : undefined));
        return { notifications: items, page_info: pageInfo(NEWEST_FIRST, page.next) };
      }
      const page = await notifications.find({
        filter: { ...where, active: true },
        sort: NEWEST_FIRST,
        limit: q.limit,
        after,
        maxScan: rt.config.LIST_MAX_SCAN,
      });
      const live = await liveRecipients(page.items);
      const items = page.items
        .map((d) => toInboxItem(d, live(d), undefined))
        .filter((item) => item.recipients.length > 0);
      return { notifications: items, page_info: pageInfo(NEWEST_FIRST, page.next) };
    },
  );

  api.get(
    '/factory/:factory_uid/inbox-routes',
    { schema: { params: routesParams, response: { 200: inboxRoutesAnswer }, tags } },
    async (req) => {
      const factory = await visibleFactory(factories, req, req.params.factory_uid);
      const doc = await routes.get(factory.uid);
      return { factory_uid: factory.uid, routes: doc?.routes ?? [] };
    },
  );
}
