// In-memory index of conversation chunks for one model: vectors and words, loaded once from the
// packed shards (a few rows, not one per chunk), kept current from the keys that each write
// touched (ours or another tab's), searched with the WASM kernels and the BM25 index; a search
// reads no row (above the f32 budget its cosines are the int8 ones, docs/search.md). A cold start
// reads the shards' compact parts first and answers from their words and sign codes (not
// exactly) while the vectors load behind it, from 16,384 chunks the pieces' int8 rows into the
// int8 form alone (docs/search.md, "Cold start").
import { shardTables, type MemoryDB } from './db';
import { ChunkVectors, type ChunkVectorsOptions, type VectorHit } from './chunk-vectors';
import { CompactVectors } from './compact-vectors';
import {
  eachShard,
  hasWords,
  readHeads,
  rebuildShards,
  shardVectorCount,
  type ChunkShard,
  type ShardHead,
  timeOf,
} from './shards';
import { Bm25Index } from './lexical/bm25-index';
import { EPISODE_GAP_MS } from './ranking';
import type { Chunk, IndexProgress, SemanticIndexInfo, VectorIndexOptions } from './types';
import { dot as dotVectors } from './scoring';

/** Fewest candidates a search during a cold start takes from the sign codes (rows read). */
const COMPACT_CANDIDATES = 64;
/**
 * Chunks from which a cold start answers before the vectors are in: below, loading them takes
 * a small share of the whole and every answer is exact from the start.
 */
const COMPACT_FROM = 16_384;

/** Sentences of a turn taken together for its meaning (`turnCosines`), around the one ranked. */
const TURN_SPAN = 64;

export class SemanticIndex {
  private readonly vectors: ChunkVectors;
  /** The chunks' words, grouped by conversation, kept beside the vectors. */
  readonly words = new Bm25Index({ episodeGap: EPISODE_GAP_MS });
  private wordsMissing = false;
  /** Sum of the vectors held (the centroid's, ranking.ts baseline), and how many. */
  private readonly vectorSum: Float64Array;
  private vectorCount = 0;
  /** A cold start's sign codes, searched until the vectors are in; null once they are. */
  private compact: CompactVectors | null = null;
  /** Chunks removed while the vectors load, taken out again once they are in. */
  private readonly goneWhileLoading = new Set<number>();
  private vectorsLoaded: Promise<void> = Promise.resolve();
  /** Bumped by each load, so that a superseded vector load adds nothing. */
  private generation = 0;
  private readonly compactFrom: number;

  constructor(
    private readonly db: MemoryDB,
    readonly model: string,
    readonly dims: number,
    { compactFrom = COMPACT_FROM, ...options }: VectorIndexOptions = {},
    /** Told how a rebuild of the shards from the rows goes (docs/search.md, "Cold start"). */
    private readonly onRebuild?: (progress: IndexProgress) => void,
  ) {
    this.compactFrom = compactFrom;
    this.vectors = new ChunkVectors(dims, options);
    this.vectorSum = new Float64Array(dims);
  }

  /** `q · Σ vectors` and how many: the centroid's pull on a query (ranking.ts baseline). */
  centroidDot(q: Float32Array): { sumDot: number; count: number } {
    let sumDot = 0;
    const n = Math.min(q.length, this.dims);
    for (let i = 0; i < n; i++) sumDot += q[i] * this.vectorSum[i];
    return { sumDot, count: Math.min(this.vectorCount, this.size) };
  }

  /** How the vector searches run from now on (benchmarks: `ChunkVectors.tuneSearch`). */
  tuneSearch(options: Parameters<ChunkVectors['tuneSearch']>[0]): ChunkVectorsOptions {
    return this.vectors.tuneSearch(options);
  }

  /** Chat sittings (episodes) with a sentence held. */
  get episodeCount(): number {
    return this.words.episodeCount;
  }

  /** The sitting (episode) of an indexed chunk: its chat's run without a long pause. */
  episodeOf(id: number): number | undefined {
    return this.words.episodeOf(id);
  }

  /** A chunk's vector taken out of the sum as it leaves the index. */
  private removeVector(id: number): void {
    if (this.vectors.addVectorTo(id, this.vectorSum, -1)) this.vectorCount--;
    this.vectors.remove(id);
  }

