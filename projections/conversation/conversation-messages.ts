/**
 * The messages of every conversation, one document per message, kept in log order (`seq`) so a
 * conversation reads back with one indexed query however long it grows.
 *
 * A run's life is cut into turns: the creation starts the first, each resume (a follow-up to an
 * ended run) starts the next. A turn becomes one top-level step of the normalized conversation;
 * its id is the id of the event that started it, so replays give the same ids. The user's words
 * (the prompt, prompt extensions, follow-ups) are recorded as user messages of the turn they
 * reached; the worker's messages join the turn that was running when they were recorded.
 *
 * The collection holds the messages, by the id of the event that recorded each; three tables
 * beside it: `conversations` (each conversation's runs in order, its newest run last), `runs` (a
 * run's title and current turn) and `turns` (when each turn started and ended, and how).
 */
import { positionKey, type RecordedEvent } from '../../src/eventstore/port.js';
import { type ProjectionDocs, projection } from '../../src/projector/projection.js';
import type { ConversationEvent } from '../../commands/conversation/events.js';
import { type RunEvent, WORKER_LOST } from '../../commands/run/events.js';

/**
 * Sorts as the log does: zero-padded commit and prepare positions compare as strings. `part`
 * orders what one event records: a turn (0) before the message that opens it (1).
 */
export const seqOf = (e: Pick<RecordedEvent, 'position'>, part: 0 | 1 = 0) => `${positionKey(e.position)}:${part}`;

interface ConversationRunsDoc {
  [field: string]: unknown;
  conversation_id: string;
  run_ids: string[];
}

interface RunTurnDoc {
  [field: string]: unknown;
  run_id: string;
  conversation_id: string;
  title: string;
  turn_id: string;
}

export interface TurnDoc {
  [field: string]: unknown;
  kind: 'turn';
  turn_id: string;
  conversation_id: string;
  run_id: string;
  seq: string;
  description: string;
  started_at: string | null;
  completed_at: string | null;
  summary: string | null;
}

export interface MessageDoc {
  [field: string]: unknown;
  kind: 'message';
  conversation_id: string;
  run_id: string;
  turn_id: string;
  seq: string;
  message_id: string;
  step_id: string | null;
  parent_step_id: string | null;
  role: string;
  content: unknown[];
  timestamp: string;
}

type Tables = { conversations: ConversationRunsDoc; runs: RunTurnDoc; turns: TurnDoc };
type ConversationDocs = ProjectionDocs<MessageDoc, Tables>;

const text = (value: string) => [{ type: 'text', text: value }];

function startTurn(
  e: RecordedEvent,
  docs: ConversationDocs,
  run: Pick<RunTurnDoc, 'run_id' | 'conversation_id' | 'title'>,
) {
  docs.in('runs').put(run.run_id, { ...run, turn_id: e.id });
  docs.in('turns').put(e.id, {
    kind: 'turn',
    turn_id: e.id,
    conversation_id: run.conversation_id,
    run_id: run.run_id,
    seq: seqOf(e),
    description: run.title,
    started_at: null,
    completed_at: null,
    summary: null,
  });
}

/** Records a message in the run's current turn (an unknown run records nothing). */
async function record(
  e: RecordedEvent,
  docs: ConversationDocs,
  runId: string,
  message: Pick<MessageDoc, 'message_id' | 'step_id' | 'parent_step_id' | 'role' | 'content'>,
) {
  const run = await docs.in('runs').get(runId);
  if (!run) return;
  docs.put(e.id, {
    kind: 'message',
    conversation_id: run.conversation_id,
    run_id: runId,
    turn_id: run.turn_id,
    seq: seqOf(e, 1),
    ...message,
    timestamp: e.metadata.occurred_at,
  });
}

const userMessage = (e: RecordedEvent, docs: ConversationDocs, runId: string, message: string) =>
  message
    ? record(e, docs, runId, {
        message_id: e.id,
        step_id: null,
        parent_step_id: null,
        role: 'user',
        content: text(message),
      })
    : undefined;

async function endTurn(e: RecordedEvent, docs: ConversationDocs, runId: string, summary: string | null) {
  const run = await docs.in('runs').get(runId);
  if (run) docs.in('turns').patch(run.turn_id, { completed_at: e.metadata.occurred_at, summary });
}

const LOG_ORDER_INDEXES = [
  ['conversation_id', 'seq'],
  ['run_id', 'seq'],
];

export const conversationMessagesProjection = projection<RunEvent | ConversationEvent, MessageDoc, Tables>({
  name: 'conversation_messages',
  version: 2,
  indexes: LOG_ORDER_INDEXES,
  tables: { conversations: [], runs: [], turns: LOG_ORDER_INDEXES },
  on: {
    ConversationRunAdded: async (e, docs) => {
      const { conversation_id, run_id } = e.data;
      const current = await docs.in('conversations').get(conversation_id);
      const run_ids = current?.run_ids ?? [];
      if (!run_ids.includes(run_id))
        docs.in('conversations').put(conversation_id, { conversation_id, run_ids: [...run_ids, run_id] });
    },
    RunCreated: async (e, docs) => {
      const { run_id, conversation_id, title, prompt } = e.data;
      startTurn(e, docs, { run_id, conversation_id, title });
      await userMessage(e, docs, run_id, prompt);
    },
    RunPromptExtended: (e, docs) => userMessage(e, docs, e.data.run_id, e.data.message),
    RunFollowupDelivered: (e, docs) => userMessage(e, docs, e.data.run_id, e.data.message),
    RunResumed: async (e, docs) => {
      const run = await docs.in('runs').get(e.data.run_id);
      if (!run) return;
      startTurn(e, docs, run);
      await userMessage(e, docs, run.run_id, e.data.message);
    },
    RunStarted: async (e, docs) => {
      const run = await docs.in('runs').get(e.data.run_id);
      if (run) docs.in('turns').patch(run.turn_id, { started_at: e.metadata.occurred_at });
    },
    RunMessageRecorded: (e, docs) => {
      const { run_id, message_id, step_id, parent_step_id, role, content } = e.data;
      return record(e, docs, run_id, { message_id, step_id, parent_step_id, role, content });
    },
    RunFinished: (e, docs) => endTurn(e, docs, e.data.run_id, e.data.status_message?.message ?? null),
    RunCancelled: (e, docs) => endTurn(e, docs, e.data.run_id, `Cancelled: ${e.data.reason}`),
    RunWorkerLost: (e, docs) => (e.data.requeued ? undefined : endTurn(e, docs, e.data.run_id, WORKER_LOST.message)),
  },
});
