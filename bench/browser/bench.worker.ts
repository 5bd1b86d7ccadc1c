// The browser benchmark's worker: runs the shared workloads against Chromium's real IndexedDB
// and the engine (openMemory) the app's worker runs, and answers the page through Comlink.
import { expose } from 'comlink';
import { BUNDLED_MODEL, createEmbedder, openMemory } from '../../src/memory';
import type { Embedder } from '../../src/embeddings/types';
import { ChunkVectors } from '../../src/memory/chunk-vectors';
import { MemoryDB } from '../../src/memory/db';
import { wasmSimdSupported } from '../../src/memory/kernels/dot-kernel';
import { splitSentences } from '../../src/memory/text';
import type {
  MemoryApi,
  TurnContext,
  TurnRequest,
  VectorIndexOptions,
} from '../../src/memory/types';
import { summarise } from '../core/report';
import { SemanticIndex } from '../../src/memory/semantic-index';
import { EntryIndex } from '../../src/memory/entry-index';
import {
  RECALL_STORE,
  fillRecallStore,
  recallLayout,
  recallStepRuns,
  saveRecallEntries,
  startReadTimer,
  type RecallSteps,
} from '../core/recall';
import {
  BENCH_MODEL,
  benchChunkSearch,
  benchText,
  benchQueries,
  buildChunkIndex,
  chunkRow,
  coldLoadBreakdown,
  coldLoadRows,
  coldLoadShards,
  fillChunks,
  legacyRecordTurn,
  readAllRowsQuery,
  syntheticEmbedder,
  type ColdLoad,
} from '../core/workloads';
import { MINILM_LIKE, SyntheticVectors } from '../synthetic';

const SEED = 20_251_122;
const DB_100K = 'bench-100k';
/** The same chunks with shards as database version 2 wrote them (no compact parts). */
const DB_100K_WHOLE = 'bench-100k-whole';
const DB_1M_ROWS = 'bench-1m-rows';
const DB_RECALL = 'bench-recall-100k';

