// A save's context snapshot reads only the chunk rows it can keep (the latest turns, the relevant
// leaders not among them) and keeps exactly what reading the 32 newest rows and the 50 best did.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUNDLED_MODEL, createEmbedder, openMemory, type Embedder } from '../../src/memory';
import { MIN_RELEVANCE } from '../../src/memory/ranking';
import { dot } from '../../src/memory/scoring';
import { searchChunkIndex } from '../../src/memory/search';
import { latestTurnIds, SNAPSHOT_RECENT_TURNS, takeSnapshot } from '../../src/memory/snapshot';
import { openStore } from '../../src/memory/store';
import type { Chunk, ContextChunk } from '../../src/memory/types';
import { isToolError } from '../../src/memory/validate';

let embedder: Embedder;
beforeAll(async () => {
  embedder = createEmbedder({ model: BUNDLED_MODEL });
  await embedder.ready();
});
afterAll(() => embedder.dispose());

const dbName = () => `snapshot-${crypto.randomUUID()}`;

/** Counts `get`s of rows of the chunk table while `fn` runs. */
async function countChunkGets(fn: () => Promise<unknown>): Promise<number> {
  let gets = 0;
  const orig = IDBObjectStore.prototype.get;
  const spy = vi.spyOn(IDBObjectStore.prototype, 'get').mockImplementation(function (
    this: IDBObjectStore,
    ...a: Parameters<IDBObjectStore['get']>
  ) {
    if (this.name === 'chunks') gets++;
    return orig.apply(this, a);
  });
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return gets;
}

/**
 * The snapshot as it was taken before only keepable rows were read (the code of 9eca9f3): the
 * 32 newest rows of the chat and the rows of its 50 best matches, filtered afterwards.
 */
async function snapshotAsBefore(
  store: ReturnType<typeof openStore>,
  conversationId: number,
  query: { text: string; vector: Float32Array },
  budget: number,
  upTo?: number,
): Promise<{ chunks: ContextChunk[]; used: number }> {
  const info = await store.model();
  if (isToolError(info)) throw new Error(info.message);
  const idx = await store.chunksIndex(info);
  const taken = new Map<number, ContextChunk>();
  let used = 0;
  const take = (row: Chunk, similarity: number, limit: number) => {
    if (row.id === undefined || taken.has(row.id) || row.tokenCount > limit - used) return;
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
  };
  const recent = (await store.db.chunks.bulkGet(idx.newestIds(conversationId, 32, upTo))).filter(
    (r): r is Chunk => r !== undefined,
  );
  const hits = await searchChunkIndex(
    store.db.chunks,
    idx,
    conversationId,
    { ...query, info },
    50,
    0,
    Date.now(),
  );
  const turns: Chunk[][] = [];
  for (const row of recent) {
    const last = turns[turns.length - 1];
    if (last && last[0].turnId === row.turnId) last.unshift(row);
    else if (turns.length < SNAPSHOT_RECENT_TURNS) turns.push([row]);
  }
  const half = Math.floor(budget / 2);
  for (const turn of turns) {
    const cost = turn.reduce((n, r) => n + r.tokenCount, 0);
    if (cost > half - used) break;
    for (const row of turn) take(row, dot(query.vector, row.embedding), half);
  }
  // The best by match, as the ranking gives them (a search's hits that match alike are shown
  // by their own meaning; which of them a budget keeps is the ranking's order).
  hits.sort((a, b) => b.match - a.match || b.row.id! - a.row.id!);
  for (const hit of hits) {
    if (hit.ownMatch < MIN_RELEVANCE || (upTo !== undefined && hit.row.turnId > upTo)) continue;
    take(hit.row, hit.similarity, budget);
  }
  const chunks = [...taken.values()].sort(
    (a, b) => a.turn_id - b.turn_id || a.sentence_id - b.sentence_id,
  );
  return { chunks, used };
}

const TOPICS = ['beans', 'tomatoes', 'the garden shed', 'rain', 'compost', 'the bicycle'];

