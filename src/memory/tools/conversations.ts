// Conversations and their messages (turns). Messages are stored here; recordTurn indexes them.
import type { StoreContext } from '../context';
import { removeFromShards } from '../shards';
import type { Conversation, Message, Role, ToolError } from '../types';
import { ROLES, intArg, isToolError, short, toolError, validateMessageParts } from '../validate';

export interface NewMessage {
  conversationId: number;
  role: Role;
  text: string;
  toolCalls?: Message['toolCalls'];
  toolCallId?: string;
  meta?: Record<string, unknown>;
}

export function conversationTools(ctx: StoreContext) {
  const { db, now, guard, noteChunkWrite } = ctx;

  async function createConversation(
    title?: unknown,
  ): Promise<{ status: 'SUCCESS'; id: number } | ToolError> {
    return guard(async () => {
      const at = new Date(now());
      const name =
        typeof title === 'string' && title.trim() ? title.trim().slice(0, 200) : 'New chat';
      const id = await db.conversations.add({ title: name, created: at, modified: at });
      return { status: 'SUCCESS' as const, id };
    });
  }

  async function listConversations(): Promise<Conversation[]> {
    const rows = await db.conversations.toArray();
    return rows.sort((a, b) => b.modified.getTime() - a.modified.getTime());
  }

  async function renameConversation(
    idIn: unknown,
    title: unknown,
  ): Promise<{ status: 'SUCCESS' } | ToolError> {
    return guard(async () => {
      const id = intArg(idIn, 'conversationId', -1, 0, Number.MAX_SAFE_INTEGER);
      if (isToolError(id)) return id;
      if (typeof title !== 'string' || !title.trim()) {
        return toolError('INVALID_ARGUMENT', `title must be non-empty text, got ${short(title)}`);
      }
      const n = await db.conversations.update(id, { title: title.trim().slice(0, 200) });
      return n ? { status: 'SUCCESS' as const } : toolError('NOT_FOUND', `No conversation ${id}`);
    });
  }

  /** Deletes a conversation with its messages and semantic-index chunks, in one transaction. */
  async function deleteConversation(
    idIn: unknown,
  ): Promise<{ status: 'SUCCESS'; messages: number } | ToolError> {
    return guard(async () => {
      const id = intArg(idIn, 'conversationId', -1, 0, Number.MAX_SAFE_INTEGER);
      if (isToolError(id)) return id;
      return db.transaction(
        'rw',
        [db.conversations, db.messages, db.chunks, db.shards],
        async () => {
          const chunkIds = await db.chunks.where('conversationId').equals(id).primaryKeys();
          await db.chunks.bulkDelete(chunkIds);
          await removeFromShards(db.shards, chunkIds);
          noteChunkWrite(chunkIds);
          const messages = await db.messages.where('conversationId').equals(id).delete();
          await db.conversations.delete(id);
          return { status: 'SUCCESS' as const, messages };
        },
      );
    });
  }

  /** Stores a message (without indexing it: call recordTurn with its id for that). */
  async function addMessage(
    msg: NewMessage,
  ): Promise<{ status: 'SUCCESS'; id: number } | ToolError> {
    return guard(async () => {
      if (!msg || typeof msg !== 'object')
        return toolError('INVALID_ARGUMENT', 'addMessage needs a message object');
      const conversationId = intArg(
        msg.conversationId,
        'conversationId',
        -1,
        0,
        Number.MAX_SAFE_INTEGER,
      );
      if (isToolError(conversationId)) return conversationId;
      if (!ROLES.includes(msg.role))
        return toolError('INVALID_ARGUMENT', `role must be one of ${ROLES.join(', ')}`);
      if (typeof msg.text !== 'string')
        return toolError('INVALID_ARGUMENT', 'text must be a string');
      // Checked before the transaction: a value IndexedDB cannot clone would otherwise fail
      // inside it, as an internal error.
      const parts = validateMessageParts(msg);
      if (isToolError(parts)) return parts;
      const at = new Date(now());
      const id = await db.transaction('rw', db.conversations, db.messages, async () => {
        const conv = await db.conversations.get(conversationId);
        if (conv) await db.conversations.update(conversationId, { modified: at });
        else
          await db.conversations.put({
            id: conversationId,
            title: 'New chat',
            created: at,
            modified: at,
          });
        return db.messages.add({
          conversationId,
          role: msg.role,
          text: msg.text,
          time: at,
          ...(parts as Pick<Message, 'toolCalls' | 'toolCallId' | 'meta'>),
        });
      });
      return { status: 'SUCCESS' as const, id };
    });
  }

  async function updateMessage(
    idIn: unknown,
    patch: { text?: string; meta?: Record<string, unknown>; toolCalls?: Message['toolCalls'] },
  ): Promise<{ status: 'SUCCESS' } | ToolError> {
    return guard(async () => {
      const id = intArg(idIn, 'messageId', -1, 1, Number.MAX_SAFE_INTEGER);
      if (isToolError(id)) return id;
      const changes: Partial<Message> = {};
      if (typeof patch?.text === 'string') changes.text = patch.text;
      const parts = validateMessageParts({ meta: patch?.meta, toolCalls: patch?.toolCalls });
      if (isToolError(parts)) return parts;
      Object.assign(changes, parts as Pick<Message, 'toolCalls' | 'meta'>);
      const n = await db.messages.update(id, changes);
      return n || !Object.keys(changes).length
        ? { status: 'SUCCESS' as const }
        : toolError('NOT_FOUND', `No message ${id}`);
    });
  }

  async function getMessages(conversationId: number): Promise<Message[]> {
    if (typeof conversationId !== 'number') return [];
    const rows = await db.messages.where('conversationId').equals(conversationId).toArray();
    return rows.sort((a, b) => a.id! - b.id!);
  }

  return {
    createConversation,
    listConversations,
    renameConversation,
    deleteConversation,
    addMessage,
    updateMessage,
    getMessages,
  };
}
