import { describe, expect, it } from 'vitest';
import { conversationMessagesProjection, seqOf } from '../../../projections/conversation/conversation-messages.js';
import { normalizeConversation } from '../../../commands/conversation/normalized-conversation.js';
import type { MessageDoc, TurnDoc } from '../../../projections/conversation/conversation-messages.js';
import { metadata, project, recorded } from '../../helpers/projection-spec.js';

const at = (minute: number) => metadata(`2026-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`);
const created = (run_id: string, prompt = 'Fix the build') => ({
  type: 'RunCreated',
  data: { run_id, conversation_id: 'c-1', title: `Title ${run_id}`, prompt },
  metadata: at(0),
});
const said = (
  run_id: string,
  message_id: string,
  role: string,
  text: string,
  step_id: string | null = null,
  parent_step_id: string | null = null,
  minute = 2,
) => ({
  type: 'RunMessageRecorded',
  data: {
    run_id,
    conversation_id: 'c-1',
    message_id,
    step_id,
    parent_step_id,
    role,
    content: [{ type: 'text', text }],
  },
  metadata: at(minute),
});

const history = recorded([
  created('r-1'),
  {
    type: 'ConversationRunAdded',
    data: { conversation_id: 'c-1', run_id: 'r-1', team_uid: 't-1', creator_uid: 'u-1' },
  },
  { type: 'RunPromptExtended', data: { run_id: 'r-1', message: 'and the tests', mode: null }, metadata: at(0) },
  { type: 'RunStarted', data: { run_id: 'r-1', execution_id: 'e-1' }, metadata: at(1) },
  said('r-1', 'm-1', 'assistant', 'Looking'),
  said('r-1', 'm-2', 'assistant', 'Found it'),
  said('r-1', 'm-3', 'assistant', 'Running tests', 's-1', null, 3),
  said('r-1', 'm-4', 'tool', 'ok', 's-2', 's-1', 4),
  said('r-1', 'm-5', 'assistant', 'orphan', 's-3', 's-missing', 5),
  {
    type: 'RunFinished',
    data: { run_id: 'r-1', execution_id: 'e-1', state: 'SUCCEEDED', status_message: { message: 'Done' } },
    metadata: at(6),
  },
  {
    type: 'RunResumed',
    data: { run_id: 'r-1', message: 'Now the docs', mode: null, attachments: [] },
    metadata: at(7),
  },
  { type: 'RunStarted', data: { run_id: 'r-1', execution_id: 'e-2' }, metadata: at(8) },
  said('r-1', 'm-6', 'assistant', 'Docs done', null, null, 9),
  { type: 'RunCancelled', data: { run_id: 'r-1', reason: 'user' }, metadata: at(10) },
  created('r-2', ''),
  {
    type: 'ConversationRunAdded',
    data: { conversation_id: 'c-1', run_id: 'r-2', team_uid: 't-1', creator_uid: 'u-1' },
  },
  {
    type: 'RunMessageRecorded',
    data: {
      run_id: 'r-unknown',
      conversation_id: 'c-1',
      message_id: 'x',
      step_id: null,
      parent_step_id: null,
      role: 'assistant',
      content: [],
    },
  },
]);

type Item = TurnDoc | MessageDoc;
const inLogOrder = (docs: Record<string, Record<string, unknown>>) =>
  Object.values(docs)
    .filter((d): d is Item => d.kind === 'turn' || d.kind === 'message')
    .sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));

