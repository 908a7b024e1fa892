/**
 * Factory tasks as the API returns them (`Task`), each from its one document: the tasks read
 * model resolves author, current run and outputs as their events arrive.
 */
import { z } from 'zod';
import { artifactItemSchema } from '../run/public.js';
import { RUN_STATES } from '../run/events.js';
import { uidParam } from '../../src/http/schemas.js';
import type { TaskDoc, TaskOutput } from '../../projections/task/tasks.js';
import { STAGES } from './events.js';

const taskAuthor = z
  .object({
    type: z.enum(['user', 'service_account']),
    uid: z.string(),
    display_name: z.string().describe("A user's display name, or a service account's (agent's) name"),
    email: z.string().nullable().describe('null for a service account'),
    photo_url: z.string().nullable().describe('Always null: Shopfloor keeps no photos'),
  })
  .describe('Who started the seed run (`run_id`); left out when that principal is unknown');

const currentRun = z
  .object({
    run_id: z.string(),
    state: z.enum(RUN_STATES),
    is_run_type_cancellable: z
      .boolean()
      .describe('False for runs the server cannot stop (local runs and GitHub Actions)'),
  })
  .describe(
    "The conversation's newest top-level run: on single reads, and on lists with " +
      '`include_current_run=true`; left out when there is none',
  );

export const taskResource = z.object({
  uid: z.string(),
  factory_uid: z.string(),
  conversation_id: z.string().describe('The agent conversation the task is bound to'),
  run_id: z.string().describe("The conversation's most recent run when the task was created; never updated"),
  stage: z.enum(STAGES),
  title: z.string(),
  description: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string().describe('Changes to the task itself only: new runs and artifacts do not bump it'),
  author: taskAuthor.optional(),
  current_run: currentRun.optional(),
  ticket_id: z.string().optional().describe("From the seed run's ticket; lists with `full_list=true` only"),
  ticket_source: z.string().optional().describe("From the seed run's ticket; lists with `full_list=true` only"),
  outputs: z
    .array(artifactItemSchema)
    .optional()
    .describe(
      'Pull requests, external references, screenshots and files, newest first: of the whole run tree on ' +
        "single reads, of the bound conversation's runs on lists with `full_list=true`",
    ),
});

type TaskResource = z.infer<typeof taskResource>;

export const taskFactoryParams = z.object({ factory_uid: uidParam });
export const taskParams = z.object({ factory_uid: uidParam, task_uid: uidParam });

const baseResource = (t: TaskDoc): TaskResource => ({
  uid: t.uid,
  factory_uid: t.factory_uid,
  conversation_id: t.conversation_id,
  run_id: t.run_id,
  stage: t.stage,
  title: t.title,
  description: t.description,
  created_at: t.created_at,
  updated_at: t.updated_at,
  ...(t.author ? { author: t.author } : {}),
});

const outputItems = (outputs: readonly TaskOutput[], conversationOnly: boolean) =>
  outputs
    .filter((o) => !conversationOnly || o.in_conversation)
    .map(({ artifact_type, created_at, data }) => ({ artifact_type, created_at, data }));

/**
 * A task as the API answers with it, from its one document (projections/task/tasks.ts resolves its
 * author, current run and outputs as events arrive): as single reads show it, with current run
 * and the outputs of its whole run tree.
 */
export const taskDetail = (t: TaskDoc): TaskResource => ({
  ...baseResource(t),
  ...(t.current_run ? { current_run: t.current_run } : {}),
  outputs: outputItems(t.outputs, false),
});

/** A task of a page: lean, plus what `full_list` and `include_current_run` ask for. */
export const taskListItem = (
  t: TaskDoc,
  options: { full_list: boolean; include_current_run: boolean },
): TaskResource => ({
  ...baseResource(t),
  ...(options.include_current_run && t.current_run ? { current_run: t.current_run } : {}),
  ...(options.full_list
    ? {
        ...(t.ticket_id ? { ticket_id: t.ticket_id } : {}),
        ...(t.ticket_source ? { ticket_source: t.ticket_source } : {}),
        outputs: outputItems(t.outputs, true),
      }
    : {}),
});
