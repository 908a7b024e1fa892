/**
 * Pull requests: their identity from URLs, what GitHub webhook bodies say of them, and the read
 * model that gathers both with the cost ledger's links and shares, on hand-made histories.
 */
import { describe, expect, it } from 'vitest';
import { type LedgerEvent, type PullRequestFactsObserved, pullRequestKey } from '../../../commands/analytics/events.js';
import { observeGithub, pullRequestRef } from '../../../commands/analytics/github.js';
import type { NewEvent } from '../../../src/eventstore/port.js';
import { type PullRequestDoc, pullRequestsProjection, sizeOf } from '../../../projections/analytics/pull-requests.js';
import { bot, person, pullRequest } from '../../helpers/analytics-fixtures.js';
import { type metadata, project, recorded } from '../../helpers/projection-spec.js';

const REPO = 'Acme/App';
const PR_URL = 'https://github.com/Acme/App/pull/7';
const ref = pullRequestRef(PR_URL)!;

/** The facts a body gives, recorded as the pull-request-facts reactor records them. */
function facts(body: Record<string, unknown>, n: number, team = 't-1'): PullRequestFactsObserved {
  const observed = observeGithub(body, `delivery:${n}`, '2026-03-02T00:00:00.000Z');
  if (observed?.kind !== 'pull_request') throw new Error('not about a pull request');
  const o = observed.observation;
  return {
    type: 'PullRequestFactsObserved',
    data: {
      ...o,
      pr_id: ref.pr_id,
      url: ref.url,
      provider: 'github',
      repo_full_name: REPO,
      pr_number: 7,
      factory_uid: `f-${team}`,
      team_uid: team,
      webhook_uid: 'w-1',
      delivery_id: `d-${n}`,
      source_event_id: `e-${n}`,
      received_at: '2026-03-02T00:00:00.000Z',
    },
  };
}

const linked = (
  at: string,
  run_id = 'r-1',
  root = 'r-1',
  shares: Array<[string, number]> = [[ref.pr_id, 0]],
  team = 't-1',
): LedgerEvent => ({
  type: 'PullRequestLinked',
  data: {
    root_run_id: root,
    pr_id: ref.pr_id,
    url: ref.url,
    provider: 'github',
    repo_full_name: REPO,
    pr_number: 7,
    branch: 'fix',
    factory_uid: `f-${team}`,
    team_uid: team,
    at,
    cause: { event_id: `link-${run_id}`, revision: 4 },
    run: {
      run_id,
      root_run_id: root,
      created_at: '2026-03-02T08:00:00.000Z',
      creator: { type: 'user', uid: 'u-1' },
      source: 'API',
      requested_model_id: 'big',
    },
    follow_ups: 0,
    tree_total: { inference: 0, compute: 0, platform: 0 },
    pr_shares: shares.map(([pr_id, inference]) => ({
      pr_id,
      usd: { inference, compute: 0, platform: 0 },
      inference_by_model: { big: inference },
    })),
  },
});

const opened = facts(
  {
    action: 'opened',
    pull_request: pullRequest(REPO, 7, { created_at: '2026-03-02T09:00:00Z', additions: 120, deletions: 30 }),
    repository: { full_name: REPO },
    sender: bot('shopfloor[bot]'),
  },
  1,
);
const review = (id: number, state: string, user: Record<string, string>, action = 'submitted') => ({
  action,
  review: { id, state, user, submitted_at: '2026-03-02T11:00:00Z' },
  pull_request: pullRequest(REPO, 7, { created_at: '2026-03-02T09:00:00Z', updated_at: '2026-03-02T11:00:00Z' }),
  repository: { full_name: REPO },
  sender: user,
});

async function docOf(events: Array<NewEvent & { metadata?: ReturnType<typeof metadata> }>, times = 1) {
  const docs = await project(pullRequestsProjection, recorded(events), { times });
  return docs[pullRequestKey('t-1', ref.pr_id)] as PullRequestDoc;
}

