// A fused chunk search above the f32 budget (docs/search.md, "Two stages"): the candidates'
// cosines come from the int8 rows in RAM, so the only rows read are the hits', in one bulkGet;
// its hits are the exact ranking's (the same rows searched with the f32 vectors in RAM) on a
// fixture of clustered vectors, and the similarity each hit shows is exact, from its row.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SyntheticVectors } from '../../bench/synthetic';
import type { ModelInfo } from '../../src/embeddings/types';
import { MemoryDB } from '../../src/memory/db';
import { searchChunkIndex } from '../../src/memory/search';
import { SemanticIndex } from '../../src/memory/semantic-index';
import type { Chunk } from '../../src/memory/types';

const MODEL: ModelInfo = { id: 'test/clusters-64', dims: 64, threshold: 0.3, bundled: false };
const N = 3000;
const WORDS = 'harbour lantern violin kayak orchard meadow glacier canyon falcon ember'.split(' ');
/** Chunk `id`'s sentence: two of ten words, so a query's words match a few hundred chunks. */
const sentence = (id: number) => `the ${WORDS[id % 10]} and the ${WORDS[Math.floor(id / 10) % 10]}`;

let db: MemoryDB | null = null;
afterEach(async () => {
  db?.close();
  if (db) await MemoryDB.delete(db.name);
  db = null;
});

async function fixture() {
  db = new MemoryDB(`int8-cosines-${Math.random()}`);
  const gen = new SyntheticVectors({ dims: MODEL.dims, centroids: 40, noise: 0.8, seed: 7 });
  const rows: Chunk[] = Array.from({ length: N }, (_, i) => {
    const id = i + 1;
    const text = sentence(id);
    return {
      id,
      conversationId: 1 + (id % 30),
      turnId: Math.ceil(id / 4),
      sentenceId: (id - 1) % 4,
      role: 'user',
      text,
      tokenCount: 6,
      embedding: gen.row(i),
      model: MODEL.id,
      time: new Date(1_700_000_000_000 + id * 1000),
    };
  });
  await db.chunks.bulkAdd(rows);
  const ids = rows.map((r) => r.id!);
  // The same rows twice: f32 in RAM (exact cosines), and int8 only with the sign-code pass.
  const exact = new SemanticIndex(db, MODEL.id, MODEL.dims);
  const int8 = new SemanticIndex(db, MODEL.id, MODEL.dims, {
    quantiseFrom: 1,
    f32Budget: 1,
    signFrom: 1,
  });
  await exact.refresh(ids);
  await int8.refresh(ids);
  return { db, gen, exact, int8 };
}

describe('fused chunk search with int8 cosines (above the f32 budget)', () => {
  it('reads only the hits’ rows, in one bulkGet, and ranks as the exact search', async () => {
    const { db, gen, exact, int8 } = await fixture();
    expect(int8.info()).toMatchObject({ f32InMemory: false, signCodes: true });
    expect(int8.exactCosines).toBe(false);
    expect(exact.exactCosines).toBe(true);
    const nowMs = Date.now();
    const read = vi.spyOn(db.chunks, 'bulkGet');
    let withWordOnlyLeader = 0;
    for (let i = 0; i < 20; i++) {
      const q = {
        text: `${WORDS[i % 10]} ${WORDS[(i * 3 + 1) % 10]}`,
        vector: gen.query(i),
        info: MODEL,
      };
      read.mockClear();
      const hits = await searchChunkIndex(db.chunks, int8, null, q, 10, 0, nowMs);
      expect(hits).toHaveLength(10);
      expect(read).toHaveBeenCalledTimes(1);
      expect([...(read.mock.calls[0][0] as number[])].sort()).toEqual(
        hits.map((h) => h.row.id!).sort(),
      );

      const want = await searchChunkIndex(db.chunks, exact, null, q, 10, 0, nowMs);
      expect(hits.map((h) => h.row.id)).toEqual(want.map((h) => h.row.id));
      hits.forEach((h, j) => expect(h.similarity).toBeCloseTo(want[j].similarity, 6));
      // The vector pass's 64 candidates miss some word matches: their cosines come from the
      // int8 rows too, not from reading them.
      const vec = new Set((await int8.search(null, q.vector, 64)).map((h) => h.id));
      if (hits.some((h) => !vec.has(h.row.id!))) withWordOnlyLeader++;
    }
    expect(withWordOnlyLeader).toBeGreaterThan(0);
  });

  it('int8 cosines stay within 0.01 of the exact ones', async () => {
    const { gen, exact, int8 } = await fixture();
    const ids = Array.from({ length: N }, (_, i) => i + 1);
    const q = gen.query(0);
    const a = await int8.similarities(ids, q);
    const b = await exact.similarities(ids, q);
    let worst = 0;
    for (const id of ids) worst = Math.max(worst, Math.abs(a.get(id)! - b.get(id)!));
    expect(worst).toBeGreaterThan(0);
    expect(worst).toBeLessThan(0.01);
  });
});
