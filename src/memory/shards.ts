// Packed vector shards: the chunk vectors of one model, a few thousand per row, so a cold start
// reads tens of rows instead of one per chunk. Chunk ids are split into ranges of SHARD_SPAN; a
// range holds one piece per model once it is complete, and while it fills, a few pieces that
// merge by size (16 small into one larger), so a write adds one small row instead of rewriting
// a large one. Each piece has three rows under one key: its vectors (table `shards`), its
// compact part (table `shardHeads`: ids, words, turns, sign codes), which a cold start reads
// first and answers from while the vectors load, and its vectors in int8 (table `shardCodes`),
// which a large cold start loads (docs/search.md, "Cold start"). Every helper runs inside the
// caller's rw transaction over the three tables, the same transaction that writes the chunk
// rows, so rows and all parts land (or fail) together. That transaction's scope
// function must be `async`: Dexie keeps a plain arrow's transaction only briefly after each of
// its own promises, and a helper two async levels deep then runs outside it.
import Dexie, { type Table } from 'dexie';
import { TOKENIZER_VERSION, tokenize } from './lexical/tokenize';
import { quantiseRow } from './kernels/int8';
import { signCode, signCodeBytes } from './kernels/signs';
import type { Chunk, IndexProgress } from './types';

/** Chunk ids per range; one complete range is one row of up to this many vectors. */
export const SHARD_SPAN = 4096;
/** Pieces of one size class that trigger a merge into the next class. */
const MERGE_AT = 16;

/**
 * A piece's vectors (a row of table `shards`), or, in memory, the whole piece. Rows written
 * before the compact part existed (database version 2) hold `words` and `turns` here.
 */
export interface ChunkShard {
  id?: number;
  model: string;
  /** `floor(chunk id / SHARD_SPAN)` of every chunk in it. */
  range: number;
  /** Vectors held (indexed, so sizes are known from keys alone). */
  count: number;
  /** Chunk ids, ascending. */
  ids: Float64Array;
  conversations: Float64Array;
  /** `count × dims` floats, row i for `ids[i]`. */
  vectors: Float32Array;
  /**
   * The chunks' index terms, tokenised when the shard was written, so the word index loads
   * without tokenising (docs/search.md, "The two signals"). In the compact part since version
   * 3; absent in shards written before either, or by another tokeniser version: such shards are
   * rebuilt from the rows on load.
   */
  words?: PackedWords;
  /** The turn (message id) of each chunk, for the lexical index's turn context. */
  turns?: Float64Array;
  /**
   * When each chunk was said (ms), for the lexical index's episodes (a chat's sittings). Absent
   * in pieces written before them: such shards are rebuilt from the rows on load.
   */
  times?: Float64Array;
}

/**
 * A piece's compact part (a row of table `shardHeads`, under its vector row's key): what a cold
 * start needs to answer before the vectors are read, a tenth of their bytes or less.
 */
export interface ShardHead {
  /** The key of the piece's vector row. */
  id: number;
  model: string;
  range: number;
  count: number;
  ids: Float64Array;
  conversations: Float64Array;
  words: PackedWords;
  turns: Float64Array;
  times: Float64Array;
  /** Sign codes (`signCodeBytes(dims)` a chunk) around `centre`, row i for `ids[i]`. */
  signs: Uint8Array;
  /** The mean of the piece's vectors, which its sign codes are taken around. */
  centre: Float32Array;
  /** The sum of the piece's vectors (the index's centroid, ranking.ts's baseline). */
  sum: Float64Array;
}

/**
 * A piece's vectors in int8 (a row of table `shardCodes`, under its vector row's key): each row
 * as `quantiseRow` makes it, what a cold start loads (a quarter of the f32 bytes).
 */
export interface ShardCodes {
  /** The key of the piece's vector row. */
  id: number;
  count: number;
  /** `count × dims` codes, row i for the piece's `ids[i]`. */
  codes: Int8Array;
  /** One scale per row: row i's vector ≈ `codes[i] × scales[i]`. */
  scales: Float32Array;
}

