// The semantic index's vector store: exact search matches a brute-force reference on both
// kernels; the int8 first pass with f32 rescoring (in RAM, or fetched) keeps recall@10 ≥ 0.95 on
// the benchmark's clustered data; adds, removes, compaction and form switches keep it correct;
// the sign-code pass before it ranks as the exact search, and its codes follow every change.
import { describe, expect, it } from 'vitest';
import { MINILM_LIKE, SyntheticVectors, exactTopK, recall } from '../../bench/synthetic';
import { ChunkVectors, type ChunkVectorsOptions } from '../../src/memory/chunk-vectors';
import fc from 'fast-check';
import { quantiseRow } from '../../src/memory/kernels/int8';
import { selectTop } from '../../src/memory/kernels/select';
import { topK } from '../../src/memory/scoring';

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

/** `n` rows of `gen` added with ids 1000 + i and conversation i % convs. */
function build(gen: SyntheticVectors, n: number, convs: number, opts: ChunkVectorsOptions) {
  const cv = new ChunkVectors(gen.spec.dims, opts);
  const data = gen.rows(0, n);
  const d = gen.spec.dims;
  for (let i = 0; i < n; i++) cv.add(1000 + i, i % convs, data.subarray(i * d, (i + 1) * d));
  return { cv, data };
}

const fetchFrom =
  (data: Float32Array, dims: number, calls: number[][] = []) =>
  async (ids: number[]) => {
    calls.push(ids);
    return ids.map((id) => data.slice((id - 1000) * dims, (id - 999) * dims));
  };

