/**
 * What a scorer tells a team's event stream: each run it scored (the score and class, not the
 * judge's sealed reasons), as the scorer's results list them. Readable as the scorer is
 * (`visibleScorer`): its team's members.
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import { type ScoringEvent, scorerStream } from './events.js';
import { scorerDecider, visibleScorer } from './scorer-decider.js';

const scoredSchema = z.object({
  scorer_uid: z.string(),
  run_id: z.string().describe('The run scored'),
  factory_uid: z.string(),
  classification: z.string(),
  score: z.number(),
  scored_at: z.string(),
  live: z.boolean().describe("Whether it is now the run's live score for the scorer (the newest attempt that scored)"),
});

async function mapScored(rt: Runtime, event: RecordedEvent): Promise<StreamItem | null> {
  const d = (event as unknown as Extract<ScoringEvent, { type: 'ScoringJudgementRecorded' }>).data;
  const scorer = await rt.state(scorerDecider, scorerStream(d.scorer_uid));
  if (scorer.status !== 'live') return null;
  const { scorer_uid, run_id, factory_uid, classification, score, scored_at, live } = d;
  return {
    type: 'scorer.run_scored',
    data: { scorer_uid, run_id, factory_uid, classification, score, scored_at, live },
    team_uid: scorer.team_uid,
    factory_uid,
    run: null,
    readable: ({ principal, team }) => {
      const teams =
        team === null
          ? Object.fromEntries(principal.teams)
          : principal.teams.has(team)
            ? { [team]: principal.teams.get(team)! }
            : {};
      try {
        return visibleScorer(scorer, scorer_uid, { actor: principal, teams }) !== null;
      } catch {
        return false;
      }
    },
  };
}

export const scorerStreamEvents: StreamEventSource = {
  from: ['ScoringJudgementRecorded'],
  types: { 'scorer.run_scored': { feeds: ['team'], description: 'A scorer scored a run', schema: scoredSchema } },
  map: mapScored,
};
