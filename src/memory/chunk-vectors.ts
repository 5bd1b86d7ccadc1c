// The in-memory vectors of the semantic index, packed in one kernel memory, with search: exact
// f32 scoring while small; from `quantiseFrom` rows an int8 first pass and exact f32 rescoring of
// the best candidates; from `signFrom` rows a sign-code pass before it, so that only its best
// candidates are scored in int8 (docs/search.md, "Two stages"); above the f32 budget only the
// int8 form (and the sign codes) stay in RAM, and the candidates keep their int8 cosines unless
// a `fetch` reads their f32 vectors (the chunk rows in IndexedDB).
import { createKernel, type DotKernel, type KernelKind } from './kernels/dot-kernel';
import { quantiseQuery } from './kernels/int8';
import { signCode, signCodeBytes, signCodesFit } from './kernels/signs';
import { selectTop } from './kernels/select';
import type { VectorIndexOptions } from './types';

export type ChunkVectorsOptions = Omit<VectorIndexOptions, 'compactFrom'>;

export interface VectorHit {
  id: number;
  similarity: number;
}

/** Reads the f32 vectors of chunk ids (undefined where a row is gone or of another model). */
export type FetchVectors = (ids: number[]) => Promise<(Float32Array | undefined)[]>;

export interface ChunkVectorsMemory {
  /** Bytes of vector data (f32, int8 codes, scales) in the kernel memory. */
  vectorBytes: number;
  /** The kernel memory in all (vectors, scores, scratch, headroom). */
  kernelBytes: number;
  /** Row metadata held in JS (ids, conversation ids). */
  metaBytes: number;
}

const DEFAULTS: Required<ChunkVectorsOptions> = {
  kernel: 'auto',
  quantiseFrom: 65_536,
  f32Budget: 256 * 2 ** 20,
  rescoreFactor: 4,
  minRescore: 64,
  rescoreFromRows: false,
  signFrom: 65_536,
  signShare: 0.005,
  signMin: 1024,
};
/** Most candidates one search rescores (k is capped at 1,000 by the tools). */
const CAND_MAX = 8192;
/** Most candidates the sign-code pass hands to the int8 pass. */
const SIGN_CAND_MAX = 65_536;
/**
 * The sign codes' centre is the mean of the rows held, taken again (and every code rewritten)
 * each time the rows double, until it rests on this many rows; then it stays.
 */
const CENTRE_ROWS = 4000;
/** Rows quantised per kernel call when f32 rows are not kept. */
const STAGE_ROWS = 4096;

const align = (n: number) => Math.ceil(n / 16) * 16;

interface Form {
  codes: boolean;
  f32: boolean;
  signs: boolean;
}

const sameForm = (a: Form, b: Form) =>
  a.codes === b.codes && a.f32 === b.f32 && a.signs === b.signs;

interface Layout {
  cap: number;
  codes: boolean;
  f32: boolean;
  signs: boolean;
  /** Bytes of one sign code. */
  signBytes: number;
  /** The query's sign code. */
  qSign: number;
  /** The sign codes' centre (dims f32), a copy of `ChunkVectors.centre` for the kernel. */
  centre: number;
  /** The sign pass's candidates (slots), SIGN_CAND_MAX int32 when signs are kept. */
  signCand: number;
  /** Counts of rows per Hamming distance (signBytes × 8 + 1 int32). */
  hist: number;
  q: number;
  q16: number;
  cand: number;
  candOut: number;
  /** Where f32 rows wait to be quantised when no f32 region exists. */
  stage: number;
  scores: number;
  idx: number;
  scales: number;
  signBase: number;
  codeBase: number;
  f32Base: number;
  end: number;
}

function layout(dims: number, cap: number, { codes, f32, signs }: Form): Layout {
  const signBytes = signs ? signCodeBytes(dims) : 0;
  const q = 0;
  const q16 = align(q + dims * 4);
  const qSign = align(q16 + dims * 2);
  const centre = align(qSign + signBytes);
  const cand = align(centre + (signs ? dims * 4 : 0));
  const candOut = cand + CAND_MAX * 4;
  const signCand = candOut + CAND_MAX * 4;
  const hist = signCand + (signs ? SIGN_CAND_MAX * 4 : 0);
  const stage = align(hist + (signs ? (signBytes * 8 + 1) * 4 : 0));
  const scores = align(stage + (f32 ? 0 : STAGE_ROWS * dims * 4));
  const idx = align(scores + cap * 4);
  const scales = align(idx + cap * 4);
  const signBase = align(scales + (codes ? cap * 4 : 0));
  const codeBase = align(signBase + cap * signBytes);
  const f32Base = align(codeBase + (codes ? cap * dims : 0));
  const end = align(f32Base + (f32 ? cap * dims * 4 : 0));
  return {
    ...{ cap, codes, f32, signs, signBytes, q, q16, qSign, centre, cand, candOut, signCand },
    ...{ hist, stage },
    ...{ scores, idx, scales, signBase, codeBase, f32Base, end },
  };
}

