/**
 * Artifacts by uid, each with what deciding who may read it needs: its run's owner team, creator
 * and executing team, its conversation, and whether it is public. The table `runs` keeps those
 * fields of each run until its artifacts arrive.
 */
import { projection } from '../../src/projector/projection.js';
import type { Artifact, ArtifactType, RunEvent } from '../../commands/run/events.js';

interface RunOwnerDoc {
  [field: string]: unknown;
  run_id: string;
  conversation_id: string;
  team_uid: string | null;
  creator_uid: string;
  executing_team_uid: string;
}

export interface ArtifactDoc {
  [field: string]: unknown;
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

export const artifactsProjection = projection<RunEvent, ArtifactDoc, { runs: RunOwnerDoc }>({
  name: 'artifacts',
  version: 2,
  indexes: [['run_id']],
  tables: { runs: [] },
  on: {
    RunCreated: (e, docs) => {
      const d = e.data;
      docs.in('runs').put(d.run_id, {
        run_id: d.run_id,
        conversation_id: d.conversation_id,
        team_uid: d.team_uid,
        creator_uid: d.creator.uid,
        executing_team_uid: d.executing_team_uid,
      });
    },
    RunArtifactAdded: async (e, docs) => {
      const owner = await docs.in('runs').get(e.data.run_id);
      if (!owner) return;
      const { blob, ...data } = e.data.artifact;
      docs.put(data.artifact_uid, {
        artifact_uid: data.artifact_uid,
        artifact_type: data.artifact_type,
        ...owner,
        public: data.public === true,
        blob: typeof blob === 'string' ? blob : null,
        data,
        created_at: e.metadata.occurred_at,
      });
    },
  },
});
