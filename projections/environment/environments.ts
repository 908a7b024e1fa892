/**
 * Cloud environments, one document each, with the newest run that used each (by id: its title
 * and state are read from the runs read model when answered).
 */
import { projection } from '../../src/projector/projection.js';
import type { EnvironmentConfig, EnvironmentEvent } from '../../commands/environment/events.js';
import type { RunEvent } from '../../commands/run/events.js';

type Who = { type: 'user' | 'service_account'; uid: string };

export interface EnvironmentDoc {
  [field: string]: unknown;
  uid: string;
  team_uid: string;
  config: EnvironmentConfig;
  name_key: string;
  creator: Who;
  last_editor: Who;
  last_updated: string;
  last_run_id: string | null;
  last_task_run_timestamp: string | null;
}

const who = (actor: { type: string; uid: string }): Who => ({
  type: actor.type === 'user' ? 'user' : 'service_account',
  uid: actor.uid,
});

export const environmentsProjection = projection<EnvironmentEvent | RunEvent, EnvironmentDoc>({
  name: 'environments',
  version: 1,
  indexes: [
    ['team_uid', 'name_key'],
    ['team_uid', 'last_updated'],
  ],
  on: {
    EnvironmentCreated: (e, docs) =>
      docs.put(e.data.id, {
        uid: e.data.id,
        team_uid: e.data.team_uid,
        config: e.data.config,
        name_key: e.data.config.name.toLowerCase(),
        creator: who(e.metadata.actor),
        last_editor: who(e.metadata.actor),
        last_updated: e.metadata.occurred_at,
        last_run_id: null,
        last_task_run_timestamp: null,
      }),
    EnvironmentUpdated: (e, docs) =>
      docs.patch(e.data.id, {
        config: e.data.config,
        name_key: e.data.config.name.toLowerCase(),
        last_editor: who(e.metadata.actor),
        last_updated: e.metadata.occurred_at,
      }),
    EnvironmentDeleted: (e, docs) => docs.delete(e.data.id),
    RunCreated: (e, docs) => {
      if (e.data.environment_id)
        docs.patch(e.data.environment_id, {
          last_run_id: e.data.run_id,
          last_task_run_timestamp: e.metadata.occurred_at,
        });
    },
  },
});
