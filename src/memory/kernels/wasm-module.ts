// The bytes of the scoring kernel: a hand-assembled WebAssembly SIMD module (no toolchain), with
// f32 and int8 dot products over packed rows, contiguous or by row index. Memory is imported,
// so each vector arena instantiates the same module over its own memory.

// ---- encoding ---------------------------------------------------------------------------------

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    const done = (n === 0 && !(byte & 0x40)) || (n === -1 && byte & 0x40);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (s: string): number[] => vec([...s].map((c) => [c.charCodeAt(0)]));
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

const I32 = 0x7f;
const F32 = 0x7d;
const V128 = 0x7b;

// ---- instructions -----------------------------------------------------------------------------

const get = (i: number) => [0x20, ...uleb(i)];
const set = (i: number) => [0x21, ...uleb(i)];
const i32c = (n: number) => [0x41, ...sleb(n)];
const call = (f: number) => [0x10, ...uleb(f)];
const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm];
/** memarg: log2 alignment, then a constant byte offset. */
const mem = (align: number, offset = 0) => [...uleb(align), ...uleb(offset)];

const op = {
  add: [0x6a],
  mul: [0x6c],
  and: [0x71],
  shl: [0x74],
  geU: [0x4f],
  f32Add: [0x92],
  f32Mul: [0x94],
  f32FromI32: [0xb2],
  i32Load: (o = 0) => [0x28, ...mem(2, o)],
  i32Load8: (o = 0) => [0x2c, ...mem(0, o)],
  i32Load16: (o = 0) => [0x2e, ...mem(1, o)],
  f32Load: (o = 0) => [0x2a, ...mem(2, o)],
  f32Store: [0x38, ...mem(2)],
  vLoad: (o = 0) => simd(0x00, ...mem(0, o)),
  vZero: simd(0x0c, ...new Array<number>(16).fill(0)),
  f32x4Add: simd(0xe4),
  f32x4Mul: simd(0xe6),
  f32x4Lane: (l: number) => simd(0x1f, l),
  i32x4Add: simd(0xae),
  i32x4Lane: (l: number) => simd(0x1b, l),
  i16x8Low: simd(0x87),
  i16x8High: simd(0x88),
  i32x4Low: simd(0xa7),
  i32x4High: simd(0xa8),
  f32x4FromI32x4: simd(0xfa),
  i32x4Dot: simd(0xba),
  vStore: simd(0x0b, ...mem(0)),
  f32Const: (x: number) => [0x43, ...new Uint8Array(Float32Array.of(x).buffer)],
  f32Abs: [0x8b],
  f32Max: [0x97],
  f32Div: [0x95],
  f32Nearest: [0x90],
  f32Gt: [0x5e],
  select: [0x1b],
  shrU: [0x76],
  i32FromF32Sat: [0xfc, 0x00],
  i32Store8: [0x3a, ...mem(0)],
  f32x4Splat: simd(0x13),
  f32x4Abs: simd(0xe0),
  f32x4Max: simd(0xe9),
  f32x4Nearest: simd(0x6a),
  i32x4FromF32x4Sat: simd(0xf8),
  i16x8Narrow: simd(0x85),
  i8x16Narrow: simd(0x65),
  i32Store: [0x36, ...mem(2)],
  vXor: simd(0x51),
  i8x16Popcnt: simd(0x62),
  i8x16Add: simd(0x6e),
  i16x8AddPairsU: simd(0x7d),
  i32x4AddPairsU: simd(0x7f),
  f32x4Gt: simd(0x44),
  i32x4Bitmask: simd(0xa4),
  or: [0x72],
  i32Store16: [0x3b, ...mem(1)],
  i32Load8U: [0x2d, ...mem(0)],
  vStoreAt: (o: number) => simd(0x0b, ...mem(0, o)),
};

/** `local[i] += by` for an i32 local. */
const bump = (i: number, by: number[]) => [...get(i), ...by, ...op.add, ...set(i)];

/** `while (local[a] < local[b]) { body }`, unsigned compare. */
const whileLt = (a: number, b: number, body: number[]) => [
  0x02,
  0x40,
  0x03,
  0x40,
  ...get(a),
  ...get(b),
  ...op.geU,
  0x0d,
  1, // br_if out of the block
  ...body,
  0x0c,
  0, // br to the loop
  0x0b,
  0x0b,
];

