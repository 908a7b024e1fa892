/**
 * Factory tasks as the API returns them (`Task`): the task document plus what is resolved at
 * read time from other read models (author, current run, derived outputs), always in batches.
 */
import { z } from 'zod';
import { artifactItem, artifactItemSchema, isCancellableType } from '../run/resource.js';
import { type Artifact, RUN_STATES, type RunCreatedData } from '../run/events.js';
import { uidParam } from '../../src/http/schemas.js';
import { findAll } from '../../src/readstore/paging.js';
import type { Collection, Filter } from '../../src/readstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import { identitiesProjection } from '../../projections/identities.js';
import { runsProjection, type RunDoc } from '../../projections/runs.js';
import type { TaskDoc } from '../../projections/tasks.js';
import { usersProjection } from '../../projections/users.js';
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
    "The conversation's newest top-level run, resolved at read time: on single reads, and on lists with " +
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
type TaskAuthor = z.infer<typeof taskAuthor>;
type ArtifactItem = z.infer<typeof artifactItemSchema>;

export const taskFactoryParams = z.object({ factory_uid: uidParam });
export const taskParams = z.object({ factory_uid: uidParam, task_uid: uidParam });

/** Artifact types that count as a task's outputs. */
const OUTPUT_TYPES = ['PULL_REQUEST', 'EXTERNAL_REFERENCE', 'SCREENSHOT', 'FILE'] as const;

type StoredArtifact = Artifact & { created_at: string };

const newestFirst = (a: StoredArtifact, b: StoredArtifact) =>
  a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0;

const outputsOf = (runs: Iterable<RunDoc>): ArtifactItem[] =>
  [...runs]
    .flatMap((r) => r.artifacts)
    .filter((a) => (OUTPUT_TYPES as readonly string[]).includes(a.artifact_type))
    .sort(newestFirst)
    .map(artifactItem);

const hasOutputs: Filter = { artifact_types: { $hasAny: OUTPUT_TYPES } };

/** Every run matching `filter`, 500 a page. */
const runsWhere = (runs: Collection<RunDoc>, filter: Filter): Promise<RunDoc[]> =>
  findAll(runs, { filter, sort: [['id', 'asc']], limit: 500 });

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
});

export function taskResources(rt: Runtime) {
  const runs = rt.readModel(runsProjection);
  const users = rt.readModel(usersProjection);
  const agents = rt.readModel(identitiesProjection);

  /** Authors of a page of tasks: one getMany per principal type. */
  async function authors(tasks: readonly TaskDoc[]): Promise<Map<string, TaskAuthor>> {
    const uidsOf = (type: string) => [
      ...new Set(tasks.filter((t) => t.author_type === type && t.author_uid).map((t) => t.author_uid!)),
    ];
    const [people, bots] = await Promise.all([
      users.getMany(uidsOf('user')),
      agents.getMany(uidsOf('service_account')),
    ]);
    const found = new Map<string, TaskAuthor>();
    for (const u of people.values())
      found.set(u.uid, { type: 'user', uid: u.uid, display_name: u.display_name, email: u.email, photo_url: null });
    for (const a of bots.values())
      found.set(a.uid, { type: 'service_account', uid: a.uid, display_name: a.name, email: null, photo_url: null });
    return found;
  }

  /** Current runs of a page of tasks, in one getMany. */
  async function currentRuns(tasks: readonly TaskDoc[]): Promise<Map<string, RunDoc>> {
    return runs.getMany([...new Set(tasks.map((t) => t.current_run_id).filter((id): id is string => id !== null))]);
  }

  /** `{current_run}` when the task's current run resolves, else nothing (the field is optional). */
  const currentRunOf = (t: TaskDoc, found: Map<string, RunDoc>): Pick<TaskResource, 'current_run'> => {
    const run = t.current_run_id ? found.get(t.current_run_id) : undefined;
    if (!run) return {};
    const type = run as Pick<RunCreatedData, 'execution_location' | 'source'>;
    return { current_run: { run_id: run.run_id, state: run.state, is_run_type_cancellable: isCancellableType(type) } };
  };

  const withAuthor = (t: TaskDoc, found: Map<string, TaskAuthor>): TaskResource => {
    const author = t.author_uid ? found.get(t.author_uid) : undefined;
    return { ...baseResource(t), ...(author ? { author } : {}) };
  };

  /** Outputs of the task's whole run tree: the conversation's runs and every run under them. */
  async function treeOutputs(t: TaskDoc): Promise<ArtifactItem[]> {
    const own = await runsWhere(runs, { conversation_id: t.conversation_id });
    const ids = new Set(own.map((r) => r.run_id));
    const roots = [...new Set(own.map((r) => r.root_run_id))];
    if (!roots.length) return [];
    const tree = await runsWhere(runs, { root_run_id: { $in: roots }, ...hasOutputs });
    return outputsOf(tree.filter((r) => ids.has(r.run_id) || r.ancestors.some((a) => ids.has(a))));
  }

  return {
    /** One task, as single reads return it: author, current run and outputs of the whole tree. */
    async detail(t: TaskDoc): Promise<TaskResource> {
      const [found, current, outputs] = await Promise.all([authors([t]), currentRuns([t]), treeOutputs(t)]);
      return { ...withAuthor(t, found), ...currentRunOf(t, current), outputs };
    },

    /** A page of tasks: lean, plus what `full_list` and `include_current_run` ask for. */
    async page(
      tasks: readonly TaskDoc[],
      options: { full_list: boolean; include_current_run: boolean },
    ): Promise<TaskResource[]> {
      const [found, current, conversationRuns] = await Promise.all([
        authors(tasks),
        options.include_current_run ? currentRuns(tasks) : null,
        options.full_list && tasks.length
          ? runsWhere(runs, { conversation_id: { $in: tasks.map((t) => t.conversation_id) }, ...hasOutputs })
          : null,
      ]);
      return tasks.map((t) => ({
        ...withAuthor(t, found),
        ...(current ? currentRunOf(t, current) : {}),
        ...(options.full_list
          ? {
              ...(t.ticket_id ? { ticket_id: t.ticket_id } : {}),
              ...(t.ticket_source ? { ticket_source: t.ticket_source } : {}),
              outputs: outputsOf((conversationRuns ?? []).filter((r) => r.conversation_id === t.conversation_id)),
            }
          : {}),
      }));
    },
  };
}
