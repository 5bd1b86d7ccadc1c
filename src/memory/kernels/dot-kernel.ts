// Dot-product kernels over one growable memory, addressed by byte offsets: the WASM SIMD module
// where WebAssembly SIMD is available, and the plain JS loops as fallback and test reference.
import { quantiseRow } from './int8';
import { FIXED_CODE_BLOCKS, KERNEL_EXPORTS, kernelModuleBytes } from './wasm-module';

export type KernelKind = 'wasm-simd' | 'js';

/**
 * Scores packed rows against a query. Every pointer is a byte offset into `buffer`; `out` gets
 * one f32 per row scored. Int8 rows score `dot(q16, row) * scales[row]` (see int8.ts).
 */
export interface DotKernel {
  readonly kind: KernelKind;
  /** The memory the offsets refer to. Re-read it after `grow`: the old one may be detached. */
  readonly buffer: ArrayBuffer;
  /** Makes `buffer` at least `bytes` long, keeping its contents. */
  grow(bytes: number): void;
  /** `out[r] = dot(q, row r)` for rows `0..n-1` of f32 rows starting at `base`. */
  f32Rows(q: number, base: number, n: number, dims: number, out: number): void;
  /** `out[j] = dot(q, row idx[j])` for `j < m`; `idx` holds int32 row numbers. */
  f32Index(q: number, base: number, idx: number, m: number, dims: number, out: number): void;
  i8Rows(q16: number, base: number, scales: number, n: number, dims: number, out: number): void;
  i8Index(
    q16: number,
    base: number,
    scales: number,
    idx: number,
    m: number,
    dims: number,
    out: number,
  ): void;
  /** Int8 codes (`dst`, n × dims bytes) and scales (n f32) of `n` f32 rows at `src` (int8.ts). */
  quantise(src: number, dst: number, scales: number, n: number, dims: number): void;
  /**
   * `out[r] = popcount(q XOR row r)` (int32) for rows `0..n-1` of sign codes of `bytes` bytes
   * each (a multiple of 16, at most `MAX_CODE_BYTES`) starting at `base` (signs.ts), and
   * `hist[out[r]] += 1` (int32 counts, bytes × 8 + 1 of them).
   */
  hamRows(q: number, base: number, n: number, bytes: number, out: number, hist: number): void;
  /** The same for rows `idx[j]`, `j < m`. */
  hamIndex(
    q: number,
    base: number,
    idx: number,
    m: number,
    bytes: number,
    out: number,
    hist: number,
  ): void;
  /**
   * Writes (int32, at `out`) the positions of the `n` int32 distances at `dist` below `cut`,
   * and the first `atCut` equal to it, in order; returns how many.
   */
  gather(dist: number, n: number, cut: number, atCut: number, out: number): number;
  /**
   * The sign codes (`dst`, n × signCodeBytes(dims)) of `n` f32 rows at `src` around the f32
   * `centre` (signs.ts's `signCode`, bit for bit).
   */
  signs(src: number, centre: number, dst: number, n: number, dims: number): void;
  /**
   * The same of `n` int8 rows at `src` (dims bytes each) with one f32 scale each at `scales`,
   * row i taken as the f32 `codes[i] × scale` (a cold start's rows: no f32 copy needed).
   */
  signs8(src: number, scales: number, centre: number, dst: number, n: number, dims: number): void;
}

/** Longest sign code the Hamming kernels take: 31 SIMD blocks, so byte sums cannot overflow. */
export const MAX_CODE_BYTES = 31 * 16;

const PAGE = 65_536;
/** wasm32 addresses 4 GiB at most. */
const MAX_WASM_BYTES = 65_536 * PAGE;

/** True where this engine runs the SIMD module (every current browser; Node 16.4+). */
export function wasmSimdSupported(): boolean {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(kernelModuleBytes());
  } catch {
    return false;
  }
}

/**
 * A kernel over a fresh memory of at least `bytes`. `prefer` 'auto' takes WASM SIMD when the
 * engine supports it (instantiating bytes needs only CSP `'wasm-unsafe-eval'`).
 */
export function createKernel(bytes: number, prefer: 'auto' | KernelKind = 'auto'): DotKernel {
  if (prefer !== 'js' && wasmSimdSupported()) return wasmKernel(bytes);
  if (prefer === 'wasm-simd') throw new Error('WebAssembly SIMD is not available here');
  return jsKernel(bytes);
}

