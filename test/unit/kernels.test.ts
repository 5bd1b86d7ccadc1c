// The scoring kernels: the WASM SIMD module gives the JS reference's results (f32 within float
// tolerance, int8 exactly) on random data, odd dimensions and row counts included.
import { describe, expect, it } from 'vitest';
import {
  createKernel,
  wasmSimdSupported,
  type DotKernel,
} from '../../src/memory/kernels/dot-kernel';
import { quantiseQuery, quantiseRow, queryRange } from '../../src/memory/kernels/int8';
import { signCode, signCodeBytes } from '../../src/memory/kernels/signs';
import { kernelModuleBytes } from '../../src/memory/kernels/wasm-module';
import { dotRow } from '../../src/memory/scoring';

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const DIMS = [1, 3, 4, 7, 15, 16, 17, 31, 33, 100, 383, 384, 385];
const COUNTS = [0, 1, 3, 5, 17, 130];

/** Lays out a query, rows, scales and an index list at odd-but-aligned offsets in a kernel. */
function fill(kernel: DotKernel, dims: number, n: number, rand: () => number) {
  const q = 48; // not 0, 16-aligned
  const q16 = q + dims * 4 + 16;
  const base = Math.ceil((q16 + dims * 2 + 4) / 16) * 16;
  const codes = base + n * dims * 4 + 16;
  const scales = Math.ceil((codes + n * dims + 1) / 4) * 4;
  const idx = scales + n * 4;
  const out = idx + n * 4 + 4;
  const outIdx = out + n * 4;
  kernel.grow(outIdx + n * 4 + 64);
  const buf = kernel.buffer;
  const query = new Float32Array(buf, q, dims);
  for (let i = 0; i < dims; i++) query[i] = rand() * 2 - 1;
  quantiseQuery(query, new Int16Array(buf, q16, dims));
  const rows = new Float32Array(buf, base, n * dims);
  for (let i = 0; i < rows.length; i++) rows[i] = rand() * 2 - 1;
  const codeView = new Int8Array(buf, codes, n * dims);
  const scaleView = new Float32Array(buf, scales, n);
  for (let r = 0; r < n; r++) {
    scaleView[r] = quantiseRow(rows.subarray(r * dims, (r + 1) * dims), codeView, r * dims);
  }
  const order = new Int32Array(buf, idx, n);
  for (let j = 0; j < n; j++) order[j] = (j * 7 + 3) % n; // a permutation when gcd(7, n) = 1
  return { q, q16, base, codes, scales, idx, out, outIdx, query, rows };
}

function run(kernel: DotKernel, dims: number, n: number, seed: number) {
  const at = fill(kernel, dims, n, seeded(seed));
  kernel.f32Rows(at.q, at.base, n, dims, at.out);
  kernel.f32Index(at.q, at.base, at.idx, n, dims, at.outIdx);
  const f32 = [...new Float32Array(kernel.buffer, at.out, n)];
  const f32Idx = [...new Float32Array(kernel.buffer, at.outIdx, n)];
  kernel.i8Rows(at.q16, at.codes, at.scales, n, dims, at.out);
  kernel.i8Index(at.q16, at.codes, at.scales, at.idx, n, dims, at.outIdx);
  const i8 = [...new Float32Array(kernel.buffer, at.out, n)];
  const i8Idx = [...new Float32Array(kernel.buffer, at.outIdx, n)];
  const order = [...new Int32Array(kernel.buffer, at.idx, n)];
  const reference = Array.from({ length: n }, (_, r) => dotRow(at.query, at.rows, r, dims));
  return { f32, f32Idx, i8, i8Idx, order, reference };
}