describe('pull request identity', () => {
  it('names one pull request by repository and number, whatever the case or the page of it linked', () => {
    const a = pullRequestRef('https://github.com/acme/app/pull/7/files?w=1');
    expect(a).toMatchObject({ pr_id: ref.pr_id, provider: 'github', pr_number: 7 });
    expect(pullRequestRef('https://gitlab.com/acme/app/-/merge_requests/3')).toMatchObject({
      provider: 'gitlab',
      repo_full_name: 'acme/app',
    });
    expect(pullRequestRef('not a url')).toBeNull();
  });
});

describe('human interactions', () => {
  it('counts a person’s review and not a bot’s, and drops a review once dismissed', async () => {
    const doc = await docOf([
      opened,
      linked('2026-03-02T09:05:00.000Z'),
      facts(review(1, 'commented', bot('reviewer[bot]')), 2),
      facts(review(2, 'APPROVED', { login: 'ci-app', type: 'Bot' }), 3),
      facts(review(3, 'changes_requested', person('ada')), 4),
      facts(review(4, 'approved', person('grace')), 5),
      facts(review(4, 'approved', person('grace'), 'dismissed'), 6),
      facts(
        {
          action: 'created',
          issue: { number: 7, pull_request: { html_url: PR_URL } },
          comment: { id: 9, user: person('ada'), created_at: '2026-03-02T12:00:00Z' },
          repository: { full_name: REPO },
          sender: person('ada'),
        },
        7,
      ),
    ]);
    // The bots' reviews are none; Ada's request for changes and comment count; Grace's approval was dismissed.
    expect(doc.human_interactions).toMatchObject({
      opened: 0,
      review_commented: 0,
      review_approved: 0,
      review_changes_requested: 1,
      comment: 1,
      total: 2,
    });
    // The first review by a person started the review stage (a bot's does not).
    expect(doc.first_human_review_at).toBe('2026-03-02T11:00:00.000Z');
  });

  it('counts a push to the branch once, whether GitHub says so as a push or as the pull request synchronized', async () => {
    const sync = (sender: Record<string, string>) => ({
      action: 'synchronize',
      after: 'c0ffee',
      pull_request: pullRequest(REPO, 7, { updated_at: '2026-03-02T10:00:00Z' }),
      repository: { full_name: REPO },
      sender,
    });
    const push: PullRequestFactsObserved = {
      ...facts(sync(person('ada')), 3),
      data: {
        ...facts(sync(person('ada')), 3).data,
        event: 'push',
        action: null,
        snapshot: null,
        interaction: { kind: 'code_push', key: 'sha:c0ffee' },
      },
    };
    const doc = await docOf([
      opened,
      linked('2026-03-02T09:05:00.000Z'),
      facts(sync(person('ada')), 2),
      push,
      facts(sync(bot('dependabot[bot]')), 4),
    ]);
    expect(doc.human_interactions.code_push).toBe(1);
    expect(doc.human_code_change).toBe(true);
  });
});

