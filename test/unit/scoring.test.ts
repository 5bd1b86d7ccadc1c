import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, blend, dot, dotRow, maxDotRows, recency, topK } from '../../src/memory/scoring';
import { DEFAULT_RECENCY_BIAS, MIN_RELEVANCE, relativeRelevance } from '../../src/memory/ranking';

const vec = (...xs: number[]) => Float32Array.from(xs);

describe('scoring', () => {
  it('dotRow reads the right row of a packed matrix', () => {
    const packed = vec(1, 0, 0, 1, 0.6, 0.8);
    const q = vec(0.6, 0.8);
    expect(dotRow(q, packed, 0, 2)).toBeCloseTo(0.6);
    expect(dotRow(q, packed, 1, 2)).toBeCloseTo(0.8);
    expect(dotRow(q, packed, 2, 2)).toBeCloseTo(1);
    expect(dot(q, vec(0.6, 0.8))).toBeCloseTo(1);
  });

  it('maxDotRows takes the best of a run of rows and -Infinity for none', () => {
    const packed = vec(1, 0, 0, 1, -1, 0);
    expect(maxDotRows(vec(0, 1), packed, 0, 3, 2)).toBeCloseTo(1);
    expect(maxDotRows(vec(-1, 0), packed, 0, 2, 2)).toBeCloseTo(0);
    expect(maxDotRows(vec(1, 0), packed, 1, 0, 2)).toBe(-Infinity);
  });

  it('recency is exp(-ageDays/30), 1 for now and the future', () => {
    const now = Date.UTC(2026, 0, 31);
    expect(recency(now, now)).toBe(1);
    expect(recency(now + DAY_MS, now)).toBe(1);
    expect(recency(now - 30 * DAY_MS, now)).toBeCloseTo(Math.exp(-1));
    expect(recency(now - 3 * DAY_MS, now)).toBeCloseTo(Math.exp(-0.1));
  });

  it('blend weighs similarity against recency', () => {
    expect(blend(0.8, 0.2, 0)).toBeCloseTo(0.8);
    expect(blend(0.8, 0.2, 1)).toBeCloseTo(0.2);
    expect(blend(0.8, 0.2, 0.25)).toBeCloseTo(0.65);
  });

  it('topK returns the k best indices, best first, ties by lower index', () => {
    expect(topK([0.1, 0.9, 0.5, 0.9, -1], 3)).toEqual([1, 3, 2]);
    expect(topK([3, 1, 2], 10)).toEqual([0, 2, 1]);
    expect(topK([1, 2], 0)).toEqual([]);
    expect(topK([NaN, 1], 2)).toEqual([1]);
  });

  it('topK agrees with a full sort on random input', () => {
    fc.assert(
      fc.property(fc.array(fc.float({ noNaN: true }), { maxLength: 300 }), fc.nat(50), (xs, k) => {
        const expected = xs
          .map((s, i) => ({ s, i }))
          .sort((a, b) => b.s - a.s || a.i - b.i)
          .slice(0, k)
          .map((x) => x.i);
        expect(topK(Float32Array.from(xs), k).map((i) => Math.fround(xs[i]))).toEqual(
          expected.map((i) => Math.fround(xs[i])),
        );
      }),
    );
  });
});

describe('relativeRelevance', () => {
  it('counts the best match as fully relevant and keeps the order of the matches', () => {
    expect(relativeRelevance(0.6, 0.6)).toBe(1);
    expect(relativeRelevance(0.3, 0.6)).toBeCloseTo(0.5, 9);
    // A weak best match is not inflated past match / MIN_RELEVANCE.
    expect(relativeRelevance(0.2, 0.2)).toBeLessThan(1);
    for (let best = 0.05; best <= 1; best += 0.05) {
      let last = -1;
      for (let m = 0; m <= best + 1e-9; m += 0.01) {
        const r = relativeRelevance(m, best);
        expect(r).toBeGreaterThanOrEqual(last);
        expect(r).toBeGreaterThanOrEqual(0);
        expect(r).toBeLessThanOrEqual(1);
        last = r;
      }
    }
  });

  it('fades a loose match (below MIN_RELEVANCE) with its distance from the floor, without a step', () => {
    const best = 0.8;
    const atFloor = relativeRelevance(MIN_RELEVANCE, best);
    expect(relativeRelevance(MIN_RELEVANCE - 1e-9, best)).toBeCloseTo(atFloor, 6);
    expect(relativeRelevance(MIN_RELEVANCE / 2, best)).toBeCloseTo(atFloor / 4, 9);
    // So at the default blend a loose match from today stays below the answer from months ago.
    const today = blend(relativeRelevance(0.15, best), 1, DEFAULT_RECENCY_BIAS);
    const answer = blend(relativeRelevance(best, best), Math.exp(-120 / 30), DEFAULT_RECENCY_BIAS);
    expect(answer).toBeGreaterThan(today);
  });
});
