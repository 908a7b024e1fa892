/** What a task tells the event streams and the team's outbound webhooks: its stage changes (a cancel too). */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import { canReadFactory } from '../factory/events.js';
import { taskState } from './create.js';
import { STAGES, type TaskEvent } from './events.js';

const stageChangedSchema = z.object({
  task_uid: z.string(),
  factory_uid: z.string(),
  title: z.string(),
  conversation_id: z.string().nullable(),
  from: z.enum(STAGES),
  to: z.enum(STAGES),
});

async function mapStageChange(rt: Runtime, event: RecordedEvent): Promise<StreamItem | null> {
  const e = event as unknown as Extract<TaskEvent, { type: 'TaskStageChanged' | 'TaskCancelled' }>;
  const task = await taskState(rt, e.data.uid);
  if (task.status !== 'live') return null;
  return {
    type: 'task.stage_changed',
    data: {
      task_uid: task.uid,
      factory_uid: task.factory_uid,
      title: task.title,
      conversation_id: task.conversation_id,
      from: e.data.from,
      to: e.type === 'TaskCancelled' ? 'CANCELLED' : e.data.to,
    },
    team_uid: task.team_uid,
    factory_uid: task.factory_uid,
    run: null,
    readable: (viewer) => canReadFactory(task.team_uid, viewer.principal, viewer.team),
  };
}

export const taskStreamEvents: StreamEventSource = {
  from: ['TaskStageChanged', 'TaskCancelled'],
  types: {
    'task.stage_changed': {
      feeds: ['team'],
      description: "A task moved to another stage (`to`), a cancel's CANCELLED too",
      schema: stageChangedSchema,
    },
  },
  map: mapStageChange,
};
