// The benchmark workloads, shared by the Node runner and the browser worker: filling a database
// with synthetic 384-d chunks and synthetic sentences (rows and shards), the query benchmark
// (project vs the plain JS loop, with recall@10), the fused chunk search (lexical + vector, as
// searchChunks runs it) with its parts and MiniSearch as the lexical baseline, cold loads
// (shards vs one row per chunk), read-all-rows-per-query, and the synthetic embedder for saves.
import type { Table } from 'dexie';
import MiniSearch from 'minisearch';
import type { Embedder, ModelInfo } from '../../src/embeddings/types';
import { ChunkVectors, type FetchVectors } from '../../src/memory/chunk-vectors';
import { shardTables, type MemoryDB } from '../../src/memory/db';
import { Bm25Index } from '../../src/memory/lexical/bm25-index';
import { tokenize } from '../../src/memory/lexical/tokenize';
import { dotRow, topK } from '../../src/memory/scoring';
import type { Signals } from '../../src/memory/ranking';
import { rankChunks, searchChunkIndex } from '../../src/memory/search';
import { SemanticIndex } from '../../src/memory/semantic-index';
import {
  SHARD_SPAN,
  eachShard,
  packShard,
  putPiece,
  readHeads,
  shardVectorCount,
  type ChunkShard,
} from '../../src/memory/shards';
import type { Chunk, VectorIndexOptions } from '../../src/memory/types';
import { PackedVectors } from '../../src/memory/vector-store';
import { SyntheticVectors, recall } from '../synthetic';
import { SyntheticText } from './text';

export const BENCH_MODEL: ModelInfo = {
  id: 'bench/synthetic-384',
  dims: 384,
  threshold: 0.3,
  bundled: false,
};

const now = () => performance.now();

let text: SyntheticText | null = null;
/** The synthetic sentences of the chunks: chunk id i holds `benchText().sentence(i - 1)`. */
export const benchText = () => (text ??= new SyntheticText());

/** Chunk row `id` as the benchmarks store it: its synthetic sentence and the given vector. */
export function chunkRow(
  id: number,
  conversationId: number,
  embedding: Float32Array,
  withText = true,
): Chunk {
  const sentence = withText ? benchText().sentence(id - 1) : '';
  return {
    id,
    conversationId,
    turnId: Math.ceil(id / 8),
    sentenceId: (id - 1) % 8,
    role: id % 2 ? 'user' : 'assistant',
    text: sentence,
    tokenCount: Math.ceil(sentence.length / 4),
    embedding,
    model: BENCH_MODEL.id,
    time: new Date(1_700_000_000_000 + id * 1000),
  };
}

export interface FillOptions {
  /** Also write the packed shards (as the engine does). */
  shards: boolean;
  /**
   * Without their compact parts (default with): pieces as database version 2 wrote them, which a
   * cold start reads whole before it answers.
   */
  heads?: boolean;
  /** Conversation of row i (1-based id). Default: all in conversation 1. */
  conversationOf?: (id: number) => number;
  /** Sees each batch of vectors as it is written (ids `first..first+count-1`). */
  onBatch?: (first: number, vectors: Float32Array) => void;
}

/**
 * Writes chunk rows 1..n (vector i = `gen.row(i - 1)`) in transactions of SHARD_SPAN rows, each
 * with its shard when asked. Returns the milliseconds spent in the database.
 */
