// A compact in-memory inverted index with BM25 scoring (docs/search.md). Documents are numeric
// keys (entry ids, chunk ids) with an optional group (a conversation id) to search within, and,
// where they have times, episodes: a group's runs of documents without a long pause (a chat's
// sittings).
// Postings are typed arrays per term (a cold start's terms each a stretch of one shared pair); a
// removed document is skipped at once and its postings dropped by the next compaction (once
// removed ones pass a quarter of the live ones), so writes stay cheap and document frequencies
// stay close. Measured against MiniSearch in bench/README.md ("Lexical index"): the library's
// per-posting objects do not fit the 1M-chunk memory target.
import { selectTop } from '../kernels/select';
import { queryTerms, tokenize } from './tokenize';

/** How much a document's parent, and the parents next to it, add to its relevance. */
export interface ContextWeights {
  /**
   * The parent's share: a document's relevance is the better of its own and this share of its
   * parent's (`inParent`). 1: the parent (a turn) is the unit, its words counted once however
   * its sentences split them.
   */
  parent: number;
  /** The share of words only the parents next to it hold. */
  neighbours: number;
  /** Whether the parent after counts too, or only the one before. */
  after?: boolean;
  /**
   * The share of the episode's words (a chat sitting's, all its documents'), counted after the
   * parent's: evidence of the whole sitting for each of its sentences (docs/search.md). 0 or
   * absent: none. Only informative when the search spans several episodes.
   */
  group?: number;
}

export interface Bm25Options {
  /**
   * A pause longer than this (ms) between a group's documents, by the times they are added
   * with, starts a new episode of the group. Absent: a group is one episode.
   */
  episodeGap?: number;
}

/** Documents' terms already counted (as the chunk shards store them): see `addPacked`. */
export interface PackedTerms {
  /** The distinct terms the documents use. */
  vocab: readonly string[];
  /** Document i's terms are `terms[offsets[i] .. offsets[i + 1])`. */
  offsets: ArrayLike<number>;
  /** Indices into `vocab`, distinct within a document. */
  terms: ArrayLike<number>;
  /** Each term's frequency in its document. */
  freqs: ArrayLike<number>;
}

/** BM25 parameters: the textbook values (Robertson & Zaragoza), not tuned on our data. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** Most query terms scored (a 10,000-character query is cut to its first distinct words). */
export const MAX_QUERY_TERMS = 32;

/** The postings of a term not yet in any document: shared, never written (length 0). */
const NO_SLOTS = new Int32Array(0);
const NO_TFS = new Uint16Array(0);

/**
 * A term's postings: `slots[at .. at + n)`, with their term frequencies in `tfs` alike. A cold
 * start's terms share one pair of arrays (`addPackedMany`), each its own stretch of them (tens of
 * thousands of typed-array views cost more than the postings they hold); a term that outgrows
 * its stretch moves to arrays of its own.
 */
class Postings {
  slots = NO_SLOTS;
  tfs = NO_TFS;
  at = 0;
  cap = 0;
  n = 0;
  /** The term's number during an `addPackedMany` call, −1 outside one. */
  tag = -1;

  push(slot: number, tf: number): void {
    if (this.n === this.cap) {
      const cap = Math.max(4, this.n * 2);
      const slots = new Int32Array(cap);
      slots.set(this.slots.subarray(this.at, this.at + this.n));
      this.slots = slots;
      const tfs = new Uint16Array(cap);
      tfs.set(this.tfs.subarray(this.at, this.at + this.n));
      this.tfs = tfs;
      this.at = 0;
      this.cap = cap;
    }
    const i = this.at + this.n++;
    this.slots[i] = slot;
    this.tfs[i] = Math.min(tf, 65_535);
  }
}

/** A document's lexical match with a query. */
export interface LexicalMatch {
  key: number;
  /** BM25 score. */
  score: number;
  /**
   * Calibrated lexical relevance in [0, 1]: the idf-weighted share of the query's indexed
   * terms the document holds, each term counting at most once, less for a long document.
   */
  relevance: number;
  /** Bit i set when query term i occurs. */
  mask: number;
  /** The document's parent (a chunk's turn), 0 when none was given. */
  parent: number;
  /**
   * From `searchTop` only: the parent's relevance as a whole (the query terms any of its
   * documents holds, idf-weighted), 0 without a parent.
   */
  context?: number;
}

export interface LexicalQuery {
  /** Distinct query terms (`queryTerms`). */
  terms: string[];
  /** idf of each term in this index (0 for a term no document holds). */
  idf: number[];
  /** Sum of the idf of the terms some document holds: the most a document can match. */
  total: number;
  /**
   * The share of the query's information that some document holds: `total` over itself plus,
   * for each query term no document holds, the idf a term of no document has here (as rare as
   * a term can be). 1 when every term is held (or the query has none). Relevance is measured
   * against `total`, so a document holding the one query word that a small index knows matches
   * fully; a floor weighs it by this share too (docs/search.md, "Words no memory holds").
   */
  coverage: number;
}