// ---- functions --------------------------------------------------------------------------------

/**
 * dotF32(q, p, dims) -> f32. Locals: 3 o (byte offset), 4 e16, 5 e4, 6 e (byte ends),
 * 7..10 four accumulators, 11 the scalar sum.
 */
function dotF32(): number[] {
  const [q, p, dims, o, e16, e4, e, s] = [0, 1, 2, 3, 4, 5, 6, 11];
  const acc = [7, 8, 9, 10];
  const mulAdd = (a: number, off: number) => [
    ...get(a),
    ...get(q),
    ...get(o),
    ...op.add,
    ...op.vLoad(off),
    ...get(p),
    ...get(o),
    ...op.add,
    ...op.vLoad(off),
    ...op.f32x4Mul,
    ...op.f32x4Add,
    ...set(a),
  ];
  const body = [
    ...get(dims),
    ...i32c(-16),
    ...op.and,
    ...i32c(2),
    ...op.shl,
    ...set(e16),
    ...get(dims),
    ...i32c(-4),
    ...op.and,
    ...i32c(2),
    ...op.shl,
    ...set(e4),
    ...get(dims),
    ...i32c(2),
    ...op.shl,
    ...set(e),
    ...acc.flatMap((a) => [...op.vZero, ...set(a)]),
    ...whileLt(o, e16, [...acc.flatMap((a, k) => mulAdd(a, k * 16)), ...bump(o, i32c(64))]),
    ...whileLt(o, e4, [...mulAdd(acc[0], 0), ...bump(o, i32c(16))]),
    ...get(acc[0]),
    ...get(acc[1]),
    ...op.f32x4Add,
    ...get(acc[2]),
    ...get(acc[3]),
    ...op.f32x4Add,
    ...op.f32x4Add,
    ...set(acc[0]),
    ...[0, 1, 2, 3].flatMap((l) => [...get(acc[0]), ...op.f32x4Lane(l)]),
    ...op.f32Add,
    ...op.f32Add,
    ...op.f32Add,
    ...set(s),
    ...whileLt(o, e, [
      ...get(s),
      ...get(q),
      ...get(o),
      ...op.add,
      ...op.f32Load(),
      ...get(p),
      ...get(o),
      ...op.add,
      ...op.f32Load(),
      ...op.f32Mul,
      ...op.f32Add,
      ...set(s),
      ...bump(o, i32c(4)),
    ]),
    ...get(s),
  ];
  return fn(
    [
      [4, I32],
      [4, V128],
      [1, F32],
    ],
    body,
  );
}

/**
 * dotI8(q16, p, dims) -> i32: the query as int16 (2 bytes a dim), the row as int8. Locals:
 * 3 j (dim index = row byte offset), 4 e16, 5 acc0, 6 acc1, 7 the scalar sum, 8 q16 + 2j.
 */
function dotI8(): number[] {
  const [q, p, dims, j, e16, a0, a1, s, qj] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const qAddr = [...get(q), ...get(j), ...i32c(1), ...op.shl, ...op.add, ...set(qj)];
  const body = [
    ...get(dims),
    ...i32c(-16),
    ...op.and,
    ...set(e16),
    ...op.vZero,
    ...set(a0),
    ...op.vZero,
    ...set(a1),
    ...whileLt(j, e16, [
      ...qAddr,
      // acc0 += dot(extend_low(row[j..j+16]), q16[j..j+8])
      ...get(a0),
      ...get(p),
      ...get(j),
      ...op.add,
      ...op.vLoad(),
      ...op.i16x8Low,
      ...get(qj),
      ...op.vLoad(),
      ...op.i32x4Dot,
      ...op.i32x4Add,
      ...set(a0),
      // acc1 += dot(extend_high(row[j..j+16]), q16[j+8..j+16])
      ...get(a1),
      ...get(p),
      ...get(j),
      ...op.add,
      ...op.vLoad(),
      ...op.i16x8High,
      ...get(qj),
      ...op.vLoad(16),
      ...op.i32x4Dot,
      ...op.i32x4Add,
      ...set(a1),
      ...bump(j, i32c(16)),
    ]),
    ...get(a0),
    ...get(a1),
    ...op.i32x4Add,
    ...set(a0),
    ...[0, 1, 2, 3].flatMap((l) => [...get(a0), ...op.i32x4Lane(l)]),
    ...op.add,
    ...op.add,
    ...op.add,
    ...set(s),
    ...whileLt(j, dims, [
      ...qAddr,
      ...get(s),
      ...get(p),
      ...get(j),
      ...op.add,
      ...op.i32Load8(),
      ...get(qj),
      ...op.i32Load16(),
      ...op.mul,
      ...op.add,
      ...set(s),
      ...bump(j, i32c(1)),
    ]),
    ...get(s),
  ];
  return fn(
    [
      [2, I32],
      [2, V128],
      [2, I32],
    ],
    body,
  );
}