describe('context snapshot reads', () => {
  it('keeps what reading the 32 newest and the 50 best rows kept, for any budget and message', async () => {
    const name = dbName();
    const mem = openMemory({ name, embedder });
    // Turns of 1 to 5 sentences, so that the newest 32 rows span more than two turns.
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const turnIds: number[] = [];
    for (let t = 0; t < 30; t++) {
      const sentences = Array.from(
        { length: 1 + rand(5) },
        (_, s) => `In turn ${t} we spoke of ${TOPICS[rand(TOPICS.length)]} (${s}).`,
      );
      const r = await mem.recordTurn({
        conversationId: 1,
        role: t % 2 ? 'assistant' : 'user',
        text: sentences.join(' '),
      });
      if (r.status !== 'SUCCESS') throw new Error(JSON.stringify(r));
      turnIds.push(r.turnId);
    }
    await mem.close();

    const store = openStore({ name, embedder });
    const info = await store.model();
    if (isToolError(info)) throw new Error(info.message);
    const sources = { db: store.db, chunksIndex: store.chunksIndex };
    let compared = 0;
    let beyondRecent = 0;
    const lastTwo = new Set(turnIds.slice(-2));
    for (const topic of TOPICS) {
      const text = `Garden notes about ${topic}`;
      const emb = await store.embed([text]);
      if (isToolError(emb)) throw new Error(emb.message);
      const query = { text, vector: emb.vectors[0] };
      for (const budget of [40, 300, 1000, 4000]) {
        for (const upTo of [undefined, turnIds[3], turnIds[17], turnIds[29]]) {
          const now = await takeSnapshot(sources, info, 1, query, budget, upTo);
          const before = await snapshotAsBefore(store, 1, query, budget, upTo);
          expect(now).toEqual(before);
          compared++;
          if (upTo === undefined && now.chunks.some((c) => !lastTwo.has(c.turn_id))) beyondRecent++;
        }
      }
    }
    expect(compared).toBe(TOPICS.length * 16);
    // The relevant part was compared too, not only the latest turns.
    expect(beyondRecent).toBeGreaterThan(0);
    store.close();
  });

  it('reads the rows of the last two turns only, when nothing else in the chat is relevant', async () => {
    const name = dbName();
    const mem = openMemory({ name, embedder });
    for (let i = 0; i < 40; i++) {
      const text = `Turn ${i} is about garden plot ${i}. It has ${i} rows of beans. The soil is wet.`;
      await mem.recordTurn({ conversationId: 1, role: i % 2 ? 'assistant' : 'user', text });
    }
    await mem.saveMemory('Warm/Up', 'a first save opens the indexes', 0);
    const gets = await countChunkGets(() =>
      mem.saveMemory('Physics/Lattice', 'quantum chromodynamics on a lattice', undefined, {
        conversationId: 1,
      }),
    );
    // Three sentences a turn: the rows of turns 38 and 39, and none of the 32 + 50 read before.
    expect(gets).toBe(2 * 3);
    const entry = await mem.getEntry('Physics/Lattice');
    if ('status' in entry) throw new Error(entry.message);
    expect(entry.contextChunks.map((c) => c.text)).toEqual([
      'Turn 38 is about garden plot 38.',
      'It has 38 rows of beans.',
      'The soil is wet.',
      'Turn 39 is about garden plot 39.',
      'It has 39 rows of beans.',
      'The soil is wet.',
    ]);
    await mem.close();
  });

  it('names the ids of the latest turns only, newest first', () => {
    // Ids 1..12 in turns of 3 (turn = ceil(id / 3)); newestIds lists them newest first.
    const idx = {
      newestIds: (_c: number, limit: number, upTo?: number) =>
        Array.from({ length: 12 }, (_, i) => 12 - i)
          .filter((id) => upTo === undefined || Math.ceil(id / 3) <= upTo)
          .slice(0, limit),
      turnOf: (id: number) => Math.ceil(id / 3),
    };
    expect(latestTurnIds(idx, 1, undefined)).toEqual([12, 11, 10, 9, 8, 7]);
    expect(latestTurnIds(idx, 1, 2)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(latestTurnIds(idx, 1, 1)).toEqual([3, 2, 1]);
    // An id the index cannot place: every id it listed is read, as before.
    expect(latestTurnIds({ ...idx, turnOf: () => undefined }, 1, undefined)).toHaveLength(12);
  });
});
