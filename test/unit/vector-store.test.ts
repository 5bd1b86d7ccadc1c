import { describe, expect, it } from 'vitest';
import { PackedVectors } from '../../src/memory/vector-store';

describe('PackedVectors', () => {
  it('appends rows contiguously and grows', () => {
    const p = new PackedVectors(3, 1);
    const first = p.append([Float32Array.of(1, 2, 3), Float32Array.of(4, 5, 6)]);
    expect(first).toBe(0);
    expect(p.append([Float32Array.of(7, 8, 9)])).toBe(2);
    expect(Array.from(p.row(1))).toEqual([4, 5, 6]);
    expect(p.length).toBe(3);
    expect(() => p.append([Float32Array.of(1)])).toThrow(/dimensions/);
  });

  it('releases rows to zero and compacts live ranges', () => {
    const p = new PackedVectors(2, 2);
    p.append([Float32Array.of(1, 1), Float32Array.of(2, 2), Float32Array.of(3, 3)]);
    p.release(1, 1);
    expect(Array.from(p.row(1))).toEqual([0, 0]);
    expect(p.deadRows).toBe(1);
    const starts = p.compact([
      { first: 2, count: 1 },
      { first: 0, count: 1 },
    ]);
    expect(starts).toEqual([0, 1]);
    expect(Array.from(p.row(0))).toEqual([3, 3]);
    expect(Array.from(p.row(1))).toEqual([1, 1]);
    expect(p.length).toBe(2);
    expect(p.deadRows).toBe(0);
  });
});
