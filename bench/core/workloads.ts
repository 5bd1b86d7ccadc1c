// The benchmark workloads, shared by the Node runner and the browser worker: filling a database
// with synthetic 384-d chunks (rows and shards), the query benchmark (project vs the plain JS
// loop, with recall@10), cold loads (shards vs one row per chunk), read-all-rows-per-query, and
// the synthetic embedder used for saves.
import type { Embedder, ModelInfo } from '../../src/embeddings/types';
import { ChunkVectors, type FetchVectors } from '../../src/memory/chunk-vectors';
import type { MemoryDB } from '../../src/memory/db';
import { dotRow, topK } from '../../src/memory/scoring';
import { SemanticIndex } from '../../src/memory/semantic-index';
import {
  SHARD_SPAN,
  eachShard,
  packShard,
  shardVectorCount,
  type ChunkShard,
} from '../../src/memory/shards';
import type { Chunk, VectorIndexOptions } from '../../src/memory/types';
import { PackedVectors } from '../../src/memory/vector-store';
import { SyntheticVectors, recall } from '../synthetic';

export const BENCH_MODEL: ModelInfo = {
  id: 'bench/synthetic-384',
  dims: 384,
  threshold: 0.3,
  bundled: false,
};

const now = () => performance.now();

function chunkRow(id: number, conversationId: number, embedding: Float32Array): Chunk {
  return {
    id,
    conversationId,
    turnId: Math.ceil(id / 8),
    sentenceId: (id - 1) % 8,
    role: id % 2 ? 'user' : 'assistant',
    text: `Sentence ${id} of the synthetic history, about topic ${id % 97}.`,
    tokenCount: 12,
    embedding,
    model: BENCH_MODEL.id,
    time: new Date(1_700_000_000_000 + id * 1000),
  };
}

export interface FillOptions {
  /** Also write the packed shards (as the engine does). */
  shards: boolean;
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
    await db.transaction('rw', db.chunks, db.shards, async () => {
      await db.chunks.bulkAdd(rows);
      if (opts.shards) {
        await db.shards.add(packShard(BENCH_MODEL.id, Math.floor(first / SHARD_SPAN), rows));
      }
    });
    spent += now() - t0;
    first += count;
  }
  return spent;
}

/** Cold load as the project does it: the semantic index from the shards. */
export async function coldLoadShards(db: MemoryDB): Promise<{ ms: number; chunks: number }> {
  const t0 = now();
  const idx = new SemanticIndex(db, BENCH_MODEL.id, BENCH_MODEL.dims);
  await idx.load();
  return { ms: now() - t0, chunks: idx.size };
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
  const n = await shardVectorCount(db.shards, BENCH_MODEL.id);
  lap('count_shards');
  const shards: ChunkShard[] = [];
  await eachShard(db.shards, BENCH_MODEL.id, (s) => shards.push(s));
  lap('read_shards');
  const cv = new ChunkVectors(BENCH_MODEL.dims);
  cv.reserve(n);
  for (const s of shards) cv.addMany(s.ids, s.conversations, s.vectors);
  lap('build_index');
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
  /** Recall@10 of the int8 first pass without rescoring (compact form only). */
  recallApprox: number[];
  mode: { quantised: boolean; f32InMemory: boolean };
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
      const approx = await cv.search(null, q, k); // no fetch: int8 scores only
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