/**
 * quantise(src, dst, scales, n, dims): rows of f32 at `src` to int8 at `dst` with one scale each
 * (`max|v| / 127`), rounding half to even like int8.ts's reference. Locals: 5 o (byte offset in
 * the row), 6 e16, 7 e4, 8 e (byte ends), 9 end (of scales), 10 stride, 11 vmax, 12 m, 13 inv,
 * 14 vinv.
 */
function quantise(): number[] {
  const [src, dst, scales, n, dims, o, e16, e4, e, end, stride] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
  ];
  const [vmax, m, inv, vinv] = [11, 12, 13, 14];
  const at = (off: number) => [...get(src), ...get(o), ...op.add, ...op.vLoad(off)];
  const toI32 = (off: number) => [
    ...at(off),
    ...get(vinv),
    ...op.f32x4Mul,
    ...op.f32x4Nearest,
    ...op.i32x4FromF32x4Sat,
  ];
  const dstAt = [...get(dst), ...get(o), ...i32c(2), ...op.shrU, ...op.add];
  const row = [
    ...op.vZero,
    ...set(vmax),
    ...i32c(0),
    ...set(o),
    ...whileLt(o, e4, [
      ...get(vmax),
      ...at(0),
      ...op.f32x4Abs,
      ...op.f32x4Max,
      ...set(vmax),
      ...bump(o, i32c(16)),
    ]),
    ...[0, 1, 2, 3].flatMap((l) => [...get(vmax), ...op.f32x4Lane(l)]),
    ...op.f32Max,
    ...op.f32Max,
    ...op.f32Max,
    ...set(m),
    ...whileLt(o, e, [
      ...get(m),
      ...get(src),
      ...get(o),
      ...op.add,
      ...op.f32Load(),
      ...op.f32Abs,
      ...op.f32Max,
      ...set(m),
      ...bump(o, i32c(4)),
    ]),
    // inv = m > 0 ? 127 / m : 0; scales[r] = m / 127 (0 for a zero row)
    ...op.f32Const(127),
    ...get(m),
    ...op.f32Div,
    ...op.f32Const(0),
    ...get(m),
    ...op.f32Const(0),
    ...op.f32Gt,
    ...op.select,
    ...set(inv),
    ...get(scales),
    ...get(m),
    ...op.f32Const(127),
    ...op.f32Div,
    ...op.f32Store,
    ...get(inv),
    ...op.f32x4Splat,
    ...set(vinv),
    ...i32c(0),
    ...set(o),
    ...whileLt(o, e16, [
      ...dstAt,
      ...toI32(0),
      ...toI32(16),
      ...op.i16x8Narrow,
      ...toI32(32),
      ...toI32(48),
      ...op.i16x8Narrow,
      ...op.i8x16Narrow,
      ...op.vStore,
      ...bump(o, i32c(64)),
    ]),
    ...whileLt(o, e, [
      ...dstAt,
      ...get(src),
      ...get(o),
      ...op.add,
      ...op.f32Load(),
      ...get(inv),
      ...op.f32Mul,
      ...op.f32Nearest,
      ...op.i32FromF32Sat,
      ...op.i32Store8,
      ...bump(o, i32c(4)),
    ]),
    ...bump(src, get(stride)),
    ...bump(dst, get(dims)),
    ...bump(scales, i32c(4)),
  ];
  const body = [
    ...get(dims),
    ...i32c(-16),
    ...op.and,
    ...i32c(2),
    ...op.shl,
    ...set(e16),
    ...get(dims),
    ...i32c(-4),
    ...op.and,
    ...i32c(2),
    ...op.shl,
    ...set(e4),
    ...get(dims),
    ...i32c(2),
    ...op.shl,
    ...set(e),
    ...get(e),
    ...set(stride),
    ...get(scales),
    ...get(n),
    ...i32c(2),
    ...op.shl,
    ...op.add,
    ...set(end),
    ...whileLt(scales, end, row),
  ];
  return fn(
    [
      [6, I32],
      [1, V128],
      [2, F32],
      [1, V128],
    ],
    body,
  );
}