export async function fillChunks(
  db: MemoryDB,
  gen: SyntheticVectors,
  n: number,
  opts: FillOptions,
): Promise<number> {
  const dims = gen.spec.dims;
  const conv = opts.conversationOf ?? (() => 1);
  let spent = 0;
  // Ids start at 1, ranges at multiples of SHARD_SPAN: the first batch is one short.
  for (let first = 1; first <= n;) {
    const count = Math.min(n - first + 1, SHARD_SPAN - (first % SHARD_SPAN));
    const vectors = gen.rows(first - 1, count);
    opts.onBatch?.(first, vectors);
    const rows = Array.from({ length: count }, (_, i) =>
      chunkRow(first + i, conv(first + i), vectors.slice(i * dims, (i + 1) * dims)),
    );
    const t0 = now();
    await db.transaction('rw', [db.chunks, ...shardTables(db)], async () => {
      await db.chunks.bulkAdd(rows);
      if (opts.shards) {
        await putPiece(
          opts.heads === false ? { shards: db.shards } : db,
          packShard(BENCH_MODEL.id, Math.floor(first / SHARD_SPAN), rows),
        );
      }
    });
    spent += now() - t0;
    first += count;
  }
  return spent;
}

export interface ColdLoad {
  /** Until the index is exact (every vector in). */
  ms: number;
  /** Until the first fused search (k = 10) has answered, from the compact parts when stored. */
  firstMs: number;
  /** Whether that first search was exact. */
  firstExact: boolean;
  chunks: number;
}

/**
 * Cold load as the project does it: the semantic index from the shards, with a fused search
 * (`query`, `vector`) as soon as `load()` resolves, as a page would run it.
 */
export async function coldLoadShards(
  db: MemoryDB,
  query: string,
  vector: Float32Array,
): Promise<ColdLoad> {
  const t0 = now();
  const idx = new SemanticIndex(db, BENCH_MODEL.id, BENCH_MODEL.dims);
  await idx.load();
  const firstExact = idx.exact;
  const q = { text: query, vector, info: BENCH_MODEL };
  const hits = await searchChunkIndex(db.chunks, idx, null, q, 10, 0, Date.now());
  if (!hits.length) throw new Error('the first search during a cold load found nothing');
  const firstMs = now() - t0;
  await idx.whenExact();
  return { ms: now() - t0, firstMs, firstExact, chunks: idx.size };
}

/** The steps of a cold load, timed one by one (a development aid). */
export async function coldLoadBreakdown(db: MemoryDB): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let t = now();
  const lap = (k: string) => {
    out[k] = Math.round(now() - t);
    t = now();
  };
  await db.chunks.where('model').equals(BENCH_MODEL.id).reverse().limit(1).primaryKeys();
  lap('newest_row');
  const heads = await readHeads(db, BENCH_MODEL.id);
  lap('read_compact_parts');
  const fromHeads = new Bm25Index();
  fromHeads.addPackedMany(
    (heads ?? []).map((h) => ({
      keys: h.ids,
      groups: h.conversations,
      parents: h.turns,
      packed: h.words,
    })),
  );
  lap('build_words_from_compact_parts');
  const n = await shardVectorCount(db, BENCH_MODEL.id);
  lap('count_shards');
  const shards: ChunkShard[] = [];
  await eachShard(db, BENCH_MODEL.id, (s) => shards.push(s), { whole: false });
  lap('read_vector_rows');
  const cv = new ChunkVectors(BENCH_MODEL.dims);
  cv.reserve(n);
  for (const s of shards) cv.addMany(s.ids, s.conversations, s.vectors);
  lap('build_vectors');
  // The same without sign codes: what they add to a load.
  const plain = new ChunkVectors(BENCH_MODEL.dims, { signFrom: Infinity });
  plain.reserve(n);
  for (const s of shards) plain.addMany(s.ids, s.conversations, s.vectors);
  lap('build_vectors_without_sign_codes');
  // The int8 path a load takes when every piece has its int8 part (shardCodes).
  const codes = (await db.shardCodes.bulkGet((heads ?? []).map((h) => h.id))).filter(
    (c) => c !== undefined,
  );
  lap('read_int8_rows');
  if (heads && codes.length === heads.length) {
    const fill = (opts: VectorIndexOptions) => {
      const v = new ChunkVectors(BENCH_MODEL.dims, opts);
      v.reserve(n, { f32: false });
      heads.forEach((h, i) => v.addCodes(h.ids, h.conversations, codes[i].codes, codes[i].scales));
    };
    fill({});
    lap('build_int8_vectors');
    fill({ signFrom: Infinity });
    lap('build_int8_vectors_without_sign_codes');
  }
  await db.chunks.where('model').equals(BENCH_MODEL.id).count();
  lap('count_rows_for_the_background_check');
  return out;
}

