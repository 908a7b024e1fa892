/**
 * Pull requests from their URLs, and what a GitHub webhook body says of one, pure. The GitHub event
 * is told from the body's shape, not from `X-GitHub-Event`: only the body is signed.
 */
import { createHash } from 'node:crypto';
import type { InteractionKind, PullRequestFactsObserved } from './events.js';
import { own } from '../../src/own-keys.js';

export interface PullRequestRef {
  pr_id: string;
  /** The canonical URL (`https://github.com/<owner>/<repo>/pull/<number>`), or the URL as given. */
  url: string;
  provider: string;
  repo_full_name: string | null;
  pr_number: number | null;
}

const GITHUB_PR = /^https?:\/\/(?:www\.)?github\.com\/([\w.-]+)\/([\w.-]+)\/pulls?\/(\d+)(?:[/?#].*)?$/i;
const GITLAB_MR = /^https?:\/\/([\w.-]+)\/([\w.-]+(?:\/[\w.-]+)*)\/-\/merge_requests\/(\d+)(?:[/?#].*)?$/i;

const idOf = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 32);

/**
 * Which pull request a URL names: GitHub pull requests and GitLab merge requests by repository and
 * number, case aside (`/files`, a query or a fragment aside too); any other URL by itself, without
 * its query and fragment. The same pull request always gets the same `pr_id`.
 */
export function pullRequestRef(raw: string): PullRequestRef | null {
  const url = raw.trim();
  const github = GITHUB_PR.exec(url);
  if (github) {
    const [, owner, repo, n] = github;
    const canonical = `https://github.com/${owner}/${repo}/pull/${Number(n)}`;
    return {
      pr_id: idOf(canonical.toLowerCase()),
      url: canonical,
      provider: 'github',
      repo_full_name: `${owner}/${repo}`,
      pr_number: Number(n),
    };
  }
  const gitlab = GITLAB_MR.exec(url);
  if (gitlab) {
    const [, host, path, n] = gitlab;
    const canonical = `https://${host}/${path}/-/merge_requests/${Number(n)}`;
    return {
      pr_id: idOf(canonical.toLowerCase()),
      url: canonical,
      provider: 'gitlab',
      repo_full_name: path!,
      pr_number: Number(n),
    };
  }
  const bare = url.split(/[?#]/)[0]!.replace(/\/+$/, '');
  if (!/^https?:\/\/\S+$/i.test(bare)) return null;
  return { pr_id: idOf(bare), url: bare, provider: 'UNKNOWN', repo_full_name: null, pr_number: null };
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const time = (v: unknown): string | null => {
  const s = str(v);
  if (s !== null) return Number.isNaN(Date.parse(s)) ? null : new Date(s).toISOString();
  const n = num(v);
  return n === null ? null : new Date(n * 1000).toISOString(); // push payloads give seconds
};

/**
 * A person, not a bot or an app acting for one: GitHub marks bots with `type: Bot` and logins
 * ending in `[bot]`; a comment made through an app names it in `performed_via_github_app`.
 */
function isHuman(user: unknown, via?: unknown): boolean {
  const u = obj(user);
  if (!u) return false;
  const login = str(u.login) ?? '';
  return u.type !== 'Bot' && !login.toLowerCase().endsWith('[bot]') && !obj(via);
}

type Observed = PullRequestFactsObserved['data'];
/** What a body says of one pull request, before the delivery's own fields are added. */
type Observation = Pick<
  Observed,
  'event' | 'action' | 'at' | 'sender' | 'snapshot' | 'interaction' | 'review' | 'url' | 'repo_full_name' | 'pr_number'
>;

export type GithubFacts =
  | { kind: 'pull_request'; observation: Observation }
  | {
      kind: 'push';
      repo_full_name: string;
      branch: string;
      sha: string;
      at: string | null;
      sender: { login: string | null; human: boolean };
    };

function snapshotOf(pr: Json): NonNullable<Observed['snapshot']> {
  const head = obj(pr.head);
  return {
    title: str(pr.title) ?? '',
    author_login: str(obj(pr.user)?.login),
    state: pr.state === 'closed' ? 'closed' : 'open',
    draft: pr.draft === true,
    merged: pr.merged === true || str(pr.merged_at) !== null,
    head_branch: str(head?.ref),
    opened_at: time(pr.created_at),
    merged_at: time(pr.merged_at),
    closed_at: time(pr.closed_at),
    updated_at: time(pr.updated_at),
    additions: num(pr.additions),
    deletions: num(pr.deletions),
    changed_files: num(pr.changed_files),
    commits: num(pr.commits),
  };
}

const REVIEW_KINDS: Record<string, InteractionKind> = {
  approved: 'review_approved',
  changes_requested: 'review_changes_requested',
  commented: 'review_commented',
};

/** Who acted: their login, and whether they are a person. */
const who = (user: unknown, via?: unknown) => ({ login: str(obj(user)?.login), human: isHuman(user, via) });

/** How an observation names its pull request: its URL, repository and number. */
const prFields = (b: Json, pr: Json) => ({
  url: str(pr.html_url) ?? '',
  repo_full_name: str(obj(b.repository)?.full_name) ?? '',
  pr_number: num(pr.number) ?? 0,
});

/** An action on the pull request itself: opened, a push to its branch (`synchronize`), any other. */
function pullRequestAction(b: Json, pr: Json, action: string, deliveryKey: string, receivedAt: string): Observation {
  const snapshot = snapshotOf(pr);
  const by = who(obj(b.sender));
  const kind: InteractionKind = action === 'opened' ? 'opened' : action === 'synchronize' ? 'code_push' : 'pr_action';
  const key =
    kind === 'opened' ? 'opened' : kind === 'code_push' ? `sha:${str(b.after) ?? str(obj(pr.head)?.sha)}` : deliveryKey;
  const at =
    (action === 'opened' ? snapshot.opened_at : action === 'closed' ? snapshot.closed_at : snapshot.updated_at) ??
    receivedAt;
  return {
    event: 'pull_request',
    action,
    at,
    sender: by,
    snapshot,
    interaction: by.human ? { kind, key } : null,
    review: null,
    ...prFields(b, pr),
    pr_number: num(pr.number) ?? num(b.number) ?? 0,
  };
}

/** A review submitted (a human's counts as an interaction of its kind) or dismissed. */
function reviewAction(
  b: Json,
  pr: Json,
  review: Json,
  action: string,
  deliveryKey: string,
  receivedAt: string,
): Observation {
  const by = who(review.user ?? obj(b.sender));
  const id = String(review.id ?? deliveryKey);
  const submitted = time(review.submitted_at);
  const kind = own(REVIEW_KINDS, String(review.state).toLowerCase());
  return {
    event: 'pull_request_review',
    action,
    at: submitted ?? receivedAt,
    sender: by,
    snapshot: snapshotOf(pr),
    interaction: action === 'submitted' && by.human && kind ? { kind, key: `review:${id}` } : null,
    review:
      action === 'dismissed'
        ? { id, submitted_at: submitted, dismissed: true }
        : action === 'submitted' && by.human
          ? { id, submitted_at: submitted, dismissed: false }
          : null,
    ...prFields(b, pr),
  };
}

/** A comment on the pull request's code. */
function reviewComment(b: Json, pr: Json, comment: Json, action: string, receivedAt: string): Observation {
  const by = who(comment.user ?? obj(b.sender), comment.performed_via_github_app);
  return {
    event: 'pull_request_review_comment',
    action,
    at: time(comment.created_at) ?? receivedAt,
    sender: by,
    snapshot: snapshotOf(pr),
    interaction:
      action === 'created' && by.human ? { kind: 'review_comment', key: `review_comment:${comment.id}` } : null,
    review: null,
    ...prFields(b, pr),
  };
}

/** A comment on the pull request's conversation (GitHub's issue comment on a pull request). */
function issueComment(
  b: Json,
  issue: Json,
  issuePr: Json,
  comment: Json,
  action: string,
  receivedAt: string,
): Observation {
  const by = who(comment.user ?? obj(b.sender), comment.performed_via_github_app);
  return {
    event: 'issue_comment',
    action,
    at: time(comment.created_at) ?? receivedAt,
    sender: by,
    snapshot: null,
    interaction: action === 'created' && by.human ? { kind: 'comment', key: `comment:${comment.id}` } : null,
    review: null,
    url: str(issuePr.html_url) ?? str(issue.html_url) ?? '',
    repo_full_name: str(obj(b.repository)?.full_name) ?? '',
    pr_number: num(issue.number) ?? 0,
  };
}

/** A push of commits to a branch (not a deletion). */
function pushTo(b: Json): GithubFacts | null {
  const ref = str(b.ref);
  const sha = str(b.after);
  const repo = str(obj(b.repository)?.full_name);
  if (!ref?.startsWith('refs/heads/') || !sha || !repo || !Array.isArray(b.commits) || b.deleted === true) return null;
  if (/^0+$/.test(sha)) return null;
  const headCommit = obj(b.head_commit);
  return {
    kind: 'push',
    repo_full_name: repo,
    branch: ref.slice('refs/heads/'.length),
    sha,
    at: time(headCommit?.timestamp) ?? time(obj(b.repository)?.pushed_at),
    sender: who(obj(b.sender) ?? b.pusher),
  };
}

/** What a body says of one pull request, by its shape; null when it is of none. */
function observePullRequest(b: Json, deliveryKey: string, receivedAt: string): Observation | null {
  const action = str(b.action);
  if (!action) return null;
  const pr = obj(b.pull_request);
  const review = obj(b.review);
  const comment = obj(b.comment);
  if (pr && !b.review && !b.comment) return pullRequestAction(b, pr, action, deliveryKey, receivedAt);
  if (pr && review) return reviewAction(b, pr, review, action, deliveryKey, receivedAt);
  if (pr && comment) return reviewComment(b, pr, comment, action, receivedAt);
  const issue = obj(b.issue);
  const issuePr = obj(issue?.pull_request);
  if (issue && issuePr && comment) return issueComment(b, issue, issuePr, comment, action, receivedAt);
  return null;
}

/**
 * What a GitHub webhook body says: of one pull request (`pull_request`, `pull_request_review`,
 * `pull_request_review_comment`, and `issue_comment` on a pull request), or of a push to a branch;
 * null for anything else. `deliveryKey` keys interactions that have no id of their own (an action
 * on the pull request), so a delivery counts once.
 */
export function observeGithub(body: unknown, deliveryKey: string, receivedAt: string): GithubFacts | null {
  const b = obj(body);
  if (!b) return null;
  const observation = observePullRequest(b, deliveryKey, receivedAt);
  if (observation) return { kind: 'pull_request', observation };
  return pushTo(b);
}