/**
 * A Hamming scan's step after a row: local `acc` holds the row's popcounts per byte lane; writes
 * their sum d (the distance) at `out` and adds one to the i32 `hist[d]`. Uses locals `d`, `p`.
 */
function storeDistance(acc: number, d: number, p: number, out: number, hist: number): number[] {
  return [
    ...get(acc),
    ...op.i16x8AddPairsU,
    ...op.i32x4AddPairsU,
    ...set(acc),
    ...[0, 1, 2, 3].flatMap((l) => [...get(acc), ...op.i32x4Lane(l)]),
    ...op.add,
    ...op.add,
    ...op.add,
    ...set(d),
    ...get(out),
    ...get(d),
    ...op.i32Store,
    // hist[d] += 1
    ...get(hist),
    ...get(d),
    ...i32c(2),
    ...op.shl,
    ...op.add,
    ...set(p),
    ...get(p),
    ...get(p),
    ...op.i32Load(),
    ...i32c(1),
    ...op.add,
    ...op.i32Store,
  ];
}

/**
 * Hamming distances of sign codes (docs/search.md, "Two stages"): `out[j] = popcount(q ^ row)`
 * as i32, rows of `bytes` bytes (a multiple of 16, at most 496 so that a byte lane of the
 * popcount sums cannot overflow), row r = j or idx[j]. Params: q, base, [idx], count, bytes,
 * out; locals after them: o, end, p (row address), acc.
 */
function hamming(indexed: boolean): number[] {
  const params = ['q', 'base', ...(indexed ? ['idx'] : []), 'count', 'bytes', 'out', 'hist'];
  const at = (n: string) => params.indexOf(n);
  const [o, end, p, d, acc] = [0, 1, 2, 3, 4].map((i) => params.length + i);
  const rowPtr = indexed
    ? [...get(at('base')), ...get(at('idx')), ...op.i32Load(), ...get(at('bytes')), ...op.mul]
    : get(at('base'));
  const body = [
    ...get(at('out')),
    ...get(at('count')),
    ...i32c(2),
    ...op.shl,
    ...op.add,
    ...set(end),
    ...whileLt(at('out'), end, [
      ...rowPtr,
      ...(indexed ? op.add : []),
      ...set(p),
      ...op.vZero,
      ...set(acc),
      ...i32c(0),
      ...set(o),
      ...whileLt(o, at('bytes'), [
        ...get(acc),
        ...get(at('q')),
        ...get(o),
        ...op.add,
        ...op.vLoad(),
        ...get(p),
        ...get(o),
        ...op.add,
        ...op.vLoad(),
        ...op.vXor,
        ...op.i8x16Popcnt,
        ...op.i8x16Add,
        ...set(acc),
        ...bump(o, i32c(16)),
      ]),
      ...storeDistance(acc, d, p, at('out'), at('hist')),
      ...(indexed ? bump(at('idx'), i32c(4)) : bump(at('base'), get(at('bytes')))),
      ...bump(at('out'), i32c(4)),
    ]),
  ];
  return fn(
    [
      [4, I32],
      [1, V128],
    ],
    body,
  );
}

/**
 * `hamRows` for codes of exactly `blocks` × 16 bytes (`FIXED_CODE_BLOCKS`):
 * the query's blocks held in locals and each row's read at constant offsets, no inner loop (the
 * generic loop's per-block count and reloads of the query were most of its time). Same
 * parameters; `bytes` is ignored. Locals after them: end, p, d, acc, then one per query block.
 */
