/**
 * GET /factory/runs/{run_id}/scores: a run's scores by every live scorer, newest attempt first,
 * each judged now against its scorer's threshold. A deleted scorer's documents stay behind; its
 * scorer is gone, and so are they.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NotFound } from '../../src/kernel/errors.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import { scoringResult, toScoringResult } from '../../commands/scorer/public.js';
import { canView, runParams, viewerOf, runsProjection } from '../../commands/run/public.js';
import { scorersProjection } from '../../projections/scorer/scorers.js';
import { scoringResultsProjection } from '../../projections/scorer/scoring-results.js';

const scoresAnswer = z.object({
  scores: z.array(
    scoringResult.extend({
      scorer_uid: z.string(),
      scorer_name: z.string(),
      factory_uid: z.string(),
      threshold: z.number(),
    }),
  ),
});

/** What the run scores query reads, opened once when its route is registered. */
const reads = (rt: Runtime) => ({
  runs: rt.readModel(runsProjection),
  results: rt.readModel(scoringResultsProjection),
  scorers: rt.readModel(scorersProjection),
});
type Reads = ReturnType<typeof reads>;

/** The run, if the caller may read it. */
async function visibleRun(r: Reads, req: FastifyRequest, runId: string) {
  const run = await r.runs.get(runId);
  const owner = run && {
    team_uid: run.team_uid,
    creator_uid: run.creator.uid,
    executing_team_uid: run.executing_team_uid,
  };
  if (!run || !owner || !canView(owner, viewerOf(req.principal!))) throw new NotFound('run', runId);
  return run;
}

async function scoresOf(r: Reads, req: FastifyRequest, runId: string) {
  const run = await visibleRun(r, req, runId);
  const found = await r.results.find({
    filter: { run_id: run.run_id },
    sort: [
      ['attempted_at', 'desc'],
      ['id', 'desc'],
    ],
    limit: 200,
  });
  const live = await r.scorers.getMany([...new Set(found.items.map((d) => d.scorer_uid))]);
  return {
    scores: found.items.flatMap((d) => {
      const scorer = live.get(d.scorer_uid);
      return scorer
        ? [
            {
              ...toScoringResult(d, scorer.threshold),
              scorer_uid: scorer.uid,
              scorer_name: scorer.name,
              factory_uid: scorer.factory_uid,
              threshold: scorer.threshold,
            },
          ]
        : [];
    }),
  };
}

export default function runScoreQueries(api: Api, rt: Runtime): void {
  const r = reads(rt);
  api.get(
    '/factory/runs/:run_id/scores',
    { schema: { params: runParams, response: { 200: scoresAnswer }, tags: ['scorers'] } },
    (req) => scoresOf(r, req, req.params.run_id),
  );
}
