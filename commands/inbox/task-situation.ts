/**
 * What a task's situation calls for in the inbox, now: the pure rules (`taskNotifications`) and
 * the facts they read (`taskSituation`), gathered from the write side's kept states and the runs
 * read model (the task's run tree and its artifacts).
 */
import { findAll } from '../../src/readstore/paging.js';
import type { Runtime } from '../../src/runtime.js';
import { runsProjection, runState } from '../run/public.js';
import { conversationDecider } from '../conversation/public.js';
import { conversationStream } from '../conversation/events.js';
import type { RunQuestion, RunState } from '../run/events.js';
import { taskState, type LiveTask } from '../task/public.js';
import type { NotificationContent, TaskKind } from './events.js';

/** A pull request status that says nobody needs to review it any more. */
const DONE_PR = /^(merged|closed)$/i;
const MAX_TITLE = 300;

export interface TaskSituation {
  task: Pick<LiveTask, 'uid' | 'factory_uid' | 'team_uid' | 'title' | 'stage' | 'author'>;
  /** The newest root run of the task's conversation. */
  current: { run_id: string; state: RunState; message: string | null } | null;
  /** Each pull request of the run tree once, with the status its latest report gave, in order of appearance. */
  prs: Array<{ url: string; status: string | null; run_id: string }>;
  /** Runs of the tree that reported a plan. */
  plans: Array<{ run_id: string; title: string | null }>;
  /** Questions the tree's runs asked and nobody answered yet. */
  questions: Array<{ run_id: string; ask_id: string; questions: RunQuestion[] }>;
}

const cut = (s: string) => (s.length > MAX_TITLE ? `${s.slice(0, MAX_TITLE - 1)}…` : s);

/** The notifications the situation calls for, each with a key that stays the same while it stays relevant. */
export function taskNotifications(s: TaskSituation): Array<NotificationContent & { kind: TaskKind }> {
  const { task } = s;
  if (task.stage === 'COMPLETE' || task.stage === 'CANCELLED') return [];
  const base = { stage: task.stage, urls: [] as string[], questions: [] as RunQuestion[] };
  const out: Array<NotificationContent & { kind: TaskKind }> = s.questions.map((q) => ({
    ...base,
    kind: 'question',
    key: `question:${q.run_id}:${q.ask_id}`,
    title: cut(q.questions[0]!.question),
    description: q.questions.map((x) => x.question).join('\n\n'),
    run_id: q.run_id,
    questions: q.questions,
  }));
  const open = s.prs.filter((p) => !DONE_PR.test(p.status ?? ''));
  const urls = open.map((p) => p.url);
  const latestRun = open.at(-1)?.run_id ?? s.plans.at(-1)?.run_id ?? null;
  if (task.stage === 'SPEC' && (open.length || s.plans.length)) {
    const plans = s.plans.map((p) => p.title).filter((t): t is string => !!t);
    out.push({
      ...base,
      kind: 'spec_review',
      key: `spec_review:${urls.join(' ')}`,
      title: cut(`Spec ready for review: ${task.title}`),
      description: plans.length ? plans.join('\n') : null,
      run_id: latestRun,
      urls,
    });
  }
  if (task.stage === 'REVIEW' && open.length) {
    out.push({
      ...base,
      kind: 'pr_review',
      key: `pr_review:${urls.join(' ')}`,
      title: cut(`${open.length > 1 ? 'Pull requests' : 'Pull request'} ready for review: ${task.title}`),
      description: null,
      run_id: latestRun,
      urls,
    });
  }
  // Blocked and failed only when nothing else on the task needs the person.
  const run = s.current;
  if (out.length === 0 && run && ['BLOCKED', 'FAILED', 'ERROR'].includes(run.state)) {
    const blocked = run.state === 'BLOCKED';
    out.push({
      ...base,
      kind: blocked ? 'blocked' : 'failed',
      key: `${blocked ? 'blocked' : 'failed'}:${run.run_id}`,
      title: cut(`${blocked ? 'Blocked' : 'Failed'}: ${task.title}`),
      description: run.message,
      run_id: run.run_id,
    });
  }
  return out;
}

/** The facts of a live task, or null when it is gone. */
export async function taskSituation(rt: Runtime, taskUid: string): Promise<TaskSituation | null> {
  const task = await taskState(rt, taskUid);
  if (task.status !== 'live') return null;
  const conversation = await rt.state(conversationDecider, conversationStream(task.conversation_id));
  const own = await Promise.all(conversation.runs.map((r) => runState(rt, r.run_id)));
  const live = own.filter((r) => r !== null);
  const current = live.findLast((r) => r.created.parent_run_id === null) ?? null;
  const ids = new Set(live.map((r) => r.run_id));
  const roots = [...new Set(live.map((r) => r.root_run_id))];
  const tree = roots.length
    ? (
        await findAll(rt.readModel(runsProjection), {
          filter: { root_run_id: { $in: roots } },
          sort: [['id', 'asc']],
          limit: 500,
        })
      ).filter((r) => ids.has(r.run_id) || r.ancestors.some((a) => ids.has(a)))
    : [];

  const artifacts = tree
    .flatMap((r) => r.artifacts.map((a) => ({ a, run_id: r.run_id })))
    .sort((x, y) => x.a.created_at.localeCompare(y.a.created_at));
  const prs = new Map<string, TaskSituation['prs'][number]>();
  const plans: TaskSituation['plans'] = [];
  for (const { a, run_id } of artifacts) {
    if (a.artifact_type === 'PULL_REQUEST' && typeof a.url === 'string') {
      const seen = prs.get(a.url);
      const status = typeof a.status === 'string' ? a.status : (seen?.status ?? null);
      prs.set(a.url, { url: a.url, status, run_id: seen?.run_id ?? run_id });
    }
    if (a.artifact_type === 'PLAN') plans.push({ run_id, title: typeof a.title === 'string' ? a.title : null });
  }

  const questions: TaskSituation['questions'] = [];
  for (const r of tree) {
    const state = ids.has(r.run_id) ? live.find((l) => l.run_id === r.run_id)! : await runState(rt, r.run_id);
    for (const q of state?.open_questions ?? []) questions.push({ run_id: r.run_id, ...q });
  }

  return {
    task: task,
    current: current && {
      run_id: current.run_id,
      state: current.state,
      message: current.status_message?.message ?? null,
    },
    prs: [...prs.values()],
    plans,
    questions,
  };
}
