import type { RunCreatedData } from '../../commands/run/events.js';

/** A plain team run as `RunCreated` records it; tests override only the fields they are about. */
export const runCreatedData = (run_id: string, fields: Partial<RunCreatedData> = {}): RunCreatedData => ({
  run_id,
  conversation_id: `c-${run_id}`,
  title: 'Fix',
  prompt: 'Fix it',
  skill_spec: null,
  config: null,
  mode: 'normal',
  interactive: false,
  metadata: {},
  team_uid: 't-1',
  executing_team_uid: 't-1',
  creator: { type: 'user', uid: 'u-1' },
  agent_identity_uid: null,
  parent_run_id: null,
  root_run_id: run_id,
  depth: 0,
  factory_uid: null,
  source: 'API',
  execution_location: 'REMOTE',
  environment_id: null,
  schedule_id: null,
  attachments: [],
  ...fields,
});