describe('the pull-request read model', () => {
  it('keeps facts that came before any run named the pull request, and lists it from the first link', async () => {
    const before = await docOf([opened]);
    expect(before).toMatchObject({
      listed: false,
      first_seen_at: null,
      history_complete: true,
      additions: 120,
      size: 'M',
    });
    const after = await docOf([
      opened,
      linked('2026-03-02T09:05:00.000Z'),
      linked('2026-03-02T09:30:00.000Z', 'r-2', 'r-2'),
    ]);
    expect(after).toMatchObject({
      listed: true,
      first_seen_at: '2026-03-02T09:05:00.000Z',
      kickoff_at: '2026-03-02T08:00:00.000Z',
      runs: [
        { run_id: 'r-1', root_run_id: 'r-1' },
        { run_id: 'r-2', root_run_id: 'r-2' },
      ],
    });
  });

  it('has null details and an incomplete history when no delivery told of its opening', async () => {
    const doc = await docOf([linked('2026-03-02T09:05:00.000Z')]);
    expect(doc).toMatchObject({ state: null, title: null, additions: null, size: null, history_complete: false });
  });

  it('sums its share of each tree that produced it, and is the same when its events are applied twice', async () => {
    const events = [
      linked('2026-03-02T09:05:00.000Z', 'r-1', 'r-1', [[ref.pr_id, 2]]),
      linked('2026-03-02T09:30:00.000Z', 'r-2', 'r-2', [[ref.pr_id, 1.5]]),
    ];
    const doc = await docOf(events);
    expect(doc.cost).toEqual({ inference: 3.5, compute: 0, platform: 0, total: 3.5 });
    expect(doc.models).toEqual({ big: 3.5 });
    expect(await docOf(events, 2)).toEqual(doc);
  });

  it('takes the newest snapshot of the pull request, whatever order deliveries arrive in', async () => {
    const merged = facts(
      {
        action: 'closed',
        pull_request: pullRequest(REPO, 7, {
          state: 'closed',
          merged: true,
          created_at: '2026-03-02T09:00:00Z',
          merged_at: '2026-03-03T10:00:00Z',
          closed_at: '2026-03-03T10:00:00Z',
          updated_at: '2026-03-03T10:00:00Z',
          additions: 500,
          deletions: 600,
        }),
        repository: { full_name: REPO },
        sender: person('ada'),
      },
      9,
    );
    const doc = await docOf([merged, opened]);
    expect(doc).toMatchObject({
      state: 'merged',
      merged_at: '2026-03-03T10:00:00.000Z',
      opened_at: '2026-03-02T09:00:00.000Z',
      size: 'XL',
      history_complete: true,
    });
    // Merging is a person's action on the pull request, not a change of its code.
    expect(doc.human_interactions).toMatchObject({ pr_action: 1, total: 1 });
    expect(doc.human_code_change).toBe(false);
  });

  it('keeps each team’s record of one URL apart: its runs, facts, shares and follow-ups', async () => {
    const followUp: LedgerEvent = {
      type: 'RunFollowUpCounted',
      data: {
        root_run_id: 'r-2',
        run_id: 'r-2',
        at: '2026-03-02T10:00:00.000Z',
        cause: { event_id: 'follow-r-2', revision: 9 },
        follow_ups: 2,
        pr_ids: [ref.pr_id],
      },
    };
    const events = recorded([
      opened,
      linked('2026-03-02T09:05:00.000Z', 'r-1', 'r-1', [[ref.pr_id, 2]]),
      linked('2026-03-02T09:30:00.000Z', 'r-2', 'r-2', [[ref.pr_id, 5]], 't-2'),
      followUp,
    ]);
    const docs = await project(pullRequestsProjection, events);
    expect(docs[pullRequestKey('t-1', ref.pr_id)]).toMatchObject({
      team_uid: 't-1',
      factory_uid: 'f-t-1',
      runs: [{ run_id: 'r-1' }],
      cost: { total: 2 },
      history_complete: true,
      human_interactions: { follow_up_message: 0 },
    });
    expect(docs[pullRequestKey('t-2', ref.pr_id)]).toMatchObject({
      team_uid: 't-2',
      factory_uid: 'f-t-2',
      runs: [{ run_id: 'r-2' }],
      cost: { total: 5 },
      history_complete: false,
      human_interactions: { follow_up_message: 2 },
    });
  });

  it('buckets sizes by lines changed: S under 100, M under 500, L under 1,000, XL from 1,000', () => {
    expect([sizeOf(50, 49), sizeOf(50, 50), sizeOf(499, 0), sizeOf(999, 0), sizeOf(1000, 0), sizeOf(null, 3)]).toEqual([
      'S',
      'M',
      'M',
      'L',
      'XL',
      null,
    ]);
  });
});
