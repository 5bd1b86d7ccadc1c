// Synthetic sentence-embedding-like data for the benchmarks and the recall tests: unit vectors
// clustered around random centroids, each row reproducible from (seed, row) alone.
//
// Row i: centroid c = one of `centroids` random unit vectors, picked by the row's own generator;
// v = normalise(c + noise * g) with g ~ N(0, I / dims), so |g| ≈ 1. With noise 0.8 a row has
// cosine ≈ 0.78 with its centroid and ≈ 0.6 with its cluster mates, and ≈ 0 with other
// clusters: dense neighbourhoods where the 10th and 11th best differ by a few thousandths, which
// is what makes recall@10 of a quantised first pass a meaningful test.

export interface SyntheticSpec {
  dims: number;
  centroids: number;
  noise: number;
  seed: number;
}

export const MINILM_LIKE: Omit<SyntheticSpec, 'seed'> = { dims: 384, centroids: 500, noise: 0.8 };

/** mulberry32: a small, fast, seedable PRNG with a 2^32 period. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussianFill(rand: () => number, out: Float32Array, scale: number): void {
  for (let i = 0; i < out.length; i += 2) {
    const u = 1 - rand();
    const r = Math.sqrt(-2 * Math.log(u)) * scale;
    const t = 2 * Math.PI * rand();
    out[i] = r * Math.cos(t);
    if (i + 1 < out.length) out[i + 1] = r * Math.sin(t);
  }
}

function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

const hash = (seed: number, i: number) =>
  Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ (i * 0x27d4eb2f);

export class SyntheticVectors {
  readonly centres: Float32Array;
  private readonly noiseBuf: Float32Array;

  constructor(readonly spec: SyntheticSpec) {
    const { dims, centroids, seed } = spec;
    this.centres = new Float32Array(centroids * dims);
    const rand = mulberry32(seed);
    for (let c = 0; c < centroids; c++) {
      const v = this.centres.subarray(c * dims, (c + 1) * dims);
      gaussianFill(rand, v, 1);
      normalise(v);
    }
    this.noiseBuf = new Float32Array(dims);
  }

  /** Row `i` written into `out` (length dims); the same `i` always gives the same vector. */
  row(i: number, out = new Float32Array(this.spec.dims)): Float32Array {
    return this.point(hash(this.spec.seed, i), out);
  }

  /** Rows `first..first+count` packed into `out` (count × dims). */
  rows(first: number, count: number, out = new Float32Array(count * this.spec.dims)) {
    const d = this.spec.dims;
    for (let r = 0; r < count; r++) this.row(first + r, out.subarray(r * d, (r + 1) * d));
    return out;
  }

  /** Query `i`: drawn like a row, from another stream, so it is no row of the data. */
  query(i: number): Float32Array {
    return this.point(hash(~this.spec.seed, i), new Float32Array(this.spec.dims));
  }

  private point(seed: number, out: Float32Array): Float32Array {
    const { dims, centroids, noise } = this.spec;
    const rand = mulberry32(seed);
    const c = Math.floor(rand() * centroids);
    gaussianFill(rand, this.noiseBuf, noise / Math.sqrt(dims));
    for (let k = 0; k < dims; k++) out[k] = this.centres[c * dims + k] + this.noiseBuf[k];
    return normalise(out);
  }
}

/** Exact top-k row numbers of packed `data` for `q` (plain JS loop): the recall reference. */
export function exactTopK(data: Float32Array, dims: number, q: Float32Array, k: number): number[] {
  const n = data.length / dims;
  const best: { i: number; s: number }[] = [];
  for (let r = 0; r < n; r++) {
    let s = 0;
    const b = r * dims;
    for (let j = 0; j < dims; j++) s += q[j] * data[b + j];
    if (best.length < k || s > best[best.length - 1].s) {
      best.push({ i: r, s });
      best.sort((a, b) => b.s - a.s);
      if (best.length > k) best.pop();
    }
  }
  return best.map((b) => b.i);
}

/** |found ∩ exact| / |exact|. */
export function recall(found: readonly number[], exact: readonly number[]): number {
  const set = new Set(found);
  return exact.length ? exact.filter((i) => set.has(i)).length / exact.length : 1;
}
