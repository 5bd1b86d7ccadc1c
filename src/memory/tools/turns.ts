// The semantic index of conversations: recordTurn and searchChunks.
import type { StoreContext } from '../context';
import { intArg, isToolError, short, toolError } from '../validate';
import { splitSentences } from '../text';
import type { Chunk, ChunkHit, RecordTurnResult, Role, ToolError } from '../types';

const ROLES: readonly Role[] = ['user', 'assistant', 'system', 'tool'];

export function turnsTools(ctx: StoreContext) {
  const { noteChunkWrite, db, now, embed, chunksIndex, guard, tokensOf, state } = ctx;

  async function recordTurn(turn: {
    conversationId: number;
    role: Role;
    text: string;
    turnId?: number;
  }): Promise<RecordTurnResult | ToolError> {
    return guard(async () => {
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
      if (!ROLES.includes(turn.role)) {
        return toolError(
          'INVALID_ARGUMENT',
          `role must be one of ${ROLES.join(', ')}, got ${short(turn.role)}`,
        );
      }
      if (typeof turn.text !== 'string')
        return toolError('INVALID_ARGUMENT', `text must be a string, got ${short(turn.text)}`);
      const givenTurn = intArg(turn.turnId, 'turnId', -1, 1, Number.MAX_SAFE_INTEGER);
      if (isToolError(givenTurn)) return givenTurn;

      const sentences = splitSentences(turn.text);
      const counts = await Promise.all(sentences.map(tokensOf));
      let vectors: Float32Array[] = [];
      let modelId = '';
      if (sentences.length) {
        const emb = await embed(sentences);
        if (isToolError(emb)) return emb;
        vectors = emb.vectors;
        modelId = emb.info.id;
      }
      const at = new Date(now());
      const { turnId, rows } = await db.transaction(
        'rw',
        db.messages,
        db.chunks,
        db.conversations,
        async () => {
          const conv = await db.conversations.get(conversationId);
          if (conv) await db.conversations.update(conversationId, { modified: at });
          else
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
                  time: at,
                });
          const rows: Chunk[] = sentences.map((text, i) => ({
            conversationId,
            turnId,
            sentenceId: i,
            role: turn.role,
            text,
            tokenCount: counts[i],
            embedding: vectors[i],
            model: modelId,
            time: at,
          }));
          if (rows.length) {
            const ids = await db.chunks.bulkAdd(rows, { allKeys: true });
            rows.forEach((r, i) => (r.id = ids[i]));
          }
          return { turnId, rows };
        },
      );
      state.lastConversationId = conversationId;
      noteChunkWrite(rows.map((r) => r.id));
      return { status: 'SUCCESS' as const, turnId, chunks: rows.length };
    });
  }

  async function searchChunks(conversationId: number, query: string, k = 10): Promise<ChunkHit[]> {
    if (typeof query !== 'string' || !query.trim() || typeof conversationId !== 'number') return [];
    const emb = await embed([query]);
    if (isToolError(emb)) return [];
    const idx = await chunksIndex(emb.info);
    const hits = idx.search(
      conversationId,
      emb.vectors[0],
      Math.max(1, Math.min(1000, Math.floor(k) || 10)),
    );
    const rows = await db.chunks.bulkGet(hits.map((h) => h.id));
    return hits.flatMap((h, i) => {
      const row = rows[i];
      if (!row) return [];
      const { embedding: _e, ...chunk } = row;
      return [{ chunk, similarity: h.similarity }];
    });
  }

  return { recordTurn, searchChunks };
}
