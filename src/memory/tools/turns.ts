// The semantic index of conversations: recordTurn and searchChunks.
import { shardTables } from '../db';
import type { StoreContext } from '../store';
import { intArg, isToolError, short, toolError } from '../validate';
import { addToShards } from '../shards';
import { chatGone } from './conversations';
import { indexedPart, saidText, splitSentences } from '../text';
import type { Signals } from '../ranking';
import { searchChunkIndex } from '../search';

import type {
  Chunk,
  ChunkHit,
  RecordTurnResult,
  Role,
  SemanticIndexInfo,
  ToolError,
} from '../types';

const ROLES: readonly Role[] = ['user', 'assistant', 'system', 'tool'];
/** recordTurn merges shard pieces every this many turns (per connection). */
const TIDY_EVERY = 16;

export function turnsTools(ctx: StoreContext) {
  const { noteChunkWrite, db, now, model, embed, chunksIndex, guard, tokensOfSentences, state } =
    ctx;
  let shardWrites = 0;

  async function recordTurn(turn: {
    conversationId: number;
    role: Role;
    text: string;
    turnId?: number;
    time?: Date | number;
  }): Promise<RecordTurnResult | ToolError> {
    return guard(async () => {
      const args = turnArgs(turn);
      if (isToolError(args)) return args;
      const { conversationId, givenTurn } = args;

      // A reply's thinking (`<think>…</think>`) is not indexed: it is not what was said.
      const answer = saidText(turn.role, turn.text);
      const indexed = indexedPart(answer);
      const sentences = splitSentences(indexed);
      const counts = await tokensOfSentences(sentences);
      let vectors: Float32Array[] = [];
      let modelId = '';
      if (sentences.length) {
        const emb = await embed(sentences);
        if (isToolError(emb)) return emb;
        vectors = emb.vectors;
        modelId = emb.info.id;
      }
      const said = turnTime(turn.time);
      if (isToolError(said)) return said;
      const at = new Date(now());
      const written = await db.transaction(
        'rw',
        [db.messages, db.chunks, ...shardTables(db), db.conversations],
        async () => {
          const conv = await db.conversations.get(conversationId);
          // A stored message deleted meanwhile, with its chat or alone (another tab): nothing of
          // it is indexed, or its sentences would be found with no message to show.
          if (
            givenTurn > 0 &&
            (await db.messages.get(givenTurn))?.conversationId !== conversationId
          )
            return toolError(
              'NOT_FOUND',
              conv
                ? `Message ${givenTurn} is not in chat ${conversationId}`
                : chatGone(conversationId),
            );
          // A stored message being indexed (`turnId` given) changed the chat when it was stored;
          // indexing it (a message that arrived by sync, say) is no change of the chat.
          if (conv) {
            if (givenTurn <= 0) await db.conversations.update(conversationId, { modified: at });
          } else
            await db.conversations.put({
              id: conversationId,
              title: `Conversation ${conversationId}`,
              created: at,
              modified: at,
            });
          const turnId =
            givenTurn > 0
              ? givenTurn
              : await db.messages.add({
                  conversationId,
                  role: turn.role,
                  text: turn.text,
                  time: said ?? at,
                });
          const rows = turnChunks(
            { conversationId, turnId, role: turn.role, at: said ?? at },
            sentences,
            counts,
            vectors,
            modelId,
          );
          if (rows.length) {
            const ids = await db.chunks.bulkAdd(rows, { allKeys: true });
            rows.forEach((r, i) => (r.id = ids[i]));
            // Turns come one by one: their small pieces merge every few turns, not each time.
            await addToShards(db, rows, { tidy: ++shardWrites % TIDY_EVERY === 0 });
          }
          return { turnId, rows };
        },
      );
      if (isToolError(written)) return written;
      const { turnId, rows } = written;
      state.lastConversationId = conversationId;
      noteChunkWrite(
        rows.map((r) => r.id),
        rows,
      );
      const result: RecordTurnResult = { status: 'SUCCESS', turnId, chunks: rows.length };
      if (indexed.length < answer.length) result.unindexedChars = answer.length - indexed.length;
      return result;
    });
  }

  async function searchChunks(
    conversationId: number | null,
    query: string,
    k = 10,
    options?: { recencyBias?: number; signals?: Signals },
  ): Promise<ChunkHit[]> {
    if (typeof query !== 'string' || !query.trim()) return [];
    if (conversationId !== null && typeof conversationId !== 'number') return [];
    const bias =
      typeof options?.recencyBias === 'number' &&
      options.recencyBias >= 0 &&
      options.recencyBias <= 1
        ? options.recencyBias
        : 0;
    const signals: Signals =
      options?.signals === 'lexical' || options?.signals === 'semantic' ? options.signals : 'both';
    const text = query.trim();
    const emb = await embed([text]);
    if (isToolError(emb)) return [];
    const idx = await chunksIndex(emb.info);
    // Read as the search starts: it takes the compact path exactly when this is false.
    const exact = idx.exact;
    const hits = await searchChunkIndex(
      db.chunks,
      idx,
      conversationId,
      { text, vector: emb.vectors[0], info: emb.info, signals },
      Math.max(1, Math.min(1000, Math.floor(k) || 10)),
      bias,
      now(),
    );
    return hits.map((h) => {
      const { embedding: _e, ...chunk } = h.row;
      return {
        chunk,
        similarity: h.similarity,
        relevance: h.relevance,
        match: h.match,
        score: h.score,
        terms: h.terms,
        exact,
      };
    });
  }

  /** The semantic index of the active model: size, storage form, memory. */
  async function indexInfo(): Promise<SemanticIndexInfo | ToolError> {
    return guard(async () => {
      const info = await model();
      if (isToolError(info)) return info;
      // The storage form is known once the vectors are in (a cold start reads them last).
      const idx = await chunksIndex(info);
      await idx.whenExact();
      return idx.info();
    });
  }

  return { recordTurn, searchChunks, indexInfo };
}