/**
 * The tables a piece lives in; without `shardHeads` (the version 2 upgrade) pieces are written
 * whole, as before; without `shardCodes` (the version 3 upgrade) with no int8 part.
 */
export interface ShardTables {
  shards: Table<ChunkShard, number>;
  shardHeads?: Table<ShardHead, number>;
  shardCodes?: Table<ShardCodes, number>;
}

/** The index terms of a shard's chunks: a shard vocabulary, then each chunk's terms in it. */
export interface PackedWords {
  /** `TOKENIZER_VERSION` of the tokeniser that made them. */
  version: number;
  /** The distinct terms of the shard. */
  vocab: string[];
  /** `count + 1` offsets: chunk i's terms are `terms[offsets[i] .. offsets[i + 1])`. */
  offsets: Uint32Array;
  /** Indices into `vocab`, distinct within a chunk. */
  terms: Uint32Array;
  /** How often each term occurs in its chunk. */
  freqs: Uint16Array;
}

export const SHARD_SCHEMA = '++id, [model+range+count], range';
export const SHARD_HEAD_SCHEMA = 'id, [model+range+count]';
export const SHARD_CODES_SCHEMA = 'id';

/** What a shard needs of a chunk row. */
export type ShardSource = Pick<
  Chunk,
  'id' | 'conversationId' | 'embedding' | 'model' | 'text' | 'turnId' | 'time'
>;

interface PieceKey {
  key: number;
  range: number;
  count: number;
}

const sizeClass = (count: number) => (count < 16 ? 0 : count < 256 ? 1 : 2);

/** Packs chunk rows (ids ascending) of one model and range into a shard. */
export function packShard(model: string, range: number, rows: readonly ShardSource[]): ChunkShard {
  const dims = rows[0]?.embedding.length ?? 0;
  const shard: ChunkShard = {
    model,
    range,
    count: rows.length,
    ids: new Float64Array(rows.length),
    conversations: new Float64Array(rows.length),
    vectors: new Float32Array(rows.length * dims),
    words: packWords(rows.map((r) => tokenize(r.text))),
    turns: Float64Array.from(rows, (r) => r.turnId),
    times: Float64Array.from(rows, (r) => timeOf(r.time)),
  };
  rows.forEach((r, i) => {
    shard.ids[i] = r.id!;
    shard.conversations[i] = r.conversationId;
    shard.vectors.set(r.embedding, i * dims);
  });
  return shard;
}

/** A row's time in ms (NaN for a row without a valid one). */
export function timeOf(time: Date | undefined): number {
  return time instanceof Date ? time.getTime() : NaN;
}

/** Each chunk's terms (in order, repeats kept: `tokenize`) packed against one vocabulary. */
export function packWords(docs: readonly (readonly string[])[]): PackedWords {
  const ids = new Map<string, number>();
  const offsets = new Uint32Array(docs.length + 1);
  const terms: number[] = [];
  const freqs: number[] = [];
  const tf = new Map<number, number>();
  docs.forEach((doc, i) => {
    tf.clear();
    for (const t of doc) {
      let id = ids.get(t);
      if (id === undefined) ids.set(t, (id = ids.size));
      tf.set(id, (tf.get(id) ?? 0) + 1);
    }
    for (const [id, n] of tf) {
      terms.push(id);
      freqs.push(Math.min(n, 65_535));
    }
    offsets[i + 1] = terms.length;
  });
  return {
    version: TOKENIZER_VERSION,
    vocab: [...ids.keys()],
    offsets,
    terms: Uint32Array.from(terms),
    freqs: Uint16Array.from(freqs),
  };
}