describe('conversation messages projection', () => {
  it('keeps the conversation’s runs in order, one turn per execution and every message in its turn', async () => {
    const docs = await project(conversationMessagesProjection, history);
    expect(docs['conversations/c-1']).toEqual({ conversation_id: 'c-1', run_ids: ['r-1', 'r-2'] });
    const turns = Object.values(docs).filter((d) => d.kind === 'turn');
    expect(turns).toHaveLength(3);
    const messages = Object.values(docs).filter((d) => d.kind === 'message');
    // the prompt, its extension, five worker messages, the resuming follow-up and one more; none for an unknown run
    expect(messages).toHaveLength(9);
    expect(messages.every((m) => m.run_id !== 'r-unknown')).toBe(true);
  });

  it('is idempotent: twice, or one event at a time, gives the same documents', async () => {
    const once = await project(conversationMessagesProjection, history);
    expect(await project(conversationMessagesProjection, history, { times: 2 })).toEqual(once);
    expect(await project(conversationMessagesProjection, history, { batchSize: 1 })).toEqual(once);
  });

  it('orders by log position, also beyond one digit', () => {
    const small = seqOf({ position: { commit: 9n, prepare: 9n } });
    const big = seqOf({ position: { commit: 10n, prepare: 10n } });
    expect(small < big).toBe(true);
  });
});

describe('normalized conversation', () => {
  it('makes one top-level step per turn, nests worker steps, and joins consecutive messages of a role into blocks', async () => {
    const docs = await project(conversationMessagesProjection, history);
    const { conversation_id, steps } = normalizeConversation('c-1', inLogOrder(docs));
    expect(conversation_id).toBe('c-1');
    expect(steps).toHaveLength(3);
    const [first, second, third] = steps;

    expect(first).toMatchObject({
      description: 'Title r-1',
      summary: 'Done',
      started_at: at(1).occurred_at,
      completed_at: at(6).occurred_at,
    });
    expect(first!.messages).toEqual([
      {
        role: 'user',
        timestamp: at(0).occurred_at,
        message_ids: [expect.any(String), expect.any(String)],
        content: [
          { type: 'text', text: 'Fix the build' },
          { type: 'text', text: 'and the tests' },
        ],
      },
      {
        role: 'assistant',
        timestamp: at(2).occurred_at,
        message_ids: ['m-1', 'm-2'],
        content: [
          { type: 'text', text: 'Looking' },
          { type: 'text', text: 'Found it' },
        ],
      },
    ]);
    expect(first!.steps.map((s) => s.id)).toEqual(['s-1', 's-missing']);
    const [s1, missing] = first!.steps;
    expect(s1).toMatchObject({
      id: 's-1',
      started_at: at(3).occurred_at,
      completed_at: at(3).occurred_at,
      messages: [{ role: 'assistant', message_ids: ['m-3'] }],
    });
    expect(s1!.steps).toMatchObject([{ id: 's-2', messages: [{ role: 'tool', message_ids: ['m-4'] }], steps: [] }]);
    expect(missing).toMatchObject({
      id: 's-missing',
      messages: [],
      steps: [{ id: 's-3', messages: [{ message_ids: ['m-5'] }] }],
    });

    expect(second).toMatchObject({
      summary: 'Cancelled: user',
      started_at: at(8).occurred_at,
      completed_at: at(10).occurred_at,
    });
    expect(second!.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', [{ type: 'text', text: 'Now the docs' }]],
      ['assistant', [{ type: 'text', text: 'Docs done' }]],
    ]);
    // A run queued with no prompt: a turn with nothing yet, no times.
    expect(third).toEqual({ id: expect.any(String), description: 'Title r-2', messages: [], steps: [] });
  });

  it('leaves a running turn’s steps open', () => {
    const turn: TurnDoc = {
      kind: 'turn',
      turn_id: 't',
      conversation_id: 'c',
      run_id: 'r',
      seq: '1',
      description: 'd',
      started_at: 'a',
      completed_at: null,
      summary: null,
    };
    const message: MessageDoc = {
      kind: 'message',
      conversation_id: 'c',
      run_id: 'r',
      turn_id: 't',
      seq: '2',
      message_id: 'm',
      step_id: 's',
      parent_step_id: 's',
      role: 'assistant',
      content: [],
      timestamp: 'b',
    };
    const [step] = normalizeConversation('c', [turn, message]).steps[0]!.steps;
    expect(step).toEqual({
      id: 's',
      started_at: 'b',
      messages: [{ role: 'assistant', timestamp: 'b', message_ids: ['m'], content: [] }],
      steps: [],
    });
  });
});
