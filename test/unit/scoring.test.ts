import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, blend, dot, dotRow, maxDotRows, recency, topK } from '../../src/memory/scoring';

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
