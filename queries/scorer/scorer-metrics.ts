/**
 * GET /factory/{factory_uid}/scorers/{scorer_uid}/metrics: the pass rate of the scorer's live
 * scores in [start_date, end_date), per period and over the whole range, and with
 * `include_cost=true` what its judge runs cost. Summed from the rollups (projections/scorer/scoring-rollups):
 * each period is tiled with whole months or weeks, days, hours and minutes, so a year of daily
 * periods reads about 365 rows, never the scores themselves. The range is reckoned to the minute.
 */
import { z } from 'zod';
import { booleanParam, dateTimeParam } from '../../src/http/schemas.js';
import { InvalidRequest, NotFound } from '../../src/kernel/errors.js';
import { type Binning, binsOf, nextPeriod, periodStart, tiles } from '../../projections/scorer/periods.js';
import type { Runtime } from '../../src/runtime.js';
import type { Api } from '../../src/http/api.js';
import { type Dollars, NO_DOLLARS } from '../../commands/scorer/events.js';
import { outcomeOf, scorerParams } from '../../commands/scorer/public.js';
import { scorersProjection } from '../../projections/scorer/scorers.js';
import { rollupKey, scoringRollupsProjection } from '../../projections/scorer/scoring-rollups.js';

const MAX_PERIODS = 365;
const DEFAULT_RANGE_MS = 30 * 24 * 60 * 60 * 1000;

const query = z
  .object({
    start_date: dateTimeParam.optional(),
    end_date: dateTimeParam.optional(),
    group_by_period: z.enum(['day', 'week', 'month']).default('day'),
    include_cost: booleanParam,
  })
  .strict();

const dollars = z.object({ inference: z.number(), compute: z.number(), platform: z.number(), total: z.number() });

const answer = z.object({
  scorer_uid: z.string(),
  factory_uid: z.string(),
  team_uid: z.string(),
  as_of: z.string().describe('The moment the figures describe'),
  start_date: z.string(),
  end_date: z.string(),
  group_by_period: z.enum(['day', 'week', 'month']),
  threshold: z.number().describe('The threshold now: every outcome is derived against it'),
  score_count: z.int().describe('Live scores in the range'),
  pass_count: z.int(),
  fail_count: z.int(),
  pass_rate: z.number().nullable().describe('pass_count / score_count; null without scores'),
  period_list: z.array(z.string()).describe('The start of each period (UTC; weeks start on Sunday)'),
  series: z.object({
    score_count: z.array(z.int()),
    pass_count: z.array(z.int()),
    fail_count: z.array(z.int()),
    pass_rate: z.array(z.number().nullable()),
  }),
  cost: z
    .object({
      judge_run_count: z.int().describe('Judge runs that ended in the range'),
      dollars: dollars.describe(
        'What the judge runs cost in the range, as the cost ledger priced them (their request_usage; US dollars)',
      ),
      series: z.object({ judge_run_count: z.array(z.int()), dollars: z.array(dollars) }),
    })
    .optional()
    .describe('With include_cost=true'),
});

const rangeError = (path: string, message: string) =>
  new InvalidRequest(message, [{ path: `querystring.${path}`, message }]);

const plus = (a: Dollars, b: Dollars): Dollars => ({
  inference: a.inference + b.inference,
  compute: a.compute + b.compute,
  platform: a.platform + b.platform,
  total: a.total + b.total,
});

export default function scorerMetricsQueries(api: Api, rt: Runtime): void {
  const scorers = rt.readModel(scorersProjection);
  const rollups = rt.readModel(scoringRollupsProjection);

  api.get(
    '/factory/:factory_uid/scorers/:scorer_uid/metrics',
    { schema: { params: scorerParams, querystring: query, response: { 200: answer }, tags: ['scorers'] } },
    async (req) => {
      const { factory_uid, scorer_uid } = req.params;
      const scorer = await scorers.get(scorer_uid);
      if (!scorer || scorer.factory_uid !== factory_uid || !req.principal!.teams.has(scorer.team_uid))
        throw new NotFound('scorer', scorer_uid);
      const q = req.query;
      const end = q.end_date ? new Date(q.end_date) : new Date(req.now);
      const start = q.start_date ? new Date(q.start_date) : new Date(end.getTime() - DEFAULT_RANGE_MS);
      if (start >= end) throw rangeError('start_date', 'start_date must be before end_date');
      // To the minute: the minute holding start counts whole, as does the one holding end (and
      // without an end_date, the minute of now: what was scored this instant counts).
      const from = periodStart(start, 'minute');
      const endMinute = periodStart(end, 'minute');
      const to = endMinute < end || !q.end_date ? nextPeriod(endMinute, 'minute') : endMinute;
      const binning: Binning = q.group_by_period;
      const bins = binsOf(from, to, binning, MAX_PERIODS);
      if (bins.length > MAX_PERIODS)
        throw rangeError('group_by_period', `the range holds more than ${MAX_PERIODS} periods of a ${binning}`);

      const tiled = bins.map((b) => {
        const lo = new Date(Math.max(b.getTime(), from.getTime()));
        const next = nextPeriod(b, binning);
        return tiles(lo, new Date(Math.min(next.getTime(), to.getTime())), binning).map((t) =>
          rollupKey(scorer.uid, t.grain, t.start.toISOString()),
        );
      });
      const rows = await rollups.getMany(tiled.flat());
      const series = tiled.map((keys) => {
        let pass = 0;
        let fail = 0;
        let runs = 0;
        let cost = NO_DOLLARS;
        for (const key of keys) {
          const row = rows.get(key);
          if (!row) continue;
          for (const s of row.scores) {
            if (outcomeOf(s.score, scorer.threshold) === 'pass') pass += s.count;
            else fail += s.count;
          }
          runs += row.judge_runs;
          cost = plus(cost, row.cost);
        }
        return { pass, fail, runs, cost };
      });
      const pass_count = series.reduce((n, s) => n + s.pass, 0);
      const fail_count = series.reduce((n, s) => n + s.fail, 0);
      const rate = (p: number, f: number) => (p + f ? p / (p + f) : null);
      return {
        scorer_uid: scorer.uid,
        factory_uid: scorer.factory_uid,
        team_uid: scorer.team_uid,
        as_of: req.now,
        start_date: start.toISOString(),
        end_date: end.toISOString(),
        group_by_period: binning,
        threshold: scorer.threshold,
        score_count: pass_count + fail_count,
        pass_count,
        fail_count,
        pass_rate: rate(pass_count, fail_count),
        period_list: bins.map((b) => b.toISOString()),
        series: {
          score_count: series.map((s) => s.pass + s.fail),
          pass_count: series.map((s) => s.pass),
          fail_count: series.map((s) => s.fail),
          pass_rate: series.map((s) => rate(s.pass, s.fail)),
        },
        ...(q.include_cost
          ? {
              cost: {
                judge_run_count: series.reduce((n, s) => n + s.runs, 0),
                dollars: series.reduce((c, s) => plus(c, s.cost), NO_DOLLARS),
                series: { judge_run_count: series.map((s) => s.runs), dollars: series.map((s) => s.cost) },
              },
            }
          : {}),
      };
    },
  );
}