const SMALL: Form = { codes: false, f32: true, signs: false };

export class ChunkVectors {
  private readonly opts: Required<ChunkVectorsOptions>;
  private kernel: DotKernel;
  private lay: Layout;
  /** Chunk id per slot; NaN marks a dead slot. */
  private ids: Float64Array;
  /** Conversation id per slot; NaN for dead slots. */
  private convs: Float64Array;
  private readonly slotOf = new Map<number, number>();
  private used = 0;
  /** Slots removed since the last compaction (the sign pass takes their counts back out). */
  private deadSlots: number[] = [];
  /** The sign codes' centre (dims), and how many rows it is the mean of (0: not taken yet). */
  private centre: Float32Array;
  private centreRows = 0;

  constructor(
    readonly dims: number,
    options: ChunkVectorsOptions = {},
  ) {
    this.opts = { ...DEFAULTS, ...options };
    this.lay = layout(dims, 1024, SMALL);
    this.kernel = createKernel(this.lay.end, this.opts.kernel);
    this.ids = new Float64Array(this.lay.cap);
    this.convs = new Float64Array(this.lay.cap);
    this.centre = new Float32Array(dims);
  }

  /**
   * Changes how searches run from now on (`rescoreFactor`, `minRescore`, `signFrom` as a search
   * threshold, `signShare`, `signMin`); a form already taken stays. Returns the values it
   * replaced. Benchmarks compare the passes with it on one index.
   */
  tuneSearch(
    options: Pick<
      ChunkVectorsOptions,
      'rescoreFactor' | 'minRescore' | 'signShare' | 'signMin' | 'rescoreFromRows'
    > & {
      signFrom?: number;
    },
  ): Partial<ChunkVectorsOptions> {
    const before = Object.fromEntries(
      Object.keys(options).map((k) => [k, this.opts[k as keyof ChunkVectorsOptions]]),
    );
    Object.assign(this.opts, options);
    return before;
  }

  get kernelKind(): KernelKind {
    return this.kernel.kind;
  }

  /** Live rows. */
  get size(): number {
    return this.slotOf.size;
  }

  /**
   * Whether searches take the int8 first pass, whether a sign-code pass comes before it, and
   * whether f32 vectors stay in RAM.
   */
  get mode(): { quantised: boolean; signCodes: boolean; f32InMemory: boolean } {
    return { quantised: this.lay.codes, signCodes: this.lay.signs, f32InMemory: this.lay.f32 };
  }

  has(id: number): boolean {
    return this.slotOf.has(id);
  }

  /** The conversation of a live chunk, undefined when the index does not hold it. */
  conversationOf(id: number): number | undefined {
    const slot = this.slotOf.get(id);
    return slot === undefined ? undefined : this.convs[slot];
  }

  /**
   * The exact cosine of each id's vector with `query`, from the f32 vectors held in RAM;
   * undefined for an id not held, or when only the int8 form is held (above the f32 budget).
   */
  exactSimilarities(ids: readonly number[], query: Float32Array): (number | undefined)[] {
    const { dims, lay } = this;
    if (!lay.f32 || query.length !== dims) return ids.map(() => undefined);
    const f32 = new Float32Array(this.kernel.buffer, lay.f32Base, this.used * dims);
    return ids.map((id) => {
      const slot = this.slotOf.get(id);
      if (slot === undefined) return undefined;
      let s = 0;
      const base = slot * dims;
      for (let i = 0; i < dims; i++) s += query[i] * f32[base + i];
      return s;
    });
  }

  /**
   * Whether a search's cosines need the f32 vectors read from the rows: only the int8 form is
   * held and `rescoreFromRows` asks for exact cosines anyway.
   */
  get rescoresFromRows(): boolean {
    return !this.lay.f32 && this.opts.rescoreFromRows;
  }