function hammingFixed(blocks: number): number[] {
  const params = ['q', 'base', 'count', 'bytes', 'out', 'hist'];
  const at = (n: string) => params.indexOf(n);
  const [end, p, d, acc] = [0, 1, 2, 3].map((i) => params.length + i);
  const qb = (b: number) => params.length + 4 + b;
  const stride = blocks * 16;
  const body = [
    ...get(at('out')),
    ...get(at('count')),
    ...i32c(2),
    ...op.shl,
    ...op.add,
    ...set(end),
    ...Array.from({ length: blocks }, (_, b) => [
      ...get(at('q')),
      ...op.vLoad(b * 16),
      ...set(qb(b)),
    ]).flat(),
    ...whileLt(at('out'), end, [
      ...get(at('base')),
      ...set(p),
      ...Array.from({ length: blocks }, (_, b) => [
        ...get(qb(b)),
        ...get(p),
        ...op.vLoad(b * 16),
        ...op.vXor,
        ...op.i8x16Popcnt,
        ...(b > 0 ? op.i8x16Add : []),
      ]).flat(),
      ...set(acc),
      ...storeDistance(acc, d, p, at('out'), at('hist')),
      ...bump(at('base'), i32c(stride)),
      ...bump(at('out'), i32c(4)),
    ]),
  ];
  return fn(
    [
      [3, I32],
      [1 + blocks, V128],
    ],
    body,
  );
}

/** Code lengths (16-byte blocks) with a Hamming kernel of their own: 100 to 512 dimensions. */
export const FIXED_CODE_BLOCKS = [1, 2, 3, 4] as const;

/**
 * gather(dist, n, cut, atCut, out) -> count: the positions j of the `n` int32 distances at
 * `dist` below `cut`, and the first `atCut` equal to it, written as int32 at `out` in order.
 * Locals: 5 j, 6 d, 7 count, 8 end.
 */
function gather(): number[] {
  const [dist, n, cut, atCut, out, j, d, count, end] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const take = [
    ...get(out),
    ...get(count),
    ...i32c(2),
    ...op.shl,
    ...op.add,
    ...get(j),
    ...op.i32Store,
    ...bump(count, i32c(1)),
  ];
  const body = [
    ...get(dist),
    ...get(n),
    ...i32c(2),
    ...op.shl,
    ...op.add,
    ...set(end),
    ...whileLt(dist, end, [
      ...get(dist),
      ...op.i32Load(),
      ...set(d),
      ...get(d),
      ...get(cut),
      0x49, // i32.lt_u
      0x04,
      0x40, // if
      ...take,
      0x05, // else
      ...get(d),
      ...get(cut),
      0x46, // i32.eq
      ...get(atCut),
      ...i32c(0),
      0x47, // i32.ne
      ...op.and,
      0x04,
      0x40, // if
      ...take,
      ...bump(atCut, i32c(-1)),
      0x0b,
      0x0b,
      ...bump(dist, i32c(4)),
      ...bump(j, i32c(1)),
    ]),
    ...get(count),
  ];
  return fn([[4, I32]], body);
}

/**
 * signs(src, centre, dst, n, dims): the sign codes of `n` f32 rows at `src` (signs.ts): bit i
 * of a row's code set where `row[i] > centre[i]`, codes of `((dims + 127) >> 7) << 4` bytes,
 * zero-padded. With `i8`, signs8(src, scales, centre, dst, n, dims): the same of int8 rows
 * (dims bytes each) with one f32 scale each, row i taken as the f32 `codes[i] × scale` (as a
 * Float32Array of them would hold it). Locals after the params: o (byte offset in an f32 row),
 * e16, e (byte ends), end (of dst), bytes (of a code), k, addr; with `i8` the row's scale, and
 * it splatted.
 */