/** Whether `s` carries words, turns and times for all its chunks, from the current tokeniser. */
export function hasWords(s: Pick<ChunkShard, 'count' | 'words' | 'turns' | 'times'>): boolean {
  const w = s.words;
  return (
    !!w &&
    w.version === TOKENIZER_VERSION &&
    w.offsets?.length === s.count + 1 &&
    w.terms?.length === w.offsets[s.count] &&
    w.freqs?.length === w.terms.length &&
    s.turns?.length === s.count &&
    s.times?.length === s.count
  );
}

/** The words of chunks `picks` (shard and position in it), in that order, as one packed set. */
function pickWords(picks: readonly { shard: ChunkShard; at: number }[]): PackedWords | undefined {
  if (!picks.every((p) => hasWords(p.shard))) return undefined;
  const ids = new Map<string, number>();
  const remaps = new Map<ChunkShard, Int32Array>();
  const offsets = new Uint32Array(picks.length + 1);
  let total = 0;
  for (const p of picks) {
    const w = p.shard.words!;
    total += w.offsets[p.at + 1] - w.offsets[p.at];
  }
  const terms = new Uint32Array(total);
  const freqs = new Uint16Array(total);
  let n = 0;
  picks.forEach(({ shard, at }, i) => {
    const w = shard.words!;
    let remap = remaps.get(shard);
    if (!remap) remaps.set(shard, (remap = new Int32Array(w.vocab.length).fill(-1)));
    for (let j = w.offsets[at]; j < w.offsets[at + 1]; j++) {
      const local = w.terms[j];
      let id = remap[local];
      if (id < 0) {
        const term = w.vocab[local];
        id = ids.get(term) ?? -1;
        if (id < 0) ids.set(term, (id = ids.size));
        remap[local] = id;
      }
      terms[n] = id;
      freqs[n] = w.freqs[j];
      n++;
    }
    offsets[i + 1] = n;
  });
  return { version: TOKENIZER_VERSION, vocab: [...ids.keys()], offsets, terms, freqs };
}

/** Rows grouped by model, then by range, each group sorted by id. */
function group(rows: readonly ShardSource[]): Map<string, Map<number, ShardSource[]>> {
  const out = new Map<string, Map<number, ShardSource[]>>();
  for (const r of rows) {
    if (r.id === undefined || !r.embedding.length) continue;
    let byRange = out.get(r.model);
    if (!byRange) out.set(r.model, (byRange = new Map()));
    const range = Math.floor(r.id / SHARD_SPAN);
    const list = byRange.get(range);
    if (list) list.push(r);
    else byRange.set(range, [r]);
  }
  for (const byRange of out.values()) {
    for (const list of byRange.values()) list.sort((a, b) => a.id! - b.id!);
  }
  return out;
}

/**
 * The compact part of a whole piece (one with words) stored under `key`: its sign codes are
 * taken around the mean of its own vectors, so a piece needs nothing from the others.
 */
export function headOf(s: ChunkShard, key: number): ShardHead {
  const dims = s.count ? s.vectors.length / s.count : 0;
  const sum = new Float64Array(dims);
  for (let i = 0; i < s.count; i++)
    for (let d = 0; d < dims; d++) sum[d] += s.vectors[i * dims + d];
  const centre = Float32Array.from(sum, (x) => (s.count ? x / s.count : 0));
  const bytes = signCodeBytes(dims);
  const signs = new Uint8Array(s.count * bytes);
  for (let i = 0; i < s.count; i++)
    signCode(s.vectors.subarray(i * dims, (i + 1) * dims), centre, signs, i * bytes);
  return {
    id: key,
    model: s.model,
    range: s.range,
    count: s.count,
    ids: s.ids,
    conversations: s.conversations,
    words: s.words!,
    turns: s.turns!,
    times: s.times!,
    signs,
    centre,
    sum,
  };
}

