/** GET /agent/schedules (every schedule the caller may see, by name) and GET /agent/schedules/{id}. */
import { z } from 'zod';
import type { Api } from '../../src/http/api.js';
import { NotFound } from '../../src/kernel/errors.js';
import type { Sort } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { findAll } from '../../src/readstore/paging.js';
import { canSeeSchedule, scheduleAnswers, scheduleParams, scheduleResource } from '../../commands/schedule/public.js';
import { schedulesProjection } from '../../projections/schedule/schedules.js';

const BY_NAME: Sort = [
  ['name_key', 'asc'],
  ['id', 'asc'],
];

export default function scheduleQueries(api: Api, rt: Runtime): void {
  const tags = ['schedules'];
  const schedules = rt.readModel(schedulesProjection);
  const answers = scheduleAnswers(rt);

  api.get(
    '/agent/schedules',
    { schema: { response: { 200: z.object({ schedules: z.array(scheduleResource) }) }, tags } },
    async (req) => {
      const principal = req.principal!;
      const [team, mine] = await Promise.all([
        findAll(schedules, {
          filter: { team_uid: { $in: [...principal.teams.keys()] }, kind: 'agent' },
          sort: BY_NAME,
          limit: 500,
        }),
        findAll(schedules, {
          filter: { 'owner.uid': principal.uid, team_uid: null, kind: 'agent' },
          sort: BY_NAME,
          limit: 500,
        }),
      ]);
      const all = [...team, ...mine].sort((a, b) => a.name_key.localeCompare(b.name_key) || a.id.localeCompare(b.id));
      return { schedules: await answers(all) };
    },
  );

  api.get(
    '/agent/schedules/:schedule_id',
    { schema: { params: scheduleParams, response: { 200: scheduleResource }, tags } },
    async (req) => {
      const { schedule_id } = req.params;
      const doc = await schedules.get(schedule_id);
      const viewer = { actor: req.principal!, teams: Object.fromEntries(req.principal!.teams) };
      if (doc?.kind !== 'agent' || !canSeeSchedule(doc, viewer)) throw new NotFound('schedule', schedule_id);
      return (await answers([doc]))[0]!;
    },
  );
}
