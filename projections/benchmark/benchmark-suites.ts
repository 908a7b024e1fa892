/**
 * Benchmark suites, one document each (keyed `<factory_uid>:<suite_uid>`), and their tasks in a
 * table of their own (one document per task, in the suite's order). A deleted suite leaves both;
 * its runs are the benchmark runs read model's.
 */
import { projection } from '../../src/projector/projection.js';
import type { Configuration, SuiteEvent, SuiteTask } from '../../commands/benchmark/events.js';

export interface SuiteDoc {
  [field: string]: unknown;
  uid: string;
  factory_uid: string;
  team_uid: string;
  name: string;
  description: string | null;
  agent_uid: string;
  factory_agent_type: string;
  configurations: Configuration[];
  version: number;
  task_count: number;
  creator: { type: 'user' | 'agent' | 'system'; uid: string };
  created_at: string;
  updated_at: string;
}

export interface SuiteTaskDoc extends SuiteTask {
  [field: string]: unknown;
  suite_key: string;
  /** The task's number (`id`), for ordering: `id` in a sort is the document's key. */
  number: number;
  suite_uid: string;
  factory_uid: string;
  created_at: string;
  updated_at: string;
}

export const suiteKey = (factoryUid: string, suiteUid: string) => `${factoryUid}:${suiteUid}`;

export const benchmarkSuitesProjection = projection<SuiteEvent, SuiteDoc, { tasks: SuiteTaskDoc }>({
  name: 'benchmark_suites',
  version: 1,
  indexes: [['factory_uid', 'created_at']],
  tables: { tasks: [['suite_key', 'number']] },
  on: {
    BenchmarkSuiteCreated: (e, docs) => {
      const { creator, ...d } = e.data;
      const at = e.metadata.occurred_at;
      docs.put(suiteKey(d.factory_uid, d.uid), { ...d, task_count: 0, creator, created_at: at, updated_at: at });
    },
    BenchmarkSuiteUpdated: async (e, docs) => {
      const key = suiteKey(e.data.factory_uid, e.data.uid);
      if (await docs.get(key))
        docs.patch(key, { ...e.data.changes, version: e.data.version, updated_at: e.metadata.occurred_at });
    },
    BenchmarkSuiteDeleted: (e, docs) => docs.delete(suiteKey(e.data.factory_uid, e.data.uid)),
    BenchmarkTaskAdded: async (e, docs) => {
      const { suite_uid, factory_uid, version, task } = e.data;
      const key = suiteKey(factory_uid, suite_uid);
      const suite = await docs.get(key);
      if (!suite) return;
      const tasks = docs.in('tasks');
      const at = e.metadata.occurred_at;
      const existed = await tasks.get(task.uid);
      tasks.put(task.uid, {
        ...task,
        suite_key: key,
        number: task.id,
        suite_uid,
        factory_uid,
        created_at: at,
        updated_at: at,
      });
      docs.patch(key, { version, task_count: suite.task_count + (existed ? 0 : 1), updated_at: at });
    },
    BenchmarkTaskEdited: async (e, docs) => {
      const { suite_uid, factory_uid, version, task } = e.data;
      const key = suiteKey(factory_uid, suite_uid);
      const tasks = docs.in('tasks');
      const current = await tasks.get(task.uid);
      if (!current || !(await docs.get(key))) return;
      const at = e.metadata.occurred_at;
      tasks.put(task.uid, { ...current, ...task, updated_at: at });
      docs.patch(key, { version, updated_at: at });
    },
    BenchmarkTaskDeleted: async (e, docs) => {
      const { suite_uid, factory_uid, version, task_uid } = e.data;
      const key = suiteKey(factory_uid, suite_uid);
      const suite = await docs.get(key);
      const tasks = docs.in('tasks');
      const existed = await tasks.get(task_uid);
      tasks.delete(task_uid);
      if (suite)
        docs.patch(key, {
          version,
          task_count: suite.task_count - (existed ? 1 : 0),
          updated_at: e.metadata.occurred_at,
        });
    },
  },
});
