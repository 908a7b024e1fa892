/**
 * `pullrequest-<team_uid>:<pr_id>`: what one team's GitHub deliveries said of one pull request, each
 * delivery once (a replayed reaction to the same delivery records nothing).
 */
import type { Decider } from '../../src/kernel/decider.js';
import type { PullRequestEvent, PullRequestFactsObserved } from './events.js';

export type PullRequestCommand = { type: 'RecordFacts'; data: PullRequestFactsObserved['data'] };

export interface PullRequestFactsState {
  /** The delivery events recorded (`source_event_id`). */
  seen: string[];
}

export const pullRequestFactsDecider: Decider<PullRequestCommand, PullRequestEvent, PullRequestFactsState> = {
  initialState: () => ({ seen: [] }),
  evolve: (state, event) => ({ seen: [...state.seen, event.data.source_event_id] }),
  decide: (command, state) =>
    state.seen.includes(command.data.source_event_id) ? [] : [{ type: 'PullRequestFactsObserved', data: command.data }],
};