/** A piece's int8 part (`ShardCodes`) under vector row key `key`. */
export function codesOf(s: ChunkShard, key: number): ShardCodes {
  const dims = s.count ? s.vectors.length / s.count : 0;
  const codes = new Int8Array(s.count * dims);
  const scales = new Float32Array(s.count);
  for (let i = 0; i < s.count; i++)
    scales[i] = quantiseRow(s.vectors.subarray(i * dims, (i + 1) * dims), codes, i * dims);
  return { id: key, count: s.count, codes, scales };
}

/**
 * Writes a whole piece (`packShard`): its vector row and, when their tables are there, its
 * compact part and its int8 part, under one key. Returns the key.
 */
export async function putPiece(t: ShardTables, s: ChunkShard): Promise<number> {
  if (!t.shardHeads || !hasWords(s)) {
    // Without words (a piece of an older row) it has no compact part: a cold start loads whole.
    const key = await t.shards.put(s);
    await t.shardHeads?.delete(key);
    await t.shardCodes?.delete(key);
    return key;
  }
  const { words: _w, turns: _t, times: _s, ...vectors } = s;
  const key = await t.shards.put(vectors);
  await t.shardHeads.put(headOf(s, key));
  await t.shardCodes?.put(codesOf(s, key));
  return key;
}

async function deletePieces(t: ShardTables, keys: number[]): Promise<void> {
  await t.shards.bulkDelete(keys);
  await t.shardHeads?.bulkDelete(keys);
  await t.shardCodes?.bulkDelete(keys);
}

/** Whole pieces (vectors with their words and turns) of vector rows `keys`. */
async function readPieces(t: ShardTables, keys: number[]): Promise<ChunkShard[]> {
  const [rows, heads] = await Promise.all([
    t.shards.bulkGet(keys),
    t.shardHeads ? t.shardHeads.bulkGet(keys) : keys.map(() => undefined),
  ]);
  const out: ChunkShard[] = [];
  rows.forEach((s, i) => {
    if (!s) return;
    const h = heads[i];
    out.push(h && !hasWords(s) ? { ...s, words: h.words, turns: h.turns, times: h.times } : s);
  });
  return out;
}

/** Piece keys of `model` with range in `[lo, hi]`, from the index alone (no vectors read). */
async function pieces(
  table: Table<{ model: string }, number>,
  model: string,
  lo: number,
  hi: number,
): Promise<PieceKey[]> {
  const out: PieceKey[] = [];
  await table
    .where('[model+range+count]')
    .between([model, lo, Dexie.minKey], [model, hi, Dexie.maxKey], true, true)
    .eachKey((key, cursor) => {
      const [, range, count] = key as [string, number, number];
      out.push({ key: cursor.primaryKey as number, range, count });
    });
  return out;
}

/** Replaces shards `keys` (one model and range) with one shard holding all their vectors. */
async function merge(t: ShardTables, keys: readonly number[]): Promise<PieceKey> {
  const rows = await readPieces(t, keys as number[]);
  const dims = rows[0].count ? rows[0].vectors.length / rows[0].count : 0;
  const entries: { id: number; conv: number; shard: ChunkShard; at: number }[] = [];
  for (const s of rows) {
    for (let i = 0; i < s.count; i++)
      entries.push({ id: s.ids[i], conv: s.conversations[i], shard: s, at: i });
  }
  entries.sort((a, b) => a.id - b.id);
  const merged: ChunkShard = {
    model: rows[0].model,
    range: rows[0].range,
    count: entries.length,
    ids: Float64Array.from(entries, (e) => e.id),
    conversations: Float64Array.from(entries, (e) => e.conv),
    vectors: new Float32Array(entries.length * dims),
    words: pickWords(entries),
    turns: Float64Array.from(entries, (e) => e.shard.turns?.[e.at] ?? 0),
    times: Float64Array.from(entries, (e) => e.shard.times?.[e.at] ?? NaN),
  };
  entries.forEach((e, i) =>
    merged.vectors.set(e.shard.vectors.subarray(e.at * dims, (e.at + 1) * dims), i * dims),
  );
  await deletePieces(t, keys as number[]);
  return { key: await putPiece(t, merged), range: merged.range, count: merged.count };
}

