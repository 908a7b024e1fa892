/** A factory task (work item): `task-<uid>`, bound to one conversation. */
export const STAGES = ['TRIAGE', 'SPEC', 'IMPLEMENT', 'REVIEW', 'COMPLETE', 'CANCELLED'] as const;
export type Stage = (typeof STAGES)[number];

export type TaskCreatedData = {
  uid: string;
  factory_uid: string;
  team_uid: string;
  conversation_id: string;
  /** The conversation's most recent run when the task was created; never updated. */
  run_id: string;
  title: string;
  description: string | null;
  stage: Stage;
  /** Who started the seed run (`run_id`); the list's `created_by` filter matches it. */
  author?: { type: 'user' | 'service_account'; uid: string } | null;
  /** The seed run's ticket metadata, shown on lists with `full_list=true`. */
  ticket_id?: string | null;
  ticket_source?: string | null;
};

export type TaskEvent =
  | { type: 'TaskCreated'; data: TaskCreatedData }
  | { type: 'TaskUpdated'; data: { uid: string; changes: { title?: string; description?: string | null } } }
  | { type: 'TaskStageChanged'; data: { uid: string; from: Stage; to: Stage } }
  /** The cancel operation: stage CANCELLED, and the run tree below `run_id` is cancelled. */
  | { type: 'TaskCancelled'; data: { uid: string; from: Stage; run_id: string } }
  | { type: 'TaskDeleted'; data: { uid: string; conversation_id: string } };

export const taskStream = (uid: string) => `task-${uid}`;