  /**
   * The cosine of each id's vector with `query` from what RAM holds: exact from the f32
   * vectors, else (above the f32 budget) from the int8 codes, `scale × (query · codes)` with
   * the query in f32 (docs/search.md, "Two stages", gives its error); undefined for an id not
   * held.
   */
  similarities(ids: readonly number[], query: Float32Array): (number | undefined)[] {
    const { dims, lay } = this;
    if (lay.f32 || !lay.codes || query.length !== dims) return this.exactSimilarities(ids, query);
    const codes = new Int8Array(this.kernel.buffer, lay.codeBase, this.used * dims);
    const scales = new Float32Array(this.kernel.buffer, lay.scales, this.used);
    return ids.map((id) => {
      const slot = this.slotOf.get(id);
      if (slot === undefined) return undefined;
      let s = 0;
      const base = slot * dims;
      for (let i = 0; i < dims; i++) s += query[i] * codes[base + i];
      return s * scales[slot];
    });
  }

  /**
   * Adds `factor ×` the vector of `id` to `into` (dims long): the f32 one, else the int8 one
   * (`scale × codes`). False, and nothing added, for an id not held.
   */
  addVectorTo(id: number, into: Float64Array, factor: number): boolean {
    const { dims, lay } = this;
    const slot = this.slotOf.get(id);
    if (slot === undefined || into.length < dims) return false;
    const base = slot * dims;
    if (lay.f32) {
      const f32 = new Float32Array(this.kernel.buffer, lay.f32Base, this.used * dims);
      for (let i = 0; i < dims; i++) into[i] += factor * f32[base + i];
      return true;
    }
    if (!lay.codes) return false;
    const codes = new Int8Array(this.kernel.buffer, lay.codeBase, this.used * dims);
    const scale = factor * new Float32Array(this.kernel.buffer, lay.scales, this.used)[slot];
    for (let i = 0; i < dims; i++) into[i] += scale * codes[base + i];
    return true;
  }

  /** Every live chunk id (for reconciling with the store). */
  liveIds(): number[] {
    return [...this.slotOf.keys()];
  }

  memory(): ChunkVectorsMemory {
    const { cap, codes, f32, signBytes } = this.lay;
    return {
      vectorBytes:
        (codes ? cap * (this.dims + 4) : 0) + (f32 ? cap * this.dims * 4 : 0) + cap * signBytes,
      kernelBytes: this.kernel.buffer.byteLength,
      metaBytes: this.ids.byteLength + this.convs.byteLength,
    };
  }

  /**
   * Makes room for `rows` rows in all, choosing the storage form for that size up front; with
   * `f32: false` the int8 form alone from now on (until `clear`), as above the f32 budget: a
   * cold start that loads int8 rows (`addCodes`).
   */
  reserve(rows: number, { f32 = true }: { f32?: boolean } = {}): void {
    const want = this.used + Math.max(0, rows - this.size);
    const form = this.formFor(rows, f32);
    if (want > this.lay.cap || !sameForm(form, this.lay)) this.relayout(want, form);
  }

  /** Adds one vector; false when the id is already indexed or the length is wrong. */
  add(id: number, conversationId: number, vector: Float32Array): boolean {
    return this.addMany([id], [conversationId], vector) === 1;
  }

  /**
   * Adds `ids.length` vectors packed in `vectors` (a shard), skipping ids already indexed.
   * Returns how many were added (0 when the lengths do not match).
   */
  addMany(ids: ArrayLike<number>, convs: ArrayLike<number>, vectors: Float32Array): number {
    const n = ids.length;
    const { dims } = this;
    if (!n || convs.length !== n || vectors.length !== n * dims) return 0;
    this.makeRoom(n);
    const first = this.used;
    const take = this.claimSlots(ids, convs);
    const rowOf = (j: number) => vectors.subarray(take[j] * dims, (take[j] + 1) * dims);
    const whole = take.length === n;
    const { lay, kernel } = this;
    if (lay.f32) {
      const f32 = new Float32Array(kernel.buffer, lay.f32Base, lay.cap * dims);
      if (whole) f32.set(vectors, first * dims);
      else for (let j = 0; j < take.length; j++) f32.set(rowOf(j), (first + j) * dims);
      if (lay.codes) {
        kernel.quantise(
          lay.f32Base + first * dims * 4,
          lay.codeBase + first * dims,
          lay.scales + first * 4,
          take.length,
          dims,
        );
      }
    } else {
      this.quantiseVia(
        (j0, count, stage) => {
          if (whole) stage.set(vectors.subarray(j0 * dims, (j0 + count) * dims));
          else for (let j = 0; j < count; j++) stage.set(rowOf(j0 + j), j * dims);
        },
        first,
        take.length,
      );
    }
    // Sign codes: written by quantiseVia in the int8-only form; here from the f32 rows.
    if (this.lay.signs) {
      if (this.centreRows < CENTRE_ROWS && this.size >= 2 * this.centreRows) this.recentre();
      else if (this.lay.f32) this.encodeSigns(first, first + take.length);
    }
    return take.length;
  }