/**
 * Adds the vectors of chunk rows (with their ids) to the shards: one new piece per model and
 * range. Call in the transaction that writes the rows; rows already in a shard must be removed
 * first (`removeFromShards`). With `tidy` (the default) the pieces are merged as they pile up
 * (`tidyShards`); a stream of small writes may tidy every few writes instead.
 */
export async function addToShards(
  t: ShardTables,
  rows: readonly ShardSource[],
  { tidy = true }: { tidy?: boolean } = {},
): Promise<void> {
  for (const [model, byRange] of group(rows)) {
    for (const [range, list] of byRange) await putPiece(t, packShard(model, range, list));
    if (tidy) await tidyShards(t, model);
  }
}

/**
 * Merges the pieces of `model`: in its highest range, 16 pieces of a size class (under 16,
 * under 256 vectors) become one of the next class; every lower range becomes one piece. One scan
 * of the index keys finds them; only pieces that merge are read.
 */
export async function tidyShards(t: ShardTables, model: string): Promise<void> {
  const byRange = new Map<number, PieceKey[]>();
  for (const p of await pieces(t.shards, model, -Infinity, Infinity)) {
    const list = byRange.get(p.range);
    if (list) list.push(p);
    else byRange.set(p.range, [p]);
  }
  if (!byRange.size) return;
  const top = Math.max(...byRange.keys());
  for (const [range, list] of byRange) {
    if (range < top) {
      if (list.length > 1)
        await merge(
          t,
          list.map((p) => p.key),
        );
      continue;
    }
    for (let cls = 0; cls < 2; cls++) {
      const same = list.filter((p) => sizeClass(p.count) === cls);
      if (same.length < MERGE_AT) continue;
      const merged = await merge(
        t,
        same.map((p) => p.key),
      );
      list.splice(0, list.length, ...list.filter((p) => !same.includes(p)), merged);
    }
  }
}

/** Removes chunk ids from every shard (of any model) holding them. */
export async function removeFromShards(t: ShardTables, ids: readonly number[]): Promise<void> {
  const byRange = new Map<number, Set<number>>();
  for (const id of ids) {
    const range = Math.floor(id / SHARD_SPAN);
    let set = byRange.get(range);
    if (!set) byRange.set(range, (set = new Set()));
    set.add(id);
  }
  for (const [range, gone] of byRange) {
    const keys = await t.shards.where('range').equals(range).primaryKeys();
    for (const s of await readPieces(t, keys)) {
      const keep: number[] = [];
      for (let i = 0; i < s.count; i++) if (!gone.has(s.ids[i])) keep.push(i);
      if (keep.length === s.count) continue;
      if (!keep.length) {
        await deletePieces(t, [s.id!]);
        continue;
      }
      const dims = s.vectors.length / s.count;
      const next: ChunkShard = {
        ...s,
        count: keep.length,
        ids: Float64Array.from(keep, (i) => s.ids[i]),
        conversations: Float64Array.from(keep, (i) => s.conversations[i]),
        vectors: new Float32Array(keep.length * dims),
        words: pickWords(keep.map((at) => ({ shard: s, at }))),
        ...(s.turns ? { turns: Float64Array.from(keep, (i) => s.turns![i]) } : {}),
        ...(s.times ? { times: Float64Array.from(keep, (i) => s.times![i]) } : {}),
      };
      keep.forEach((i, j) =>
        next.vectors.set(s.vectors.subarray(i * dims, (i + 1) * dims), j * dims),
      );
      await putPiece(t, next);
    }
  }
}

/** Vectors of `model` held in shards, from the index alone. */
export async function shardVectorCount(t: ShardTables, model: string): Promise<number> {
  let n = 0;
  for (const p of await pieces(t.shards, model, -Infinity, Infinity)) n += p.count;
  return n;
}

/**
 * The compact parts of every piece of `model` when each piece has one, from the current
 * tokeniser; undefined otherwise (a database written before them: load the whole pieces).
 */
