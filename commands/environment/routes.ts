/** POST /agent/environments, PUT and DELETE /agent/environments/{environment_id}: the self-hosted write side. */
import type { Api } from '../../src/http/api.js';
import { activeTeam } from '../../src/http/auth.js';
import { commandContext } from '../../src/http/context.js';
import { noContent } from '../../src/http/schemas.js';
import { randomAlphanumeric } from '../../src/ids.js';
import type { Runtime } from '../../src/runtime.js';
import { environmentDecider, visibleEnvironment } from './environment-decider.js';
import { type EnvironmentConfig, environmentStream } from './events.js';
import { createEnvironmentBody, environmentParams, environmentResource, updateEnvironmentBody } from './resource.js';
import { environmentAnswers } from '../../projections/environment/environment-answers.js';

/** Drops the optional fields a change set to null, so an environment's config holds no nulls but the one that means "none". */
const withoutNulls = (config: Record<string, unknown>): EnvironmentConfig =>
  Object.fromEntries(
    Object.entries(config).filter(([k, v]) => v !== null || k === 'failure_session_retention_minutes'),
  ) as unknown as EnvironmentConfig;

export default function environmentRoutes(api: Api, rt: Runtime): void {
  const tags = ['environments'];
  const answers = environmentAnswers(rt);

  api.post(
    '/agent/environments',
    {
      schema: { body: createEnvironmentBody, response: { 201: environmentResource }, tags },
      config: { idempotent: true },
    },
    async (req, reply) => {
      const id = randomAlphanumeric(22);
      const data = { id, team_uid: activeTeam(req).uid, config: withoutNulls(req.body) };
      await rt.execute(
        environmentStream(id),
        environmentDecider,
        { type: 'CreateEnvironment', data },
        commandContext(req),
      );
      return reply.code(201).send(await answers.one(id));
    },
  );

  api.put(
    '/agent/environments/:environment_id',
    {
      schema: { params: environmentParams, body: updateEnvironmentBody, response: { 200: environmentResource }, tags },
    },
    async (req) => {
      const id = req.params.environment_id;
      const context = commandContext(req);
      const env = visibleEnvironment(await rt.state(environmentDecider, environmentStream(id)), id, context);
      const config = withoutNulls({ ...env.config, ...req.body });
      await rt.execute(
        environmentStream(id),
        environmentDecider,
        { type: 'UpdateEnvironment', data: { id, config } },
        context,
      );
      return answers.one(id);
    },
  );

  api.delete(
    '/agent/environments/:environment_id',
    { schema: { params: environmentParams, response: { 204: noContent() }, tags } },
    async (req, reply) => {
      const id = req.params.environment_id;
      await rt.execute(
        environmentStream(id),
        environmentDecider,
        { type: 'DeleteEnvironment', data: { id } },
        commandContext(req),
      );
      return reply.code(204).send(null);
    },
  );
}