/**
 * Cold load as before shards: every chunk row of the model read, by key in pages of 4096 (the
 * engine used a cursor over the model index, which fake-indexeddb walks in quadratic time), and
 * appended to one packed array.
 */
export async function coldLoadRows(db: MemoryDB): Promise<{ ms: number; chunks: number }> {
  const t0 = now();
  const packed = new PackedVectors(BENCH_MODEL.dims, 1024);
  let chunks = 0;
  const keys = await db.chunks.where('model').equals(BENCH_MODEL.id).primaryKeys();
  for (let i = 0; i < keys.length; i += 4096) {
    for (const c of await db.chunks.bulkGet(keys.slice(i, i + 4096))) {
      if (!c) continue;
      packed.append([c.embedding]);
      chunks++;
    }
  }
  return { ms: now() - t0, chunks };
}

/** The peer design: every row read from IndexedDB on each query, then scored in JS. */
export async function readAllRowsQuery(db: MemoryDB, q: Float32Array, k = 10): Promise<number> {
  const t0 = now();
  const rows = await db.chunks.where('model').equals(BENCH_MODEL.id).toArray();
  const scores = new Float32Array(rows.length);
  for (let i = 0; i < rows.length; i++) scores[i] = dotRow(q, rows[i].embedding, 0, q.length);
  topK(scores, k);
  return now() - t0;
}