describe('selectTop', () => {
  it('matches scoring.topK, skipping NaN scores and dead rows', () => {
    const scores = Float32Array.from({ length: 500 }, (_, i) => ((i * 7919) % 263) / 263);
    scores[17] = NaN;
    for (const k of [0, 1, 5, 64, 600]) {
      expect([...selectTop(scores, 500, k)]).toEqual(topK(scores, k));
    }
    const skip = new Float64Array(500);
    const best = topK(scores, 3);
    skip[best[0]] = NaN;
    expect([...selectTop(scores, 500, 2, skip)]).toEqual(best.slice(1));
    expect([...selectTop(scores, 10, 3)]).toEqual(topK(scores.subarray(0, 10), 3));
  });

  it('gives the same positions by the heap and by the threshold, ties, -0, NaN and dead rows included', () => {
    // Scores from a few levels (many ties), some NaN, -0 beside 0, some rows dead: every k from
    // a small share of n (the heap) to all of it (the threshold path).
    const level = fc.constantFrom(-0.5, -0, 0, 0.25, 0.5, 0.75, 1, NaN);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(level, fc.boolean()), { minLength: 1, maxLength: 300 }),
        fc.nat(400),
        (cells, k) => {
          const scores = Float32Array.from(cells, ([v]) => v);
          const skip = Float64Array.from(cells, ([, dead]) => (dead ? NaN : 0));
          const alive = Array.from(scores, (v, i) => (skip[i] !== skip[i] ? NaN : v));
          expect([...selectTop(scores, scores.length, k, skip)]).toEqual(topK(alive, k));
          expect([...selectTop(scores, scores.length, k)]).toEqual(topK(scores, k));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('ChunkVectors', () => {
  const small = new SyntheticVectors({ dims: 37, centroids: 8, noise: 0.8, seed: 3 });

  it('exact search equals a brute-force reference, on the WASM and the JS kernel', async () => {
    for (const kernel of ['wasm-simd', 'js'] as const) {
      const { cv, data } = build(small, 501, 3, { kernel });
      expect(cv.kernelKind).toBe(kernel);
      expect(cv.mode).toEqual({ quantised: false, signCodes: false, f32InMemory: true });
      for (let qi = 0; qi < 5; qi++) {
        const q = small.query(qi);
        const all = await cv.search(null, q, 10);
        expect(all.map((h) => h.id - 1000)).toEqual(exactTopK(data, 37, q, 10));
        all.forEach((h) => {
          const row = data.subarray((h.id - 1000) * 37, (h.id - 999) * 37);
          expect(h.similarity).toBeCloseTo(dot(q, row), 5);
        });
        const conv = await cv.search(1, q, 7);
        const scores = Array.from({ length: 501 }, (_, i) =>
          i % 3 === 1 ? dot(q, data.subarray(i * 37, (i + 1) * 37)) : NaN,
        );
        expect(conv.map((h) => h.id - 1000)).toEqual(topK(scores, 7));
      }
      expect(await cv.search(9, small.query(0), 5)).toEqual([]);
      expect(await cv.search(null, new Float32Array(5), 5)).toEqual([]);
    }
  });

  it('the int8 first pass keeps recall@10 ≥ 0.95 on the clustered 384-d data', async () => {
    const gen = new SyntheticVectors({ ...MINILM_LIKE, centroids: 40, seed: 11 });
    const n = 12_000;
    const inRam = build(gen, n, 1, { quantiseFrom: 1000 });
    expect(inRam.cv.mode).toEqual({ quantised: true, signCodes: false, f32InMemory: true });
    const compact = build(gen, n, 1, { quantiseFrom: 1000, f32Budget: 1 });
    expect(compact.cv.mode).toEqual({ quantised: true, signCodes: false, f32InMemory: false });
    let sumRam = 0;
    let sumFetched = 0;
    const queries = 40;
    const calls: number[][] = [];
    for (let qi = 0; qi < queries; qi++) {
      const q = gen.query(qi);
      const exact = exactTopK(inRam.data, 384, q, 10);
      const a = await inRam.cv.search(null, q, 10);
      const b = await compact.cv.search(null, q, 10, fetchFrom(inRam.data, 384, calls));
      sumRam += recall(
        a.map((h) => h.id - 1000),
        exact,
      );
      sumFetched += recall(
        b.map((h) => h.id - 1000),
        exact,
      );
      // Rescored hits carry exact cosines.
      for (const h of [...a, ...b]) {
        const row = inRam.data.subarray((h.id - 1000) * 384, (h.id - 999) * 384);
        expect(h.similarity).toBeCloseTo(dot(q, row), 5);
      }
    }
    expect(sumRam / queries).toBeGreaterThanOrEqual(0.95);
    expect(sumFetched / queries).toBeGreaterThanOrEqual(0.95);
    // Rescoring reads only a few candidates per query, never the whole index.
    expect(calls).toHaveLength(queries);
    for (const ids of calls) expect(ids.length).toBe(64);
  });

  it('int8 only, without a fetch, returns approximate cosines', async () => {
    const { cv, data } = build(small, 300, 1, { f32Budget: 1 });
    const q = small.query(1);
    const hits = await cv.search(null, q, 5);
    expect(hits).toHaveLength(5);
    for (const h of hits) {
      expect(h.similarity).toBeCloseTo(
        dot(q, data.subarray((h.id - 1000) * 37, (h.id - 999) * 37)),
        1,
      );
    }
  });

  it('switches form as it grows and stays correct across removes and compaction', async () => {
    const gen = new SyntheticVectors({ dims: 24, centroids: 6, noise: 0.8, seed: 5 });
    const data = gen.rows(0, 6000);
    const cv = new ChunkVectors(24, { quantiseFrom: 2000, f32Budget: 4000 * 24 * 4 });
    const fetch = fetchFrom(data, 24);
    const live = new Set<number>();
    const check = async () => {
      const q = gen.query(live.size);
      const rows = [...live].sort((a, b) => a - b);
      const scores = rows.map((id) => dot(q, data.subarray((id - 1000) * 24, (id - 999) * 24)));
      const want = topK(scores, 10).map((i) => rows[i]);
      const got = await cv.search(null, q, 10, fetch);
      expect(
        recall(
          got.map((h) => h.id),
          want,
        ),
      ).toBeGreaterThanOrEqual(0.9);
      expect(got.every((h) => live.has(h.id))).toBe(true);
      const conv = await cv.search(1, q, 5, fetch);
      expect(conv.every((h) => live.has(h.id) && h.id % 2 === 1)).toBe(true);
    };
    const forms: string[] = [];
    for (let i = 0; i < 6000; i++) {
      expect(cv.add(1000 + i, i % 2 === 1 ? 1 : 2, data.subarray(i * 24, (i + 1) * 24))).toBe(true);
      live.add(1000 + i);
      const f = JSON.stringify(cv.mode);
      if (forms.at(-1) !== f) forms.push(f);
      if (i % 1500 === 1499) await check();
    }
    expect(forms).toEqual([
      '{"quantised":false,"signCodes":false,"f32InMemory":true}',
      '{"quantised":true,"signCodes":false,"f32InMemory":true}',
      '{"quantised":true,"signCodes":false,"f32InMemory":false}',
    ]);
    expect(cv.add(1000, 2, data.subarray(0, 24))).toBe(false); // already there
    expect(cv.add(99, 2, new Float32Array(3))).toBe(false); // wrong length
    // Remove most rows: the store compacts and keeps answering.
    for (let i = 0; i < 6000; i++) {
      if (i % 5 !== 0) {
        cv.remove(1000 + i);
        live.delete(1000 + i);
      }
    }
    expect(cv.size).toBe(1200);
    expect(cv.memory().metaBytes).toBeGreaterThan(0);
    await check();
    cv.remove(123456); // unknown: nothing happens
    expect(cv.liveIds().sort((a, b) => a - b)).toEqual([...live].sort((a, b) => a - b));
    cv.clear();
    expect(cv.size).toBe(0);
    expect(await cv.search(null, gen.query(0), 3)).toEqual([]);
  });

  it('reserve picks the compact form up front for a large load', () => {
    const cv = new ChunkVectors(16, { quantiseFrom: 100, f32Budget: 1000 * 16 * 4 });
    cv.reserve(50);
    expect(cv.mode).toEqual({ quantised: false, signCodes: false, f32InMemory: true });
    cv.reserve(500);
    expect(cv.mode).toEqual({ quantised: true, signCodes: false, f32InMemory: true });
    cv.reserve(5000);
    expect(cv.mode).toEqual({ quantised: true, signCodes: false, f32InMemory: false });
    expect(cv.memory().vectorBytes).toBe(5000 * (16 + 4));
  });

  it('with the sign-code pass first, searches rank as the exact search', async () => {
    const gen = new SyntheticVectors({ ...MINILM_LIKE, centroids: 40, seed: 11 });
    const n = 6000;
    const opts = { quantiseFrom: 1000, signFrom: 1000, signShare: 0.05, signMin: 0 };
    const inRam = build(gen, n, 3, opts);
    expect(inRam.cv.mode).toEqual({ quantised: true, signCodes: true, f32InMemory: true });
    const compact = build(gen, n, 3, { ...opts, f32Budget: 1 });
    expect(compact.cv.mode).toEqual({ quantised: true, signCodes: true, f32InMemory: false });
    const fetch = fetchFrom(inRam.data, 384);
    for (let qi = 0; qi < 20; qi++) {
      const q = gen.query(qi);
      const exact = exactTopK(inRam.data, 384, q, 10);
      expect((await inRam.cv.search(null, q, 10)).map((h) => h.id - 1000)).toEqual(exact);
      expect((await compact.cv.search(null, q, 10, fetch)).map((h) => h.id - 1000)).toEqual(exact);
      // One conversation's rows: the sign pass over its 2,000 gathered slots.
      const scores = Array.from({ length: n }, (_, i) =>
        i % 3 === 2 ? dot(q, inRam.data.subarray(i * 384, (i + 1) * 384)) : NaN,
      );
      expect((await inRam.cv.search(2, q, 10)).map((h) => h.id - 1000)).toEqual(topK(scores, 10));
    }
  });

  it('rows given in int8 (a cold start’s int8 parts) search as rows quantised in place', async () => {
    // Pieces of 1,000 rows, as a cold start adds them, with the sign pass from 1,000 rows: the
    // sign codes come from the int8 rows, the centre from the first pieces.
    const gen = new SyntheticVectors({ ...MINILM_LIKE, centroids: 40, seed: 11 });
    const n = 6000;
    const opts = { quantiseFrom: 1000, signFrom: 1000, signShare: 0.05, signMin: 0 };
    const { cv: inRam, data } = build(gen, n, 3, opts);
    const coded = new ChunkVectors(384, opts);
    coded.reserve(n, { f32: false });
    for (let at = 0; at < n; at += 1000) {
      const codes = new Int8Array(1000 * 384);
      const scales = Float32Array.from({ length: 1000 }, (_, i) =>
        quantiseRow(data.subarray((at + i) * 384, (at + i + 1) * 384), codes, i * 384),
      );
      const ids = Array.from({ length: 1000 }, (_, i) => 1000 + at + i);
      expect(
        coded.addCodes(
          ids,
          ids.map((id) => (id - 1000) % 3),
          codes,
          scales,
        ),
      ).toBe(1000);
    }
    // Given again (a row written while the load ran): kept once.
    expect(coded.addCodes([1000], [0], new Int8Array(384), Float32Array.of(1))).toBe(0);
    expect(coded.size).toBe(n);
    expect(coded.mode).toEqual({ quantised: true, signCodes: true, f32InMemory: false });
    expect(inRam.addCodes([1], [0], new Int8Array(384), Float32Array.of(1))).toBe(0);
    let found = 0;
    for (let qi = 0; qi < 20; qi++) {
      const q = gen.query(qi);
      const exact = exactTopK(data, 384, q, 10);
      const hits = await coded.search(null, q, 10);
      found += hits.filter((h) => exact.includes(h.id - 1000)).length;
      for (const h of hits)
        expect(h.similarity).toBeCloseTo(
          dot(q, data.subarray((h.id - 1000) * 384, (h.id - 999) * 384)),
          2,
        );
    }
    expect(found / 200).toBeGreaterThanOrEqual(0.95);
  });

  it('sign codes follow adds, removes, compaction and the move to int8 only', async () => {
    // Few candidates (16 of thousands): a row whose code were stale or missing would not be
    // among them even for a query equal to its own vector.
    const gen = new SyntheticVectors({ dims: 64, centroids: 30, noise: 0.8, seed: 9 });
    const data = gen.rows(0, 9000);
    const row = (i: number) => data.subarray(i * 64, (i + 1) * 64);
    const cv = new ChunkVectors(64, {
      quantiseFrom: 500,
      signFrom: 1000,
      signShare: 0,
      signMin: 16,
      f32Budget: 5000 * 64 * 4,
    });
    const live = new Set<number>();
    // Chunk 99,999 is written below with row 4321's vector.
    const fetch = async (ids: number[]) =>
      ids.map((id) => (id === 99_999 ? row(4321) : row(id - 1000)).slice());
    const findsItself = async (i: number) => {
      const [hit] = await cv.search(null, row(i), 1, fetch);
      return hit?.id === 1000 + i;
    };
    const forms: string[] = [];
    for (let i = 0; i < 9000; i++) {
      cv.add(1000 + i, i % 2, row(i));
      live.add(1000 + i);
      const f = JSON.stringify(cv.mode);
      if (forms.at(-1) !== f) forms.push(f);
      // The newest row, and an old one, each found by its own vector.
      if (i >= 1000 && i % 500 === 0) {
        expect(await findsItself(i)).toBe(true);
        expect(await findsItself(i - 777)).toBe(true);
      }
    }
    expect(forms).toEqual([
      '{"quantised":false,"signCodes":false,"f32InMemory":true}',
      '{"quantised":true,"signCodes":false,"f32InMemory":true}',
      '{"quantised":true,"signCodes":true,"f32InMemory":true}',
      '{"quantised":true,"signCodes":true,"f32InMemory":false}',
    ]);
    // A chunk edited is removed and written again under a new id: the old id never comes back.
    cv.remove(1000 + 4321);
    cv.add(99_999, 0, row(4321));
    const [edited] = await cv.search(null, row(4321), 1, fetch);
    expect(edited.id).toBe(99_999);
    live.delete(1000 + 4321);
    live.add(99_999);
    // Remove two thirds: the store compacts, moving codes with their rows.
    for (let i = 0; i < 9000; i++) {
      if (i % 3 !== 0 && i !== 4321) {
        cv.remove(1000 + i);
        live.delete(1000 + i);
      }
    }
    expect(cv.size).toBe(live.size);
    for (let i = 0; i < 9000; i += 3 * 97) expect(await findsItself(i)).toBe(true);
    for (let qi = 0; qi < 10; qi++) {
      const hits = await cv.search(null, gen.query(qi), 10, fetch);
      expect(hits).toHaveLength(10);
      expect(hits.every((h) => live.has(h.id))).toBe(true);
    }
  });
});
