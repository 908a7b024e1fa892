/**
 * POST /factory-inbox/notifications/read and /unread (users only: per-notification outcomes in
 * request order), and PUT /factory/{factory_uid}/inbox-routes.
 */
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { Forbidden } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { inboxNotificationsProjection } from '../../projections/inbox/inbox-notifications.js';
import { liveFactory } from '../factory/public.js';
import { teamDecider } from '../team/public.js';
import { teamStream } from '../team/events.js';
import { inboxDecider, mayMark } from './inbox-decider.js';
import { inboxRoutesStream, inboxStream } from './events.js';
import { inboxRoutes, inboxRoutesAnswer, markAnswer, markBody, routesParams } from './resource.js';
import { inboxRoutesDecider } from './inbox-routes-decider.js';

export default function inboxRoutesOf(api: Api, rt: Runtime): void {
  const tags = ['inbox'];
  const notifications = rt.readModel(inboxNotificationsProjection);

  for (const [action, type] of [
    ['read', 'MarkRead'],
    ['unread', 'MarkUnread'],
  ] as const) {
    api.post(
      `/factory-inbox/notifications/${action}`,
      { schema: { body: markBody, response: { 200: markAnswer }, tags } },
      async (req) => {
        const context = commandContext(req);
        if (context.actor.type !== 'user') throw new Forbidden(`only users mark notifications ${action}`);
        const uids = req.body.notification_uids;
        const found = await notifications.getMany([...new Set(uids)]);
        // One command per subject: its notifications are decided together, on its own stream.
        const bySubject = new Map<string, string[]>();
        for (const doc of found.values())
          bySubject.set(doc.subject, [...(bySubject.get(doc.subject) ?? []), doc.notification_uid]);
        const outcome = new Map<string, ReturnType<typeof mayMark>>();
        for (const [subject, notification_uids] of bySubject) {
          const { state } = await rt.execute(
            inboxStream(subject),
            inboxDecider,
            { type, data: { subject, notification_uids, user_uid: context.actor.uid } },
            context,
          );
          for (const uid of notification_uids) outcome.set(uid, mayMark(state, uid, context.actor.uid, context.teams));
        }
        return {
          outcomes: uids.map((notification_uid) => {
            const o = outcome.get(notification_uid) ?? { ok: true as const };
            return { notification_uid, ...o };
          }),
        };
      },
    );
  }

  api.put(
    '/factory/:factory_uid/inbox-routes',
    { schema: { params: routesParams, body: inboxRoutes, response: { 200: inboxRoutesAnswer }, tags } },
    async (req) => {
      const context = commandContext(req);
      const factory = await liveFactory(rt, req.params.factory_uid, context);
      const team = await rt.state(teamDecider, teamStream(factory.team_uid));
      const members = team.status === 'live' ? Object.keys(team.members) : [];
      const routes = req.body.routes.map((r) => ({ kinds: r.kinds, recipient_uids: [...new Set(r.recipient_uids)] }));
      await rt.execute(
        inboxRoutesStream(factory.uid),
        inboxRoutesDecider,
        { type: 'SetInboxRoutes', data: { factory_uid: factory.uid, team_uid: factory.team_uid, routes, members } },
        context,
      );
      return { factory_uid: factory.uid, routes };
    },
  );
}
