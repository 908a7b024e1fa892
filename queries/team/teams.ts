/** GET /teams: the caller's teams with its role in each; GET /teams/{team_uid}/members. */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { decodeCursor, pageInfo } from '../../src/http/cursor.js';
import { limitParam, pageInfoSchema, uidParam } from '../../src/http/schemas.js';
import { Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { ROLES } from '../../commands/team/events.js';
import { teamMembersProjection } from '../../projections/team/team-members.js';
import { teamsProjection } from '../../projections/team/teams.js';
import { usersProjection } from '../../commands/user/public.js';
import type { Api } from '../../src/http/api.js';

const teamsResponse = z.object({
  teams: z
    .array(
      z.object({
        uid: z.string(),
        name: z.string(),
        role: z.enum(ROLES).describe("The caller's role in the team"),
        created_at: z.string(),
      }),
    )
    .describe('In the order the caller joined them'),
});

export const teamParams = z.object({ team_uid: uidParam });

/**
 * The caller's role in the team. A team the caller is not in answers 404, existing or not; agents
 * see no team's people (403).
 */
export function roleIn(req: FastifyRequest, team_uid: string): 'admin' | 'member' {
  const role = req.principal!.teams.get(team_uid);
  if (!role) throw new NotFound('team', team_uid);
  if (req.principal!.type !== 'user') throw new Forbidden("only users see a team's people");
  return role;
}

const membersQuery = z.object({ limit: limitParam(500, 100), cursor: z.string().max(1000).optional() }).strict();

const membersResponse = z.object({
  members: z
    .array(
      z.object({
        user: z.object({ uid: z.string(), email: z.string(), display_name: z.string() }),
        role: z.enum(ROLES),
        joined_at: z.string(),
        added_by: z.object({ type: z.enum(['user', 'agent', 'system']), uid: z.string() }),
      }),
    )
    .describe('In the order they joined'),
  page_info: pageInfoSchema,
});

const MEMBER_ORDER: Sort = [['order', 'asc']];

export default function teamQueries(api: Api, rt: Runtime): void {
  const teams = rt.readModel(teamsProjection);
  const members = rt.readModel(teamMembersProjection);
  const users = rt.readModel(usersProjection);
  const tags = ['teams'];

  api.get('/teams', { schema: { response: { 200: teamsResponse }, tags } }, async (req) => {
    const memberships = [...req.principal!.teams];
    const docs = await teams.getMany(memberships.map(([uid]) => uid));
    return {
      teams: memberships.flatMap(([uid, role]) => {
        const team = docs.get(uid);
        return team ? [{ uid, name: team.name, role, created_at: team.created_at }] : [];
      }),
    };
  });

  // Every member sees the team's people, so admins see whom to remove.
  api.get(
    '/teams/:team_uid/members',
    { schema: { params: teamParams, querystring: membersQuery, response: { 200: membersResponse }, tags } },
    async (req) => {
      const { team_uid } = req.params;
      roleIn(req, team_uid);
      const page = await members.find({
        filter: { team_uid },
        sort: MEMBER_ORDER,
        limit: req.query.limit,
        after: decodeCursor(req.query.cursor, MEMBER_ORDER),
      });
      const people = await users.getMany(page.items.map((m) => m.user_uid));
      return {
        members: page.items.flatMap((m) => {
          const user = people.get(m.user_uid);
          // Only a bootstrap that died half-way leaves a member unregistered; the next start registers them.
          if (!user?.email) return [];
          const { role, joined_at, added_by } = m;
          return [
            { user: { uid: user.uid, email: user.email, display_name: user.display_name }, role, joined_at, added_by },
          ];
        }),
        page_info: pageInfo(MEMBER_ORDER, page.next),
      };
    },
  );
}