type Fn5 = (a: number, b: number, c: number, d: number, e: number) => void;
type Fn6 = (a: number, b: number, c: number, d: number, e: number, f: number) => void;
type Fn7 = (a: number, b: number, c: number, d: number, e: number, f: number, g: number) => void;

function wasmKernel(bytes: number): DotKernel {
  if (bytes > MAX_WASM_BYTES) throw new RangeError(`${bytes} bytes exceed the wasm32 limit`);
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
  // The module is under 4 KB, so synchronous compilation is allowed even on a main thread.
  const instance = new WebAssembly.Instance(new WebAssembly.Module(kernelModuleBytes()), {
    env: { memory },
  });
  const ex = instance.exports as Record<(typeof KERNEL_EXPORTS)[number], unknown>;
  // wasm i32 parameters: offsets of 2 GiB and more must cross as their int32 bit pattern.
  const f32Rows = ex.f32Rows as Fn5;
  const f32Index = ex.f32Index as Fn6;
  const i8Rows = ex.i8Rows as Fn6;
  const i8Index = ex.i8Index as Fn7;
  const quantise = ex.quantise as Fn5;
  // A code length with a scan of its own takes it (wasm-module.ts `hammingFixed`).
  const fixedRows = new Map<number, Fn6>(
    FIXED_CODE_BLOCKS.map((b) => [b * 16, ex[`hamRows${b}`] as Fn6]),
  );
  const hamRowsAny = ex.hamRows as Fn6;
  const hamRows: Fn6 = (q, base, n, bytes, out, hist) =>
    (fixedRows.get(bytes) ?? hamRowsAny)(q, base, n, bytes, out, hist);
  const hamIndex = ex.hamIndex as Fn7;
  const signs = ex.signs as Fn5;
  const signs8 = ex.signs8 as Fn6;
  const gather = ex.gather as (a: number, b: number, c: number, d: number, e: number) => number;
  return {
    kind: 'wasm-simd',
    get buffer() {
      return memory.buffer;
    },
    grow(want: number) {
      if (want > MAX_WASM_BYTES) throw new RangeError(`${want} bytes exceed the wasm32 limit`);
      const have = memory.buffer.byteLength;
      if (want > have) memory.grow(Math.ceil((want - have) / PAGE));
    },
    f32Rows: (q, base, n, dims, out) => f32Rows(q | 0, base | 0, n, dims, out | 0),
    f32Index: (q, base, idx, m, dims, out) => f32Index(q | 0, base | 0, idx | 0, m, dims, out | 0),
    i8Rows: (q16, base, scales, n, dims, out) =>
      i8Rows(q16 | 0, base | 0, scales | 0, n, dims, out | 0),
    i8Index: (q16, base, scales, idx, m, dims, out) =>
      i8Index(q16 | 0, base | 0, scales | 0, idx | 0, m, dims, out | 0),
    quantise: (src, dst, scales, n, dims) => quantise(src | 0, dst | 0, scales | 0, n, dims),
    hamRows: (q, base, n, bytes, out, hist) =>
      hamRows(q | 0, base | 0, n, bytes, out | 0, hist | 0),
    hamIndex: (q, base, idx, m, bytes, out, hist) =>
      hamIndex(q | 0, base | 0, idx | 0, m, bytes, out | 0, hist | 0),
    gather: (dist, n, cut, atCut, out) => gather(dist | 0, n, cut, atCut, out | 0),
    signs: (src, centre, dst, n, dims) => signs(src | 0, centre | 0, dst | 0, n, dims),
    signs8: (src, scales, centre, dst, n, dims) =>
      signs8(src | 0, scales | 0, centre | 0, dst | 0, n, dims),
  };
}

