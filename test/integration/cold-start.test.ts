// Cold start (docs/search.md, "Cold start"): the index reads the shards' compact parts first and
// answers from their words and sign codes, saying the answer is not exact, while the vectors
// load; then it is exact. Shards written before the compact parts load whole, as before.
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryDB } from '../../src/memory/db';
import { dot } from '../../src/memory/scoring';
import { SemanticIndex } from '../../src/memory/semantic-index';
import {
  SHARD_SPAN,
  addToShards,
  putPiece,
  packShard,
  removeFromShards,
} from '../../src/memory/shards';
import type { Chunk } from '../../src/memory/types';
import { closeAll, openTestMemory } from './helpers';

afterEach(closeAll);

const DIMS = 16;
/** Chunks over three ranges, so that the index loads several pieces. */
const N = 2 * SHARD_SPAN + 500;
/** A cold start answers from the compact parts from 16,384 chunks; these tests have fewer. */
const STAGED = { compactFrom: 0 };

function unit(seed: number): Float32Array {
  const v = Float32Array.from({ length: DIMS }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

function row(id: number, text = `note ${id} about item ${id % 97}`): Chunk {
  return {
    id,
    conversationId: 1 + (id % 3),
    turnId: id,
    sentenceId: 0,
    role: 'user',
    text,
    tokenCount: 4,
    embedding: unit(id),
    model: 'm',
    time: new Date(0),
  };
}

/** A database of N chunks with their shards (`whole`: as version 2 wrote them). */
async function filled(whole = false): Promise<MemoryDB> {
  const db = new MemoryDB(`cold-${crypto.randomUUID()}`);
  const rows = Array.from({ length: N }, (_, i) => row(i + 1));
  await db.transaction('rw', db.chunks, db.shards, db.shardHeads, db.shardCodes, async () => {
    await db.chunks.bulkAdd(rows);
    if (!whole) return addToShards(db, rows);
    for (let r = 0; r * SHARD_SPAN <= N; r++) {
      const of = rows.filter((c) => Math.floor(c.id! / SHARD_SPAN) === r);
      await putPiece({ shards: db.shards }, packShard('m', r, of));
    }
  });
  return db;
}

/** How far an int8 cosine may lie from the exact one at DIMS dimensions (docs/search.md). */
const ROUNDING = 0.02;

/**
 * A search over the int8 form (a cold start that loaded the pieces' int8 parts): each cosine
 * within rounding of the exact one, and no hit clearly outside the exact top k (near-ties, of
 * which these vectors have many, may swap places: ten chunks share the cosine 1.00000 with 777).
 */
function expectInt8Top(q: Float32Array, hits: { id: number; similarity: number }[]) {
  expect(hits.length).toBeGreaterThan(0);
  const all = Array.from({ length: N }, (_, i) => i + 1);
  const exact = exactTop(q, hits.length, all);
  const edge = dot(q, unit(exact[exact.length - 1]));
  for (const h of hits) {
    expect(Math.abs(h.similarity - dot(q, unit(h.id)))).toBeLessThan(ROUNDING);
    expect(dot(q, unit(h.id))).toBeGreaterThan(edge - 2 * ROUNDING);
  }
}

/** The exact top `k` by cosine (brute force). */
function exactTop(q: Float32Array, k: number, ids: Iterable<number>): number[] {
  return [...ids]
    .map((id) => ({ id, c: dot(q, unit(id)) }))
    .sort((a, b) => b.c - a.c || a.id - b.id)
    .slice(0, k)
    .map((h) => h.id);
}

describe('cold start', () => {
  it('answers from the compact parts while the vectors load, then exactly', async () => {
    const db = await filled();
    const idx = new SemanticIndex(db, 'm', DIMS, STAGED);
    await idx.load();
    // The compact parts are in, the vectors not yet: the words and sign codes answer.
    expect(idx.exact).toBe(false);
    expect(idx.size).toBe(N);
    const q = unit(777);
    const during = idx.search(null, q, 10);
    const hits = await during;
    // The chunk the query is taken from is found, with its exact cosine; all cosines are exact.
    expect(hits[0]).toEqual({ id: 777, similarity: expect.closeTo(1, 5) });
    for (const h of hits) expect(h.similarity).toBeCloseTo(dot(q, unit(h.id)), 5);
    expect(idx.words.size).toBe(N);
    const byWords = idx.words.search(idx.words.prepare('note 777'), null);
    expect(byWords.sort((x, y) => y.score - x.score)[0].key).toBe(777);
    expect(idx.conversationOf(777)).toBe(1 + (777 % 3));

    await idx.whenExact();
    expect(idx.exact).toBe(true);
    // Every vector is in, from the pieces' int8 parts: the int8 form alone, every chunk searched.
    expect(idx.info()).toMatchObject({ quantised: true, f32InMemory: false });
    expectInt8Top(q, await idx.search(null, q, 10));
    expect(idx.size).toBe(N);
    db.close();
  });

  it('loads pieces without their int8 part (written before them) from their f32 rows, exactly', async () => {
    const db = await filled();
    await db.shardCodes.delete((await db.shardCodes.toCollection().primaryKeys())[0]);
    const idx = new SemanticIndex(db, 'm', DIMS, STAGED);
    await idx.load();
    expect(idx.exact).toBe(false);
    await idx.whenExact();
    expect(idx.info()).toMatchObject({ f32InMemory: true });
    const q = unit(777);
    expect((await idx.search(null, q, 10)).map((h) => h.id)).toEqual(
      exactTop(
        q,
        10,
        Array.from({ length: N }, (_, i) => i + 1),
      ),
    );
    expect(idx.size).toBe(N);
    db.close();
  });

  it('keeps writes made while the vectors load', async () => {
    const db = await filled();
    const idx = new SemanticIndex(db, 'm', DIMS, STAGED);
    await idx.load();
    expect(idx.exact).toBe(false);
    // One chunk added and one removed, each with its shard, as recordTurn and deleteConversation
    // do; the index is told their keys as the change feed would.
    const added = row(N + 1, 'a brand new sentence about pelicans');
    const write = db.transaction(
      'rw',
      db.chunks,
      db.shards,
      db.shardHeads,
      db.shardCodes,
      async () => {
        await db.chunks.add(added);
        await addToShards(db, [added]);
        await db.chunks.delete(5);
        await removeFromShards(db, [5]);
      },
    );
    await write;
    await idx.refresh([N + 1, 5]);
    await idx.whenExact();
    expect(idx.exact).toBe(true);
    expect(idx.size).toBe(N);
    const q = unit(N + 1);
    // The added chunk's vector is held (it went in as f32, kept in int8), the removed one's not.
    expect(idx.conversationOf(N + 1)).toBe(added.conversationId);
    expectInt8Top(q, await idx.search(null, q, 10));
    expect(idx.conversationOf(5)).toBeUndefined();
    expect((await idx.search(null, unit(5), 50)).map((h) => h.id)).not.toContain(5);
    expect(idx.words.search(idx.words.prepare('pelicans'), null).map((m) => m.key)).toEqual([
      N + 1,
    ]);

    // A fresh load sees the same: the writes reached both parts of the shards.
    const again = new SemanticIndex(db, 'm', DIMS, STAGED);
    await again.load();
    expect(again.exact).toBe(false);
    await again.whenExact();
    expect(again.size).toBe(N);
    expect(again.conversationOf(N + 1)).toBe(added.conversationId);
    expect(again.conversationOf(5)).toBeUndefined();
    db.close();
  });

  it('loads a small index whole, exact at once, compact parts or not', async () => {
    const db = await filled();
    const idx = new SemanticIndex(db, 'm', DIMS, { compactFrom: N + 1 });
    await idx.load();
    expect(idx.exact).toBe(true);
    expect((await idx.search(null, unit(99), 1))[0].id).toBe(99);
    db.close();
  });

  it('loads shards written before the compact parts whole, exact at once', async () => {
    const db = await filled(true);
    expect(await db.shardHeads.count()).toBe(0);
    const idx = new SemanticIndex(db, 'm', DIMS, STAGED);
    await idx.load();
    expect(idx.exact).toBe(true);
    expect(idx.size).toBe(N);
    const q = unit(1234);
    expect((await idx.search(null, q, 1))[0].id).toBe(1234);
    // Loading rewrites nothing: they get their compact parts when next rewritten or rebuilt.
    expect(await db.shardHeads.count()).toBe(0);
    db.close();
  });

  it('keeps a chat’s sittings: from the compact parts, whole, and from pieces written before times', async () => {
    // Each of the three chats talks on two days: six sittings.
    const DAY = 86_400_000;
    const db = new MemoryDB(`sittings-${crypto.randomUUID()}`);
    const rows = Array.from({ length: N }, (_, i) => ({
      ...row(i + 1),
      time: new Date(i < N / 2 ? i * 1000 : DAY + i * 1000),
    }));
    await db.transaction('rw', db.chunks, db.shards, db.shardHeads, db.shardCodes, async () => {
      await db.chunks.bulkAdd(rows);
      await addToShards(db, rows);
    });
    const sittings = async (options: { compactFrom: number }) => {
      const idx = new SemanticIndex(db, 'm', DIMS, options);
      await idx.load();
      const exact = idx.exact;
      await idx.whenExact();
      const first = idx.episodeOf(1);
      return {
        exact,
        count: idx.episodeCount,
        sameDay: idx.episodeOf(4) === first,
        nextDay: idx.episodeOf(N - 2) === first,
      };
    };
    const expected = { count: 6, sameDay: true, nextDay: false };
    expect(await sittings(STAGED)).toEqual({ exact: false, ...expected });
    expect(await sittings({ compactFrom: N + 1 })).toEqual({ exact: true, ...expected });
    // Pieces written before times: the load rebuilds them from the rows, times and all.
    await db.transaction('rw', db.shards, db.shardHeads, db.shardCodes, async () => {
      await db.shards.toCollection().modify((s) => void delete s.times);
      await db.shardHeads
        .toCollection()
        .modify((h) => void delete (h as { times?: unknown }).times);
    });
    expect(await sittings(STAGED)).toEqual({ exact: true, ...expected });
    expect((await db.shardHeads.toArray()).every((h) => h.times.length === h.count)).toBe(true);
    expect(await sittings(STAGED)).toEqual({ exact: false, ...expected });
    db.close();
  });

  it('numbers a chat’s sittings and links its turns in the order said, whatever order its pieces are stored in', async () => {
    // One chat: fifty turns one day, ten the next. The later turns' piece is the smaller, so it
    // is stored first of the range (pieces are kept by range, then size).
    const DAY = 86_400_000;
    const db = new MemoryDB(`order-${crypto.randomUUID()}`);
    const rows = Array.from({ length: 60 }, (_, i) => ({
      ...row(i + 1),
      conversationId: 1,
      time: new Date(i < 50 ? i * 1000 : DAY + i * 1000),
    }));
    for (const part of [rows.slice(0, 50), rows.slice(50)])
      await db.transaction('rw', db.chunks, db.shards, db.shardHeads, db.shardCodes, async () => {
        await db.chunks.bulkAdd(part);
        await addToShards(db, part);
      });
    for (const options of [STAGED, { compactFrom: 1000 }]) {
      const idx = new SemanticIndex(db, 'm', DIMS, options);
      await idx.load();
      await idx.whenExact();
      expect(idx.episodeCount).toBe(2);
      expect(idx.episodeOf(10)).toBe(idx.episodeOf(50));
      expect(idx.episodeOf(51)).not.toBe(idx.episodeOf(50));
      expect(idx.nextTurn(50)).toEqual({ turnId: 51, chunkId: 51 });
      expect(idx.nextTurn(60)).toBeUndefined();
    }
    db.close();
  });

  it('reads a chat in the order said when a merged piece spans another', async () => {
    // One chunk, then twenty at once (a long reply), then fifteen one by one an hour later: the
    // sixteen small pieces merge into one holding ids 1 and 22–36, which spans the other (2–21).
    const HOUR = 3_600_000;
    const db = new MemoryDB(`spans-${crypto.randomUUID()}`);
    const at = (id: number, t: number) => ({ ...row(id), conversationId: 1, time: new Date(t) });
    const writes = [[at(1, 0)], Array.from({ length: 20 }, (_, i) => at(i + 2, 1000 + i))];
    for (let i = 0; i < 15; i++) writes.push([at(22 + i, HOUR + i * 1000)]);
    for (const part of writes)
      await db.transaction('rw', db.chunks, db.shards, db.shardHeads, db.shardCodes, async () => {
        await db.chunks.bulkAdd(part);
        await addToShards(db, part);
      });
    const pieces = (await db.shards.toArray()).map((p) => [p.ids[0], p.ids[p.count - 1]]);
    expect(pieces).toContainEqual([1, 36]);
    for (const options of [STAGED, { compactFrom: 1000 }]) {
      const idx = new SemanticIndex(db, 'm', DIMS, options);
      await idx.load();
      await idx.whenExact();
      expect(idx.episodeCount).toBe(2);
      expect([1, 2, 21].map((id) => idx.episodeOf(id))).toEqual(Array(3).fill(idx.episodeOf(1)));
      expect(idx.episodeOf(22)).not.toBe(idx.episodeOf(1));
      expect(idx.nextTurn(1)).toEqual({ turnId: 2, chunkId: 2 });
      expect(idx.nextTurn(21)).toEqual({ turnId: 22, chunkId: 22 });
    }
    db.close();
  });

  it('searchChunks says whether its answer was exact', async () => {
    const a = openTestMemory();
    await a.mem.recordTurn({
      conversationId: 1,
      role: 'user',
      text: 'The plumber comes on Monday.',
    });
    await a.mem.recordTurn({
      conversationId: 1,
      role: 'user',
      text: 'Tomatoes go on the south side.',
    });
    await a.mem.close();
    const b = openTestMemory({ name: a.name, vectorIndex: STAGED });
    const [first] = await b.mem.searchChunks(1, 'plumber Monday', 1);
    expect(first.chunk.text).toBe('The plumber comes on Monday.');
    expect(first.exact).toBe(false);
  });
});
