// Int8 quantisation with one scale per vector (rows) and int16 for the query, so an int8 score
// `dot(q16, codes) * scale` ranks rows almost exactly like the f32 dot product.

/**
 * Writes `round(v / scale)` into `codes[at..at+v.length)` with `scale = max|v| / 127`, and
 * returns the scale (0 for a zero vector). Arithmetic is f32 with rounding half to even, so the
 * WASM kernel's `quantise` gives the same codes bit for bit.
 */
export function quantiseRow(v: Float32Array, codes: Int8Array, at: number): number {
  let max = 0;
  for (let i = 0; i < v.length; i++) {
    const a = Math.abs(v[i]);
    if (a > max) max = a;
  }
  if (!(max > 0)) {
    codes.fill(0, at, at + v.length);
    return 0;
  }
  const inv = Math.fround(127 / max);
  for (let i = 0; i < v.length; i++) {
    const x = Math.fround(v[i] * inv);
    let r = Math.round(x);
    if (r - x === 0.5 && r % 2 !== 0) r -= 1; // half to even, like f32.nearest
    codes[at + i] = r > 127 ? 127 : r < -128 ? -128 : r;
  }
  return Math.fround(max / 127);
}

/**
 * The largest int16 magnitude for a query of `dims` dimensions such that the int32 sum of
 * `dims` products with int8 codes cannot overflow.
 */
export function queryRange(dims: number): number {
  return Math.max(1, Math.min(32_767, Math.floor(2_147_483_647 / (127 * Math.max(1, dims)))));
}

/**
 * Writes the query as int16 into `out` (same length) and returns its scale: the int8 score
 * times this scale approximates the f32 dot product. Ranking needs no query scale.
 */
export function quantiseQuery(q: Float32Array, out: Int16Array): number {
  let max = 0;
  for (let i = 0; i < q.length; i++) {
    const a = Math.abs(q[i]);
    if (a > max) max = a;
  }
  if (!(max > 0)) {
    out.fill(0);
    return 0;
  }
  const range = queryRange(q.length);
  const inv = range / max;
  for (let i = 0; i < q.length; i++) out[i] = Math.round(q[i] * inv);
  return max / range;
}
