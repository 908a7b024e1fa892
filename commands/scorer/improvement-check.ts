/**
 * The self-improvement check, run once a minute (when an agent's failures start a run:
 * docs/features/scorers.md "Self-improvement"). The choice is recorded on the write side
 * (self-improvement-decider.ts), which lets each failure be reviewed once however many checks race.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { v5 as uuidv5 } from 'uuid';
import type { Service } from '../../src/feature.js';
import { timeOrderedId } from '../../src/ids.js';
import type { CommandContext } from '../../src/kernel/handle.js';
import { keyringFor } from '../../src/keyring.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection } from '../identity/public.js';
import { scorersProjection } from '../../projections/scorer/scorers.js';
import { scoringResultsProjection } from '../../projections/scorer/scoring-results.js';
import { type LiveScorer, scorerDecider } from './scorer-decider.js';
import { scorerKey, scorerStream, selfImprovementStream } from './events.js';
import { MAX_FAILURES_PER_RUN, OLDEST_FAILURE_MS, selfImprovementDecider } from './self-improvement-decider.js';

const CHECK_MS = 60_000;
const NAMESPACE = '9c0e2b7a-41d3-4f6e-8a15-3d2c7b9e5f04';

const systemContext = (now: Date): CommandContext => ({
  now: now.toISOString(),
  actor: { type: 'system', uid: 'self-improvement' },
  teams: {},
  team_uid: null,
  correlation_id: timeOrderedId(),
  causation_id: null,
  request_id: null,
});

/** The agents a scorer judges: those it names, or every agent of its factory. */
async function agentsOf(rt: Runtime, scorer: LiveScorer): Promise<string[]> {
  if (scorer.scope_mode === 'selected_agents') return scorer.agents.map((a) => a.uid);
  const agents = await findAll(rt.readModel(identitiesProjection), {
    filter: { factory_uid: scorer.factory_uid },
    sort: [['id', 'asc']],
    limit: 500,
  });
  return agents.map((a) => a.uid);
}

/**
 * One check: starts the self-improvement runs that are due, of every scorer or of `only` one;
 * `run_now` (the "run now" of one scorer) starts one for every agent with at least one unreviewed
 * failure. Returns how many it started.
 */
export async function checkSelfImprovement(
  rt: Runtime,
  only?: { scorer_uid: string; run_now?: boolean },
): Promise<number> {
  const now = rt.clock.now();
  const results = rt.readModel(scoringResultsProjection);
  const keyring = keyringFor(rt.config);
  const adHoc = only?.run_now === true;
  const uids = only
    ? [only.scorer_uid]
    : (
        await findAll(rt.readModel(scorersProjection), {
          filter: { self_improvement_enabled: true },
          sort: [
            ['created_at', 'asc'],
            ['id', 'asc'],
          ],
          limit: 500,
        })
      ).map((d) => d.uid);
  let started = 0;
  for (const uid of uids) {
    const scorer = await rt.state(scorerDecider, scorerStream(uid));
    if (scorer.status !== 'live' || !scorer.self_improvement.enabled) continue;
    for (const agent of await agentsOf(rt, scorer)) {
      const page = await results.find({
        filter: { scorer_uid: uid, agent_uid: agent, reviewed: false, live_score: { $lt: scorer.threshold } },
        sort: [
          ['live_scored_at', 'asc'],
          ['id', 'asc'],
        ],
        limit: MAX_FAILURES_PER_RUN,
      });
      const failures = page.items.flatMap((d) => (d.live ? [{ ...d.live, run_id: d.run_id }] : []));
      if (!failures.length) continue;
      const enough = failures.length >= scorer.self_improvement.failed_run_threshold;
      const old = now.getTime() - Date.parse(failures[0]!.scored_at) >= OLDEST_FAILURE_MS;
      if (!adHoc && !enough && !old) continue;
      const reasons = failures.map((f) => {
        const reason = f.reason_sealed === null ? null : keyring.open(scorerKey(uid), f.reason_sealed);
        return `### Run ${f.run_id} (${f.classification})\n\n${reason ?? '(no reason given)'}`;
      });
      const reasons_sealed = keyring.seal(scorerKey(uid), `## Judges' reasons\n\n${reasons.join('\n\n')}`);
      if (reasons_sealed === null) continue; // deleted meanwhile
      const { events } = await rt.execute(
        selfImprovementStream(uid, agent),
        selfImprovementDecider,
        {
          type: 'StartSelfImprovement',
          data: {
            scorer_uid: uid,
            agent_uid: agent,
            factory_uid: scorer.factory_uid,
            team_uid: scorer.team_uid,
            run_id: uuidv5(`${uid}:${agent}:${failures[0]!.attempt_id}`, NAMESPACE),
            failures: failures.map(({ run_id, attempt_id, classification, score, scored_at }) => ({
              run_id,
              attempt_id,
              classification,
              score,
              scored_at,
            })),
            reasons_sealed,
            why: adHoc ? 'run_now' : enough ? 'failed_run_threshold' : 'oldest_failure_age',
          },
        },
        { ...systemContext(now), team_uid: scorer.team_uid },
      );
      started += events.length;
    }
  }
  return started;
}

export function startSelfImprovementCheck(rt: Runtime): Service {
  const abort = new AbortController();
  const loop = (async () => {
    while (!abort.signal.aborted) {
      await delay(CHECK_MS, undefined, { signal: abort.signal }).catch(() => {});
      if (abort.signal.aborted) return;
      try {
        await checkSelfImprovement(rt);
      } catch (error) {
        rt.log.error({ err: error }, 'self-improvement check failed; trying again');
      }
    }
  })();
  return {
    async stop() {
      abort.abort();
      await loop;
    },
  };
}