describe('dot kernels', () => {
  it('the module validates and WebAssembly SIMD is available in this Node', () => {
    expect(WebAssembly.validate(kernelModuleBytes())).toBe(true);
    // Chromium compiles a module synchronously on a page's main thread only up to 4 KB.
    expect(kernelModuleBytes().length).toBeLessThanOrEqual(4096);
    expect(wasmSimdSupported()).toBe(true);
    expect(createKernel(1024).kind).toBe('wasm-simd');
    expect(createKernel(1024, 'js').kind).toBe('js');
  });

  for (const dims of DIMS) {
    it(`wasm and js agree on ${dims}-d rows (f32 within tolerance, int8 exactly)`, () => {
      for (const n of COUNTS) {
        const seed = dims * 1000 + n;
        const w = run(createKernel(64, 'wasm-simd'), dims, n, seed);
        const j = run(createKernel(64, 'js'), dims, n, seed);
        const tol = 1e-5 * Math.max(1, Math.sqrt(dims));
        w.reference.forEach((ref, r) => {
          expect(Math.abs(w.f32[r] - ref)).toBeLessThan(tol);
          expect(Math.abs(j.f32[r] - ref)).toBeLessThan(tol);
        });
        w.order.forEach((row, k) => {
          expect(Math.abs(w.f32Idx[k] - w.reference[row])).toBeLessThan(tol);
          expect(j.f32Idx[k]).toBeCloseTo(j.reference[row], 5);
        });
        expect(w.i8).toEqual(j.i8);
        expect(w.i8Idx).toEqual(j.i8Idx);
        w.order.forEach((row, k) => expect(w.i8Idx[k]).toBe(w.i8[row]));
      }
    });
  }

  it('int8 scores approximate the f32 dot product', () => {
    const dims = 384;
    const w = run(createKernel(64), dims, 200, 7);
    const at = fill(createKernel(64), dims, 1, seeded(7)); // same query as `w`
    const qScale = quantiseQuery(at.query, new Int16Array(dims));
    // Rows here are uniform in [-1, 1] (not unit length): compare relative to their norms.
    w.reference.forEach((ref, r) => {
      expect(Math.abs(w.i8[r] * qScale - ref)).toBeLessThan(0.02 * Math.sqrt(dims));
    });
  });

  it('the int16 query range cannot overflow int32 for any dimension count', () => {
    for (const dims of [1, 384, 1024, 4096, 100_000]) {
      expect(queryRange(dims) * 127 * dims).toBeLessThanOrEqual(2_147_483_647);
    }
    expect(queryRange(384)).toBe(32_767);
    const big = 4096;
    const kernel = createKernel(big * 8 + 1024);
    const buf = kernel.buffer;
    const q = new Float32Array(big).fill(1);
    quantiseQuery(q, new Int16Array(buf, 0, big));
    new Int8Array(buf, big * 2, big).fill(127);
    new Float32Array(buf, big * 4, 1)[0] = 1;
    kernel.i8Rows(0, big * 2, big * 4, 1, big, big * 4 + 16);
    expect(new Float32Array(buf, big * 4 + 16, 1)[0]).toBe(queryRange(big) * 127 * big);
  });

  it('the quantise kernel gives the reference codes and scales bit for bit', () => {
    for (const dims of DIMS) {
      for (const kind of ['wasm-simd', 'js'] as const) {
        const n = 37;
        const rand = seeded(dims);
        const kernel = createKernel(n * dims * 6 + 1024, kind);
        const src = new Float32Array(kernel.buffer, 0, n * dims);
        for (let i = 0; i < src.length; i++) src[i] = (rand() * 2 - 1) * (i % 5 === 0 ? 3 : 0.1);
        src.fill(0, 0, dims); // a zero row
        // Ties: with max 127 the codes are the values themselves, rounded half to even.
        if (dims >= 6) src.set([127, 0.5, 1.5, 2.5, -0.5, -1.5], dims);
        const dst = n * dims * 4;
        const scales = Math.ceil((dst + n * dims) / 4) * 4;
        kernel.quantise(0, dst, scales, n, dims);
        const codes = new Int8Array(n * dims);
        const want = Array.from({ length: n }, (_, r) =>
          quantiseRow(src.subarray(r * dims, (r + 1) * dims), codes, r * dims),
        );
        expect([...new Int8Array(kernel.buffer, dst, n * dims)]).toEqual([...codes]);
        expect([...new Float32Array(kernel.buffer, scales, n)]).toEqual(want);
        if (dims >= 6) expect([...codes.subarray(dims, dims + 6)]).toEqual([127, 0, 2, 2, 0, -2]);
      }
    }
  });

  it('zero vectors quantise to zero codes and scale 0', () => {
    const codes = new Int8Array(8).fill(5);
    expect(quantiseRow(new Float32Array(4), codes, 2)).toBe(0);
    expect([...codes]).toEqual([5, 5, 0, 0, 0, 0, 5, 5]);
    const q16 = new Int16Array(4).fill(3);
    expect(quantiseQuery(new Float32Array(4), q16)).toBe(0);
    expect([...q16]).toEqual([0, 0, 0, 0]);
  });

  it('grow keeps the contents of the memory', () => {
    for (const kind of ['wasm-simd', 'js'] as const) {
      const kernel = createKernel(100, kind);
      new Float32Array(kernel.buffer, 0, 4).set([1, 2, 3, 4]);
      kernel.grow(300_000);
      expect(kernel.buffer.byteLength).toBeGreaterThanOrEqual(300_000);
      expect([...new Float32Array(kernel.buffer, 0, 4)]).toEqual([1, 2, 3, 4]);
    }
  });

  it('the Hamming kernels count differing bits like a plain popcount, by row and by index', () => {
    const popcount = (x: number) => {
      let c = 0;
      for (; x; x &= x - 1) c++;
      return c;
    };
    // 16–64 bytes take the kernels of fixed length (wasm-module.ts `hammingFixed`), 80 and 496 the loop.
    for (const bytes of [16, 32, 48, 64, 80, 496]) {
      const n = 23;
      const results = (['wasm-simd', 'js'] as const).map((kind) => {
        const kernel = createKernel(64 + bytes * (n + 1) + n * 16 + bytes * 80, kind);
        const u8 = new Uint8Array(kernel.buffer);
        const q = 16;
        const base = q + bytes;
        const r2 = seeded(bytes);
        for (let i = q; i < base + n * bytes; i++) u8[i] = Math.floor(r2() * 256);
        u8.fill(0xff, base, base + bytes); // a row of all ones
        u8.set(u8.subarray(q, q + bytes), base + bytes); // a row equal to the query
        const idx = base + n * bytes;
        const order = Array.from({ length: n }, (_, j) => (j * 5 + 2) % n);
        new Int32Array(kernel.buffer, idx, n).set(order);
        const out = idx + n * 4;
        const hist = out + n * 4;
        const counts = () => [...new Int32Array(kernel.buffer, hist, bytes * 8 + 1)];
        kernel.hamRows(q, base, n, bytes, out, hist);
        const byRow = [...new Int32Array(kernel.buffer, out, n)];
        const histRows = counts();
        kernel.hamIndex(q, base, idx, n, bytes, out, hist);
        const byIdx = [...new Int32Array(kernel.buffer, out, n)];
        // The counts per distance: once per row scored, again by the indexed pass.
        const once = new Array<number>(bytes * 8 + 1).fill(0);
        for (const d of byRow) once[d]++;
        expect(histRows).toEqual(once);
        expect(counts()).toEqual(once.map((c) => c * 2));
        // The gather: below the cut, then the first two at it, in order.
        const cut = byRow[5];
        const got = kernel.gather(out, n, cut, 2, idx + n * 4 + (bytes * 8 + 1) * 4);
        const atCut = byIdx.map((d, j) => (d === cut ? j : -1)).filter((j) => j >= 0);
        const want2 = byIdx
          .map((d, j) => (d < cut || atCut.slice(0, 2).includes(j) ? j : -1))
          .filter((j) => j >= 0);
        expect(got).toBe(want2.length);
        expect([...new Int32Array(kernel.buffer, idx + n * 4 + (bytes * 8 + 1) * 4, got)]).toEqual(
          want2,
        );
        const want = Array.from({ length: n }, (_, r) => {
          let d = 0;
          for (let i = 0; i < bytes; i++) d += popcount(u8[q + i] ^ u8[base + r * bytes + i]);
          return d;
        });
        expect(byRow).toEqual(want);
        expect(byIdx).toEqual(order.map((r) => want[r]));
        expect(byRow[1]).toBe(0);
        return byRow;
      });
      expect(results[0]).toEqual(results[1]);
    }
  });

  it("the sign-code kernel gives signCode's bits, padding zeroed, for any dimension count", () => {
    for (const dims of [1, 15, 16, 17, 100, 128, 129, 384, 385]) {
      const n = 7;
      const bytes = signCodeBytes(dims);
      for (const kind of ['wasm-simd', 'js'] as const) {
        const kernel = createKernel(1 << 16, kind);
        const f32 = new Float32Array(kernel.buffer);
        const rand = seeded(dims);
        const src = 1024;
        const centre = 64;
        for (let i = 0; i < n * dims; i++) f32[src / 4 + i] = rand() * 2 - 1;
        for (let i = 0; i < dims; i++) f32[centre / 4 + i] = (rand() * 2 - 1) * 0.3;
        f32[src / 4] = f32[centre / 4]; // equal to the centre: bit clear
        const dst = src + n * dims * 4 + 64;
        new Uint8Array(kernel.buffer).fill(0xaa, dst, dst + n * bytes); // stale bytes
        kernel.signs(src, centre, dst, n, dims);
        const want = new Uint8Array(n * bytes);
        const c = f32.slice(centre / 4, centre / 4 + dims);
        for (let r = 0; r < n; r++)
          signCode(f32.subarray(src / 4 + r * dims, src / 4 + (r + 1) * dims), c, want, r * bytes);
        expect([...new Uint8Array(kernel.buffer, dst, n * bytes)]).toEqual([...want]);
        expect(want[0] & 1).toBe(0);
      }
    }
  });

  it('the int8 sign-code kernel gives the bits of the rows as floats, for any dimension count', () => {
    for (const dims of [1, 15, 16, 17, 100, 128, 129, 384, 385]) {
      const n = 7;
      const bytes = signCodeBytes(dims);
      const results = (['wasm-simd', 'js'] as const).map((kind) => {
        const kernel = createKernel(1 << 16, kind);
        const f32 = new Float32Array(kernel.buffer);
        const i8 = new Int8Array(kernel.buffer);
        const rand = seeded(dims + 1);
        const centre = 64;
        const scales = centre + dims * 4 + 64;
        const src = scales + n * 4 + 64;
        for (let i = 0; i < n * dims; i++) i8[src + i] = Math.round(rand() * 254) - 127;
        for (let r = 0; r < n; r++) f32[scales / 4 + r] = rand() * 0.01;
        f32[scales / 4 + n - 1] = 0; // a zero row: every bit from the centre's sign
        for (let i = 0; i < dims; i++) f32[centre / 4 + i] = (rand() * 2 - 1) * 0.3;
        // Row 0's first value equal to the centre as a float: bit clear.
        i8[src] = 100;
        f32[centre / 4] = Math.fround(100 * f32[scales / 4]);
        const dst = src + n * dims + 64;
        new Uint8Array(kernel.buffer).fill(0xaa, dst, dst + n * bytes); // stale bytes
        kernel.signs8(src, scales, centre, dst, n, dims);
        const want = new Uint8Array(n * bytes);
        const c = f32.slice(centre / 4, centre / 4 + dims);
        for (let r = 0; r < n; r++) {
          const row = Float32Array.from(
            i8.subarray(src + r * dims, src + (r + 1) * dims),
            (v) => v * f32[scales / 4 + r],
          );
          signCode(row, c, want, r * bytes);
        }
        const got = [...new Uint8Array(kernel.buffer, dst, n * bytes)];
        expect(got).toEqual([...want]);
        expect(want[0] & 1).toBe(0);
        return got;
      });
      expect(results[0]).toEqual(results[1]);
    }
  });
});
