/**
 * A factory's notification routes: which of the team's people also receive which kinds of its
 * notifications, besides the person who started the task. Set whole by the team's people; every
 * recipient must be a member of the factory's team when the routes are set (and is skipped while
 * not one when a notification is raised).
 */
import type { Decider } from '../../src/kernel/decider.js';
import { Forbidden, InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import type { InboxRoute, InboxRoutesEvent, TaskKind } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

export type InboxRoutesState = { routes: InboxRoute[] };

export type InboxRoutesCommand = {
  type: 'SetInboxRoutes';
  data: { factory_uid: string; team_uid: string; routes: InboxRoute[]; members: readonly string[] };
};

/** Who a notification of `kind` goes to besides the task's author. */
export const routedTo = (routes: readonly InboxRoute[], kind: TaskKind): string[] =>
  routes.filter((r) => r.kinds.length === 0 || r.kinds.includes(kind)).flatMap((r) => r.recipient_uids);

export const inboxRoutesDecider: Decider<InboxRoutesCommand, InboxRoutesEvent, InboxRoutesState> = {
  initialState: () => ({ routes: [] }),
  evolve: (_state, event) => ({ routes: event.data.routes }),
  decide: (command, state, context) => {
    const { factory_uid, team_uid, routes, members } = command.data;
    if (!ownsKey(context.teams, team_uid)) throw new NotFound('factory', factory_uid);
    if (context.actor.type !== 'user') throw new Forbidden('only users set notification routes');
    const strangers = routes.flatMap((r) => r.recipient_uids).filter((u) => !members.includes(u));
    if (strangers.length) {
      const message = `not members of the factory's team: ${[...new Set(strangers)].join(', ')}`;
      throw new InvalidRequest(message, [{ path: 'body.routes', message }]);
    }
    if (JSON.stringify(routes) === JSON.stringify(state.routes)) return [];
    return [{ type: 'InboxRoutesSet', data: { factory_uid, team_uid, routes } }];
  },
};