  /** Room for `n` more rows, in the form for the size they make. */
  private makeRoom(n: number): void {
    const form = this.formFor(this.size + n);
    if (this.used + n <= this.lay.cap && sameForm(form, this.lay)) return;
    let cap = Math.max(this.used + n, Math.ceil(this.lay.cap * 1.5));
    // Headroom must not push the f32 vectors past their budget.
    if (form.f32) cap = Math.max(this.used + n, Math.min(cap, this.f32Rows()));
    this.relayout(cap, form);
  }

  /**
   * Gives each id not yet indexed the next slot (with its conversation); returns their
   * positions in `ids`, in order. Their vectors go in at the slots from `used` before the call.
   */
  private claimSlots(ids: ArrayLike<number>, convs: ArrayLike<number>): number[] {
    const take: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (this.slotOf.has(id)) continue;
      const slot = this.used++;
      this.ids[slot] = id;
      this.convs[slot] = convs[i];
      this.slotOf.set(id, slot);
      take.push(i);
    }
    return take;
  }

  /**
   * Adds rows given in int8 (`codes`, `count × dims`, and one scale each, as `quantiseRow`
   * makes them: a shard's int8 part), skipping ids already indexed; only in the int8 form
   * (`reserve(…, { f32: false })`). Returns how many were added (0 when the lengths do not match
   * or f32 vectors are kept).
   */
  addCodes(
    ids: ArrayLike<number>,
    convs: ArrayLike<number>,
    codes: Int8Array,
    scales: Float32Array,
  ): number {
    const n = ids.length;
    const { dims } = this;
    if (!n || this.lay.f32 || convs.length !== n || codes.length !== n * dims) return 0;
    if (scales.length !== n) return 0;
    this.makeRoom(n);
    const first = this.used;
    const take = this.claimSlots(ids, convs);
    const { lay } = this;
    const buf = this.kernel.buffer;
    const codeMem = new Int8Array(buf, lay.codeBase, lay.cap * dims);
    const scaleMem = new Float32Array(buf, lay.scales, lay.cap);
    if (take.length === n) {
      codeMem.set(codes, first * dims);
      scaleMem.set(scales, first);
    } else {
      take.forEach((i, j) => {
        codeMem.set(codes.subarray(i * dims, (i + 1) * dims), (first + j) * dims);
        scaleMem[first + j] = scales[i];
      });
    }
    if (this.lay.signs) {
      if (this.centreRows < CENTRE_ROWS && this.size >= 2 * this.centreRows) this.recentre();
      else this.encodeSigns(first, this.used);
    }
    return this.used - first;
  }

  /**
   * Takes the mean of the live rows as the sign codes' centre and rewrites every code from the
   * rows in RAM (f32, else int8).
   */
  private recentre(): void {
    const { dims, lay } = this;
    const buf = this.kernel.buffer;
    const f32 = lay.f32 ? new Float32Array(buf, lay.f32Base, this.used * dims) : null;
    const i8 = new Int8Array(buf, lay.codeBase, lay.codes ? this.used * dims : 0);
    const scales = new Float32Array(buf, lay.scales, lay.codes ? this.used : 0);
    const sum = new Float64Array(dims);
    let live = 0;
    for (let s = 0; s < this.used; s++) {
      if (this.ids[s] !== this.ids[s]) continue;
      live++;
      const at = s * dims;
      if (f32) for (let i = 0; i < dims; i++) sum[i] += f32[at + i];
      else for (let i = 0; i < dims; i++) sum[i] += i8[at + i] * scales[s];
    }
    for (let i = 0; i < dims; i++) this.centre[i] = live ? sum[i] / live : 0;
    new Float32Array(buf, lay.centre, dims).set(this.centre);
    this.centreRows = live;
    this.encodeSigns(0, this.used);
  }

  /** Writes the sign codes of slots `from..to-1` from the rows in RAM (f32, else int8). */
  private encodeSigns(from: number, to: number): void {
    const { dims, lay } = this;
    if (lay.f32) {
      const at = lay.f32Base + from * dims * 4;
      this.kernel.signs(at, lay.centre, lay.signBase + from * lay.signBytes, to - from, dims);
      return;
    }
    this.kernel.signs8(
      lay.codeBase + from * dims,
      lay.scales + from * 4,
      lay.centre,
      lay.signBase + from * lay.signBytes,
      to - from,
      dims,
    );
  }

  /**
   * Quantises `count` rows into slots `first..` through the stage (int8-only form): `fill`
   * writes rows `j0..j0+n-1` of the source into the stage.
   */
  private quantiseVia(
    fill: (j0: number, n: number, stage: Float32Array) => void,
    first: number,
    count: number,
  ): void {
    const { lay, kernel, dims } = this;
    const stage = new Float32Array(kernel.buffer, lay.stage, STAGE_ROWS * dims);
    for (let j0 = 0; j0 < count; j0 += STAGE_ROWS) {
      const n = Math.min(STAGE_ROWS, count - j0);
      fill(j0, n, stage);
      const at = first + j0;
      kernel.quantise(lay.stage, lay.codeBase + at * dims, lay.scales + at * 4, n, dims);
      if (lay.signs)
        kernel.signs(lay.stage, lay.centre, lay.signBase + at * lay.signBytes, n, dims);
    }
  }

  /** Removes a row; compacts when more than half of the slots are dead. */
  remove(id: number): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.slotOf.delete(id);
    this.deadSlots.push(slot);
    this.ids[slot] = NaN;
    this.convs[slot] = NaN;
    const dead = this.used - this.slotOf.size;
    if (dead > 1024 && dead * 2 > this.used) this.compact();
  }

  clear(): void {
    this.slotOf.clear();
    this.used = 0;
    this.deadSlots = [];
    this.centre.fill(0);
    this.centreRows = 0;
    this.lay = layout(this.dims, 1024, SMALL);
    this.kernel = createKernel(this.lay.end, this.opts.kernel);
    this.ids = new Float64Array(this.lay.cap);
    this.convs = new Float64Array(this.lay.cap);
  }

  /**
   * The `k` rows most similar to `query` (of one conversation, or of all with `null`), best
   * first, with exact f32 cosines when f32 vectors are in RAM or `fetch` is given, else with
   * their int8 cosines (ranked by them).
   */
  async search(
    conversationId: number | null,
    query: Float32Array,
    k: number,
    fetch?: FetchVectors,
  ): Promise<VectorHit[]> {
    if (query.length !== this.dims || k <= 0 || this.slotOf.size === 0) return [];
    const { kernel, dims } = this;
    const lay = this.lay;
    new Float32Array(kernel.buffer, lay.q, dims).set(query);
    let m = this.used;
    let gathered: Int32Array | null = null;
    if (conversationId !== null) {
      gathered = new Int32Array(kernel.buffer, lay.idx, this.used);
      const convs = this.convs;
      m = 0;
      for (let s = 0; s < this.used; s++) if (convs[s] === conversationId) gathered[m++] = s;
      if (m === 0) return [];
    }
    const skip = gathered ? undefined : this.ids;
    const slotAt = (j: number) => (gathered ? gathered[j] : j);

    if (!lay.codes) {
      if (gathered) kernel.f32Index(lay.q, lay.f32Base, lay.idx, m, dims, lay.scores);
      else kernel.f32Rows(lay.q, lay.f32Base, m, dims, lay.scores);
      const scores = new Float32Array(kernel.buffer, lay.scores, m);
      return [...selectTop(scores, m, k, skip)].map((j) => ({
        id: this.ids[slotAt(j)],
        similarity: scores[j],
      }));
    }

    const qScale = quantiseQuery(query, new Int16Array(kernel.buffer, lay.q16, dims));
    const want = Math.min(CAND_MAX, Math.max(k * this.opts.rescoreFactor, this.opts.minRescore));
    let approx: Float32Array;
    let top: Int32Array;
    let slots: Int32Array;
    if (lay.signs && m >= this.opts.signFrom) {
      // Sign codes first: the int8 pass scores only their best candidates.
      const cand = this.signCandidates(query, m, gathered, Math.max(want, this.signShare(m)));
      kernel.i8Index(lay.q16, lay.codeBase, lay.scales, lay.signCand, cand, dims, lay.scores);
      approx = new Float32Array(kernel.buffer, lay.scores, cand);
      top = selectTop(approx, cand, want);
      const candSlots = new Int32Array(kernel.buffer, lay.signCand, cand);
      slots = Int32Array.from(top, (j) => candSlots[j]);
    } else {
      if (gathered) kernel.i8Index(lay.q16, lay.codeBase, lay.scales, lay.idx, m, dims, lay.scores);
      else kernel.i8Rows(lay.q16, lay.codeBase, lay.scales, m, dims, lay.scores);
      approx = new Float32Array(kernel.buffer, lay.scores, m);
      top = selectTop(approx, m, want, skip);
      slots = Int32Array.from(top, slotAt);
    }

    if (lay.f32) {
      new Int32Array(kernel.buffer, lay.cand, slots.length).set(slots);
      kernel.f32Index(lay.q, lay.f32Base, lay.cand, slots.length, dims, lay.candOut);
      const exact = new Float32Array(kernel.buffer, lay.candOut, slots.length);
      return [...selectTop(exact, slots.length, k)].map((j) => ({
        id: this.ids[slots[j]],
        similarity: exact[j],
      }));
    }

    const ids = Array.from(slots, (s) => this.ids[s]);
    if (!fetch) {
      return ids.slice(0, k).map((id, j) => ({ id, similarity: approx[top[j]] * qScale }));
    }
    // The index may change while the rows are read; from here on only ids are used.
    const vectors = await fetch(ids);
    const exact = new Float32Array(ids.length).fill(NaN);
    vectors.forEach((v, j) => {
      if (v && v.length === dims) exact[j] = dotF32(query, v);
    });
    return [...selectTop(exact, ids.length, k)].map((j) => ({ id: ids[j], similarity: exact[j] }));
  }

  /** How many candidates the sign pass keeps of `m` rows searched. */
  private signShare(m: number): number {
    return Math.min(SIGN_CAND_MAX, Math.max(this.opts.signMin, Math.ceil(m * this.opts.signShare)));
  }

  /**
   * The sign-code pass: the `want` live rows (of all, or of `gathered`'s `m` slots) nearest the
   * query's sign code by Hamming distance, written as slots at `signCand`; returns how many
   * (fewer when fewer rows live). Ties at the cut keep the lower slots.
   */
  private signCandidates(
    query: Float32Array,
    m: number,
    gathered: Int32Array | null,
    want: number,
  ): number {
    const { kernel, lay, ids } = this;
    const buf = kernel.buffer;
    signCode(query, this.centre, new Uint8Array(buf), lay.qSign);
    const hist = new Int32Array(buf, lay.hist, lay.signBytes * 8 + 1).fill(0);
    const { qSign, signBase, signBytes, scores } = lay;
    if (gathered) kernel.hamIndex(qSign, signBase, lay.idx, m, signBytes, scores, lay.hist);
    else kernel.hamRows(qSign, signBase, m, signBytes, scores, lay.hist);
    const dist = new Int32Array(buf, scores, m);
    // Gathered slots are live; otherwise the dead slots' counts come back out.
    if (!gathered) for (const s of this.deadSlots) hist[dist[s]]--;
    let cut = 0;
    let below = 0;
    while (cut < hist.length && below + hist[cut] <= want) below += hist[cut++];
    // Every row nearer than `cut`, then rows at `cut` until `want`.
    const n = kernel.gather(scores, m, cut, want - below, lay.signCand);
    const out = new Int32Array(buf, lay.signCand, n);
    let live = 0;
    for (let i = 0; i < n; i++) {
      const s = gathered ? gathered[out[i]] : out[i];
      if (ids[s] === ids[s]) out[live++] = s;
    }
    return live;
  }

  // ---- storage ----------------------------------------------------------------------------

  /** Rows of f32 vectors the budget allows. */
  private f32Rows(): number {
    return Math.floor(this.opts.f32Budget / (this.dims * 4));
  }

  /**
   * The storage form for `rows` live rows. Both switches only go one way (until `clear`), so
   * an index that shrinks again does not flip back and forth.
   */
  private formFor(rows: number, keepF32 = true): Form {
    const f32 = keepF32 && this.lay.f32 && rows <= this.f32Rows();
    const signs = this.lay.signs || (rows >= this.opts.signFrom && signCodesFit(this.dims));
    const codes = this.lay.codes || rows >= this.opts.quantiseFrom || !f32 || signs;
    return { codes, f32, signs };
  }

  /**
   * Moves to a layout of capacity `rows` (at least) in the form for that size: in place while
   * only growing, into a fresh memory when f32 vectors are dropped (a memory cannot shrink).
   */
  private relayout(rows: number, form: Form): void {
    const { codes, f32, signs } = form;
    const old = this.lay;
    const cap = Math.max(rows, 1024);
    const next = layout(this.dims, cap, form);
    const { dims } = this;
    if (old.f32 && !f32) {
      // Into a fresh memory, int8 only: quantise from the old f32 rows if there were no codes.
      const kernel = createKernel(next.end, this.opts.kernel);
      const oldBuf = this.kernel.buffer;
      if (old.codes) {
        new Uint8Array(kernel.buffer, next.scales, this.used * 4).set(
          new Uint8Array(oldBuf, old.scales, this.used * 4),
        );
        new Uint8Array(kernel.buffer, next.codeBase, this.used * dims).set(
          new Uint8Array(oldBuf, old.codeBase, this.used * dims),
        );
        if (old.signs) {
          new Uint8Array(kernel.buffer, next.signBase, this.used * next.signBytes).set(
            new Uint8Array(oldBuf, old.signBase, this.used * old.signBytes),
          );
        }
        this.kernel = kernel;
        this.lay = next;
      } else {
        const src = new Float32Array(oldBuf, old.f32Base, this.used * dims);
        this.kernel = kernel;
        this.lay = next;
        this.quantiseVia(
          (j0, n, stage) => stage.set(src.subarray(j0 * dims, (j0 + n) * dims)),
          0,
          this.used,
        );
      }
    } else {
      this.kernel.grow(next.end);
      const bytes = new Uint8Array(this.kernel.buffer);
      // Regions only move up, so moving the last one first never overwrites live data.
      if (old.f32 && f32)
        bytes.copyWithin(next.f32Base, old.f32Base, old.f32Base + this.used * dims * 4);
      if (old.codes) bytes.copyWithin(next.codeBase, old.codeBase, old.codeBase + this.used * dims);
      if (old.signs) {
        bytes.copyWithin(next.signBase, old.signBase, old.signBase + this.used * old.signBytes);
      }
      if (old.codes) bytes.copyWithin(next.scales, old.scales, old.scales + this.used * 4);
      else if (codes)
        this.kernel.quantise(next.f32Base, next.codeBase, next.scales, this.used, dims);
      this.lay = next;
    }
    if (signs) new Float32Array(this.kernel.buffer, this.lay.centre, dims).set(this.centre);
    // Codes for the rows held when the sign pass starts (and its centre, while few rows).
    if (signs && !old.signs) this.recentre();
    const ids = new Float64Array(cap);
    ids.set(this.ids.subarray(0, this.used));
    const convs = new Float64Array(cap);
    convs.set(this.convs.subarray(0, this.used));
    this.ids = ids;
    this.convs = convs;
  }

  /** Moves live rows down over dead slots, in place. */
  private compact(): void {
    const { lay, dims } = this;
    const bytes = new Uint8Array(this.kernel.buffer);
    let w = 0;
    for (let s = 0; s < this.used; s++) {
      const id = this.ids[s];
      if (id !== id) continue;
      if (w !== s) {
        if (lay.f32) {
          bytes.copyWithin(
            lay.f32Base + w * dims * 4,
            lay.f32Base + s * dims * 4,
            lay.f32Base + (s + 1) * dims * 4,
          );
        }
        if (lay.codes) {
          bytes.copyWithin(
            lay.codeBase + w * dims,
            lay.codeBase + s * dims,
            lay.codeBase + (s + 1) * dims,
          );
          bytes.copyWithin(lay.scales + w * 4, lay.scales + s * 4, lay.scales + (s + 1) * 4);
        }
        if (lay.signs) {
          const b = lay.signBytes;
          bytes.copyWithin(lay.signBase + w * b, lay.signBase + s * b, lay.signBase + (s + 1) * b);
        }
        this.ids[w] = id;
        this.convs[w] = this.convs[s];
        this.slotOf.set(id, w);
      }
      w++;
    }
    this.used = w;
    this.deadSlots = [];
  }
}

function dotF32(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return Math.fround(s);
}
