/** Conversations: the messages of a run tree's turns, normalized, and their transcripts. */
import { feature } from '../../src/feature.js';
import { conversationMessagesProjection } from '../../projections/conversation/conversation-messages.js';
import conversationQueries from '../../queries/conversation/conversations.js';
import conversationRoutes from './routes.js';

export const conversationFeature = feature({
  name: 'conversation',
  routes: [conversationRoutes, conversationQueries],
  projections: [conversationMessagesProjection],
});
