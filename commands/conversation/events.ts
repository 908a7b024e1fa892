/**
 * `conversation-<id>`: the runs of a conversation, in order, and the one live task bound to it.
 * Appending with the revision read makes "one live task per conversation" hold across factories.
 */
export type ConversationEvent =
  | {
      type: 'ConversationRunAdded';
      data: { conversation_id: string; run_id: string; team_uid: string | null; creator_uid: string };
    }
  | { type: 'ConversationTaskBound'; data: { conversation_id: string; task_uid: string; factory_uid: string } }
  | { type: 'ConversationTaskReleased'; data: { conversation_id: string; task_uid: string } };

export const conversationStream = (id: string) => `conversation-${id}`;
