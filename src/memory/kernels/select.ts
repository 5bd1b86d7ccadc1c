// Top-k selection over a Float32Array of scores with a typed-array min-heap: one comparison per
// score for the common case (worse than the k-th best so far), no allocation per element.

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
  const order = Array.from({ length: size }, (_, i) => i).sort(
    (a, b) => val[b] - val[a] || pos[a] - pos[b],
  );
  return Int32Array.from(order, (i) => pos[i]);
}