export interface QueryBenchOptions {
  n: number;
  gen: SyntheticVectors;
  queries: number;
  warmup?: number;
  k?: number;
  /**
   * Reads f32 vectors for rescoring when the index keeps only the compact form; 'in-process'
   * copies them from the baseline's array (a stand-in for IndexedDB where there is none).
   */
  fetch?: FetchVectors | 'in-process';
  vectorIndex?: VectorIndexOptions;
  /** Writes each generated batch somewhere (the browser's 1M rows for rescoring). */
  sink?: (first: number, vectors: Float32Array) => Promise<void>;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface QueryBenchResult {
  n: number;
  project: number[];
  baseline: number[];
  recall: number[];
  /** Recall@10 of the first passes (sign codes, int8) without f32 rescoring (compact form only). */
  recallApprox: number[];
  mode: { quantised: boolean; signCodes: boolean; f32InMemory: boolean };
  kernel: string;
  vectorMb: number;
  kernelMb: number;
  metaMb: number;
  /** What the baseline (one packed f32 array) holds. */
  baselineMb: number;
  buildMs: number;
  sinkMs: number;
}

/**
 * Query latency of the project's index (search over every chunk, k = 10) against the plain JS
 * loop over one packed Float32Array (dotRow + topK, what the engine did before), alternating per
 * query, with recall@10 of the project's hits against the loop's exact top 10.
 */
export async function benchQueries(o: QueryBenchOptions): Promise<QueryBenchResult> {
  const { n, gen } = o;
  const dims = gen.spec.dims;
  const k = o.k ?? 10;
  const t0 = now();
  const data = new Float32Array(n * dims);
  const cv = new ChunkVectors(dims, o.vectorIndex);
  cv.reserve(n);
  let sinkMs = 0;
  const BATCH = 16_384;
  for (let first = 0; first < n; first += BATCH) {
    const count = Math.min(BATCH, n - first);
    const vectors = data.subarray(first * dims, (first + count) * dims);
    gen.rows(first, count, vectors);
    for (let i = 0; i < count; i++) {
      cv.add(first + i + 1, (first + i) % 1000, vectors.subarray(i * dims, (i + 1) * dims));
    }
    if (o.sink) {
      const s0 = now();
      await o.sink(first + 1, vectors);
      sinkMs += now() - s0;
    }
    if (first % (BATCH * 16) === 0) o.log?.(`  ${n}: ${first + count} rows`);
  }
  const buildMs = now() - t0 - sinkMs;
  const scores = new Float32Array(n);
  const loop = (q: Float32Array) => {
    for (let r = 0; r < n; r++) scores[r] = dotRow(q, data, r, dims);
    return topK(scores, k);
  };
  const out: QueryBenchResult = {
    n,
    project: [],
    baseline: [],
    recall: [],
    recallApprox: [],
    mode: cv.mode,
    kernel: cv.kernelKind,
    vectorMb: cv.memory().vectorBytes / 2 ** 20,
    kernelMb: cv.memory().kernelBytes / 2 ** 20,
    metaMb: cv.memory().metaBytes / 2 ** 20,
    baselineMb: data.byteLength / 2 ** 20,
    buildMs,
    sinkMs,
  };
  const fetch: FetchVectors | undefined =
    o.fetch === 'in-process'
      ? async (ids) => ids.map((id) => data.slice((id - 1) * dims, id * dims))
      : o.fetch;
  const warm = o.warmup ?? 3;
  for (let i = 0; i < warm + o.queries; i++) {
    const q = gen.query(i);
    const a = now();
    const hits = await cv.search(null, q, k, fetch);
    const b = now();
    const exact = loop(q);
    const c = now();
    if (i < warm) continue;
    out.project.push(b - a);
    out.baseline.push(c - b);
    out.recall.push(
      recall(
        hits.map((h) => h.id - 1),
        exact,
      ),
    );
    if (!cv.mode.f32InMemory) {
      const approx = await cv.search(null, q, k); // no fetch: the int8 scores of the first passes
      out.recallApprox.push(
        recall(
          approx.map((h) => h.id - 1),
          exact,
        ),
      );
    }
  }
  return out;
}

/** A 384-d "model" whose vectors come from the synthetic generator: a text maps to a query. */
export function syntheticEmbedder(gen: SyntheticVectors): Embedder {
  const hash = (s: string) => {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  };
  return {
    ready: async () => ({ ...BENCH_MODEL }),
    embed: async (texts) => texts.map((t) => gen.query(hash(t))),
    dispose: async () => undefined,
  };
}

export { SyntheticVectors };

const WORDS = (
  'project goal schema window sync budget meeting travel recipe garden music code plan ' +
  'tomato basil editor theme morning plumber monday database index table path memory ' +
  'family holiday train ticket doctor appointment running shoes coffee bread weekend'
).split(' ');

/** `turns` messages of `perTurn` sentences each, varied enough that embeddings differ. */
export function ingestTexts(turns: number, perTurn: number): string[] {
  return Array.from({ length: turns }, (_, t) =>
    Array.from({ length: perTurn }, (_, s) => {
      const w = (k: number) => WORDS[(t * 7 + s * 13 + k * 29) % WORDS.length];
      return `The ${w(0)} ${w(1)} needs a ${w(2)} before the ${w(3)} on turn ${t} part ${s}.`;
    }).join(' '),
  );
}

/**
 * A turn recorded the way the engine did before shards: sentences embedded, then the
 * conversation touched, the message and one chunk row per sentence in one transaction (the
 * ingest baseline).
 */
export async function legacyRecordTurn(
  db: MemoryDB,
  embedder: Embedder,
  conversationId: number,
  text: string,
  split: (text: string) => string[],
): Promise<number> {
  const sentences = split(text);
  const [info, vectors] = await Promise.all([embedder.ready(), embedder.embed(sentences)]);
  const at = new Date();
  await db.transaction('rw', db.conversations, db.messages, db.chunks, async () => {
    if (await db.conversations.get(conversationId)) {
      await db.conversations.update(conversationId, { modified: at });
    } else {
      await db.conversations.put({ id: conversationId, title: 'Bench', created: at, modified: at });
    }
    const turnId = await db.messages.add({ conversationId, role: 'user', text, time: at });
    await db.chunks.bulkAdd(
      sentences.map((s, i) => ({
        conversationId,
        turnId,
        sentenceId: i,
        role: 'user' as const,
        text: s,
        tokenCount: Math.ceil(s.length / 4),
        embedding: vectors[i],
        model: info.id,
        time: at,
      })),
    );
  });
  return sentences.length;
}

/** Where a chunk search reads its rows: a Dexie table, or anything with its bulkGet. */
export type ChunkRows = Pick<Table<Chunk, number>, 'bulkGet'>;

/**
 * Chunk rows 1..n made on demand (vector `gen.row(id - 1)`, or row id - 1 of `data` when given;
 * the sentence only when its text is read): a stand-in for the chunk table where n rows would
 * not fit in fake-indexeddb. Rescoring reads only the vectors, so it costs what reading them
 * from an in-process array costs, as in the vector benchmark.
 */
export function generatedRows(
  gen: SyntheticVectors,
  n: number,
  conversationOf: (id: number) => number = () => 1,
  data?: Float32Array,
): ChunkRows {
  const d = gen.spec.dims;
  const get = (id: number): Chunk | undefined => {
    if (!Number.isInteger(id) || id < 1 || id > n) return undefined;
    const v = data ? data.subarray((id - 1) * d, id * d) : gen.row(id - 1);
    const row = chunkRow(id, conversationOf(id), v, false);
    let sentence: string | undefined;
    Object.defineProperty(row, 'text', {
      get: () => (sentence ??= benchText().sentence(id - 1)),
      enumerable: true,
    });
    return row;
  };
  return { bulkGet: (async (ids: number[]) => ids.map(get)) as ChunkRows['bulkGet'] };
}

/** Heap bytes in use (JS heap + array buffers), after a full collection when one is given. */
export function heapBytes(gc?: () => void): number | null {
  const mem = (globalThis as unknown as { process?: { memoryUsage(): Record<string, number> } })
    .process;
  if (!gc || !mem) return null;
  for (let i = 0; i < 3; i++) gc();
  const m = mem.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

export interface BuiltChunkIndex {
  idx: SemanticIndex;
  /** Rows the search reads (the stand-in or, once swapped in, a real table). */
  rows: ChunkRows;
  buildMs: number;
  /** JS heap + array buffers the index grew by (Node with a gc only; the WebAssembly memory of
   * the vectors is not counted), and the words' share of it. */
  heapMb: number | null;
  wordsHeapMb: number | null;
}

/**
 * A chunk index (vectors and words) of rows 1..n built as a cold load fills it, by
 * `SemanticIndex.refresh` in batches of SHARD_SPAN ids from rows made on demand; searches then
 * read `searchRows` (a real chunk table holding the same rows) or the made rows.
 */
export async function buildChunkIndex(
  gen: SyntheticVectors,
  n: number,
  opts: {
    /** The rows' f32 vectors, row id - 1 at (id - 1) × dims (else generated per row). */
    data?: Float32Array;
    searchRows?: ChunkRows;
    gc?: () => void;
    log?: (line: string) => void;
  } = {},
): Promise<BuiltChunkIndex> {
  const made = generatedRows(gen, n, (id) => (id - 1) % 1000, opts.data);
  let rows: ChunkRows = made;
  // Only `chunks.bulkGet` is used by refresh and by the search's rescoring.
  const db = { chunks: { bulkGet: (ids: number[]) => rows.bulkGet(ids) } } as unknown as MemoryDB;
  const before = heapBytes(opts.gc);
  const t0 = now();
  const idx = new SemanticIndex(db, BENCH_MODEL.id, BENCH_MODEL.dims);
  for (let first = 1; first <= n; first += SHARD_SPAN) {
    const ids = Array.from({ length: Math.min(SHARD_SPAN, n - first + 1) }, (_, i) => first + i);
    await idx.refresh(ids);
    if ((first - 1) % (SHARD_SPAN * 32) === 0) opts.log?.(`  ${n}: ${first - 1} rows indexed`);
  }
  const buildMs = now() - t0;
  const after = heapBytes(opts.gc);
  rows = opts.searchRows ?? made;
  let heapMb: number | null = null;
  let wordsHeapMb: number | null = null;
  if (before !== null && after !== null) {
    heapMb = (after - before) / 2 ** 20;
    // The kernel memory (WebAssembly) is not in these counts; the vectors' ids are, known
    // exactly; the rest of the growth is the word index.
    wordsHeapMb = heapMb - idx.info().metaBytes / 2 ** 20;
  }
  return { idx, rows, buildMs, heapMb, wordsHeapMb };
}

export interface ChunkSearchBenchResult {
  n: number;
  /** searchChunkIndex over all conversations, k = 10, recency bias 0 (searchChunks' default). */
  fused: number[];
  /**
   * The same search with one signal (`signals: 'lexical'` / `'semantic'`), on another query of
   * the same kind: what each signal costs through the real code path, rows read included.
   */
  lexicalSearch: number[];
  vectorSearch: number[];
  /** The word index alone (that other query): prepare, search, every match ranked, best 64. */
  lexical: number[];
  /** MiniSearch over the same sentences (the engine tokenizer, OR), best 64, when asked, on
   * the same queries as `lexical`. */
  baseline: number[];
  /**
   * With the sign-code pass on (`info().signCodes`): the same fused query ranked exactly, on the
   * same query, the variants taking turns going first: the vector search in one stage (int8
   * over every row) with every cosine exact (`rescoreFromRows`: above the f32 budget the
   * candidates' f32 vectors read from the rows); and recall@10 of the fused hits against it.
   */
  fusedOneStage: number[];
  fusedRecall: number[];
  /**
   * With the sign-code pass on and the f32 vectors not in RAM: the two-stage query with exact
   * cosines read from the rows (the search before its cosines were taken from the int8 rows),
   * and recall@10 of its hits against the exact ranking.
   */
  fusedRowsRescored: number[];
  fusedRowsRescoredRecall: number[];
  /**
   * The fused query's parts, on another query of the same kind: the ranking alone
   * (`rankChunks`, no row read) and then reading its k hits' rows (one bulkGet).
   */
  ranking: number[];
  readHits: number[];
  /**
   * With rows in a real IndexedDB: the same read (10 hits of a third query) made with
   * IndexedDB's own `get`s in one transaction, without Dexie: how much of a read is Dexie's
   * (the two reads take turns going first).
   */
  readHitsRaw: number[];
  /** Largest |int8 − exact| cosine among the fused hits (0 with the f32 vectors in RAM). */
  int8CosineError: number;
  /** Mean chunks the lexical index matched per query. */
  matches: number;
  /** Hits of the fused query that the lexical index also found (mean of 10). */
  fusedWithWords: number;
  wordsMb: number;
  baselineBuildMs: number | null;
  baselineHeapMb: number | null;
}

/** Rows `ids` of the chunk store read with IndexedDB's own gets, in one transaction. */
function rawGet(db: IDBDatabase, ids: number[]): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const store = db.transaction('chunks', 'readonly').objectStore('chunks');
    const out: unknown[] = new Array(ids.length);
    let left = ids.length;
    ids.forEach((id, i) => {
      const req = store.get(id);
      req.onsuccess = () => {
        out[i] = req.result;
        if (--left === 0) resolve(out);
      };
      req.onerror = () => reject(req.error);
    });
    if (!left) resolve(out);
  });
}

