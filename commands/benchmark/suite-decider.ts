/**
 * The rules of a benchmark suite: who may change it (the people of its factory's team), that its
 * task titles are unique (an identical task is the existing one; the same title with another
 * content is a conflict), how many tasks it holds, and that every change is a new version.
 */
import type { Decider, DecideContext } from '../../src/kernel/decider.js';
import { Conflict, Forbidden, NotFound } from '../../src/kernel/errors.js';
import type { SuiteEvent, SuiteFields, SuiteTask, TaskContent } from './events.js';
import { ownsKey } from '../../src/own-keys.js';

/** Tasks a suite holds at most. */
const MAX_SUITE_TASKS = 100;

export type SuiteCommand =
  | {
      type: 'CreateSuite';
      data: SuiteFields & { uid: string; factory_uid: string; team_uid: string; tasks: SuiteTask[] };
    }
  | { type: 'UpdateSuite'; data: { changes: Partial<SuiteFields> } }
  | { type: 'DeleteSuite'; data: Record<string, never> }
  | { type: 'AddTask'; data: { task: SuiteTask } }
  | { type: 'EditTask'; data: { task_uid: string; changes: Partial<TaskContent> } }
  | { type: 'DeleteTask'; data: { task_uid: string } };

export type LiveSuite = SuiteFields & {
  status: 'live';
  uid: string;
  factory_uid: string;
  team_uid: string;
  version: number;
  /** In the order they were added. */
  tasks: SuiteTask[];
  next_task_id: number;
};

export type SuiteState =
  | { status: 'none' }
  | { status: 'deleted'; uid: string; factory_uid: string; team_uid: string; version: number }
  | LiveSuite;

/** Titles compare trimmed and case-insensitively: "Fix the login" and "fix the login " are one title. */
export const titleKey = (title: string) => title.trim().toLowerCase();

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The content of a task, in one key order, for comparing. */
const contentOf = (t: TaskContent): TaskContent => ({
  title: t.title,
  prompt: t.prompt,
  success_criteria: t.success_criteria,
  source_run_id: t.source_run_id,
  starting_repo_refs: t.starting_repo_refs,
  tags: t.tags,
  labels: t.labels,
});

/** Suites are managed by the people of their factory's team; its agents read them; others see nothing. */
function assertManager(teamUid: string, context: DecideContext): void {
  if (context.actor.type === 'system') return;
  if (!ownsKey(context.teams, teamUid)) throw new NotFound('factory');
  if (context.actor.type !== 'user') throw new Forbidden('only people of the team manage benchmarks');
}

/** The live suite, if the caller's team owns it. */
export function visibleSuite(state: SuiteState, uid: string, context: Pick<DecideContext, 'actor' | 'teams'>) {
  if (state.status !== 'live' || (context.actor.type !== 'system' && !ownsKey(context.teams, state.team_uid)))
    throw new NotFound('suite', uid);
  return state;
}

/** The live task of another title than `exceptUid`'s that `title` would repeat, if any. */
const titled = (s: LiveSuite, title: string, exceptUid?: string) =>
  s.tasks.find((t) => t.uid !== exceptUid && titleKey(t.title) === titleKey(title));

const titleConflict = (title: string) =>
  new Conflict(
    `the suite has a task titled "${title.trim()}" with other content; edit that task or choose another title`,
    'task_title_conflict',
  );