export async function readHeads(t: ShardTables, model: string): Promise<ShardHead[] | undefined> {
  if (!t.shardHeads) return undefined;
  const [rows, heads] = await Promise.all([
    pieces(t.shards, model, -Infinity, Infinity),
    pieces(t.shardHeads, model, -Infinity, Infinity),
  ]);
  const counts = new Map(heads.map((p) => [p.key, p.count]));
  if (rows.some((p) => counts.get(p.key) !== p.count)) return undefined;
  const out = await t.shardHeads.bulkGet(rows.map((p) => p.key));
  if (!out.every((h) => h !== undefined && hasWords(h) && h.signs?.length)) return undefined;
  return out as ShardHead[];
}

/**
 * Calls `visit` with every shard of `model`, reading `perRead` rows at a time so that only a
 * few shards are in memory at once (at 1M chunks, all f32 vectors would be 1.5 GB). The next
 * read is already under way while `visit` handles the current one. With `whole`, each comes
 * with its words and turns (from its compact part); without, only the vector rows are read.
 */
export async function eachShard(
  t: ShardTables,
  model: string,
  visit: (shard: ChunkShard) => void,
  { perRead = 4, whole = true }: { perRead?: number; whole?: boolean } = {},
): Promise<void> {
  const keys = (await pieces(t.shards, model, -Infinity, Infinity)).map((p) => p.key);
  const read = (i: number) => {
    if (i >= keys.length) return null;
    const batch = keys.slice(i, i + perRead);
    return whole ? readPieces(t, batch) : t.shards.bulkGet(batch);
  };
  let next = read(0);
  for (let i = 0; next; i += perRead) {
    const current = await next;
    next = read(i + perRead);
    for (const s of current) if (s) visit(s);
  }
}

/**
 * Rebuilds the shards of `model` (every part) from its chunk rows (when they disagree: rows
 * written by an older version, or by hand), reading the rows range by range; `onProgress` hears
 * the rows done of all after each range (and 0 first). Call in a rw transaction over the chunk
 * table and the shard tables.
 */
export async function rebuildShards(
  chunks: Table<Chunk, number>,
  t: ShardTables,
  model: string,
  onProgress?: (progress: IndexProgress) => void,
): Promise<void> {
  await deletePieces(
    t,
    (await pieces(t.shards, model, -Infinity, Infinity)).map((p) => p.key),
  );
  if (t.shardHeads) {
    // Parts left without their vector row (a version that did not know them) go too.
    const orphans = (await pieces(t.shardHeads, model, -Infinity, Infinity)).map((p) => p.key);
    await t.shardHeads.bulkDelete(orphans);
  }
  if (t.shardCodes) {
    // Int8 parts without a vector row (of any model: the table has no model index) go too.
    const [coded, live] = await Promise.all([
      t.shardCodes.toCollection().primaryKeys(),
      t.shards.toCollection().primaryKeys(),
    ]);
    const held = new Set(live);
    await t.shardCodes.bulkDelete(coded.filter((k) => !held.has(k)));
  }
  const ids = await chunks.where('model').equals(model).primaryKeys();
  ids.sort((a, b) => a - b);
  onProgress?.({ done: 0, total: ids.length });
  // Range by range, awaiting only Dexie's own promises and putPiece here: the rows of one range
  // are at most SHARD_SPAN.
  for (let i = 0; i < ids.length;) {
    const range = Math.floor(ids[i] / SHARD_SPAN);
    let end = i;
    while (end < ids.length && Math.floor(ids[end] / SHARD_SPAN) === range) end++;
    const got = await chunks.bulkGet(ids.slice(i, end));
    const rows = got.filter((r): r is Chunk => !!r?.embedding.length);
    if (rows.length) await putPiece(t, packShard(model, range, rows));
    i = end;
    onProgress?.({ done: end, total: ids.length });
  }
}