/** The reference: plain loops over typed-array views of an ArrayBuffer. */
function jsKernel(bytes: number): DotKernel {
  let buffer = new ArrayBuffer(Math.ceil(bytes / 16) * 16);
  let f32 = new Float32Array(buffer);
  let i8 = new Int8Array(buffer);
  let i16 = new Int16Array(buffer);
  let i32 = new Int32Array(buffer);
  let u8 = new Uint8Array(buffer);
  const hamming = (q: number, p: number, bytes: number) => {
    let s = 0;
    for (let i = 0; i < bytes; i++) {
      let x = u8[q + i] ^ u8[p + i];
      x = x - ((x >> 1) & 0x55);
      x = (x & 0x33) + ((x >> 2) & 0x33);
      s += (x + (x >> 4)) & 0x0f;
    }
    return s;
  };
  /** The sign codes of `n` rows whose value i of row r is `value(r, i)`, around `centre`. */
  const signRows = (
    centre: number,
    dst: number,
    n: number,
    dims: number,
    value: (r: number, i: number) => number,
  ) => {
    const bytes = Math.ceil(dims / 128) * 16;
    for (let r = 0; r < n; r++) {
      const at = dst + r * bytes;
      u8.fill(0, at, at + bytes);
      for (let i = 0; i < dims; i++)
        if (value(r, i) > f32[centre / 4 + i]) u8[at + (i >> 3)] |= 1 << (i & 7);
    }
  };
  const dotF32 = (q: number, p: number, dims: number) => {
    let s = 0;
    for (let i = 0; i < dims; i++) s += f32[q + i] * f32[p + i];
    return s;
  };
  const dotI8 = (q16: number, p: number, dims: number) => {
    let s = 0;
    for (let i = 0; i < dims; i++) s += i16[q16 + i] * i8[p + i];
    return s;
  };
  return {
    kind: 'js',
    get buffer() {
      return buffer;
    },
    grow(want: number) {
      if (want <= buffer.byteLength) return;
      const next = new ArrayBuffer(Math.ceil(want / 16) * 16);
      new Uint8Array(next).set(new Uint8Array(buffer));
      buffer = next;
      f32 = new Float32Array(buffer);
      i8 = new Int8Array(buffer);
      i16 = new Int16Array(buffer);
      i32 = new Int32Array(buffer);
      u8 = new Uint8Array(buffer);
    },
    f32Rows(q, base, n, dims, out) {
      for (let r = 0; r < n; r++) f32[out / 4 + r] = dotF32(q / 4, base / 4 + r * dims, dims);
    },
    f32Index(q, base, idx, m, dims, out) {
      for (let j = 0; j < m; j++) {
        f32[out / 4 + j] = dotF32(q / 4, base / 4 + i32[idx / 4 + j] * dims, dims);
      }
    },
    i8Rows(q16, base, scales, n, dims, out) {
      for (let r = 0; r < n; r++) {
        f32[out / 4 + r] = Math.fround(dotI8(q16 / 2, base + r * dims, dims)) * f32[scales / 4 + r];
      }
    },
    quantise(src, dst, scales, n, dims) {
      for (let r = 0; r < n; r++) {
        f32[scales / 4 + r] = quantiseRow(
          f32.subarray(src / 4 + r * dims, src / 4 + (r + 1) * dims),
          i8,
          dst + r * dims,
        );
      }
    },
    signs(src, centre, dst, n, dims) {
      signRows(centre, dst, n, dims, (r, i) => f32[src / 4 + r * dims + i]);
    },
    signs8(src, scales, centre, dst, n, dims) {
      signRows(centre, dst, n, dims, (r, i) =>
        Math.fround(i8[src + r * dims + i] * f32[scales / 4 + r]),
      );
    },
    hamRows(q, base, n, bytes, out, hist) {
      for (let r = 0; r < n; r++) {
        const d = hamming(q, base + r * bytes, bytes);
        i32[out / 4 + r] = d;
        i32[hist / 4 + d]++;
      }
    },
    hamIndex(q, base, idx, m, bytes, out, hist) {
      for (let j = 0; j < m; j++) {
        const d = hamming(q, base + i32[idx / 4 + j] * bytes, bytes);
        i32[out / 4 + j] = d;
        i32[hist / 4 + d]++;
      }
    },
    gather(dist, n, cut, atCut, out) {
      let count = 0;
      for (let j = 0; j < n; j++) {
        const d = i32[dist / 4 + j];
        if (d < cut || (d === cut && atCut-- > 0)) i32[out / 4 + count++] = j;
      }
      return count;
    },
    i8Index(q16, base, scales, idx, m, dims, out) {
      for (let j = 0; j < m; j++) {
        const r = i32[idx / 4 + j];
        f32[out / 4 + j] = Math.fround(dotI8(q16 / 2, base + r * dims, dims)) * f32[scales / 4 + r];
      }
    },
  };
}
