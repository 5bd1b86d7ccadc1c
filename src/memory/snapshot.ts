// The context snapshot a save takes (docs/search.md): why the entry was saved, as sentences of
// the conversation, within a token budget.
import type { ModelInfo } from '../embeddings/types';
import type { MemoryDB } from './db';
import type { LiveIndexes } from './live-indexes';
import { MIN_RELEVANCE } from './ranking';
import { dot } from './scoring';
import { searchChunkIndex } from './search';
import type { SemanticIndex } from './semantic-index';
import type { Chunk, ContextChunk } from './types';

const SNAPSHOT_CANDIDATES = 50;
/** Turns before the save that a snapshot keeps first (the exchange that led to it). */
export const SNAPSHOT_RECENT_TURNS = 2;
/** Chunks read to find those turns. */
const SNAPSHOT_RECENT_CHUNKS = 32;

/** What a snapshot reads: the chunk rows, the semantic index and the clock. */
export interface SnapshotSources {
  db: MemoryDB;
  chunksIndex: LiveIndexes['chunksIndex'];
  now: () => number;
}

/**
 * Context snapshot (docs/search.md): why the entry was saved. First the turns just before the
 * save (the exchange that led to it), within half the budget; then the chunks of the whole
 * conversation most relevant to the entry, by the one ranking function, above
 * MIN_RELEVANCE. Stored in conversation order. With `upTo` (a message's turn id: a person
 * remembering that message), the turns "just before" end with that message, not with the
 * conversation's last one, and the relevant chunks are of what was said by then: what came
 * after did not lead to it (and recall reads the snapshot's newest turns as those it was saved
 * from).
 */
export async function takeSnapshot(
  { db, chunksIndex, now }: SnapshotSources,
  info: ModelInfo,
  conversationId: number | undefined,
  query: { text: string; vector: Float32Array },
  budget: number,
  upTo?: number,
): Promise<{ chunks: ContextChunk[]; used: number }> {
  if (conversationId === undefined || budget <= 0) return { chunks: [], used: 0 };
  const idx = await chunksIndex(info);
  const taken = new Map<number, ContextChunk>();
  let used = 0;
  const take = (row: Chunk, similarity: number, limit: number): boolean => {
    if (row.id === undefined || taken.has(row.id) || row.tokenCount > limit - used) return false;
    used += row.tokenCount;
    taken.set(row.id, {
      turn_id: row.turnId,
      sentence_id: row.sentenceId,
      role: row.role,
      text: row.text,
      embedding: row.embedding,
      similarity: Math.round(similarity * 1000) / 1000,
      tokenCount: row.tokenCount,
    });
    return true;
  };
  const cosine = (row: Chunk) =>
    row.embedding.length === query.vector.length ? dot(query.vector, row.embedding) : 0;

  // The latest chunks and the most relevant ones are read at once: two reads in flight cost
  // about one.
  const [recent, hits] = await Promise.all([
    latestChunks(db, idx, conversationId, upTo),
    searchChunkIndex(
      db.chunks,
      idx,
      conversationId,
      { text: query.text, vector: query.vector, info },
      SNAPSHOT_CANDIDATES,
      0,
      now(),
    ),
  ]);

  // 1. The latest turns (up to `upTo`), newest first, whole turns only, within half the budget.
  const turns: Chunk[][] = [];
  for (const row of recent) {
    if (row.model !== info.id) continue;
    const last = turns[turns.length - 1];
    if (last && last[0].turnId === row.turnId) last.unshift(row);
    else if (turns.length < SNAPSHOT_RECENT_TURNS) turns.push([row]);
  }
  const half = Math.floor(budget / 2);
  for (const turn of turns) {
    const cost = turn.reduce((n, r) => n + r.tokenCount, 0);
    if (cost > half - used) break;
    for (const row of turn) take(row, cosine(row), half);
  }

  // 2. The most relevant chunks of the conversation.
  for (const hit of hits) {
    if (hit.match < MIN_RELEVANCE || (upTo !== undefined && hit.row.turnId > upTo)) continue;
    take(hit.row, hit.similarity, budget);
  }
  // Stored in conversation order, so a reader sees the exchange as it happened.
  const chunks = [...taken.values()].sort(
    (a, b) => a.turn_id - b.turn_id || a.sentence_id - b.sentence_id,
  );
  return { chunks, used };
}

/**
 * The conversation's latest chunks of this model, newest first: those of turn `upTo` and
 * before when it is given. The index names them and only they are read: walking the
 * `conversationId` index backwards in IndexedDB took about 50 ms in Chromium at 100k chunks,
 * most of a save (bench/README.md, "Saves").
 */
async function latestChunks(
  db: MemoryDB,
  idx: SemanticIndex,
  conversationId: number,
  upTo: number | undefined,
): Promise<Chunk[]> {
  const rows = await db.chunks.bulkGet(idx.newestIds(conversationId, SNAPSHOT_RECENT_CHUNKS, upTo));
  return rows.filter((row): row is Chunk => row !== undefined);
}
