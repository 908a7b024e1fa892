/**
 * Environments as the API answers them (`CloudEnvironment`): each with its newest run, resolved
 * from the runs read model, one read a page. Kept out of resource.ts, which the feature's public
 * module offers and the run feature reaches (a run is created in an environment): reading the
 * runs read model from there would close a circle of imports.
 */
import type { z } from 'zod';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import type { environmentResource } from '../../commands/environment/public.js';
import { runsProjection } from '../../commands/run/public.js';
import { type EnvironmentDoc, environmentsProjection } from './environments.js';

type LastRun = NonNullable<z.infer<typeof environmentResource>['last_task_created']>;

const toEnvironmentResource = (
  doc: EnvironmentDoc,
  lastRun: LastRun | undefined,
): z.infer<typeof environmentResource> => ({
  uid: doc.uid,
  config: doc.config,
  last_updated: doc.last_updated,
  ...(doc.last_task_run_timestamp ? { last_task_run_timestamp: doc.last_task_run_timestamp } : {}),
  ...(lastRun ? { last_task_created: lastRun } : {}),
  setup_failed: false,
  scope: { type: 'Team', uid: doc.team_uid },
  creator: doc.creator,
  last_editor: doc.last_editor,
});

/** Environments as answers: the newest run of each resolved from the runs read model, one read a page. */
export function environmentAnswers(rt: Runtime) {
  const environments = rt.readModel(environmentsProjection);
  const runs = rt.readModel(runsProjection);
  const many = async (docs: readonly EnvironmentDoc[]) => {
    const found = await runs.getMany(docs.flatMap((d) => (d.last_run_id ? [d.last_run_id] : [])));
    return docs.map((d) => {
      const run = d.last_run_id ? found.get(d.last_run_id) : undefined;
      const last = run && {
        id: run.run_id,
        title: run.title,
        state: run.state,
        created_at: run.created_at,
        updated_at: run.updated_at,
        started_at: run.started_at,
      };
      return toEnvironmentResource(d, last);
    });
  };
  return {
    many,
    async one(id: string) {
      const doc = await environments.get(id);
      if (!doc) throw new NotFound('environment', id);
      return (await many([doc]))[0]!;
    },
  };
}
