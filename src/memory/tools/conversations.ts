// Conversations and their messages (turns). Messages are stored here; recordTurn indexes them.
import { shardTables, type MemoryDB } from '../db';
import type { StoreContext } from '../store';
import { removeFromShards } from '../shards';
import { DEFAULT_TITLE, altOf, isKeeperCard, replyGroups, titleFromMessage } from '../replies';
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

export type MessageParts = Pick<Message, 'toolCalls' | 'toolCallId' | 'meta'>;

/** Checks one new message; its parts as they will be stored, or why not. */
export function checkMessage(
  msg: NewMessage,
): { conversationId: number; parts: MessageParts } | ToolError {
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
  if (typeof msg.text !== 'string') return toolError('INVALID_ARGUMENT', 'text must be a string');
  // Checked before the transaction: a value IndexedDB cannot clone would otherwise fail
  // inside it, as an internal error.
  const parts = validateMessageParts(msg);
  if (isToolError(parts)) return parts;
  return { conversationId, parts: parts as MessageParts };
}

/**
 * Inside a transaction (chunks and shards): deletes the sentences of these messages (turns)
 * and their place in the shards. The ids of the chunk rows deleted.
 */
export async function dropTurnChunks(
  db: Pick<MemoryDB, 'chunks' | 'shards' | 'shardHeads' | 'shardCodes'>,
  turnIds: number[],
): Promise<number[]> {
  if (!turnIds.length) return [];
  const chunkIds = await db.chunks.where('turnId').anyOf(turnIds).primaryKeys();
  await db.chunks.bulkDelete(chunkIds);
  await removeFromShards(db, chunkIds);
  return chunkIds;
}

/**
 * Inside a transaction (chunks and shards): deletes the sentences of a whole conversation and
 * their place in the shards. The ids of the chunk rows deleted.
 */
/** Why a message for chat `id`, which is not (or no longer) stored, was not kept. */
export function chatGone(id: number): string {
  return `Chat ${id} is not here: it was deleted (perhaps in another tab or on another device), so nothing more is kept in it.`;
}

export async function dropConversationChunks(
  db: Pick<MemoryDB, 'chunks' | 'shards' | 'shardHeads' | 'shardCodes'>,
  conversationId: number,
): Promise<number[]> {
  const chunkIds = await db.chunks.where('conversationId').equals(conversationId).primaryKeys();
  await db.chunks.bulkDelete(chunkIds);
  await removeFromShards(db, chunkIds);
  return chunkIds;
}

