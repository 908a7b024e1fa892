/**
 * Artifacts by uid, each with what deciding who may read it needs: its run's owner team, creator
 * and executing team, its conversation, and whether it is public. A `run:<id>` document per run
 * keeps those fields until the run's artifacts arrive (artifact uids are UUIDs, never `run:`).
 */
import { projection } from '../src/projector/projection.js';
import type { Artifact, ArtifactType, RunEvent } from '../commands/run/events.js';

interface RunOwnerDoc {
  [field: string]: unknown;
  kind: 'run';
  run_id: string;
  conversation_id: string;
  team_uid: string | null;
  creator_uid: string;
  executing_team_uid: string;
}

export interface ArtifactDoc {
  [field: string]: unknown;
  kind: 'artifact';
  artifact_uid: string;
  artifact_type: ArtifactType;
  run_id: string;
  conversation_id: string;
  team_uid: string | null;
  creator_uid: string;
  executing_team_uid: string;
  public: boolean;
  /** The stored file of a file-like artifact (FILE, SCREENSHOT, a PLAN kept as a file), else null. */
  blob: string | null;
  /** The artifact as the worker reported it, without the blob id. */
  data: Omit<Artifact, 'blob'>;
  created_at: string;
}

const runKey = (id: string) => `run:${id}`;

export const artifactsProjection = projection<RunEvent, ArtifactDoc | RunOwnerDoc>({
  name: 'artifacts',
  version: 1,
  indexes: [['run_id']],
  on: {
    RunCreated: (e, docs) => {
      const d = e.data;
      docs.put(runKey(d.run_id), {
        kind: 'run',
        run_id: d.run_id,
        conversation_id: d.conversation_id,
        team_uid: d.team_uid,
        creator_uid: d.creator.uid,
        executing_team_uid: d.executing_team_uid,
      } satisfies RunOwnerDoc);
    },
    RunArtifactAdded: async (e, docs) => {
      const run = (await docs.get(runKey(e.data.run_id))) as RunOwnerDoc | null;
      if (!run) return;
      const { blob, ...data } = e.data.artifact;
      const { kind: _kind, ...owner } = run;
      docs.put(data.artifact_uid, {
        kind: 'artifact',
        artifact_uid: data.artifact_uid,
        artifact_type: data.artifact_type,
        ...owner,
        public: data.public === true,
        blob: typeof blob === 'string' ? blob : null,
        data,
        created_at: e.metadata.occurred_at,
      } satisfies ArtifactDoc);
    },
  },
});