  private addToSum(v: Float32Array, offset = 0): void {
    if (v.length < offset + this.dims) return;
    for (let i = 0; i < this.dims; i++) this.vectorSum[i] += v[offset + i];
    this.vectorCount++;
  }

  get size(): number {
    return this.compact ? this.words.size : this.vectors.size;
  }

  /**
   * Whether searches are exact: false while a cold start still reads the vectors (searches then
   * rank candidates by their sign codes), true from then on.
   */
  get exact(): boolean {
    return this.compact === null;
  }

  /** Resolves once the vectors are in (at once when they are; a failed read leaves it inexact). */
  whenExact(): Promise<void> {
    return this.vectorsLoaded;
  }

  /** The turn (message id) of an indexed chunk, as its words were indexed (undefined if none). */
  turnOf(id: number): number | undefined {
    return this.words.parentOf(id);
  }

  /**
   * The turn after `turnId` in its chat, as its sentences were indexed, and one of its indexed
   * chunks (undefined when there is none).
   */
  nextTurn(turnId: number): { turnId: number; chunkId: number } | undefined {
    const next = this.words.nextParent(turnId);
    return next && { turnId: next.parent, chunkId: next.key };
  }

  /**
   * For each of `ids` whose turn has more than one sentence: the cosine of `query` with the
   * turn's meaning, the mean direction of its sentences' vectors (their sum, normalised), from
   * the vectors in RAM (int8 where those are what RAM holds, as `similarities`). A turn's
   * sentences are the chunks of one message, written together under consecutive ids; of a very
   * long one, the TURN_SPAN around the sentence (a pasted document is no one meaning).
   */
  turnCosines(ids: Iterable<number>, query: Float32Array): Map<number, number> {
    const out = new Map<number, number>();
    if (query.length !== this.dims) return out;
    const byTurn = new Map<number, number | undefined>();
    const sum = new Float64Array(this.dims);
    const words = this.words;
    for (const id of ids) {
      const turn = words.parentOf(id);
      if (turn === undefined) continue;
      if (!byTurn.has(turn)) {
        sum.fill(0);
        let n = 0;
        let first = id;
        while (id - first < TURN_SPAN / 2 && words.parentOf(first - 1) === turn) first--;
        for (let k = first; k < first + TURN_SPAN && words.parentOf(k) === turn; k++) {
          if (this.vectors.addVectorTo(k, sum, 1)) n++;
        }
        let dot = 0;
        let norm = 0;
        for (let i = 0; i < this.dims; i++) {
          dot += sum[i] * query[i];
          norm += sum[i] * sum[i];
        }
        byTurn.set(turn, n > 1 && norm > 0 ? dot / Math.sqrt(norm) : undefined);
      }
      const c = byTurn.get(turn);
      if (c !== undefined) out.set(id, c);
    }
    return out;
  }

  /**
   * Whether the cosines a search ranks by are exact: the f32 vectors are in RAM, or the search
   * reads them from the rows (`rescoreFromRows`); else they are the int8 ones.
   */
  get exactCosines(): boolean {
    return this.vectors.mode.f32InMemory || this.vectors.rescoresFromRows;
  }