export function conversationTools(ctx: StoreContext) {
  const { db, now, guard, noteChunkWrite } = ctx;

  /**
   * Inside a transaction: stores messages of one existing conversation (NOT_FOUND when there
   * is none), names the chat from its first user message while it has the default title, and
   * shows the alternative a reply message belongs to (docs/chat.md).
   */
  async function insert(
    conversationId: number,
    rows: { msg: NewMessage; parts: MessageParts }[],
    at: Date,
  ): Promise<number[] | ToolError> {
    const conv = await db.conversations.get(conversationId);
    // A chat deleted meanwhile (in another tab, say, while this one answered in it) stays
    // deleted: what comes for it is refused, not stored in a chat made again around it.
    if (!conv) return toolError('NOT_FOUND', chatGone(conversationId));
    // The keeper's card is written in the background: it does not make the chat the newest.
    const aside = rows.every((r) => isKeeperCard({ meta: r.parts.meta }));
    const changes: Partial<Conversation> = aside ? {} : { modified: at };
    if (!conv.named && conv.title === DEFAULT_TITLE) {
      const firstUser =
        (await db.messages
          .where('conversationId')
          .equals(conversationId)
          .filter((m) => m.role === 'user')
          .first()) ?? rows.find((r) => r.msg.role === 'user')?.msg;
      const title = firstUser ? titleFromMessage(firstUser.text) : '';
      if (title) changes.title = title;
    }
    if (Object.keys(changes).length) await db.conversations.update(conversationId, changes);
    const ids: number[] = [];
    for (const { msg, parts } of rows) {
      ids.push(
        await db.messages.add({
          conversationId,
          role: msg.role,
          text: msg.text,
          time: at,
          ...parts,
        }),
      );
    }
    // A reply message of a given alternative makes that alternative the one shown, in the
    // same write: a regeneration shows (and sends) its own reply from its first stored message.
    const alt = rows.find((r) => r.msg.role !== 'user' && r.parts.meta?.alt !== undefined);
    if (alt) {
      const user = await db.messages
        .where('conversationId')
        .equals(conversationId)
        .reverse()
        .filter((m) => m.role === 'user')
        .first();
      const wanted = altOf(alt.parts);
      if (user && altOf(user) !== wanted) {
        await db.messages.update(user.id!, { meta: { ...user.meta, alt: wanted } });
      }
    }
    return ids;
  }

  /** Inside a transaction: removes these messages' sentences from the semantic index. */
  async function dropChunks(turnIds: number[]): Promise<void> {
    noteChunkWrite(await dropTurnChunks(db, turnIds));
  }

  async function createConversation(
    title?: unknown,
  ): Promise<{ status: 'SUCCESS'; id: number } | ToolError> {
    return guard(async () => {
      const at = new Date(now());
      const name =
        typeof title === 'string' && title.trim() ? title.trim().slice(0, 200) : DEFAULT_TITLE;
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
      // Named by the user: the first message no longer names it.
      const n = await db.conversations.update(id, {
        title: title.trim().slice(0, 200),
        named: true,
        titled: new Date(now()),
      });
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
        [db.conversations, db.messages, db.chunks, db.settings, ...shardTables(db)],
        async () => {
          noteChunkWrite(await dropConversationChunks(db, id));
          const messages = await db.messages.where('conversationId').equals(id).delete();
          if (await db.conversations.get(id)) await noteChatDelete(db, id, now());
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
      const checked = checkMessage(msg);
      if (isToolError(checked)) return checked;
      const at = new Date(now());
      const ids = await db.transaction('rw', db.conversations, db.messages, async () =>
        insert(checked.conversationId, [{ msg, parts: checked.parts }], at),
      );
      if (isToolError(ids)) return ids;
      return { status: 'SUCCESS' as const, id: ids[0] };
    });
  }

  /**
   * Stores messages of one conversation in one transaction, all or none (a round's assistant
   * message with its tool calls and the tool results that answer them).
   */
  async function addMessages(
    msgs: NewMessage[],
  ): Promise<{ status: 'SUCCESS'; ids: number[] } | ToolError> {
    return guard(async () => {
      if (!Array.isArray(msgs) || !msgs.length)
        return toolError('INVALID_ARGUMENT', 'addMessages needs a non-empty list of messages');
      const rows: { msg: NewMessage; parts: MessageParts }[] = [];
      let conversationId: number | undefined;
      for (const msg of msgs) {
        const checked = checkMessage(msg);
        if (isToolError(checked)) return checked;
        if (conversationId !== undefined && checked.conversationId !== conversationId)
          return toolError('INVALID_ARGUMENT', 'addMessages stores messages of one conversation');
        conversationId = checked.conversationId;
        rows.push({ msg, parts: checked.parts });
      }
      const at = new Date(now());
      const ids = await db.transaction('rw', db.conversations, db.messages, async () =>
        insert(conversationId!, rows, at),
      );
      if (isToolError(ids)) return ids;
      return { status: 'SUCCESS' as const, ids };
    });
  }

  /**
   * Changes a message. New text takes the old text's sentences out of the semantic index in the
   * same transaction (index the new text with recordTurn).
   */
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
      if (!Object.keys(changes).length) return { status: 'SUCCESS' as const };
      const found = await db.transaction(
        'rw',
        [db.messages, db.chunks, ...shardTables(db)],
        async () => {
          const m = await db.messages.get(id);
          if (!m) return false;
          if (changes.text !== undefined && changes.text !== m.text) await dropChunks([id]);
          await db.messages.update(id, changes);
          return true;
        },
      );
      return found ? { status: 'SUCCESS' as const } : toolError('NOT_FOUND', `No message ${id}`);
    });
  }

  /**
   * Edit and resend: gives a user message new text and deletes every message after it in its
   * conversation (later turns and every alternative of its reply) with their index sentences,
   * in one transaction. Index the new text with recordTurn.
   */
  async function editUserMessage(
    idIn: unknown,
    text: unknown,
  ): Promise<{ status: 'SUCCESS'; removed: number } | ToolError> {
    return guard(async () => {
      const id = intArg(idIn, 'messageId', -1, 1, Number.MAX_SAFE_INTEGER);
      if (isToolError(id)) return id;
      if (typeof text !== 'string' || !text.trim())
        return toolError('INVALID_ARGUMENT', `text must be non-empty text, got ${short(text)}`);
      return db.transaction(
        'rw',
        [db.conversations, db.messages, db.chunks, ...shardTables(db)],
        async () => {
          const m = await db.messages.get(id);
          if (!m) return toolError('NOT_FOUND', `No message ${id}`);
          if (m.role !== 'user')
            return toolError('INVALID_ARGUMENT', `Message ${id} is not the user's`);
          const later = await db.messages
            .where('conversationId')
            .equals(m.conversationId)
            .filter((x) => x.id! > id)
            .primaryKeys();
          await dropChunks([id, ...later]);
          await db.messages.bulkDelete(later);
          const meta = { ...m.meta };
          delete meta.alt;
          await db.messages.update(id, { text, meta, time: new Date(now()) });
          await db.conversations.update(m.conversationId, { modified: new Date(now()) });
          return { status: 'SUCCESS' as const, removed: later.length };
        },
      );
    });
  }

  /**
   * Deletes a message with its index sentences, in one transaction. An assistant message takes
   * the tool results of its calls along. A user message takes the alternatives of its reply that
   * are not shown; the shown one stays, as part of the reply before it.
   */
  async function deleteMessage(
    idIn: unknown,
  ): Promise<{ status: 'SUCCESS'; deleted: number } | ToolError> {
    return guard(async () => {
      const id = intArg(idIn, 'messageId', -1, 1, Number.MAX_SAFE_INTEGER);
      if (isToolError(id)) return id;
      return db.transaction('rw', [db.messages, db.chunks, ...shardTables(db)], async () => {
        const m = await db.messages.get(id);
        if (!m) return toolError('NOT_FOUND', `No message ${id}`);
        const all = await db.messages.where('conversationId').equals(m.conversationId).toArray();
        const { gone, retagged } = messageDeletion(all, m);
        for (const x of retagged) await db.messages.update(x.id, { meta: x.meta });
        await dropChunks(gone);
        await db.messages.bulkDelete(gone);
        return { status: 'SUCCESS' as const, deleted: gone.length };
      });
    });
  }

  /** Shows another alternative of the reply to a user message (and sends it to the model). */
  async function selectAlternative(
    idIn: unknown,
    altIn: unknown,
  ): Promise<{ status: 'SUCCESS' } | ToolError> {
    return guard(async () => {
      const id = intArg(idIn, 'messageId', -1, 1, Number.MAX_SAFE_INTEGER);
      if (isToolError(id)) return id;
      const alt = intArg(altIn, 'alternative', -1, 0, Number.MAX_SAFE_INTEGER);
      if (isToolError(alt)) return alt;
      return db.transaction('rw', db.messages, async () => {
        const m = await db.messages.get(id);
        if (!m || m.role !== 'user') return toolError('NOT_FOUND', `No user message ${id}`);
        const all = await db.messages.where('conversationId').equals(m.conversationId).toArray();
        const group = replyGroups(all).find((g) => g.user?.id === id);
        if (!group?.alternatives.includes(alt))
          return toolError('NOT_FOUND', `The reply to message ${id} has no alternative ${alt}`);
        await db.messages.update(id, { meta: { ...m.meta, alt } });
        return { status: 'SUCCESS' as const };
      });
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
    addMessages,
    updateMessage,
    editUserMessage,
    deleteMessage,
    selectAlternative,
    getMessages,
  };
}

/**
 * What deleting message `m` (one of `all`, its conversation's messages) takes along: an assistant
 * message the tool results of its calls; a user message the alternatives of its reply that are
 * not shown. The shown one stays as part of the reply before it, so its messages take that
 * reply's shown alternative (`retagged`, with their new meta).
 */
export function messageDeletion(
  all: readonly Message[],
  m: Message,
): { gone: number[]; retagged: { id: number; meta: Record<string, unknown> }[] } {
  const id = m.id!;
  const gone = [id];
  const retagged: { id: number; meta: Record<string, unknown> }[] = [];
  if (m.role === 'assistant' && m.toolCalls?.length) {
    const calls = new Set(m.toolCalls.map((c) => c.id));
    for (const x of all)
      if (x.role === 'tool' && x.id! > id && calls.has(x.toolCallId ?? '')) gone.push(x.id!);
  }
  if (m.role === 'user') {
    const groups = replyGroups(all);
    const at = groups.findIndex((g) => g.user?.id === id);
    const group = groups[at];
    const before = groups[at - 1];
    // The reply shown joins the reply before: it takes that one's shown alternative.
    const joins = before?.user ? before.shown : 0;
    for (const x of group?.members ?? []) {
      if (altOf(x) !== group.shown) gone.push(x.id!);
      else if (altOf(x) !== joins) {
        const meta = { ...x.meta };
        if (joins) meta.alt = joins;
        else delete meta.alt;
        retagged.push({ id: x.id!, meta });
      }
    }
  }
  return { gone, retagged };
}

/** The settings row that holds when each chat was deleted here (for sync: docs/sync.md). */
export const CHAT_DELETES_KEY = 'chatDeletes';
/** Chats whose delete time is kept; older ones fall out (their delete is long synced). */
const MAX_CHAT_DELETES = 1000;

/** Inside a transaction with `settings`: notes that chat `id` was deleted at `at` (ms). */
async function noteChatDelete(db: MemoryDB, id: number, at: number): Promise<void> {
  const kept = chatDeletesOf((await db.settings.get(CHAT_DELETES_KEY))?.value);
  kept.set(id, at);
  const latest = [...kept].slice(-MAX_CHAT_DELETES);
  await db.settings.put({ key: CHAT_DELETES_KEY, value: Object.fromEntries(latest) });
}

/** When each chat was deleted here (ms), by its id, oldest first; a bad row reads as none. */
export function chatDeletesOf(value: unknown): Map<number, number> {
  const out = new Map<number, number>();
  if (!value || typeof value !== 'object') return out;
  for (const [k, v] of Object.entries(value))
    if (Number.isSafeInteger(Number(k)) && typeof v === 'number' && Number.isFinite(v))
      out.set(Number(k), v);
  return new Map([...out].sort((a, b) => a[1] - b[1]));
}
