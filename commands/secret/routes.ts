/** POST/GET/DELETE /teams/{team_uid}/secrets: named team secrets, sealed at rest, values never read back. */
import { z } from 'zod';
import { commandContext } from '../../src/http/context.js';
import { noContent, uidParam } from '../../src/http/schemas.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { teamSecretsDecider } from './team-secrets-decider.js';
import { teamSecretsStream } from './events.js';
import { sealerFor } from '../../src/sealing.js';
import type { Api } from '../../src/http/api.js';
import { own } from '../../src/own-keys.js';

const teamParams = z.object({ team_uid: uidParam });
const secretParams = z.object({ team_uid: uidParam, secret_name: z.string().max(100) });
const createBody = z
  .object({
    name: z
      .string()
      .max(100)
      .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'letters, digits, _ . -')
      // A client's `secrets[name] = …` would set its object's prototype instead of a key.
      .refine((n) => n !== '__proto__', 'a secret cannot be named __proto__'),
    value: z.string().min(1).max(4096),
  })
  .strict();

/** A team secret as the API shows it: its name and age, never its value. */
const secretResource = z.object({ name: z.string(), created_at: z.string() });
const secretsResponse = z.object({ secrets: z.array(secretResource).describe('By name') });

export default function teamSecretRoutes(api: Api, rt: Runtime): void {
  const sealer = sealerFor(rt.config);
  const tags = ['secrets'];

  api.post(
    '/teams/:team_uid/secrets',
    {
      schema: { params: teamParams, body: createBody, response: { 201: secretResource }, tags },
      config: { idempotent: true },
    },
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
      return reply.code(201).send({ name: req.body.name, created_at: own(state.secrets, req.body.name)!.created_at });
    },
  );

  // Small and per team: read from the team's own stream.
  const listSchema = { params: teamParams, response: { 200: secretsResponse }, tags };
  api.get('/teams/:team_uid/secrets', { schema: listSchema }, async (req) => {
    if (!req.principal!.teams.has(req.params.team_uid)) throw new NotFound('team', req.params.team_uid);
    const state = await rt.state(teamSecretsDecider, teamSecretsStream(req.params.team_uid));
    const secrets = Object.entries(state.secrets).map(([name, s]) => ({ name, created_at: s.created_at }));
    return { secrets: secrets.sort((a, b) => a.name.localeCompare(b.name)) };
  });

  api.delete(
    '/teams/:team_uid/secrets/:secret_name',
    { schema: { params: secretParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const { team_uid, secret_name } = req.params;
      await rt.execute(
        teamSecretsStream(team_uid),
        teamSecretsDecider,
        { type: 'DeleteTeamSecret', data: { team_uid, name: secret_name } },
        commandContext(req),
      );
      return reply.code(204).send(null);
    },
  );
}