export class Bm25Index {
  private readonly terms = new Map<string, Postings>();
  private readonly slotOf = new Map<number, number>();
  private keys: number[] = [];
  private groups: number[] = [];
  private parents: number[] = [];
  /** Each slot's parent as a dense number (parents are message ids: sparse), −1 for none. */
  private parentSlots = new Int32Array(1024);
  private readonly parentSlotOf = new Map<number, number>();
  /** The parent added before and after each parent in its group (−1: none). */
  private parentBefore = new Int32Array(1024);
  private parentAfter = new Int32Array(1024);
  /** Each dense parent's live documents. */
  private parentLive = new Int32Array(1024);
  /** Each dense parent's own number (its message id), group, and the key of its first document. */
  private parentIds: number[] = [];
  private parentGroups: number[] = [];
  private parentKeys: number[] = [];
  /** A parent came before one added earlier in its group (shards read out of order): relink. */
  private chainsStale = false;
  private readonly lastParentOf = new Map<number, number>();
  /**
   * Each slot's episode (dense numbers, never reused until `clear`): a group's run of documents
   * without a pause over `episodeGap`; without times, the whole group.
   */
  private episodeSlots = new Int32Array(1024);
  /** Each episode's group. */
  private episodeGroups: number[] = [];
  /** Each episode's words in all and its live documents. */
  private episodeLengths = new Float64Array(64);
  private episodeDocs = new Int32Array(64);
  private episodes = 0;
  private liveEpisodes = 0;
  /** Each group's latest episode and the latest time seen in it. */
  private readonly lastEpisodeOf = new Map<number, { episode: number; time: number }>();
  private readonly episodeGap: number;
  private lengths = new Uint32Array(1024);
  private alive = new Uint8Array(1024);
  private slotCount = 0;
  /** Every document's key is above the one added before it (chunks arrive in id order). */
  private keysAscending = true;
  private live = 0;
  private deadPostings = 0;
  private totalLength = 0;
  private postings = 0;
  // Scratch for scoring, grown with the slots.
  private acc = new Float32Array(1024);
  private rel = new Float32Array(1024);
  private masks = new Uint32Array(1024);
  private parentMasks = new Uint32Array(1024);
  private touched = new Int32Array(1024);

  constructor(options: Bm25Options = {}) {
    this.episodeGap = options.episodeGap ?? Infinity;
  }

  get size(): number {
    return this.live;
  }

  /** Episodes with a live document (a chat's sittings; a group is one without times). */
  get episodeCount(): number {
    return this.liveEpisodes;
  }