  /**
   * Cosines of chunks with `query` as a search ranks by them (`exactCosines` says whether they
   * are exact or int8): from the vectors in RAM, reading the rows of those it does not hold
   * (and, with `rescoreFromRows` above the f32 budget, of all); absent ids are left out.
   */
  async similarities(ids: readonly number[], query: Float32Array): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    const missing: number[] = [];
    const held = this.vectors.rescoresFromRows
      ? ids.map(() => undefined)
      : this.vectors.similarities(ids, query);
    held.forEach((c, i) => {
      if (c === undefined) missing.push(ids[i]);
      else out.set(ids[i], c);
    });
    if (missing.length) {
      (await this.db.chunks.bulkGet(missing)).forEach((r, i) => {
        if (r && r.model === this.model && r.embedding.length === query.length)
          out.set(missing[i], dotVectors(query, r.embedding));
      });
    }
    return out;
  }

  /**
   * The newest `limit` chunk ids of a conversation (of its turns up to `upTo` when given),
   * newest first, from the word index: no read.
   */
  newestIds(conversationId: number, limit: number, upTo?: number): number[] {
    return this.words.newestKeys(conversationId, limit, upTo);
  }

  /** The conversation of an indexed chunk (undefined when it is not held). */
  conversationOf(id: number): number | undefined {
    return this.compact ? this.words.groupOf(id) : this.vectors.conversationOf(id);
  }

  info(): SemanticIndexInfo {
    const mem = this.vectors.memory();
    return {
      model: this.model,
      dims: this.dims,
      chunks: this.size,
      kernel: this.vectors.kernelKind,
      ...this.vectors.mode,
      vectorBytes: mem.vectorBytes,
      kernelBytes: mem.kernelBytes,
      metaBytes: mem.metaBytes,
    };
  }

  /**
   * Fills the index from the shards of this model. Rows the shards lack (written by an older
   * version or by hand) are caught here when they are the newest of the model, and the shards
   * rebuilt from the rows first; `verify()` makes the full check, off the critical path (counting
   * 100k index entries takes longer than reading the shards).
   */
  async load(): Promise<void> {
    const { db, model } = this;
    this.reset();
    // The compact parts first, when every piece has one: the index answers once they are in.
    const staged = await db.transaction('r', [db.chunks, ...shardTables(db)], async () => {
      const [heads, newest, coded] = await Promise.all([
        readHeads(db, model),
        db.chunks.where('model').equals(model).reverse().limit(1).primaryKeys(),
        db.shardCodes.toCollection().primaryKeys(),
      ]);
      if (!heads) return undefined;
      let held = 0;
      for (const h of heads) held += h.count;
      if (held < this.compactFrom) return undefined;
      let maxId = 0;
      for (const h of heads) if (h.count) maxId = Math.max(maxId, h.ids[h.count - 1]);
      if ((newest[0] ?? 0) !== maxId) return undefined;
      const compact = new CompactVectors(this.dims);
      this.words.addPackedMany(
        heads.map((h) => ({
          keys: h.ids,
          groups: h.conversations,
          parents: h.turns,
          packed: h.words,
          times: h.times,
        })),
      );
      for (const h of heads) this.putHead(h, compact);
      this.compact = compact;
      const withCodes = new Set(coded);
      return { heads, int8: heads.every((h) => withCodes.has(h.id)) };
    });
    if (staged) {
      this.vectorsLoaded = this.loadVectors(this.generation, staged.heads, staged.int8);
      return;
    }
    for (let attempt = 0; ; attempt++) {
      this.reset();
      const consistent = await db.transaction(
        'r',
        db.chunks,
        db.shards,
        db.shardHeads,
        async () => {
          const [held, newest] = await Promise.all([
            shardVectorCount(db, model),
            db.chunks.where('model').equals(model).reverse().limit(1).primaryKeys(),
          ]);
          this.vectors.reserve(held);
          let maxId = 0;
          // The words go in once all are read, so that they go in in the chunks' order
          // (`addPackedMany`; a shard's vectors are not kept for it: a large index is read a few
          // shards at a time).
          const words: Parameters<Bm25Index['addPackedMany']>[0][number][] = [];
          await eachShard(db, model, (s) => {
            if (this.putShard(s))
              words.push({
                keys: s.ids,
                groups: s.conversations,
                parents: s.turns!,
                packed: s.words!,
                times: s.times,
              });
            if (s.count) maxId = Math.max(maxId, s.ids[s.count - 1]);
          });
          this.words.addPackedMany(words);
          return attempt > 0 || ((newest[0] ?? 0) === maxId && !this.wordsMissing);
        },
      );
      if (consistent) return;
      await this.rebuild();
    }
  }

  private reset(): void {
    this.generation++;
    this.vectors.clear();
    this.words.clear();
    this.vectorSum.fill(0);
    this.vectorCount = 0;
    this.wordsMissing = false;
    this.compact = null;
    this.goneWhileLoading.clear();
    this.vectorsLoaded = Promise.resolve();
  }

  /**
   * A cold start's second step: the pieces' vectors, into the index that answers from the
   * compact parts meanwhile; then its searches are exact. When every piece has its int8 part
   * (`shardCodes`: `int8`, as the compact parts' read found), those are read, a quarter of the
   * bytes, and the index keeps the int8 form alone, as above the f32 budget (docs/search.md,
   * "Cold start"); else the f32 rows. Writes
   * noted meanwhile are kept: rows added are in already (a piece's copy is skipped), rows
   * removed are taken out again.
   */
  private async loadVectors(
    generation: number,
    heads: readonly ShardHead[],
    int8: boolean,
  ): Promise<void> {
    const { db, model } = this;
    const current = () => generation === this.generation;
    try {
      await db.transaction('r', db.shards, db.shardCodes, async () => {
        if (!int8) {
          const held = await shardVectorCount(db, model);
          if (current()) this.vectors.reserve(held);
          await eachShard(
            db,
            model,
            (s) => {
              if (current()) this.vectors.addMany(s.ids, s.conversations, s.vectors);
            },
            { whole: false },
          );
          return;
        }
        let held = 0;
        for (const h of heads) held += h.count;
        if (current()) this.vectors.reserve(held, { f32: false });
        // A few pieces a read, the next read under way while these go in.
        const read = (i: number) =>
          i < heads.length ? db.shardCodes.bulkGet(heads.slice(i, i + 4).map((h) => h.id)) : null;
        let next = read(0);
        for (let i = 0; next; i += 4) {
          const rows = await next;
          next = read(i + 4);
          const lacking: number[] = [];
          rows.forEach((c, j) => {
            const h = heads[i + j];
            if (!current()) return;
            const fits =
              c?.count === h.count &&
              c.scales.length === h.count &&
              c.codes.length === h.count * this.dims;
            if (fits) this.vectors.addCodes(h.ids, h.conversations, c.codes, c.scales);
            else lacking.push(h.id);
          });
          // A part that does not match its piece (written by hand): its f32 row instead.
          for (const s of lacking.length ? await db.shards.bulkGet(lacking) : [])
            if (s && current()) this.vectors.addMany(s.ids, s.conversations, s.vectors);
        }
      });
    } catch {
      return; // closed meanwhile: searches stay inexact; the next open loads again
    }
    if (!current()) return;
    for (const id of this.goneWhileLoading) this.removeVector(id);
    this.goneWhileLoading.clear();
    this.compact = null;
  }

  /**
   * The full check: the shards hold as many vectors as there are rows of this model. When not,
   * rebuilds the shards and resolves false: this index is then stale and must be reloaded.
   */
  async verify(): Promise<boolean> {
    const { db, model } = this;
    const [rows, held] = await db.transaction('r', db.chunks, db.shards, async () =>
      Promise.all([db.chunks.where('model').equals(model).count(), shardVectorCount(db, model)]),
    );
    if (rows === held) return true;
    await this.rebuild();
    return false;
  }

  private rebuild(): Promise<void> {
    const { db, model } = this;
    // An async scope: Dexie keeps the transaction through every await of its body however deep
    // its helpers nest (a plain arrow returning a promise keeps it only briefly after each of
    // Dexie's own promises).
    return db.transaction('rw', [db.chunks, ...shardTables(db)], async () =>
      rebuildShards(db.chunks, db, model, this.onRebuild),
    );
  }

  /**
   * After a bulk write whose keys are unknown: reads the rows added since the highest indexed
   * id, and reloads everything only when the count shows that rows were also deleted.
   */
  async catchUp(): Promise<void> {
    await this.vectorsLoaded;
    let maxId = 0;
    for (const id of this.vectors.liveIds()) if (id > maxId) maxId = id;
    await this.db.chunks
      .where(':id')
      .above(maxId)
      .each((c) => c.model === this.model && this.put(c));
    const total = await this.db.chunks.where('model').equals(this.model).count();
    if (total !== this.vectors.size) await this.load();
  }

  /** Brings the index in line with the rows now stored under `ids` (added, changed or gone). */
  async refresh(ids: readonly number[], known?: ReadonlyMap<number, Chunk>): Promise<void> {
    if (!ids.length) return;
    // In id order, as the chunks were written: the word index finds a chat's newest chunks
    // without a full pass when its keys rise with its documents.
    const sorted = [...ids].sort((a, b) => a - b);
    // Rows just written by this engine are taken as they are; the rest are read.
    const unknown = known?.size ? sorted.filter((id) => !known.has(id)) : sorted;
    const read = unknown.length ? await this.db.chunks.bulkGet(unknown) : [];
    const readRows = new Map(unknown.map((id, i) => [id, read[i]]));
    const rows = sorted.map((id) => known?.get(id) ?? readRows.get(id));
    rows.forEach((row, i) => {
      if (row && row.model === this.model) this.put(row);
      else {
        this.removeVector(sorted[i]);
        this.words.remove(sorted[i]);
        if (this.compact) this.goneWhileLoading.add(sorted[i]);
      }
    });
  }

  /**
   * Chunk ids with their cosine to `query`, best `k` first: of one conversation, or of all
   * conversations with `null`. Cosines are exact (rescored in f32) while the f32 vectors are in
   * RAM, else the int8 ones, and no row is read (`exactCosines`).
   */
  search(conversationId: number | null, query: Float32Array, k: number): Promise<VectorHit[]> {
    if (this.compact) return this.searchCompact(this.compact, conversationId, query, k);
    return this.searchVectors(conversationId, query, k);
  }

  private searchVectors(
    conversationId: number | null,
    query: Float32Array,
    k: number,
  ): Promise<VectorHit[]> {
    const fetch = this.vectors.rescoresFromRows
      ? async (ids: number[]) =>
          (await this.db.chunks.bulkGet(ids)).map((r) =>
            r && r.model === this.model ? r.embedding : undefined,
          )
      : undefined;
    return this.vectors.search(conversationId, query, k, fetch);
  }

  /**
   * A search while the vectors load: the nearest chunks by sign code (at least
   * COMPACT_CANDIDATES) with their exact cosines, and the best of the vectors already in RAM
   * (rows written meanwhile, shards read so far). Cosines as `similarities` gives them (the
   * candidates' read from their rows); the candidates are not exact.
   */
  private async searchCompact(
    compact: CompactVectors,
    conversationId: number | null,
    query: Float32Array,
    k: number,
  ): Promise<VectorHit[]> {
    if (query.length !== this.dims || k <= 0) return [];
    const near = compact.nearest(conversationId, query, Math.max(k, COMPACT_CANDIDATES), (id) =>
      this.words.has(id),
    );
    const [inRam, exact] = await Promise.all([
      this.searchVectors(conversationId, query, k),
      this.similarities(near, query),
    ]);
    for (const h of inRam) exact.set(h.id, h.similarity);
    return [...exact]
      .map(([id, similarity]) => ({ id, similarity }))
      .sort((a, b) => b.similarity - a.similarity || a.id - b.id)
      .slice(0, k);
  }

  private put(c: Chunk): void {
    // Chunk rows never change once written (a re-embed writes them under another model).
    if (c.id === undefined) return;
    // One already held (another tab's write told again) is not counted twice.
    const added = this.vectors.add(c.id, c.conversationId, c.embedding);
    this.words.add(c.id, c.text, c.conversationId, c.turnId, timeOf(c.time));
    if (added && c.embedding.length === this.dims) this.addToSum(c.embedding);
  }

  /** A compact part's codes and vector sum (its words go in with all the others at once). */
  private putHead(h: ShardHead, compact: CompactVectors): void {
    compact.add(h);
    if (h.sum?.length === this.dims) {
      for (let i = 0; i < this.dims; i++) this.vectorSum[i] += h.sum[i];
      this.vectorCount += h.count;
    }
  }

  /** A shard's vectors; whether its words are there to add (all shards' at once, in order). */
  private putShard(s: ChunkShard): boolean {
    // A shard of another vector length (a corrupt row) adds nothing.
    this.vectors.addMany(s.ids, s.conversations, s.vectors);
    if (s.vectors.length === s.count * this.dims)
      for (let i = 0; i < s.count; i++) this.addToSum(s.vectors, i * this.dims);
    const has = hasWords(s);
    if (!has) this.wordsMissing = true;
    return has;
  }
}
