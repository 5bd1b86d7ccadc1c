// The context snapshot a save takes (docs/search.md): why the entry was saved, as sentences of
// the conversation, within a token budget.
import type { ModelInfo } from '../embeddings/types';
import type { MemoryDB } from './db';
import type { LiveIndexes } from './live-indexes';
import { MIN_RELEVANCE } from './ranking';
import { dot } from './scoring';
import { chunkCandidates, rankChunks, type ChunkMatch } from './search';
import type { SemanticIndex } from './semantic-index';
import type { Chunk, ContextChunk } from './types';

const SNAPSHOT_CANDIDATES = 50;
/** Turns before the save that a snapshot keeps first (the exchange that led to it). */
export const SNAPSHOT_RECENT_TURNS = 2;
/** Chunks read to find those turns. */
const SNAPSHOT_RECENT_CHUNKS = 32;

/** What a snapshot reads: the chunk rows and the semantic index. */
export interface SnapshotSources {
  db: MemoryDB;
  chunksIndex: LiveIndexes['chunksIndex'];
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
  { db, chunksIndex }: SnapshotSources,
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

  // The latest turns and the most relevant chunks are read at once (two reads in flight cost
  // about one), and only rows the snapshot can keep: those of the latest turns, and the relevant
  // leaders not among them.
  const recentIds = latestTurnIds(idx, conversationId, upTo);
  const [recent, relevant] = await Promise.all([
    readChunks(db, recentIds),
    relevantChunks(db, idx, conversationId, query, info, upTo, new Set(recentIds)),
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

  // 2. The most relevant chunks of the conversation (a latest turn's row as read above).
  const held = new Map(recent.map((row) => [row.id, row]));
  for (const hit of relevant.hits) {
    const row = relevant.rows.get(hit.id) ?? held.get(hit.id);
    if (!row || (upTo !== undefined && row.turnId > upTo)) continue;
    take(row, hit.similarity, budget);
  }
  // Stored in conversation order, so a reader sees the exchange as it happened.
  const chunks = [...taken.values()].sort(
    (a, b) => a.turn_id - b.turn_id || a.sentence_id - b.sentence_id,
  );
  return { chunks, used };
}

/**
 * The ids of the conversation's latest SNAPSHOT_RECENT_TURNS turns (of turn `upTo` and before
 * when it is given), newest first, at most SNAPSHOT_RECENT_CHUNKS: the index names them, so
 * only they are read. Walking the `conversationId` index backwards in IndexedDB took about
 * 50 ms in Chromium at 100k chunks, most of a save (bench/README.md, "Saves").
 */
export function latestTurnIds(
  idx: Pick<SemanticIndex, 'newestIds' | 'turnOf'>,
  conversationId: number,
  upTo: number | undefined,
): number[] {
  const ids = idx.newestIds(conversationId, SNAPSHOT_RECENT_CHUNKS, upTo);
  let turns = 0;
  let last: number | undefined;
  for (let i = 0; i < ids.length; i++) {
    const turn = idx.turnOf(ids[i]);
    // Not named by the index (never so for ids it listed): every row is read, as before.
    if (turn === undefined) return ids;
    if (turn === last) continue;
    if (turns === SNAPSHOT_RECENT_TURNS) return ids.slice(0, i);
    turns++;
    last = turn;
  }
  return ids;
}

async function readChunks(db: MemoryDB, ids: readonly number[]): Promise<Chunk[]> {
  if (!ids.length) return [];
  const rows = await db.chunks.bulkGet([...ids]);
  return rows.filter((row): row is Chunk => row !== undefined);
}

/**
 * The conversation's best SNAPSHOT_CANDIDATES chunks for the query (searchChunkIndex's ranking
 * without a recency blend, in its order), less those a snapshot never keeps (their own match,
 * without their sitting's evidence, below MIN_RELEVANCE, or after turn `upTo`), with the rows of
 * those not in `held` (read elsewhere).
 */
async function relevantChunks(
  db: MemoryDB,
  idx: SemanticIndex,
  conversationId: number,
  query: { text: string; vector: Float32Array },
  info: ModelInfo,
  upTo: number | undefined,
  held: ReadonlySet<number>,
): Promise<{ hits: ChunkMatch[]; rows: Map<number, Chunk> }> {
  const k = SNAPSHOT_CANDIDATES;
  const ranked = await rankChunks(
    idx,
    conversationId,
    { text: query.text, vector: query.vector, info },
    chunkCandidates(k),
    k * 2,
  );
  const hits = ranked.slice(0, k).filter((hit) => {
    if (hit.ownMatch < MIN_RELEVANCE) return false;
    const turn = upTo === undefined ? undefined : idx.turnOf(hit.id);
    return turn === undefined || turn <= (upTo as number);
  });
  const rows = await readChunks(
    db,
    hits.filter((hit) => !held.has(hit.id)).map((hit) => hit.id),
  );
  return { hits, rows: new Map(rows.map((row) => [row.id!, row])) };
}
