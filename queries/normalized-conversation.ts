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
import type { MessageDoc, TurnDoc } from '../projections/conversation-messages.js';

interface NormalizedMessage {
  role: string;
  timestamp: string;
  message_ids: string[];
  content: unknown[];
}

interface NormalizedStep {
  id: string;
  description?: string;
  summary?: string;
  started_at?: string;
  completed_at?: string;
  messages: NormalizedMessage[];
  steps: NormalizedStep[];
}

export interface NormalizedConversation {
  conversation_id: string;
  steps: NormalizedStep[];
}

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
    const last = container.messages.at(-1);
    if (last && last.role === item.role) {
      last.message_ids.push(item.message_id);
      last.content.push(...item.content);
    } else {
      container.messages.push({
        role: item.role,
        timestamp: item.timestamp,
        message_ids: [item.message_id],
        content: [...item.content],
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
