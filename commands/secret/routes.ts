/** POST/GET/DELETE /teams/{team_uid}/secrets: named team secrets, sealed at rest, values never read back. */
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { teamSecretsDecider } from './decider.js';
import { teamSecretsStream } from './events.js';
import { sealerFor } from './sealing.js';
import type { Api } from '../../src/http/api.js';

const teamParams = z.object({ team_uid: uidParam });
const secretParams = z.object({ team_uid: uidParam, name: z.string().max(100) });
const createBody = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'letters, digits, _ . -'),
    value: z.string().min(1).max(4096),
  })
  .strict();

export default function teamSecretRoutes(api: Api, rt: Runtime): void {
  const sealer = sealerFor(rt.config);

  api.post(
    '/teams/:team_uid/secrets',
    { schema: { params: teamParams, body: createBody, tags: ['secrets'] } },
    async (req, reply) => {
      const { team_uid } = req.params;
      const { state } = await rt.execute(
        teamSecretsStream(team_uid),
        teamSecretsDecider,
        {
          type: 'CreateTeamSecret',
          data: { team_uid, name: req.body.name, sealed: sealer.seal(req.body.value) },
        },
        commandContext(req),
      );
      return reply.code(201).send({ name: req.body.name, created_at: state.secrets[req.body.name]!.created_at });
    },
  );

  // Small and per team: read from the team's own stream.
  api.get('/teams/:team_uid/secrets', { schema: { params: teamParams, tags: ['secrets'] } }, async (req) => {
    if (!req.principal!.teams.has(req.params.team_uid)) throw new NotFound('team', req.params.team_uid);
    const state = await rt.state(teamSecretsDecider, teamSecretsStream(req.params.team_uid));
    const secrets = Object.entries(state.secrets).map(([name, s]) => ({ name, created_at: s.created_at }));
    return { secrets: secrets.sort((a, b) => a.name.localeCompare(b.name)) };
  });

  api.delete(
    '/teams/:team_uid/secrets/:name',
    { schema: { params: secretParams, tags: ['secrets'] } },
    async (req, reply) => {
      await rt.execute(
        teamSecretsStream(req.params.team_uid),
        teamSecretsDecider,
        { type: 'DeleteTeamSecret', data: { ...req.params } },
        commandContext(req),
      );
      return reply.code(204).send();
    },
  );
}