  /** A live document's episode (a number of this index's own), undefined when not indexed. */
  episodeOf(key: number): number | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.episodeSlots[slot];
  }

  has(key: number): boolean {
    return this.slotOf.has(key);
  }

  /** A live document's group (a chunk's conversation), undefined when it is not indexed. */
  groupOf(key: number): number | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.groups[slot];
  }

  /** A live document's parent (a chunk's turn), undefined when it is not indexed or has none. */
  parentOf(key: number): number | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.parents[slot] || undefined;
  }

  /**
   * The parent after `parent` in its group by their numbers (a chat's next turn), passing over
   * those with no live document (deleted since), and the key of a live document of it;
   * undefined when there is none.
   */
  nextParent(parent: number): { parent: number; key: number } | undefined {
    const p = this.parentSlotOf.get(parent);
    if (p === undefined) return undefined;
    this.linkParents();
    let next = this.parentAfter[p];
    for (let steps = 0; next >= 0 && this.parentLive[next] === 0 && steps < 64; steps++)
      next = this.parentAfter[next];
    if (next < 0 || this.parentLive[next] === 0) return undefined;
    const key = this.parentKeys[next];
    return this.slotOf.has(key) ? { parent: this.parentIds[next], key } : undefined;
  }

  /**
   * Links each group's parents in the order of their numbers (a chat's turns as said), where
   * some came out of that order (a cold start reads the shards' pieces as stored, not by id).
   */
  private linkParents(): void {
    if (!this.chainsStale) return;
    this.chainsStale = false;
    const { parentIds, parentGroups } = this;
    const order = Array.from(parentIds.keys()).sort(
      (a, b) => parentGroups[a] - parentGroups[b] || parentIds[a] - parentIds[b],
    );
    order.forEach((p, i) => {
      const group = parentGroups[p];
      const prev = i > 0 && parentGroups[order[i - 1]] === group ? order[i - 1] : -1;
      const next = parentGroups[order[i + 1]] === group ? order[i + 1] : -1;
      this.parentBefore[p] = prev;
      this.parentAfter[p] = next;
      if (next < 0) this.lastParentOf.set(group, p);
    });
  }

  /**
   * The `limit` highest keys of `group`'s live documents whose parent is at most `parentAtMost`,
   * highest first (a chat's newest sentences, up to a turn). One pass over the documents, no
   * storage read: IndexedDB walks an index backwards slowly (bench/README.md, "Saves").
   */
  newestKeys(group: number, limit: number, parentAtMost = Infinity): number[] {
    const top: number[] = []; // ascending, at most `limit`
    if (!this.lastEpisodeOf.has(group) || limit <= 0) return top;
    const { alive, groups, keys, parents } = this;
    for (let s = this.slotCount - 1; s >= 0; s--) {
      if (groups[s] !== group || !alive[s] || parents[s] > parentAtMost) continue;
      const key = keys[s];
      if (top.length === limit) {
        // Keys rise with the slots: every document before this one has a lower key.
        if (this.keysAscending) break;
        if (key <= top[0]) continue;
        top.shift();
      }
      let i = top.length;
      while (i > 0 && top[i - 1] > key) i--;
      top.splice(i, 0, key);
    }
    return top.reverse();
  }

  /** Indexes `text` under `key` (replacing what was there), said at `time` (ms) if known. */
  add(key: number, text: string, group = 0, parent = 0, time = NaN): void {
    this.addTerms(key, tokenize(text), group, parent, time);
  }

  addTerms(key: number, terms: readonly string[], group = 0, parent = 0, time = NaN): void {
    const slot = this.newSlot(key, group, parent, terms.length, time);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, n] of tf) {
      this.postingsOf(t).push(slot, n);
      this.postings++;
    }
  }

  /**
   * Indexes `keys.length` documents whose terms are already counted, as the chunk shards store
   * them: one dictionary lookup per distinct term instead of tokenising every text (the cold
   * load's cost). Document i is `keys[i]`, in `groups[i]`, child of `parents[i]`, said at
   * `times[i]` (ms; absent: unknown).
   */
  addPacked(
    keys: ArrayLike<number>,
    groups: ArrayLike<number>,
    parents: ArrayLike<number>,
    packed: PackedTerms,
    times?: ArrayLike<number>,
  ): void {
    const lists = packed.vocab.map((t) => this.postingsOf(t));
    const { offsets, terms, freqs } = packed;
    this.grow(this.slotCount + keys.length);
    for (let i = 0; i < keys.length; i++) {
      let length = 0;
      for (let j = offsets[i]; j < offsets[i + 1]; j++) length += freqs[j];
      const slot = this.newSlot(keys[i], groups[i], parents[i], length, times?.[i] ?? NaN);
      for (let j = offsets[i]; j < offsets[i + 1]; j++) lists[terms[j]]?.push(slot, freqs[j]);
      this.postings += offsets[i + 1] - offsets[i];
    }
  }

  /**
   * `addPacked` for many batches at once (a cold start's shards). Each term's postings are
   * counted over all batches and allocated once; each batch is turned term by term in arrays of
   * its own size, so a term's postings are appended as a run rather than one at a time across
   * the whole index (the cache misses, not the arithmetic, were the load's cost).
   */
  addPackedMany(
    batches: readonly {
      keys: ArrayLike<number>;
      groups: ArrayLike<number>;
      parents: ArrayLike<number>;
      packed: PackedTerms;
      times?: ArrayLike<number>;
    }[],
  ): void {
    // A key held already or twice would free a slot on the way (and may compact or clear the
    // index under the lists below): such batches go one by one. A cold start has neither.
    if (!this.freshKeys(batches)) {
      for (const c of batches) this.addPacked(c.keys, c.groups, c.parents, c.packed, c.times);
      return;
    }
    // Each batch's vocabulary as numbers of this call, one per term however many batches use it.
    const lists: Postings[] = [];
    const numbers = batches.map(({ packed: { vocab } }) => {
      const num = new Int32Array(vocab.length);
      for (let k = 0; k < vocab.length; k++) {
        const p = this.postingsOf(vocab[k]);
        if (p.tag < 0) p.tag = lists.push(p) - 1;
        num[k] = p.tag;
      }
      return num;
    });
    // Each term's stretch of one pair of arrays: the postings it holds, then the batches'.
    const cursor = new Int32Array(lists.length);
    batches.forEach((b, k) => {
      const { terms, offsets } = b.packed;
      const num = numbers[k];
      const end = offsets[b.keys.length] ?? 0;
      for (let j = 0; j < end; j++) cursor[num[terms[j]]]++;
    });
    let total = 0;
    for (let g = 0; g < lists.length; g++) {
      const count = cursor[g] + lists[g].n;
      cursor[g] = total;
      total += count;
    }
    const slots = new Int32Array(total);
    const tfs = new Uint16Array(total);
    lists.forEach((p, g) => {
      if (p.n) {
        slots.set(p.slots.subarray(p.at, p.at + p.n), cursor[g]);
        tfs.set(p.tfs.subarray(p.at, p.at + p.n), cursor[g]);
      }
      p.at = cursor[g];
      cursor[g] += p.n;
    });
    let docs = 0;
    for (const b of batches) docs += b.keys.length;
    this.grow(this.slotCount + docs);
    const add = (k: number, i: number) => {
      const b = batches[k];
      const { offsets, terms, freqs } = b.packed;
      const num = numbers[k];
      let length = 0;
      for (let j = offsets[i]; j < offsets[i + 1]; j++) length += freqs[j];
      const slot = this.newSlot(
        b.keys[i],
        b.groups[i],
        b.parents[i],
        length,
        b.times?.[i] ?? NaN,
        true,
      );
      for (let j = offsets[i]; j < offsets[i + 1]; j++) {
        const at = cursor[num[terms[j]]]++;
        slots[at] = slot;
        tfs[at] = freqs[j];
      }
      this.postings += offsets[i + 1] - offsets[i];
    };
    // The documents in the order of their keys (a chat's sentences as said: its sittings are
    // numbered by time as they come), merged where batches' ranges interleave.
    inKeyOrder(
      batches.map((b) => b.keys),
      add,
    );
    for (const p of lists) {
      p.slots = slots;
      p.tfs = tfs;
      p.n = p.cap = cursor[p.tag] - p.at;
      p.tag = -1;
    }
  }

  /**
   * Whether no key of `batches` is held already or comes twice. Keys that rise through the
   * batches, above every key held (a cold start's shards), are known to be without a set.
   */
  private freshKeys(batches: readonly { keys: ArrayLike<number> }[]): boolean {
    let last = this.slotCount && this.keysAscending ? this.keys[this.slotCount - 1] : -Infinity;
    let rising = this.slotCount === 0 || this.keysAscending;
    for (const b of batches) {
      for (let i = 0; rising && i < b.keys.length; i++) {
        rising = b.keys[i] > last;
        last = b.keys[i];
      }
    }
    if (rising) return true;
    const seen = new Set<number>();
    for (const b of batches) {
      for (let i = 0; i < b.keys.length; i++) {
        const key = b.keys[i];
        if (seen.has(key) || this.slotOf.has(key)) return false;
        seen.add(key);
      }
    }
    return true;
  }

  /** A slot for `key` (its earlier one freed, unless the caller knows it has none: `fresh`). */
  private newSlot(
    key: number,
    group: number,
    parent: number,
    length: number,
    time: number,
    fresh = false,
  ): number {
    if (!fresh && this.slotOf.has(key)) this.remove(key);
    const slot = this.slotCount++;
    this.grow(this.slotCount);
    if (slot > 0 && key <= this.keys[slot - 1]) this.keysAscending = false;
    this.slotOf.set(key, slot);
    this.keys[slot] = key;
    this.groups[slot] = group;
    this.parents[slot] = parent;
    // A turn's sentences come one after another: the slot before has the same parent, mostly.
    this.parentSlots[slot] = !parent
      ? -1
      : slot > 0 && this.parents[slot - 1] === parent && this.groups[slot - 1] === group
        ? this.parentSlots[slot - 1]
        : this.parentSlot(parent, group);
    const ps = this.parentSlots[slot];
    // A parent's documents all gone (replaced), this one stands for it.
    if (ps >= 0 && this.parentLive[ps]++ === 0) this.parentKeys[ps] = key;
    const e = (this.episodeSlots[slot] = this.episodeSlot(group, time));
    if (this.episodeDocs[e]++ === 0) this.liveEpisodes++;
    this.episodeLengths[e] += length;
    this.lengths[slot] = length;
    this.alive[slot] = 1;
    this.live++;
    this.totalLength += length;
    return slot;
  }

  private parentSlot(parent: number, group: number): number {
    let p = this.parentSlotOf.get(parent);
    if (p !== undefined) return p;
    this.parentSlotOf.set(parent, (p = this.parentSlotOf.size));
    this.parentIds[p] = parent;
    this.parentGroups[p] = group;
    if (p >= this.parentMasks.length) {
      this.parentMasks = doubled(this.parentMasks, Uint32Array);
      this.parentBefore = doubled(this.parentBefore, Int32Array);
      this.parentAfter = doubled(this.parentAfter, Int32Array);
      this.parentLive = doubled(this.parentLive, Int32Array);
    }
    const last = this.lastParentOf.get(group) ?? -1;
    // A turn said before the chat's latest (an older message indexed again, a piece read out of
    // order) goes in its place: a few steps back, or linked last and all relinked before the
    // next search (`linkParents`).
    let before = last;
    let after = -1;
    for (let steps = 0; before >= 0 && this.parentIds[before] > parent; steps++) {
      if (steps === 16) {
        this.chainsStale = true;
        before = last;
        after = -1;
        break;
      }
      after = before;
      before = this.parentBefore[before];
    }
    this.parentBefore[p] = before;
    this.parentAfter[p] = after;
    if (before >= 0) this.parentAfter[before] = p;
    if (after >= 0) this.parentBefore[after] = p;
    else this.lastParentOf.set(group, p);
    return p;
  }

  /**
   * The episode of a document of `group` said at `time`: its group's latest, unless it comes
   * more than `episodeGap` after the latest time seen there (an unknown time never starts one).
   */
  private episodeSlot(group: number, time: number): number {
    const last = this.lastEpisodeOf.get(group);
    if (last && !(time - last.time > this.episodeGap)) {
      if (time > last.time || Number.isNaN(last.time)) last.time = time;
      return last.episode;
    }
    const e = this.episodes++;
    if (e >= this.episodeDocs.length) {
      this.episodeLengths = doubled(this.episodeLengths, Float64Array);
      this.episodeDocs = doubled(this.episodeDocs, Int32Array);
    }
    this.episodeGroups[e] = group;
    this.lastEpisodeOf.set(group, { episode: e, time });
    return e;
  }

  private postingsOf(term: string): Postings {
    let p = this.terms.get(term);
    if (!p) this.terms.set(term, (p = new Postings()));
    return p;
  }

  remove(key: number): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return;
    this.slotOf.delete(key);
    this.alive[slot] = 0;
    this.live--;
    const ps = this.parentSlots[slot];
    if (ps >= 0 && --this.parentLive[ps] > 0 && this.parentKeys[ps] === key) {
      // Another of its documents stands for it: a turn's sentences lie side by side.
      for (let d = 1; d <= 64; d++) {
        const s = [slot + d, slot - d].find(
          (x) => x >= 0 && x < this.slotCount && this.alive[x] && this.parentSlots[x] === ps,
        );
        if (s === undefined) continue;
        this.parentKeys[ps] = this.keys[s];
        break;
      }
    }
    this.totalLength -= this.lengths[slot];
    const e = this.episodeSlots[slot];
    this.episodeLengths[e] -= this.lengths[slot];
    if (--this.episodeDocs[e] === 0) this.liveEpisodes--;
    this.deadPostings += this.lengths[slot] ? 1 : 0; // a hint; compaction recounts
    if (this.slotOf.size === 0) this.clear();
    // Removed documents still count in document frequencies until compacted: keep them few (a
    // quarter of the live ones at most; in a small index, where a chat deleted is a large share
    // of the words, its words would otherwise still weigh as held).
    else if (this.slotCount - this.live > this.live / 4) this.compact();
  }

  clear(): void {
    this.terms.clear();
    this.slotOf.clear();
    this.keys = [];
    this.groups = [];
    this.parents = [];
    this.parentSlotOf.clear();
    this.parentIds = [];
    this.parentGroups = [];
    this.parentKeys = [];
    this.parentLive.fill(0);
    this.chainsStale = false;
    this.lastParentOf.clear();
    this.lastEpisodeOf.clear();
    this.episodeGroups = [];
    this.episodeLengths.fill(0);
    this.episodeDocs.fill(0);
    this.episodes = 0;
    this.liveEpisodes = 0;
    this.slotCount = 0;
    this.keysAscending = true;
    this.live = 0;
    this.totalLength = 0;
    this.postings = 0;
    this.deadPostings = 0;
  }

  /** Rough bytes held: postings, per-document arrays and the term dictionary. */
  memoryBytes(): number {
    // Typed arrays by their size; JS arrays at 8 bytes an element; Map entries at ~40 bytes.
    let bytes = this.lengths.byteLength + this.alive.byteLength + this.parentSlots.byteLength;
    bytes += this.episodeSlots.byteLength + this.episodeLengths.byteLength;
    bytes += this.episodeDocs.byteLength;
    bytes += this.episodeGroups.length * 8 + this.lastEpisodeOf.size * 60;
    bytes += this.acc.byteLength * 3 + this.touched.byteLength + this.parentMasks.byteLength * 4;
    bytes += (this.keys.length + this.groups.length + this.parents.length) * 8;
    bytes += (this.parentIds.length + this.parentGroups.length + this.parentKeys.length) * 8;
    bytes += (this.slotOf.size + this.parentSlotOf.size) * 40;
    // Postings by the buffers they hold: a cold start's terms share one pair (`addPackedMany`),
    // kept whole while any term still uses it.
    const buffers = new Set<ArrayBufferLike>();
    for (const [t, p] of this.terms) {
      bytes += 40 + 72 + t.length * 2;
      buffers.add(p.slots.buffer).add(p.tfs.buffer);
    }
    for (const b of buffers) bytes += b.byteLength;
    return bytes;
  }

  /** The query's terms with their idf here. */
  prepare(text: string): LexicalQuery {
    const terms = queryTerms(text).slice(0, MAX_QUERY_TERMS);
    const n = this.live;
    let total = 0;
    let absent = 0;
    const idf = terms.map((t) => {
      const df = this.terms.get(t)?.n ?? 0;
      if (!n) return 0;
      const v = Math.log(1 + (n - Math.min(df, n) + 0.5) / (Math.min(df, n) + 0.5));
      if (!df) {
        absent += v;
        return 0;
      }
      total += v;
      return v;
    });
    return { terms, idf, total, coverage: total + absent > 0 ? total / (total + absent) : 1 };
  }

  /**
   * Every live document holding a query term, optionally only those of `group`, unordered.
   * Costs the length of the query terms' postings.
   */
  search(q: LexicalQuery, group?: number | null): LexicalMatch[] {
    const n = this.score(q, group);
    const out: LexicalMatch[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = this.match(this.touched[i], q);
    this.reset(n);
    return out;
  }

  /**
   * The best `m` live documents (of `group`, or all), best first, by their relevance with their
   * parent's as context (`ContextWeights`): a sentence counts the words of its whole turn, and
   * less, those of the turns around it. Selected from the scoring scratch (a typed heap), so
   * only the `m` kept become objects. Documents `also` (candidates of another signal) that
   * match come after them, so every candidate gets its words' relevance.
   */
  searchTop(
    q: LexicalQuery,
    group: number | null | undefined,
    m: number,
    weights: ContextWeights,
    also: Iterable<number> = [],
    episodeMatches?: Float32Array,
  ): LexicalMatch[] {
    this.linkParents();
    const n = this.score(q, group);
    const { touched, masks, rel, parentSlots, parentMasks, episodeSlots } = this;
    for (let i = 0; i < n; i++) {
      const slot = touched[i];
      const p = parentSlots[slot];
      if (p >= 0) parentMasks[p] |= masks[slot];
    }
    const byGroup = (weights.group ?? 0) > 0 && !!episodeMatches;
    const groupOf = (slot: number) => (byGroup ? (episodeMatches[episodeSlots[slot]] ?? 0) : 0);
    const combined = new Float32Array(n);
    const context = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const slot = touched[i];
      const own = Math.min(1, rel[slot] / q.total);
      const ctx = this.contextOf(q, parentSlots[slot], weights);
      context[i] = ctx;
      const inTurn = inParent(own, ctx, weights.parent);
      combined[i] = byGroup ? 1 - (1 - inTurn) * (1 - weights.group! * groupOf(slot)) : inTurn;
    }
    const out: LexicalMatch[] = [];
    const kept = new Set<number>();
    const hitOf = (slot: number, ctx: number) => {
      const hit = this.match(slot, q);
      hit.context = ctx;
      out.push(hit);
      kept.add(slot);
    };
    for (const i of selectTop(combined, n, m)) hitOf(touched[i], context[i]);
    for (const key of also) {
      const slot = this.slotOf.get(key);
      if (slot === undefined || !masks[slot] || kept.has(slot)) continue;
      hitOf(slot, this.contextOf(q, parentSlots[slot], weights));
    }
    for (let i = 0; i < n; i++) {
      const p = parentSlots[touched[i]];
      if (p >= 0) parentMasks[p] = 0;
    }
    this.reset(n);
    return out;
  }

  /**
   * The relevance of each group holding a query term, by group: its episode's as one document
   * (`episodeMatches`), the best of them where a group has several. A heading as a whole, when
   * the groups are headings (added without times: each one episode).
   */
  groupMatches(q: LexicalQuery): Map<number, number> {
    const out = new Map<number, number>();
    this.episodeMatches(q).forEach((r, e) => {
      const g = this.episodeGroups[e];
      if (r > (out.get(g) ?? 0)) out.set(g, r);
    });
    return out;
  }

  /**
   * Each episode's relevance as one document (a chat sitting as a whole), indexed by episode
   * (`episodeOf`; 0 for one without a query term), what `searchTop` takes as its
   * `episodeMatches`: the calibrated BM25 relevance over the episodes, where a term's frequency
   * is its count in all of the episode's documents, its idf is over episodes, and the length is
   * the episode's. A word every sitting holds (a speaker's name) tells them apart little and
   * counts for little.
   */
  episodeMatches(q: LexicalQuery): Float32Array {
    const { alive, episodes, liveEpisodes, episodeSlots, episodeLengths } = this;
    const out = new Float32Array(episodes);
    if (!q.total || !liveEpisodes) return out;
    const avg = this.totalLength / liveEpisodes || 1;
    const tf = new Float64Array(episodes);
    const seen: number[] = [];
    let total = 0;
    const terms: { idf: number; groups: number[]; tfs: number[] }[] = [];
    for (const t of q.terms) {
      const p = this.terms.get(t);
      if (!p) continue;
      for (let j = p.at; j < p.at + p.n; j++) {
        const slot = p.slots[j];
        if (!alive[slot]) continue;
        const g = episodeSlots[slot];
        if (tf[g] === 0) seen.push(g);
        tf[g] += p.tfs[j];
      }
      if (!seen.length) continue;
      const df = Math.min(seen.length, liveEpisodes);
      const idf = Math.log(1 + (liveEpisodes - df + 0.5) / (df + 0.5));
      total += idf;
      terms.push({ idf, groups: seen.slice(), tfs: seen.map((g) => tf[g]) });
      for (const g of seen) tf[g] = 0;
      seen.length = 0;
    }
    if (!total) return out;
    for (const { idf, groups: gs, tfs } of terms) {
      for (let i = 0; i < gs.length; i++) {
        const g = gs[i];
        const f = tfs[i];
        const norm = f / (f + BM25_K1 * (1 - BM25_B + (BM25_B * episodeLengths[g]) / avg));
        out[g] += (idf * Math.min(1, norm * (BM25_K1 + 1))) / total;
      }
    }
    return out;
  }

  /**
   * A parent's relevance as context: the query terms its documents hold, plus, at
   * `weights.neighbours`, those that only the parents next to it (in its group) hold.
   */
  private contextOf(q: LexicalQuery, p: number, weights: ContextWeights): number {
    if (p < 0) return 0;
    const own = this.parentMasks[p];
    let around = 0;
    if (weights.neighbours > 0) {
      const before = this.parentBefore[p];
      const after = this.parentAfter[p];
      if (before >= 0) around |= this.parentMasks[before];
      if (after >= 0 && weights.after) around |= this.parentMasks[after];
    }
    return maskRelevance(q, own) + weights.neighbours * maskRelevance(q, around & ~own);
  }

  /** Scores the query into the scratch arrays; the touched slots are `touched[0..n)`. */
  private score(q: LexicalQuery, group?: number | null): number {
    if (!q.total || !this.live) return 0;
    const avg = this.totalLength / this.live || 1;
    const { acc, rel, masks, lengths, alive, groups } = this;
    let touched = this.touched;
    let n = 0;
    q.terms.forEach((t, i) => {
      const idf = q.idf[i];
      if (!idf) return;
      const p = this.terms.get(t);
      if (!p) return;
      const bit = 1 << i;
      for (let j = p.at; j < p.at + p.n; j++) {
        const slot = p.slots[j];
        if (!alive[slot]) continue;
        if (group !== undefined && group !== null && groups[slot] !== group) continue;
        const tf = p.tfs[j];
        const norm = tf / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * lengths[slot]) / avg));
        if (masks[slot] === 0) {
          if (n === touched.length) {
            const more = new Int32Array(n * 2);
            more.set(touched);
            this.touched = touched = more;
          }
          touched[n++] = slot;
        }
        masks[slot] |= bit;
        acc[slot] += idf * norm * (BM25_K1 + 1);
        // A term counts at most its idf: once at average length, less in a longer document.
        rel[slot] += idf * Math.min(1, norm * (BM25_K1 + 1));
      }
    });
    return n;
  }

  private match(slot: number, q: LexicalQuery): LexicalMatch {
    return {
      key: this.keys[slot],
      score: this.acc[slot],
      relevance: Math.min(1, this.rel[slot] / q.total),
      mask: this.masks[slot],
      parent: this.parents[slot],
    };
  }

  /** Zeroes the scratch of the `n` touched slots. */
  private reset(n: number): void {
    const { touched, acc, rel, masks } = this;
    for (let i = 0; i < n; i++) {
      const slot = touched[i];
      acc[slot] = 0;
      rel[slot] = 0;
      masks[slot] = 0;
    }
  }

  /**
   * The lexical relevance of each parent (a turn) as a whole: the idf-weighted share of the
   * query's terms that any of its documents among `matches` holds.
   */
  parentRelevance(q: LexicalQuery, matches: readonly LexicalMatch[]): Map<number, number> {
    const masks = new Map<number, number>();
    for (const m of matches) if (m.parent) masks.set(m.parent, (masks.get(m.parent) ?? 0) | m.mask);
    const out = new Map<number, number>();
    if (!q.total) return out;
    for (const [parent, mask] of masks) out.set(parent, maskRelevance(q, mask));
    return out;
  }

  /** Drops dead documents' postings and renumbers the slots. */
  private compact(): void {
    const remap = new Int32Array(this.slotCount).fill(-1);
    let next = 0;
    for (let s = 0; s < this.slotCount; s++) if (this.alive[s]) remap[s] = next++;
    const keys: number[] = new Array(next);
    const groups: number[] = new Array(next);
    const parents: number[] = new Array(next);
    const lengths = new Uint32Array(Math.max(1024, next * 2));
    const parentSlots = new Int32Array(lengths.length);
    const episodeSlots = new Int32Array(lengths.length);
    for (let s = 0; s < this.slotCount; s++) {
      const to = remap[s];
      if (to < 0) continue;
      keys[to] = this.keys[s];
      groups[to] = this.groups[s];
      parents[to] = this.parents[s];
      parentSlots[to] = this.parentSlots[s];
      episodeSlots[to] = this.episodeSlots[s];
      lengths[to] = this.lengths[s];
      this.slotOf.set(this.keys[s], to);
    }
    this.postings = 0;
    for (const [t, p] of this.terms) {
      let w = p.at;
      for (let j = p.at; j < p.at + p.n; j++) {
        const to = remap[p.slots[j]];
        if (to < 0) continue;
        p.slots[w] = to;
        p.tfs[w] = p.tfs[j];
        w++;
      }
      w -= p.at;
      if (!w) this.terms.delete(t);
      else p.n = w;
      this.postings += w;
    }
    this.keys = keys;
    this.groups = groups;
    this.parents = parents;
    this.lengths = lengths;
    this.parentSlots = parentSlots;
    this.episodeSlots = episodeSlots;
    this.alive = new Uint8Array(lengths.length);
    this.alive.fill(1, 0, next);
    this.slotCount = next;
    this.deadPostings = 0;
    this.acc = new Float32Array(lengths.length);
    this.rel = new Float32Array(lengths.length);
    this.masks = new Uint32Array(lengths.length);
  }

  private grow(slots: number): void {
    if (slots <= this.lengths.length) return;
    const cap = Math.max(slots, this.lengths.length * 2);
    const lengths = new Uint32Array(cap);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const parentSlots = new Int32Array(cap);
    parentSlots.set(this.parentSlots);
    this.parentSlots = parentSlots;
    const episodeSlots = new Int32Array(cap);
    episodeSlots.set(this.episodeSlots);
    this.episodeSlots = episodeSlots;
    const alive = new Uint8Array(cap);
    alive.set(this.alive);
    this.alive = alive;
    this.acc = new Float32Array(cap);
    this.rel = new Float32Array(cap);
    this.masks = new Uint32Array(cap);
  }
}

