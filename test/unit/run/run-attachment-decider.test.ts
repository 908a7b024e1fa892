import { describe, it } from 'vitest';
import { runDecider } from '../../../commands/run/run-decider.js';
import type { RunEvent } from '../../../commands/run/events.js';
import { Unprocessable, NotFound } from '../../../src/kernel/errors.js';
import { deciderSpec, userContext } from '../../helpers/decider-spec.js';

const { given } = deciderSpec(runDecider);

const created = {
  type: 'RunCreated',
  data: {
    run_id: 'r-1',
    conversation_id: 'c-1',
    team_uid: 't-1',
    executing_team_uid: 't-1',
    creator: { type: 'user', uid: 'u-1' },
    root_run_id: 'r-1',
    depth: 0,
    execution_location: 'REMOTE',
    source: 'API',
  },
} as unknown as RunEvent;
const attachment = { attachment_id: 'att-1', file_name: 'a.png', mime_type: 'image/png', size_bytes: 3, blob: 'b' };
const prepared: RunEvent = { type: 'RunAttachmentPrepared', data: { run_id: 'r-1', attachment } };
const followup = (attachments: string[]) => ({
  type: 'SendFollowup' as const,
  data: { run_id: 'r-1', message: 'look', mode: null, attachments, execution_id: 'e-9' },
});

describe('run decider: attachments prepared for follow-ups', () => {
  it('records a prepared attachment on a run the caller can view', () => {
    given([created])
      .when({ type: 'PrepareAttachment', data: { run_id: 'r-1', attachment } })
      .then([{ type: 'RunAttachmentPrepared', data: { attachment } }]);
    given([created])
      .when({ type: 'PrepareAttachment', data: { run_id: 'r-1', attachment } }, userContext('u-2', { 't-2': 'admin' }))
      .thenThrows(NotFound);
  });

  it('lets a follow-up name prepared attachments only', () => {
    given([created, prepared])
      .when(followup(['att-1']))
      .then([{ type: 'RunPromptExtended' }]);
    given([created, prepared])
      .when(followup(['att-1', 'att-2']))
      .thenThrows(Unprocessable, /att-2/);
    given([created])
      .when(followup(['att-1']))
      .thenThrows(Unprocessable);
  });
});