export const suiteDecider: Decider<SuiteCommand, SuiteEvent, SuiteState> = {
  initialState: () => ({ status: 'none' }),

  evolve: (state, event) => {
    if (event.type === 'BenchmarkSuiteCreated') {
      const { creator: _creator, ...d } = event.data;
      return { status: 'live', ...d, tasks: [], next_task_id: 1 };
    }
    if (state.status !== 'live') return state;
    const version = event.data.version;
    switch (event.type) {
      case 'BenchmarkSuiteUpdated':
        return { ...state, ...event.data.changes, version };
      case 'BenchmarkSuiteDeleted':
        return { status: 'deleted', uid: state.uid, factory_uid: state.factory_uid, team_uid: state.team_uid, version };
      case 'BenchmarkTaskAdded': {
        const { task } = event.data;
        return {
          ...state,
          version,
          tasks: [...state.tasks, task],
          next_task_id: Math.max(state.next_task_id, task.id + 1),
        };
      }
      case 'BenchmarkTaskEdited': {
        const { task } = event.data;
        return { ...state, version, tasks: state.tasks.map((t) => (t.uid === task.uid ? task : t)) };
      }
      case 'BenchmarkTaskDeleted':
        return { ...state, version, tasks: state.tasks.filter((t) => t.uid !== event.data.task_uid) };
    }
  },

  decide: (command, state, context) => {
    if (command.type === 'CreateSuite') {
      if (state.status !== 'none') throw new Conflict(`a suite ${command.data.uid} exists (or existed) in the factory`);
      const { tasks, ...suite } = command.data;
      assertManager(suite.team_uid, context);
      if (tasks.length > MAX_SUITE_TASKS)
        throw new Conflict(`a suite holds at most ${MAX_SUITE_TASKS} tasks`, 'limit_exceeded');
      const keys = tasks.map((t) => titleKey(t.title));
      const twice = tasks.find((t, i) => keys.indexOf(titleKey(t.title)) !== i);
      if (twice) throw titleConflict(twice.title);
      const creator = context.actor;
      const base = { suite_uid: suite.uid, factory_uid: suite.factory_uid, version: 1 };
      return [
        { type: 'BenchmarkSuiteCreated', data: { ...suite, version: 1, creator } },
        ...tasks.map((task) => ({ type: 'BenchmarkTaskAdded' as const, data: { ...base, task } })),
      ];
    }
    if (state.status === 'none' || state.status === 'deleted') throw new NotFound('suite');
    const s = visibleSuite(state, state.uid, context);
    assertManager(s.team_uid, context);
    const version = s.version + 1;
    const base = { suite_uid: s.uid, factory_uid: s.factory_uid, version };
    switch (command.type) {
      case 'UpdateSuite': {
        const changes = Object.fromEntries(
          Object.entries(command.data.changes).filter(
            ([k, v]) => v !== undefined && !same(v, s[k as keyof SuiteFields]),
          ),
        ) as Partial<SuiteFields>;
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'BenchmarkSuiteUpdated', data: { uid: s.uid, factory_uid: s.factory_uid, version, changes } }];
      }
      case 'DeleteSuite':
        return [{ type: 'BenchmarkSuiteDeleted', data: { uid: s.uid, factory_uid: s.factory_uid, version } }];
      case 'AddTask': {
        const { task } = command.data;
        const existing = titled(s, task.title);
        if (existing) {
          if (same(contentOf(existing), contentOf(task))) return []; // an identical task is the existing one
          throw titleConflict(task.title);
        }
        if (s.tasks.length >= MAX_SUITE_TASKS)
          throw new Conflict(`a suite holds at most ${MAX_SUITE_TASKS} tasks`, 'limit_exceeded');
        return [{ type: 'BenchmarkTaskAdded', data: { ...base, task: { ...task, id: s.next_task_id } } }];
      }
      case 'EditTask': {
        const current = s.tasks.find((t) => t.uid === command.data.task_uid);
        if (!current) throw new NotFound('task', command.data.task_uid);
        const edited: SuiteTask = { ...current, ...command.data.changes };
        if (same(contentOf(edited), contentOf(current))) return [];
        if (titled(s, edited.title, current.uid)) throw titleConflict(edited.title);
        return [{ type: 'BenchmarkTaskEdited', data: { ...base, task: edited } }];
      }
      case 'DeleteTask': {
        if (!s.tasks.some((t) => t.uid === command.data.task_uid)) throw new NotFound('task', command.data.task_uid);
        return [{ type: 'BenchmarkTaskDeleted', data: { ...base, task_uid: command.data.task_uid } }];
      }
    }
  },
};