/** The candidates each signal brings for k = 10 (search.ts: max(64, 4k)). */
const CANDIDATES = 64;
/** Query numbers of the parts measured alone (see benchChunkSearch). */
const PARTS_OFFSET = 10_000;

/**
 * The fused chunk query, the same with one signal each, and the word index alone, over a
 * built index, alternating per query; with
 * `baseline` MiniSearch indexes the same n sentences first (its build time and heap reported).
 */
export async function benchChunkSearch(o: {
  built: { idx: SemanticIndex; rows: ChunkRows };
  n: number;
  gen: SyntheticVectors;
  queries: number;
  warmup?: number;
  baseline?: boolean;
  gc?: () => void;
  log?: (line: string) => void;
}): Promise<ChunkSearchBenchResult> {
  const { idx, rows } = o.built;
  const words = idx.words;
  const texts = benchText();
  let ms: MiniSearch<{ id: number; text: string }> | null = null;
  let baselineBuildMs: number | null = null;
  let baselineHeapMb: number | null = null;
  if (o.baseline) {
    o.log?.(`  MiniSearch over ${o.n} sentences`);
    const before = heapBytes(o.gc);
    const t0 = now();
    ms = new MiniSearch({
      fields: ['text'],
      tokenize: (s: string) => tokenize(s),
      processTerm: (t: string) => t,
      searchOptions: { combineWith: 'OR' },
    });
    for (let id = 1; id <= o.n; id++) ms.add({ id, text: texts.sentence(id - 1) });
    baselineBuildMs = now() - t0;
    const after = heapBytes(o.gc);
    if (before !== null && after !== null) baselineHeapMb = (after - before) / 2 ** 20;
  }
  const out: ChunkSearchBenchResult = {
    n: o.n,
    fused: [],
    lexicalSearch: [],
    vectorSearch: [],
    lexical: [],
    baseline: [],
    fusedOneStage: [],
    fusedRecall: [],
    fusedRowsRescored: [],
    fusedRowsRescoredRecall: [],
    ranking: [],
    readHits: [],
    readHitsRaw: [],
    int8CosineError: 0,
    matches: 0,
    fusedWithWords: 0,
    wordsMb: words.memoryBytes() / 2 ** 20,
    baselineBuildMs,
    baselineHeapMb,
  };
  const nowMs = Date.now();
  const search = (text: string, vector: Float32Array, signals?: Signals) =>
    searchChunkIndex(
      rows as Table<Chunk, number>,
      idx,
      null,
      { text, vector, info: BENCH_MODEL, ...(signals ? { signals } : {}) },
      10,
      0,
      nowMs,
    );
  const warm = o.warmup ?? 5;
  // A Dexie table's database opens on its first request: open it to reach IndexedDB's own.
  const dexie = 'db' in rows ? (rows as Table<Chunk, number>).db : null;
  const backend = dexie ? (await dexie.open()).backendDB() : null;
  const info = idx.info();
  const twoStage = info.signCodes;
  const rowsRescored = twoStage && !info.f32InMemory;
  for (let i = 0; i < warm + o.queries; i++) {
    const fusedText = texts.query(i, o.n);
    const fusedVector = o.gen.query(i);
    type Run = { ms: number; ids: number[] };
    const variant = async (tune: Parameters<SemanticIndex['tuneSearch']>[0]): Promise<Run> => {
      const before = idx.tuneSearch(tune);
      const a = now();
      const h = await search(fusedText, fusedVector);
      const run = { ms: now() - a, ids: h.map((x) => x.row.id!) };
      idx.tuneSearch(before);
      return run;
    };
    let hits: Awaited<ReturnType<typeof search>> = [];
    let fusedMs = 0;
    let exact: Run | null = null;
    let rescored: Run | null = null;
    // Each variant goes first, second and last in turn (rows a query reads stay in IndexedDB's
    // cache for the next variant).
    const runs = [
      async () => {
        const t0 = now();
        hits = await search(fusedText, fusedVector);
        fusedMs = now() - t0;
      },
      ...(twoStage
        ? [
            async () => {
              exact = await variant({ signFrom: Infinity, rescoreFromRows: true });
            },
          ]
        : []),
      ...(rowsRescored
        ? [
            async () => {
              rescored = await variant({ rescoreFromRows: true });
            },
          ]
        : []),
    ];
    for (let r = 0; r < runs.length; r++) await runs[(i + r) % runs.length]();
    // The parts run on another query of the same kind, so that none of them reads rows the
    // fused query has just brought into IndexedDB's cache.
    const text = texts.query(PARTS_OFFSET + i, o.n);
    const vector = o.gen.query(PARTS_OFFSET + i);
    const t1 = now();
    await search(text, vector, 'semantic');
    const t2 = now();
    await search(text, vector, 'lexical');
    const t3 = now();
    const all = words.search(words.prepare(text), null);
    all.sort((a, b) => b.relevance - a.relevance);
    all.slice(0, CANDIDATES);
    const t4 = now();
    if (ms) ms.search(text).slice(0, CANDIDATES);
    const t5 = now();
    const partText = texts.query(2 * PARTS_OFFSET + i, o.n);
    const partVector = o.gen.query(2 * PARTS_OFFSET + i);
    const t6 = now();
    const ranked = await rankChunks(
      idx,
      null,
      { text: partText, vector: partVector, info: BENCH_MODEL },
      CANDIDATES,
      20,
    );
    const t7 = now();
    // The read as the search makes it (Dexie's bulkGet) and without Dexie, of another query's
    // hits, taking turns going first: the second of two reads in a row came faster, whichever it
    // was, which once passed for Dexie's cost (bench/README.md, "Fused query at 100k, session 15").
    const ids = ranked.slice(0, 10).map((c) => c.id);
    const otherIds = backend
      ? (
          await rankChunks(
            idx,
            null,
            {
              text: texts.query(3 * PARTS_OFFSET + i, o.n),
              vector: o.gen.query(3 * PARTS_OFFSET + i),
              info: BENCH_MODEL,
            },
            CANDIDATES,
            20,
          )
        )
          .slice(0, 10)
          .map((c) => c.id)
      : [];
    let viaDexie = 0;
    let raw: number | null = null;
    const reads = [
      async () => {
        const a = now();
        await rows.bulkGet(ids);
        viaDexie = now() - a;
      },
      async () => {
        if (!backend) return;
        const a = now();
        await rawGet(backend, otherIds);
        raw = now() - a;
      },
    ];
    for (let r = 0; r < 2; r++) await reads[(i + r) % 2]();
    if (i < warm) continue;
    out.ranking.push(t7 - t6);
    out.readHits.push(viaDexie);
    if (raw !== null) out.readHitsRaw.push(raw);
    out.fused.push(fusedMs);
    const hitIds = hits.map((h) => h.row.id!);
    if (exact) {
      const e: Run = exact;
      out.fusedOneStage.push(e.ms);
      out.fusedRecall.push(recall(hitIds, e.ids));
      if (rescored) {
        const r: Run = rescored;
        out.fusedRowsRescored.push(r.ms);
        out.fusedRowsRescoredRecall.push(recall(r.ids, e.ids));
      }
    }
    if (!idx.exactCosines) {
      const int8 = await rankChunks(
        idx,
        null,
        { text: fusedText, vector: fusedVector, info: BENCH_MODEL },
        CANDIDATES,
        20,
      );
      const cosOf = new Map(int8.map((c) => [c.id, c.similarity]));
      for (const h of hits) {
        const c = cosOf.get(h.row.id!);
        if (c !== undefined && h.similarity !== 0)
          out.int8CosineError = Math.max(out.int8CosineError, Math.abs(c - h.similarity));
      }
    }
    out.vectorSearch.push(t2 - t1);
    out.lexicalSearch.push(t3 - t2);
    out.lexical.push(t4 - t3);
    if (ms) out.baseline.push(t5 - t4);
    out.matches += all.length / o.queries;
    out.fusedWithWords += hits.filter((h) => h.terms.length > 0).length / o.queries;
  }
  return out;
}
