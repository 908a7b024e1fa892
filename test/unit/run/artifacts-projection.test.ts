import { describe, expect, it } from 'vitest';
import { artifactsProjection } from '../../../projections/run/artifacts.js';
import { metadata, project, recorded } from '../../helpers/projection-spec.js';

const history = recorded([
  {
    type: 'RunCreated',
    data: {
      run_id: 'r-1',
      conversation_id: 'c-1',
      team_uid: null,
      executing_team_uid: 't-1',
      creator: { type: 'user', uid: 'u-1' },
    },
  },
  {
    type: 'RunArtifactAdded',
    data: {
      run_id: 'r-1',
      artifact: {
        artifact_uid: 'a-1',
        artifact_type: 'FILE',
        public: true,
        filename: 'out.txt',
        mime_type: 'text/plain',
        blob: 'b'.repeat(64),
      },
    },
    metadata: metadata('2026-01-02T00:00:00.000Z'),
  },
  {
    type: 'RunArtifactAdded',
    data: {
      run_id: 'r-1',
      artifact: {
        artifact_uid: 'a-2',
        artifact_type: 'PULL_REQUEST',
        public: false,
        url: 'https://x/pull/1',
        branch: 'fix',
      },
    },
  },
  {
    type: 'RunArtifactAdded',
    data: { run_id: 'r-unknown', artifact: { artifact_uid: 'a-3', artifact_type: 'PLAN', public: false } },
  },
]);

describe('artifacts projection', () => {
  it('keeps each artifact with its run’s owner, conversation and visibility, the blob apart from the data', async () => {
    const docs = await project(artifactsProjection, history);
    expect(docs['a-1']).toEqual({
      artifact_uid: 'a-1',
      artifact_type: 'FILE',
      run_id: 'r-1',
      conversation_id: 'c-1',
      team_uid: null,
      creator_uid: 'u-1',
      executing_team_uid: 't-1',
      public: true,
      blob: 'b'.repeat(64),
      data: { artifact_uid: 'a-1', artifact_type: 'FILE', public: true, filename: 'out.txt', mime_type: 'text/plain' },
      created_at: '2026-01-02T00:00:00.000Z',
    });
    expect(docs['a-2']).toMatchObject({ public: false, blob: null, data: { url: 'https://x/pull/1', branch: 'fix' } });
    expect(docs['a-3']).toBeUndefined();
  });

  it('is idempotent', async () => {
    const once = await project(artifactsProjection, history);
    expect(await project(artifactsProjection, history, { times: 2 })).toEqual(once);
    expect(await project(artifactsProjection, history, { batchSize: 1 })).toEqual(once);
  });
});
