/**
 * Live factory tasks, one document per task, each with the current top-level run of its
 * conversation (so a page of tasks resolves its current runs with one getMany). The table
 * `conversations` keeps, per conversation, its newest root run and its bound task, so whichever
 * of the two comes first, the other finds it.
 */
import { projection } from '../src/projector/projection.js';
import type { RunEvent } from '../commands/run/events.js';
import type { Stage, TaskEvent } from '../commands/task/events.js';

export interface TaskDoc {
  [field: string]: unknown;
  uid: string;
  factory_uid: string;
  team_uid: string;
  conversation_id: string;
  run_id: string;
  title: string;
  description: string | null;
  stage: Stage;
  author_type: 'user' | 'service_account' | null;
  /** The user (or service account) who started the seed run, for `created_by`. */
  author_uid: string | null;
  ticket_id: string | null;
  ticket_source: string | null;
  /** The conversation's newest root run: the task's current run. */
  current_run_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ConversationLinkDoc {
  [field: string]: unknown;
  latest_root_run_id: string | null;
  task_uid: string | null;
}

export const tasksProjection = projection<TaskEvent | RunEvent, TaskDoc, { conversations: ConversationLinkDoc }>({
  name: 'tasks',
  version: 2,
  // A board shows one stage per column: the stage filter seeks, newest first.
  indexes: [
    ['factory_uid', 'created_at'],
    ['factory_uid', 'updated_at'],
    ['factory_uid', 'stage', 'created_at'],
    ['factory_uid', 'stage', 'updated_at'],
    ['conversation_id'],
  ],
  tables: { conversations: [] },
  on: {
    RunCreated: async (e, docs) => {
      if (e.data.parent_run_id !== null) return;
      const links = docs.in('conversations');
      const link = await links.get(e.data.conversation_id);
      links.put(e.data.conversation_id, { latest_root_run_id: e.data.run_id, task_uid: link?.task_uid ?? null });
      // A new top-level run does not bump updated_at: only changes to the task itself do.
      if (link?.task_uid) docs.patch(link.task_uid, { current_run_id: e.data.run_id });
    },
    TaskCreated: async (e, docs) => {
      const d = e.data;
      const links = docs.in('conversations');
      const link = await links.get(d.conversation_id);
      docs.put(d.uid, {
        uid: d.uid,
        factory_uid: d.factory_uid,
        team_uid: d.team_uid,
        conversation_id: d.conversation_id,
        run_id: d.run_id,
        title: d.title,
        description: d.description,
        stage: d.stage,
        author_type: d.author?.type ?? null,
        author_uid: d.author?.uid ?? null,
        ticket_id: d.ticket_id ?? null,
        ticket_source: d.ticket_source ?? null,
        current_run_id: link?.latest_root_run_id ?? null,
        created_at: e.metadata.occurred_at,
        updated_at: e.metadata.occurred_at,
      } satisfies TaskDoc);
      links.put(d.conversation_id, { latest_root_run_id: link?.latest_root_run_id ?? null, task_uid: d.uid });
    },
    TaskUpdated: (e, docs) => docs.patch(e.data.uid, { ...e.data.changes, updated_at: e.metadata.occurred_at }),
    TaskStageChanged: (e, docs) => docs.patch(e.data.uid, { stage: e.data.to, updated_at: e.metadata.occurred_at }),
    TaskCancelled: (e, docs) => docs.patch(e.data.uid, { stage: 'CANCELLED', updated_at: e.metadata.occurred_at }),
    TaskDeleted: async (e, docs) => {
      docs.delete(e.data.uid);
      const links = docs.in('conversations');
      const link = await links.get(e.data.conversation_id);
      if (link?.task_uid === e.data.uid) links.put(e.data.conversation_id, { ...link, task_uid: null });
    },
  },
});
