/**
 * POST /teams, POST /teams/{team_uid}/members (the invitation it issues is redeemed in
 * user/invitation.ts) and DELETE /teams/{team_uid}/members/{user_uid}. GET /teams and
 * /teams/{team_uid}/members are in queries/team/teams.ts, the audit in queries/team/team-audit.ts.
 */
import { timeOrderedId } from '../../src/ids.js';
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { Conflict, Forbidden } from '../../src/kernel/errors.js';
import { noContent, normalizeEmail, uidParam } from '../../src/http/schemas.js';
import type { Runtime } from '../../src/runtime.js';
import { usersProjection, userDecider, newInvitation, findOrRegisterUser, ownerOf } from '../user/public.js';
import { userStream } from '../user/events.js';
import { assertCanManage, teamDecider } from './team-decider.js';
import { ROLES, teamStream } from './events.js';
import type { Api } from '../../src/http/api.js';
import { ownsKey } from '../../src/own-keys.js';

const createTeamBody = z.object({ name: z.string().trim().min(1).max(200) }).strict();

const addMemberBody = z
  .object({
    email: z.email().max(320),
    display_name: z.string().trim().min(1).max(200).optional(),
    role: z.enum(ROLES).default('member'),
  })
  .strict();

const createdTeam = z.object({ uid: z.string(), name: z.string() });

const addedMember = z.object({
  user: z.object({ uid: z.string(), email: z.string(), display_name: z.string() }),
  role: z.enum(ROLES),
  api_key: z.null().describe('Always null: the member redeems `invitation_code` for a first key'),
  invitation_code: z
    .string()
    .describe('Shown this once: POST /invitations/redeem gives a first key to an account that has none'),
});

export default function teamRoutes(api: Api, rt: Runtime): void {
  const tags = ['teams'];
  const createTeam = {
    schema: { body: createTeamBody, response: { 201: createdTeam }, tags },
    config: { idempotent: true },
  };
  api.post('/teams', createTeam, async (req, reply) => {
    const context = commandContext(req);
    if (context.actor.type !== 'user') throw new Forbidden('only users can create teams');
    const uid = timeOrderedId();
    await rt.execute(
      teamStream(uid),
      teamDecider,
      { type: 'CreateTeam', data: { uid, name: req.body.name, admin_uid: context.actor.uid } },
      context,
    );
    return reply.code(201).send({ uid, name: req.body.name });
  });

  /**
   * Adds a member by email and answers the same whether the address had an account or not: no
   * key (`api_key: null`, kept for clients that read it) and an invitation code the new member
   * redeems for a first key. A key in the answer for new addresses only told admins which
   * addresses had accounts elsewhere.
   */
  api.post(
    '/teams/:team_uid/members',
    {
      schema: {
        params: z.object({ team_uid: z.string().min(1).max(128) }),
        body: addMemberBody,
        response: { 201: addedMember },
        tags,
      },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const { team_uid } = req.params;
      // The team acted on, rather than the caller's active one, is the team its events concern.
      const context = { ...commandContext(req), team_uid };
      // Refuse before any write: a user is only registered, or invited, for a request that will succeed.
      const team = await rt.state(teamDecider, teamStream(team_uid));
      assertCanManage(team, context.actor, team_uid);
      const owner = await ownerOf(rt.events, normalizeEmail(req.body.email));
      if (owner && ownsKey(team.members, owner))
        throw new Conflict('the user is already a member of this team', 'already_member');
      const user_uid = await findOrRegisterUser(rt, req.body.email, req.body.display_name, context);
      const invitation = newInvitation(user_uid);
      await rt.handle(
        userStream(user_uid),
        userDecider,
        { type: 'InviteUser', data: { uid: user_uid, team_uid, invitation_hash: invitation.hash } },
        context,
      );
      await rt.execute(
        teamStream(team_uid),
        teamDecider,
        { type: 'AddMember', data: { team_uid, user_uid, role: req.body.role } },
        context,
      );
      const user = (await rt.readModel(usersProjection).get(user_uid))!;
      return reply.code(201).send({
        user: { uid: user.uid, email: user.email, display_name: user.display_name },
        role: req.body.role,
        api_key: null,
        invitation_code: invitation.code,
      });
    },
  );

  /**
   * Removes a member (an admin), or leaves (the member themselves): the user's keys stop opening
   * the team when this answers, and on other server processes once their projector applies it;
   * what they made stays. The account and its keys stay too: they may open other teams. The last
   * admin cannot go.
   */
  api.delete(
    '/teams/:team_uid/members/:user_uid',
    {
      schema: {
        params: z.object({ team_uid: uidParam, user_uid: uidParam }),
        response: { 204: noContent() },
        tags,
      },
    },
    async (req, reply) => {
      const { team_uid, user_uid } = req.params;
      await rt.execute(
        teamStream(team_uid),
        teamDecider,
        { type: 'RemoveMember', data: { team_uid, user_uid } },
        { ...commandContext(req), team_uid },
      );
      return reply.code(204).send(null);
    },
  );
}
