// Top-k selection over a Float32Array of scores: with a typed-array min-heap while k is a small
// share of n (one comparison per score for the common case, worse than the k-th best so far, no
// allocation per element), else by the k-th best's value (a quickselect on a copy) and one pass.

/**
 * From this share of n up (k × it ≥ n) the threshold path is taken: the heap's insertions, a
 * sift of log k steps each, then outnumber the scores it rejects at a glance (2,048 scores, best
 * 256, in Node: 160 µs by the heap, 62 by the threshold).
 */
const THRESHOLD_SHARE = 16;

/**
 * Positions of the `k` highest of `scores[0..n)`, best first; ties keep the lower position first.
 * NaN scores are skipped, and so are positions whose `skip` entry is NaN (dead rows).
 */
export function selectTop(
  scores: Float32Array,
  n: number,
  k: number,
  skip?: Float64Array,
): Int32Array {
  k = Math.max(0, Math.min(k, n));
  if (k > 0 && k * THRESHOLD_SHARE >= n) return selectByThreshold(scores, n, k, skip);
  const pos = new Int32Array(k);
  const val = new Float32Array(k);
  let size = 0;
  // Root = the worst kept: lowest score, and on a tie the higher position.
  const worse = (a: number, b: number) => val[a] < val[b] || (val[a] === val[b] && pos[a] > pos[b]);
  const swap = (a: number, b: number) => {
    const p = pos[a];
    pos[a] = pos[b];
    pos[b] = p;
    const v = val[a];
    val[a] = val[b];
    val[b] = v;
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && worse(l, m)) m = l;
      if (r < size && worse(r, m)) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  if (k === 0) return pos;
  for (let i = 0; i < n; i++) {
    const s = scores[i];
    if (size === k && !(s > val[0])) continue; // also skips NaN
    if (s !== s || (skip && skip[i] !== skip[i])) continue;
    if (size < k) {
      let c = size++;
      pos[c] = i;
      val[c] = s;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (!worse(c, p)) break;
        swap(c, p);
        c = p;
      }
    } else {
      pos[0] = i;
      val[0] = s;
      down(0);
    }
  }
  return ordered(pos, val, size);
}

/**
 * `selectTop` by the k-th best's value: the valid scores copied, the value of rank k found by
 * quickselect, then every score above it and the first (lowest positions) equal to it, ordered.
 */
function selectByThreshold(
  scores: Float32Array,
  n: number,
  k: number,
  skip?: Float64Array,
): Int32Array {
  const pos = new Int32Array(n);
  const val = new Float32Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    const s = scores[i];
    if (s !== s || (skip && skip[i] !== skip[i])) continue;
    pos[m] = i;
    val[m++] = s;
  }
  let take = m;
  if (m > k) {
    const t = kthLargest(val.slice(0, m), k);
    let above = 0;
    for (let j = 0; j < m; j++) if (val[j] > t) above++;
    let atT = k - above;
    take = 0;
    for (let j = 0; j < m; j++) {
      const v = val[j];
      if (v > t || (v === t && atT-- > 0)) {
        pos[take] = pos[j];
        val[take++] = v;
      }
    }
  }
  return ordered(pos, val, take);
}

const bits = new Float32Array(1);
const bitsU = new Uint32Array(bits.buffer);
/** Positions below this fit beside a score's 32 bits in a double's 53. */
const POS_LIMIT = 2 ** 21;

/**
 * `pos[0..m)` best first by `val` (ties: the lower position first): as one sortable double
 * each (the score's bits, ordered as numbers, then the position), sorted natively.
 */
function ordered(pos: Int32Array, val: Float32Array, m: number): Int32Array {
  const keys = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    if (pos[j] >= POS_LIMIT) return orderedByCompare(pos, val, m);
    bits[0] = val[j] || 0; // -0 as 0: equal scores order by position
    const b = bitsU[0];
    // Negative floats order backwards as integers: flip them all; positives above them.
    const key = b & 0x80000000 ? ~b >>> 0 : (b | 0x80000000) >>> 0;
    keys[j] = key * POS_LIMIT + (POS_LIMIT - 1 - pos[j]);
  }
  keys.sort();
  const out = new Int32Array(m);
  for (let j = 0; j < m; j++) out[j] = POS_LIMIT - 1 - (keys[m - 1 - j] % POS_LIMIT);
  return out;
}

function orderedByCompare(pos: Int32Array, val: Float32Array, m: number): Int32Array {
  const order = Array.from({ length: m }, (_, i) => i).sort(
    (a, b) => val[b] - val[a] || pos[a] - pos[b],
  );
  return Int32Array.from(order, (i) => pos[i]);
}

/** The k-th largest of `a` (1 ≤ k ≤ a.length, no NaN); reorders `a`. */
function kthLargest(a: Float32Array, k: number): number {
  // Hoare's selection over ascending order: the element of index a.length - k.
  const want = a.length - k;
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const x = a[i];
        a[i++] = a[j];
        a[j--] = x;
      }
    }
    if (want <= j) hi = j;
    else if (want >= i) lo = i;
    else return a[want];
  }
  return a[want];
}
