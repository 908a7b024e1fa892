/**
 * The normalized conversation (`{conversation_id, steps}`) from the stored turns and messages.
 *
 * - Each turn of a run (its first execution, then one per follow-up that resumed it) is one
 *   top-level step, in the order the turns began; its messages without a step are its own.
 * - A worker's step becomes a step inside its turn, nested under `parent_step_id` when given; a
 *   parent never seen before is created in place, empty, so no message is ever lost.
 * - Consecutive messages of one role in the same step form one block: one message whose
 *   `message_ids` and `content` are those of the messages it joins, timed by the first.
 */
import { z } from 'zod';
import { ACTION_CATEGORIES } from '../run/events.js';
import type { MessageDoc, TurnDoc } from '../../projections/conversation/conversation-messages.js';

const actionCategory = z.enum(ACTION_CATEGORIES);

/** The content blocks a worker records (the worker API checks them) and the user's words as text. */
const contentBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({
    type: z.literal('action'),
    id: z.string(),
    category: actionCategory,
    name: z.string(),
    input: z.unknown().optional(),
  }),
  z.object({
    type: z.literal('action_result'),
    action_id: z.string().describe('The id of the action it answers'),
    category: actionCategory,
    name: z.string(),
    state: z.enum(['running', 'completed', 'failed', 'denied']),
    output: z.unknown().optional(),
  }),
  z.object({ type: z.literal('event'), name: z.string(), data: z.unknown().optional() }),
]);

type ContentBlock = z.infer<typeof contentBlock>;

const normalizedMessage = z.object({
  role: z.string().describe('user, assistant, tool or system'),
  timestamp: z.string().describe('When the first message of the block was recorded'),
  message_ids: z.array(z.string()).describe('The messages the block joins: consecutive messages of one role'),
  content: z.array(contentBlock),
});

interface NormalizedStep {
  id: string;
  description?: string | undefined;
  summary?: string | undefined;
  started_at?: string | undefined;
  completed_at?: string | undefined;
  messages: Array<z.infer<typeof normalizedMessage>>;
  steps: NormalizedStep[];
}

/** A turn of a run (top level), or a worker's step inside one; steps nest to any depth. */
const normalizedStep: z.ZodType<NormalizedStep> = z
  .object({
    id: z.string().describe("A turn's id, or the step id the worker gave"),
    description: z.string().optional().describe("A turn's description: the run's title"),
    summary: z.string().optional().describe("How a turn ended: its run's status message"),
    started_at: z.string().optional(),
    completed_at: z.string().optional(),
    messages: z.array(normalizedMessage),
    get steps() {
      return z.array(normalizedStep);
    },
  })
  .meta({ id: 'NormalizedStep' });

export const normalizedConversation = z.object({ conversation_id: z.string(), steps: z.array(normalizedStep) });

export type NormalizedConversation = z.infer<typeof normalizedConversation>;

const optional = <K extends string>(key: K, value: string | null | undefined) =>
  (value ? { [key]: value } : {}) as Partial<Record<K, string>>;

/** `items` in log order; turns and messages of other kinds are ignored. */
export function normalizeConversation(
  conversationId: string,
  items: ReadonlyArray<TurnDoc | MessageDoc>,
): NormalizedConversation {
  const turns = new Map<string, NormalizedStep>();
  const ended = new Set<string>();
  const steps = new Map<string, { node: NormalizedStep; turn: string }>();
  const lastTimestamp = new Map<NormalizedStep, string>();

  const stepIn = (turn: NormalizedStep, turnId: string, id: string, parentId: string | null): NormalizedStep => {
    const known = steps.get(id);
    if (known) return known.node;
    const node: NormalizedStep = { id, messages: [], steps: [] };
    steps.set(id, { node, turn: turnId });
    const parent = parentId && parentId !== id ? stepIn(turn, turnId, parentId, null) : turn;
    parent.steps.push(node);
    return node;
  };

  for (const item of items) {
    if (item.kind === 'turn') {
      turns.set(item.turn_id, {
        id: item.turn_id,
        ...optional('description', item.description),
        ...optional('summary', item.summary),
        ...optional('started_at', item.started_at),
        ...optional('completed_at', item.completed_at),
        messages: [],
        steps: [],
      });
      if (item.completed_at) ended.add(item.turn_id);
      continue;
    }
    if (item.kind !== 'message') continue;
    const turn = turns.get(item.turn_id);
    if (!turn) continue;
    const container = item.step_id ? stepIn(turn, item.turn_id, item.step_id, item.parent_step_id) : turn;
    // Blocks the worker API checked on their way in, or the user's words as text.
    const content = item.content as ContentBlock[];
    const last = container.messages.at(-1);
    if (last && last.role === item.role) {
      last.message_ids.push(item.message_id);
      last.content.push(...content);
    } else {
      container.messages.push({
        role: item.role,
        timestamp: item.timestamp,
        message_ids: [item.message_id],
        content: [...content],
      });
    }
    if (container !== turn) {
      container.started_at ??= item.timestamp;
      lastTimestamp.set(container, item.timestamp);
    }
  }

  // A worker's step has no end of its own: it is complete when its turn is, at its last message.
  for (const { node, turn } of steps.values()) {
    const last = lastTimestamp.get(node);
    if (ended.has(turn) && last) node.completed_at = last;
  }
  return { conversation_id: conversationId, steps: [...turns.values()] };
}