/** A copy of `a` in an array twice its length (the rest zero). */
function doubled<T extends Float64Array | Int32Array | Uint32Array>(
  a: T,
  make: new (n: number) => T,
): T {
  const b = new make(a.length * 2);
  b.set(a);
  return b;
}

/**
 * A document's relevance with its parent's (`ContextWeights.parent`): the better of the two, not
 * their union, since the parent's words include the document's own; adding both would count a
 * sentence's words twice and weigh its turn above the turns around it and its chat.
 */
export function inParent(own: number, parent: number, weight: number): number {
  return Math.max(own, weight * parent);
}

/** The idf-weighted share of the query's terms set in `mask`. */
function maskRelevance(q: LexicalQuery, mask: number): number {
  if (!mask || !q.total) return 0;
  let sum = 0;
  for (let i = 0; i < q.terms.length; i++) if (mask & (1 << i)) sum += q.idf[i];
  return Math.min(1, sum / q.total);
}

/**
 * Calls `visit(k, i)` for every element of `lists` in ascending order where each list ascends
 * (a shard's ids do): list by list where their ranges do not interleave, else merged (a heap of
 * the lists' heads); where one does not, list by list as given.
 */
function inKeyOrder(
  lists: readonly ArrayLike<number>[],
  visit: (k: number, i: number) => void,
): void {
  const ascending = (l: ArrayLike<number>) => {
    for (let i = 1; i < l.length; i++) if (!(l[i - 1] < l[i])) return false;
    return true;
  };
  // Lists out of order themselves are taken as they come.
  if (!lists.every(ascending)) {
    lists.forEach((l, k) => {
      for (let i = 0; i < l.length; i++) visit(k, i);
    });
    return;
  }
  const order = lists
    .map((_, k) => k)
    .filter((k) => lists[k].length > 0)
    .sort((a, b) => lists[a][0] - lists[b][0]);
  let apart = true;
  for (let n = 1; n < order.length && apart; n++) {
    const before = lists[order[n - 1]];
    apart = before[before.length - 1] < lists[order[n]][0];
  }
  if (apart) {
    for (const k of order) for (let i = 0; i < lists[k].length; i++) visit(k, i);
    return;
  }
  // A binary heap of list numbers by their current head.
  const at = new Int32Array(lists.length);
  const heap = order.slice();
  const head = (k: number) => lists[k][at[k]];
  const down = (n: number) => {
    for (;;) {
      const l = 2 * n + 1;
      const r = l + 1;
      let m = n;
      if (l < heap.length && head(heap[l]) < head(heap[m])) m = l;
      if (r < heap.length && head(heap[r]) < head(heap[m])) m = r;
      if (m === n) return;
      [heap[n], heap[m]] = [heap[m], heap[n]];
      n = m;
    }
  };
  for (let n = (heap.length >> 1) - 1; n >= 0; n--) down(n);
  while (heap.length) {
    const k = heap[0];
    visit(k, at[k]++);
    if (at[k] >= lists[k].length) {
      const last = heap.pop()!;
      if (!heap.length) break;
      heap[0] = last;
    }
    down(0);
  }
}
