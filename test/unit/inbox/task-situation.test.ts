/** What a task's situation calls for in the inbox: the rules of each kind, on hand-made situations. */
import { describe, expect, it } from 'vitest';
import { type TaskSituation, taskNotifications } from '../../../commands/inbox/task-situation.js';

const situation = (s: Partial<TaskSituation> & { stage?: TaskSituation['task']['stage'] }): TaskSituation => ({
  task: {
    uid: 'k',
    factory_uid: 'f',
    team_uid: 't',
    title: 'Fix payments',
    stage: s.stage ?? 'IMPLEMENT',
    author: null,
  },
  current: s.current ?? null,
  prs: s.prs ?? [],
  plans: s.plans ?? [],
  questions: s.questions ?? [],
});
const kinds = (s: TaskSituation) => taskNotifications(s).map((n) => n.kind);
const q = {
  run_id: 'r',
  ask_id: 'a',
  questions: [{ id: 'q1', question: 'Which?', options: [], type: 'single_select' as const }],
};

describe('task notifications', () => {
  it('spec_review in SPEC with a plan or an open PR; not without', () => {
    expect(kinds(situation({ stage: 'SPEC', plans: [{ run_id: 'r', title: 'Plan' }] }))).toEqual(['spec_review']);
    expect(kinds(situation({ stage: 'SPEC', prs: [{ url: 'u', status: null, run_id: 'r' }] }))).toEqual([
      'spec_review',
    ]);
    expect(kinds(situation({ stage: 'SPEC' }))).toEqual([]);
    expect(kinds(situation({ stage: 'SPEC', prs: [{ url: 'u', status: 'MERGED', run_id: 'r' }] }))).toEqual([]);
  });

  it('pr_review in REVIEW with open PRs, keyed by them', () => {
    const open = situation({
      stage: 'REVIEW',
      prs: [
        { url: 'a', status: 'open', run_id: 'r' },
        { url: 'b', status: 'closed', run_id: 'r' },
      ],
    });
    expect(taskNotifications(open)).toEqual([
      expect.objectContaining({ kind: 'pr_review', urls: ['a'], key: 'pr_review:a' }),
    ]);
    expect(kinds(situation({ stage: 'IMPLEMENT', prs: [{ url: 'a', status: null, run_id: 'r' }] }))).toEqual([]);
  });

  it('a question per unanswered ask, whatever the stage but the ended ones', () => {
    expect(kinds(situation({ questions: [q] }))).toEqual(['question']);
    expect(kinds(situation({ stage: 'COMPLETE', questions: [q] }))).toEqual([]);
  });

  it('blocked and failed for the current run, only when nothing else needs the person', () => {
    const blocked = { run_id: 'r', state: 'BLOCKED' as const, message: 'waiting' };
    expect(kinds(situation({ current: blocked }))).toEqual(['blocked']);
    expect(kinds(situation({ current: blocked, questions: [q] }))).toEqual(['question']);
    expect(kinds(situation({ current: { ...blocked, state: 'FAILED' } }))).toEqual(['failed']);
    expect(kinds(situation({ current: { ...blocked, state: 'ERROR' } }))).toEqual(['failed']);
    expect(kinds(situation({ current: { ...blocked, state: 'INPROGRESS' } }))).toEqual([]);
    expect(kinds(situation({ stage: 'CANCELLED', current: { ...blocked, state: 'FAILED' } }))).toEqual([]);
  });
});