function signs(i8: boolean): number[] {
  const P = i8 ? 6 : 5;
  const [src, scales, centre, dst, n, dims] = i8 ? [0, 1, 2, 3, 4, 5] : [0, -1, 1, 2, 3, 4];
  const [o, e16, e, end, bytes, k, addr, scale, vScale] = [0, 1, 2, 3, 4, 5, 6, 7, 8].map(
    (i) => P + i,
  );
  // The row's values at byte offset `o` of an f32 row: an int8 row's are at `o / 4`.
  const rowAt = [...get(src), ...get(o), ...(i8 ? [...i32c(2), ...op.shrU] : []), ...op.add];
  // Four dims of the block of 16 at `o` (f32x4), the `part`-th four.
  const four = (part: number) =>
    i8
      ? [
          ...rowAt,
          ...op.vLoad(),
          ...(part < 2 ? op.i16x8Low : op.i16x8High),
          ...(part % 2 ? op.i32x4High : op.i32x4Low),
          ...op.f32x4FromI32x4,
          ...get(vScale),
          ...op.f32x4Mul,
        ]
      : [...rowAt, ...op.vLoad(part * 16)];
  const mask = (part: number) => [
    ...four(part),
    ...get(centre),
    ...get(o),
    ...op.add,
    ...op.vLoad(part * 16),
    ...op.f32x4Gt,
    ...op.i32x4Bitmask,
    ...(part ? [...i32c(part * 4), ...op.shl] : []),
  ];
  const one = i8
    ? [...rowAt, ...op.i32Load8(), ...op.f32FromI32, ...get(scale), ...op.f32Mul]
    : [...rowAt, ...op.f32Load()];
  const row = [
    ...(i8
      ? [
          ...get(scales),
          ...op.f32Load(),
          ...set(scale),
          ...get(scale),
          ...op.f32x4Splat,
          ...set(vScale),
        ]
      : []),
    ...i32c(0),
    ...set(k),
    ...whileLt(k, bytes, [
      ...get(dst),
      ...get(k),
      ...op.add,
      ...op.vZero,
      ...op.vStore,
      ...bump(k, i32c(16)),
    ]),
    ...i32c(0),
    ...set(o),
    ...whileLt(o, e16, [
      ...get(dst),
      ...get(o),
      ...i32c(5),
      ...op.shrU,
      ...op.add,
      ...mask(0),
      ...mask(1),
      ...op.or,
      ...mask(2),
      ...op.or,
      ...mask(3),
      ...op.or,
      ...op.i32Store16,
      ...bump(o, i32c(64)),
    ]),
    ...whileLt(o, e, [
      ...one,
      ...get(centre),
      ...get(o),
      ...op.add,
      ...op.f32Load(),
      ...op.f32Gt,
      0x04,
      0x40, // if
      ...get(dst),
      ...get(o),
      ...i32c(5),
      ...op.shrU,
      ...op.add,
      ...set(addr),
      ...get(addr),
      ...get(addr),
      ...op.i32Load8U,
      ...i32c(1),
      ...get(o),
      ...i32c(2),
      ...op.shrU,
      ...i32c(7),
      ...op.and,
      ...op.shl,
      ...op.or,
      ...op.i32Store8,
      0x0b, // end if
      ...bump(o, i32c(4)),
    ]),
    ...(i8
      ? [...bump(src, get(dims)), ...bump(scales, i32c(4))]
      : bump(src, [...get(dims), ...i32c(2), ...op.shl])),
    ...bump(dst, get(bytes)),
  ];
  const body = [
    ...get(dims),
    ...i32c(-16),
    ...op.and,
    ...i32c(2),
    ...op.shl,
    ...set(e16),
    ...get(dims),
    ...i32c(2),
    ...op.shl,
    ...set(e),
    ...get(dims),
    ...i32c(127),
    ...op.add,
    ...i32c(7),
    ...op.shrU,
    ...i32c(4),
    ...op.shl,
    ...set(bytes),
    ...get(dst),
    ...get(n),
    ...get(bytes),
    ...op.mul,
    ...op.add,
    ...set(end),
    ...whileLt(dst, end, row),
  ];
  return fn(
    i8
      ? [
          [7, I32],
          [1, F32],
          [1, V128],
        ]
      : [[7, I32]],
    body,
  );
}

const F_DOT_F32 = 0;
const F_DOT_I8 = 1;

/**
 * Outer loop over rows: `out[j] = score(row r)` with r = j (contiguous) or r = idx[j].
 * Params: q, base, [scales], [idx], count, dims, out. `stride` is the bytes of a row.
 */
