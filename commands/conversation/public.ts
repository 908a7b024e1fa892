/**
 * The conversation feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { conversationDecider } from './conversation-decider.js';
export { normalizeConversation, normalizedConversation } from './normalized-conversation.js';
export {
  conversationMessagesProjection,
  type MessageDoc,
  type TurnDoc,
} from '../../projections/conversation/conversation-messages.js';
