// Pure scoring: dot products over packed normalised vectors, recency decay, the blend and top-k.

export const DAY_MS = 86_400_000;
export const RECENCY_DAYS = 30;

/** Dot product of `a` (length `dims`) with row `row` of the packed matrix `packed`. */
export function dotRow(a: Float32Array, packed: Float32Array, row: number, dims: number): number {
  let s = 0;
  const base = row * dims;
  for (let i = 0; i < dims; i++) s += a[i] * packed[base + i];
  return s;
}

/** Dot product of two vectors of equal length (cosine when both are normalised). */
export function dot(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  for (let i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/** Highest dot product of `q` with any of the `count` rows of `packed` starting at `firstRow`; -Infinity if none. */
export function maxDotRows(
  q: Float32Array,
  packed: Float32Array,
  firstRow: number,
  count: number,
  dims: number,
): number {
  let best = -Infinity;
  for (let r = firstRow; r < firstRow + count; r++) {
    const s = dotRow(q, packed, r, dims);
    if (s > best) best = s;
  }
  return best;
}

/** `exp(-ageDays / 30)`; a future timestamp counts as age 0. */
export function recency(modifiedMs: number, nowMs: number): number {
  const ageDays = Math.max(0, nowMs - modifiedMs) / DAY_MS;
  return Math.exp(-ageDays / RECENCY_DAYS);
}

/** `(1 - bias) * similarity + bias * recency`. */
export function blend(similarity: number, recencyScore: number, bias: number): number {
  return (1 - bias) * similarity + bias * recencyScore;
}

/**
 * Indices of the `k` highest scores, best first (ties keep the lower index first).
 * A bounded min-heap keeps this O(n log k) without sorting everything.
 */
export function topK(scores: ArrayLike<number>, k: number): number[] {
  const n = scores.length;
  if (k <= 0 || n === 0) return [];
  const heap: number[] = [];
  // heap root = worst kept candidate
  const worse = (a: number, b: number) =>
    scores[a] < scores[b] || (scores[a] === scores[b] && a > b);
  const siftUp = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!worse(heap[i], heap[p])) break;
      [heap[i], heap[p]] = [heap[p], heap[i]];
      i = p;
    }
  };
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l], heap[m])) m = l;
      if (r < heap.length && worse(heap[r], heap[m])) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  };
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(scores[i])) continue;
    if (heap.length < k) {
      heap.push(i);
      siftUp(heap.length - 1);
    } else if (worse(heap[0], i)) {
      heap[0] = i;
      siftDown(0);
    }
  }
  return heap.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
}