function createBenchApi() {
  const gen = new SyntheticVectors({ ...MINILM_LIKE, seed: SEED });
  let mem: MemoryApi | null = null;
  let embedder: Embedder | null = null;
  let legacyDb: MemoryDB | null = null;
  let part: ChunkVectors | null = null;
  /** The engine over the recall store, as the app's worker holds it. */
  let recallMem: MemoryApi | null = null;
  let readTimer: ReturnType<typeof startReadTimer> | null = null;
  const recall = () => {
    if (!recallMem) throw new Error('recallFill first');
    return recallMem;
  };
  const rowsDb = () => new MemoryDB(DB_1M_ROWS);

  /** Rescoring reads f32 vectors from the chunk rows, as the engine's semantic index does. */
  const fetchRows = (db: MemoryDB) => async (ids: number[]) =>
    (await db.chunks.bulkGet(ids)).map((r) => r?.embedding);

  return {
    env() {
      return {
        crossOriginIsolated: self.crossOriginIsolated,
        cores: navigator.hardwareConcurrency,
        userAgent: navigator.userAgent,
        wasmSimd: wasmSimdSupported(),
      };
    },

    async deleteAll(): Promise<void> {
      for (const info of await indexedDB.databases()) {
        if (info.name) await MemoryDB.delete(info.name);
      }
    },

    /**
     * Query latency at `n` (project vs plain JS loop) with recall@10. With `rowsInDb` the n
     * chunk rows are also written to IndexedDB and the compact index rescoring reads them there.
     */
    async queries(n: number, queries: number, rowsInDb: boolean) {
      const db = rowsInDb ? rowsDb() : null;
      const r = await benchQueries({
        n,
        gen,
        queries,
        fetch: db ? fetchRows(db) : 'in-process',
        sink: db
          ? async (first, vectors) => {
              const d = gen.spec.dims;
              await db.transaction('rw', db.chunks, async () =>
                db.chunks.bulkAdd(
                  Array.from({ length: vectors.length / d }, (_, i) =>
                    chunkRow(first + i, (first + i - 1) % 1000, vectors.slice(i * d, (i + 1) * d)),
                  ),
                ),
              );
            }
          : undefined,
      });
      db?.close();
      return r;
    },

    /** The peer design's query: every row read on each query (`runs` queries over `n` rows). */
    async readAllRows(n: number, runs: number): Promise<number[]> {
      const db = new MemoryDB(`bench-rows-${n}`);
      await fillChunks(db, gen, n, { shards: false });
      const samples: number[] = [];
      for (let i = 0; i < runs; i++) samples.push(await readAllRowsQuery(db, gen.query(i)));
      db.close();
      return samples;
    },

    /** 100k chunk rows with their shards, all in conversation 1. */
    async fill100k(): Promise<{ fillMs: number; rowsPerS: number }> {
      const db = new MemoryDB(DB_100K);
      const fillMs = await fillChunks(db, gen, 100_000, { shards: true });
      db.close();
      return { fillMs, rowsPerS: 100_000 / (fillMs / 1000) };
    },

    /** The same 100k chunks with shards as version 2 wrote them, whole (no compact parts). */
    async fill100kWhole(): Promise<{ fillMs: number }> {
      const db = new MemoryDB(DB_100K_WHOLE);
      const fillMs = await fillChunks(db, gen, 100_000, { shards: true, heads: false });
      db.close();
      return { fillMs };
    },

    /**
     * One cold load on a fresh connection: the project's (shards: compact parts first, then the
     * vectors), the same from whole shards (as version 2 stored them), or one row per chunk.
     */
    async coldLoad(kind: 'shards' | 'whole' | 'rows'): Promise<ColdLoad> {
      const db = new MemoryDB(kind === 'whole' ? DB_100K_WHOLE : DB_100K);
      await db.open();
      const r =
        kind === 'rows'
          ? { ...(await coldLoadRows(db)), firstMs: NaN, firstExact: true }
          : await coldLoadShards(db, benchText().query(0, 100_000), gen.query(0));
      db.close();
      return r;
    },

    /**
     * The fused chunk search and its parts over the 100k database (cold-loaded index, rows read
     * from IndexedDB), MiniSearch over the same sentences as the lexical baseline.
     */
    async chunkSearch100k(queries: number) {
      const db = new MemoryDB(DB_100K);
      await db.open();
      const idx = new SemanticIndex(db, BENCH_MODEL.id, BENCH_MODEL.dims);
      await idx.load();
      // The loaded index's query: a cold load answers from the compact parts until the vectors
      // are in (timed by coldLoad), and reads rows for its cosines meanwhile.
      await idx.whenExact();
      const r = await benchChunkSearch({
        built: { idx, rows: db.chunks },
        n: 100_000,
        gen,
        queries,
        baseline: true,
      });
      db.close();
      return r;
    },

    /**
     * The same over n chunks: the index built as a cold load fills it (rows made here), its
     * searches reading the n rows that `queries(n, …, true)` wrote to IndexedDB.
     */
    async chunkSearchLarge(n: number, queries: number, baseline: boolean) {
      const db = rowsDb();
      const built = await buildChunkIndex(gen, n, { searchRows: db.chunks });
      const r = await benchChunkSearch({ built, n, gen, queries, baseline });
      db.close();
      return { ...r, buildMs: built.buildMs, info: built.idx.info() };
    },

    /** Where a cold load's time goes (fresh connection). */
    async coldParts() {
      const db = new MemoryDB(DB_100K);
      await db.open();
      const r = await coldLoadBreakdown(db);
      db.close();
      return r;
    },

    /** A run of saves on a fresh connection (two warm-up saves fill the indexes). */
    async saves(kind: 'project' | 'baseline', count: number, tag: string) {
      const vectorIndex: VectorIndexOptions | undefined =
        kind === 'baseline' ? { kernel: 'js', quantiseFrom: Infinity } : undefined;
      const m = openMemory({ name: DB_100K, embedder: syntheticEmbedder(gen), vectorIndex });
      const samples: number[] = [];
      for (let i = -2; i < count; i++) {
        const t0 = performance.now();
        const r = await m.saveMemory(
          `Bench/${tag}/Note${i + 2}`,
          { note: `note ${i}` },
          undefined,
          {
            conversationId: 1,
          },
        );
        if (r.status !== 'SUCCESS') throw new Error(`save failed: ${JSON.stringify(r)}`);
        if (i >= 0) samples.push(performance.now() - t0);
      }
      const info = await m.indexInfo();
      await m.close();
      return { samples, summary: summarise(samples), info };
    },

    /**
     * Opens an engine for ingest with the bundled model (`legacy`: rows only, no engine). ORT
     * threads > 1 need cross-origin isolation.
     */
    async ingestOpen(name: string, legacy: boolean, threads = 1): Promise<string> {
      const { env } = await import('@huggingface/transformers');
      if (env.backends.onnx.wasm) env.backends.onnx.wasm.numThreads = threads;
      embedder = createEmbedder({ model: BUNDLED_MODEL, fallback: false });
      const info = await embedder.ready();
      await embedder.embed(['warm up the model']);
      if (legacy) legacyDb = new MemoryDB(name);
      else mem = openMemory({ name, embedder });
      return info.id;
    },

    /** One turn (10 sentences) ingested; resolves with its chunk count. */
    async ingestTurn(text: string): Promise<number> {
      if (legacyDb && embedder)
        return legacyRecordTurn(legacyDb, embedder, 1, text, splitSentences);
      if (!mem) throw new Error('ingestOpen first');
      const r = await mem.recordTurn({ conversationId: 1, role: 'user', text });
      if (r.status !== 'SUCCESS') throw new Error(`recordTurn failed: ${JSON.stringify(r)}`);
      return r.chunks;
    },

    /** A whole backup imported at once (the bulk ingest). */
    async ingestImport(json: string): Promise<void> {
      if (!mem) throw new Error('ingestOpen first (not legacy)');
      const r = await mem.importJson(json, 'merge');
      if (r.status !== 'SUCCESS') throw new Error(`importJson failed: ${JSON.stringify(r)}`);
    },

    async ingestClose(): Promise<void> {
      await mem?.close();
      legacyDb?.close();
      await embedder?.dispose();
      mem = null;
      legacyDb = null;
      embedder = null;
    },

    /** Multi-core trial: this worker holds rows `first..first+count-1` of the 1M set, compact. */
    async buildPart(first: number, count: number): Promise<{ ms: number; vectorMb: number }> {
      const t0 = performance.now();
      const d = gen.spec.dims;
      part = new ChunkVectors(d, { f32Budget: 0 });
      part.reserve(count);
      const batch = 16_384;
      for (let at = 0; at < count; at += batch) {
        const c = Math.min(batch, count - at);
        const v = gen.rows(first - 1 + at, c);
        for (let i = 0; i < c; i++) part.add(first + at + i, 0, v.subarray(i * d, (i + 1) * d));
      }
      return { ms: performance.now() - t0, vectorMb: part.memory().vectorBytes / 2 ** 20 };
    },

    /** Searches this worker's part (rescoring from the 1M rows database); hits and time. */
    async searchPart(qi: number, k: number) {
      if (!part) throw new Error('buildPart first');
      const db = rowsDb();
      const t0 = performance.now();
      const hits = await part.search(null, gen.query(qi), k, fetchRows(db));
      const ms = performance.now() - t0;
      db.close();
      return { hits, ms };
    },

    dropPart(): void {
      part = null;
    },

    /**
     * The recall store (`core/recall.ts`): chats × sentences of turns with messages, rows and
     * shards, then the entries saved through the engine, which stays open for the turn starts.
     */
    async recallFill(
      chats: number = RECALL_STORE.chats,
      perChat: number = RECALL_STORE.sentencesPerChat,
      entries: number = RECALL_STORE.entries,
    ) {
      await recallMem?.close();
      await MemoryDB.delete(DB_RECALL);
      const layout = recallLayout(chats, perChat);
      const db = new MemoryDB(DB_RECALL);
      const fillMs = await fillRecallStore(db, gen, layout);
      db.close();
      // Reads by key timed on this engine's database only (the cases after it are not).
      readTimer = startReadTimer();
      recallMem = openMemory({ name: DB_RECALL, embedder: syntheticEmbedder(gen) });
      readTimer.stop();
      const saveMs = await saveRecallEntries(recallMem, layout, entries);
      return { fillMs, saveMs, chunks: chats * perChat, messages: layout.turns.length, entries };
    },

    addMessage(m: { conversationId: number; role: 'user'; text: string }) {
      return recall().addMessage(m);
    },

    prepareTurn(request: TurnRequest): Promise<TurnContext> {
      return recall().prepareTurn(request);
    },

    deleteMessage(id: number) {
      return recall().deleteMessage(id);
    },

    takeReads() {
      return readTimer?.take() ?? {};
    },

    /**
     * Where recall's past-turns part spends its time, step by step (`recallSteps`), for
     * `count` queries after 3 warm-ups, over indexes loaded from the recall store's rows.
     */
    async recallSteps(count: number): Promise<RecallSteps[]> {
      const db = new MemoryDB(DB_RECALL);
      await db.open();
      const idx = new SemanticIndex(db, BENCH_MODEL.id, BENCH_MODEL.dims);
      await idx.load();
      const entries = new EntryIndex(db.structured_memory, BENCH_MODEL.id, BENCH_MODEL.dims);
      await entries.load();
      const out = await recallStepRuns(db, idx, entries, gen, count);
      db.close();
      return out;
    },

    async recallClose(): Promise<void> {
      await recallMem?.close();
      recallMem = null;
      await MemoryDB.delete(DB_RECALL);
    },
  };
}

export type BenchWorkerApi = ReturnType<typeof createBenchApi>;

expose(createBenchApi());