/** recordTurn's arguments checked: the conversation, and the message id when one is given (else -1). */
export function turnArgs(turn: {
  conversationId: unknown;
  role: unknown;
  text: unknown;
  turnId?: unknown;
}): { conversationId: number; givenTurn: number } | ToolError {
  if (!turn || typeof turn !== 'object')
    return toolError('INVALID_ARGUMENT', 'recordTurn needs { conversationId, role, text }');
  const conversationId = intArg(
    turn.conversationId,
    'conversationId',
    -1,
    0,
    Number.MAX_SAFE_INTEGER,
  );
  if (isToolError(conversationId)) return conversationId;
  if (conversationId < 0) return toolError('INVALID_ARGUMENT', 'conversationId is required');
  if (!ROLES.includes(turn.role as Role)) {
    return toolError(
      'INVALID_ARGUMENT',
      `role must be one of ${ROLES.join(', ')}, got ${short(turn.role)}`,
    );
  }
  if (typeof turn.text !== 'string')
    return toolError('INVALID_ARGUMENT', `text must be a string, got ${short(turn.text)}`);
  const givenTurn = intArg(turn.turnId, 'turnId', -1, 1, Number.MAX_SAFE_INTEGER);
  if (isToolError(givenTurn)) return givenTurn;
  return { conversationId, givenTurn };
}

/** recordTurn's `time`: when the turn was said (undefined: now), or why it cannot be used. */
export function turnTime(time: unknown): Date | undefined | ToolError {
  if (time === undefined) return undefined;
  const date =
    time instanceof Date ? time : typeof time === 'number' ? new Date(time) : new Date(NaN);
  if (!Number.isFinite(date.getTime()))
    return toolError(
      'INVALID_ARGUMENT',
      `time must be a date or ms since 1970, got ${short(time)}`,
    );
  return date;
}

/** The index rows of a turn's sentences: one per sentence, numbered in order, with its vector. */
export function turnChunks(
  turn: { conversationId: number; turnId: number; role: Role; at: Date },
  sentences: readonly string[],
  counts: readonly number[],
  vectors: readonly Float32Array[],
  model: string,
): Chunk[] {
  return sentences.map((text, i) => ({
    conversationId: turn.conversationId,
    turnId: turn.turnId,
    sentenceId: i,
    role: turn.role,
    text,
    tokenCount: counts[i],
    embedding: vectors[i],
    model,
    time: turn.at,
  }));
}