function rows(kind: 'f32' | 'i8', indexed: boolean): number[] {
  const params = ['q', 'base', ...(kind === 'i8' ? ['scales'] : []), ...(indexed ? ['idx'] : [])];
  params.push('count', 'dims', 'out');
  const at = (n: string) => params.indexOf(n);
  const [stride, end, row] = [params.length, params.length + 1, params.length + 2];
  const rowExpr = indexed ? [...get(at('idx')), ...op.i32Load(), ...set(row)] : [];
  const rowPtr = indexed
    ? [...get(at('base')), ...get(row), ...get(stride), ...op.mul, ...op.add]
    : get(at('base'));
  const score =
    kind === 'f32'
      ? [...get(at('q')), ...rowPtr, ...get(at('dims')), ...call(F_DOT_F32)]
      : [
          ...get(at('q')),
          ...rowPtr,
          ...get(at('dims')),
          ...call(F_DOT_I8),
          ...op.f32FromI32,
          ...get(at('scales')),
          ...(indexed ? [...get(row), ...i32c(2), ...op.shl, ...op.add] : []),
          ...op.f32Load(),
          ...op.f32Mul,
        ];
  const advance = indexed
    ? bump(at('idx'), i32c(4))
    : [...bump(at('base'), get(stride)), ...(kind === 'i8' ? bump(at('scales'), i32c(4)) : [])];
  const body = [
    ...get(at('dims')),
    ...(kind === 'f32' ? [...i32c(2), ...op.shl] : []),
    ...set(stride),
    ...get(at('out')),
    ...get(at('count')),
    ...i32c(2),
    ...op.shl,
    ...op.add,
    ...set(end),
    ...whileLt(at('out'), end, [
      ...rowExpr,
      ...get(at('out')),
      ...score,
      ...op.f32Store,
      ...advance,
      ...bump(at('out'), i32c(4)),
    ]),
  ];
  return fn([[3, I32]], body);
}

function fn(locals: [number, number][], body: number[]): number[] {
  const code = [...vec(locals.map(([n, t]) => [...uleb(n), t])), ...body, 0x0b];
  return [...uleb(code.length), ...code];
}

const funcType = (params: number, result?: number) => [
  0x60,
  ...vec(new Array<number[]>(params).fill([I32])),
  ...(result === undefined ? [0] : [1, result]),
];

/** Names of the exported kernels, in export order. */
export const KERNEL_EXPORTS = [
  'f32Rows',
  'f32Index',
  'i8Rows',
  'i8Index',
  'quantise',
  'hamRows',
  'hamIndex',
  'signs',
  'gather',
  // hammingFixed's, in FIXED_CODE_BLOCKS order
  'hamRows1',
  'hamRows2',
  'hamRows3',
  'hamRows4',
  'signs8',
] as const;

/** The kernel module's bytes (about 3.6 KB; a page's main thread compiles at most 4 KB at once). */
export function kernelModuleBytes(): Uint8Array<ArrayBuffer> {
  // Types: 0 (i32 x3) -> f32, 1 (i32 x3) -> i32, 2 (i32 x5), 3 (i32 x6), 4 (i32 x7),
  // 5 (i32 x5) -> i32
  const types = [
    funcType(3, F32),
    funcType(3, I32),
    funcType(5),
    funcType(6),
    funcType(7),
    funcType(5, I32),
  ];
  const funcs = [
    { type: 0, code: dotF32() },
    { type: 1, code: dotI8() },
    { type: 2, code: rows('f32', false) }, // f32Rows(q, base, n, dims, out)
    { type: 3, code: rows('f32', true) }, // f32Index(q, base, idx, m, dims, out)
    { type: 3, code: rows('i8', false) }, // i8Rows(q16, base, scales, n, dims, out)
    { type: 4, code: rows('i8', true) }, // i8Index(q16, base, scales, idx, m, dims, out)
    { type: 2, code: quantise() }, // quantise(src, dst, scales, n, dims)
    { type: 3, code: hamming(false) }, // hamRows(q, base, n, bytes, out, hist)
    { type: 4, code: hamming(true) }, // hamIndex(q, base, idx, m, bytes, out, hist)
    { type: 2, code: signs(false) }, // signs(src, centre, dst, n, dims)
    { type: 5, code: gather() }, // gather(dist, n, cut, atCut, out) -> count
    // hamRows<b>(q, base, n, bytes, out, hist), one per FIXED_CODE_BLOCKS
    ...FIXED_CODE_BLOCKS.map((b) => ({ type: 3, code: hammingFixed(b) })),
    { type: 3, code: signs(true) }, // signs8(src, scales, centre, dst, n, dims)
  ];
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(types)),
    // import env.memory: a memory with minimum 0 pages and no maximum
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 0x00]])),
    ...section(3, vec(funcs.map((f) => uleb(f.type)))),
    ...section(7, vec(KERNEL_EXPORTS.map((n, i) => [...name(n), 0x00, ...uleb(i + 2)]))),
    ...section(10, vec(funcs.map((f) => f.code))),
  ];
  return new Uint8Array(bytes);
}
