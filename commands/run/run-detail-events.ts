/**
 * What a run tells its own event stream beyond its state: its timeline entries (as
 * `GET /agent/runs/{id}/timeline` lists them), messages, questions, artifacts (as the run lists
 * them) and usage (as `GET …/harness-usage` answers). Not a team's activity: they stay on the run's stream.
 */
import { z } from 'zod';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Runtime } from '../../src/runtime.js';
import type { StreamEventSource, StreamItem } from '../../src/streams/stream-events.js';
import type { RunEvent } from './events.js';
import { artifactItem, artifactItemSchema, requestUsageSchema } from './resource.js';
import { runItemOf, runOf } from './stream-events.js';

/** One entry of a run's timeline, as the timeline route lists it. */
export const timelineEntrySchema = z.object({
  event_uuid: z.string().describe('The id of the event that recorded the entry'),
  run_id: z.string(),
  event_type: z
    .string()
    .describe(
      'oz_run_created, run_leased, oz_run_claimed, agent_started, oz_run_done, oz_run_failed, … or the name a worker gave its own entry',
    ),
  occurred_at: z.string(),
  payload: z.record(z.string(), z.unknown()),
  execution_id: z.string().optional().describe('The execution the entry belongs to, when it belongs to one'),
});

const messageSchema = z.object({
  run_id: z.string(),
  conversation_id: z.string(),
  message_id: z.string(),
  step_id: z.string().nullable(),
  parent_step_id: z.string().nullable(),
  role: z.string(),
  content: z.array(z.unknown()).describe('The content blocks of the message, as the worker reported them'),
});

const questionSchema = z.object({
  run_id: z.string(),
  ask_id: z.string(),
  questions: z.array(
    z.object({
      id: z.string(),
      question: z.string(),
      options: z.array(z.string()).describe('Empty: free text'),
      type: z.enum(['single_select', 'multi_select']),
      recommended_option_index: z.number().int().optional(),
    }),
  ),
});

const artifactSchema = z.object({ run_id: z.string(), artifact: artifactItemSchema });

const usageSchema = z.object({
  run_id: z.string(),
  reported_at: z.string(),
  usage: requestUsageSchema.describe('The cumulative snapshot reported'),
});

const onRunStream = ['run'] as const;

function detail(e: RunEvent, event: RecordedEvent): [string, Record<string, unknown>] | null {
  const at = event.metadata.occurred_at;
  switch (e.type) {
    case 'RunTimelineRecorded': {
      const entry = { event_uuid: event.id, run_id: e.data.run_id, event_type: e.data.name, occurred_at: at };
      return ['run.timeline', { ...entry, payload: e.data.detail }];
    }
    case 'RunMessageRecorded':
      return ['run.message', { ...e.data }];
    case 'RunQuestionAsked':
      return ['run.question', { ...e.data }];
    case 'RunArtifactAdded':
      return [
        'run.artifact',
        { run_id: e.data.run_id, artifact: artifactItem({ ...e.data.artifact, created_at: at }) },
      ];
    case 'RunUsageReported':
      return ['run.usage', { run_id: e.data.run_id, reported_at: at, usage: e.data.usage }];
    default:
      return null;
  }
}

async function mapDetail(rt: Runtime, event: RecordedEvent): Promise<StreamItem | null> {
  const e = event as unknown as RunEvent;
  const found = detail(e, event);
  const run = found && (await runOf(rt, e.data.run_id));
  return found && run ? runItemOf(run, found[0], found[1]) : null;
}

export const runDetailEvents: StreamEventSource = {
  from: ['RunTimelineRecorded', 'RunMessageRecorded', 'RunQuestionAsked', 'RunArtifactAdded', 'RunUsageReported'],
  types: {
    'run.timeline': { feeds: onRunStream, description: 'A timeline entry', schema: timelineEntrySchema },
    'run.message': { feeds: onRunStream, description: 'A message of the run', schema: messageSchema },
    'run.question': { feeds: onRunStream, description: 'The run asks its requester', schema: questionSchema },
    'run.artifact': { feeds: onRunStream, description: 'An artifact added', schema: artifactSchema },
    'run.usage': { feeds: onRunStream, description: 'A usage report', schema: usageSchema },
  },
  map: mapDetail,
};
