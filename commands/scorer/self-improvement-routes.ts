/**
 * POST /factory/{factory_uid}/scorers/{scorer_uid}/self-improvement/run: the self-improvement
 * check of a scorer, now (a person of the team, the scorer's self-improvement enabled).
 */
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { commandContext } from '../../src/http/context.js';
import { DomainError, Forbidden } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import { checkSelfImprovement } from './improvement-check.js';
import { scorerParams } from './request-schemas.js';
import { scorerOfFactory } from './scorer-access.js';

export default function selfImprovementRoutes(api: Api, rt: Runtime): void {
  api.post(
    '/factory/:factory_uid/scorers/:scorer_uid/self-improvement/run',
    {
      schema: {
        params: scorerParams,
        response: {
          200: z.object({ started: z.int().describe('Self-improvement runs started, one per agent at most') }),
        },
        tags: ['scorers'],
      },
    },
    async (req) => {
      const { factory_uid, scorer_uid } = req.params;
      const context = commandContext(req);
      const s = await scorerOfFactory(rt, factory_uid, scorer_uid, context);
      if (context.actor.type !== 'user') throw new Forbidden('only people of the team start self-improvement');
      if (!s.self_improvement.enabled)
        throw new DomainError(
          409,
          'self_improvement_disabled',
          'Conflict',
          'self-improvement is not enabled for this scorer',
        );
      return { started: await checkSelfImprovement(rt, { scorer_uid, run_now: true }) };
    },
  );
}
