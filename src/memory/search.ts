// Entry search over the in-memory index (docs/search.md): every candidate scored by the one
// ranking function (ranking.ts) from its lexical matches (own words, snapshot words) and its
// vectors (own, snapshot chunks), with what made it match. No row reads.
import type { Table } from 'dexie';
import type { ModelInfo } from '../embeddings/types';
import type { EntryIndex, EntryRef } from './entry-index';
import { inParent, type LexicalMatch, type LexicalQuery } from './lexical/bm25-index';
import type { SemanticIndex } from './semantic-index';
import { tokenize } from './lexical/tokenize';
import { parentOf } from './paths';
import {
  baselineCosine,
  CHAT_WEIGHT,
  floorMatch,
  fuse,
  HEADING_WEIGHT,
  NEIGHBOUR_WEIGHT,
  rank,
  relativeRelevance,
  semanticRelevance,
  withContext,
  withSnapshot,
  type Signals,
} from './ranking';
import { dot, dotRow, maxDotRows } from './scoring';
import type { Chunk, ChunkView, ContextChunk, MatchReason } from './types';

export interface EntryHit {
  ref: EntryRef;
  /** Fused lexical and semantic relevance, 0..1, on its own scale, its heading's evidence in. */
  match: number;
  /**
   * The match of the entry alone (its text and snapshot), without its heading's evidence:
   * floors apply to it, so a heading's other entries do not ride along.
   */
  ownMatch: number;
  /** The match relative to the search's best (ranking.ts `relativeRelevance`): the blend's. */
  relevance: number;
  recency: number;
  score: number;
  /** Highest raw cosine of the entry or its snapshot chunks (0 without a model). */
  similarity: number;
  why: MatchReason;
}

export interface EntryQuery {
  text: string;
  /** The query's vector, when the model is ready. */
  vector?: Float32Array;
  info?: ModelInfo;
  signals?: Signals;
  /** The query's baseline cosine among the memories searched (ranking.ts `baselineCosine`). */
  baseline?: number;
}

/** `q` with its baseline cosine among the entries of `idx`. */
export function withEntryBaseline(idx: EntryIndex, q: EntryQuery): EntryQuery {
  if (!q.vector || !q.info) return q;
  const { sumDot, count } = idx.centroidDot(q.vector);
  return { ...q, baseline: baselineCosine(sumDot, count, q.info) };
}

/**
 * Scores `refs` (entries at or below `within`) against the query and returns those with any
 * relevance, best first (ties: the newer, then path order). Across the headings below `within`
 * (two or more), a heading as a whole is evidence for each entry directly under it
 * (HEADING_WEIGHT): its entries' words as one text, and its best entry's meaning.
 */
export function searchEntries(
  idx: EntryIndex,
  refs: readonly EntryRef[],
  q: EntryQuery,
  nowMs: number,
  bias: number,
  within = '',
): EntryHit[] {
  const signals: Signals = q.vector && q.info ? (q.signals ?? 'both') : 'lexical';
  if (q.baseline === undefined) q = withEntryBaseline(idx, q);
  const lex = idx.lexical(q.text);
  const scored: (EntryHit & { lexical: number; semantic: number; heading: string })[] = [];
  const headingSem = new Map<string, number>();
  for (const ref of refs) {
    const own = lex.own.get(ref.id);
    const snap = lex.snapshot.get(ref.id);
    const lexical = withSnapshot(own?.relevance ?? 0, snap?.relevance ?? 0);
    let semantic = 0;
    let similarity = 0;
    let semOwn = 0;
    let semSnap = 0;
    if (q.vector && q.info && ref.vectorRow >= 0 && idx.entryVectors && idx.chunkVectors) {
      const cosOwn = dotRow(q.vector, idx.entryVectors.buffer, ref.vectorRow, idx.dims);
      const cosSnap = ref.chunkCount
        ? maxDotRows(q.vector, idx.chunkVectors.buffer, ref.chunkRow, ref.chunkCount, idx.dims)
        : -1;
      similarity = Math.max(cosOwn, cosSnap);
      semOwn = semanticRelevance(cosOwn, q.info, q.baseline);
      semSnap = ref.chunkCount ? semanticRelevance(cosSnap, q.info, q.baseline) : 0;
      semantic = withSnapshot(semOwn, semSnap);
    }
    const parent = parentOf(ref.path);
    const heading = HEADING_WEIGHT > 0 && isBelow(parent, within) ? parent : '';
    if (heading && !(semantic <= (headingSem.get(heading) ?? -1)))
      headingSem.set(heading, semantic);
    const match = fuse(lexical, semantic, signals);
    const ownMask = own?.mask ?? 0;
    const snapMask = snap?.mask ?? 0;
    scored.push({
      ref,
      match,
      ownMatch: match,
      relevance: 0,
      recency: 0,
      score: 0,
      similarity,
      lexical,
      semantic,
      heading,
      why: {
        terms: termsOf(lex.query, ownMask | snapMask),
        match: round(match),
        lexical: round(lexical),
        semantic: round(semantic),
        fromSnapshot:
          (snapMask & ~ownMask) !== 0 || (semSnap > semOwn && signals !== 'lexical' && semSnap > 0),
      },
    });
  }
  // One heading alone tells its entries nothing apart.
  const acrossHeadings = headingSem.size > 1;
  const out: EntryHit[] = [];
  for (const { lexical, semantic, heading, ...hit } of scored) {
    if (!(hit.ownMatch > 0)) continue;
    if (acrossHeadings && heading) {
      hit.match = fuse(
        withContext(lexical, lex.headings().get(heading) ?? 0, HEADING_WEIGHT),
        withContext(semantic, headingSem.get(heading) ?? 0, HEADING_WEIGHT),
        signals,
      );
      hit.why.match = round(hit.match);
    }
    out.push(hit);
  }
  let best = 0;
  for (const h of out) if (h.match > best) best = h.match;
  for (const h of out)
    Object.assign(h, rank(relativeRelevance(h.match, best), h.ref.modified, nowMs, bias));
  out.sort(
    (a, b) =>
      b.score - a.score || b.ref.modified - a.ref.modified || a.ref.path.localeCompare(b.ref.path),
  );
  return out;
}

/** Whether heading `path` lies strictly below `within` (the root '' is below nothing). */
function isBelow(path: string, within: string): boolean {
  if (path === '' || path === within) return false;
  return within === '' || path.startsWith(`${within}/`);
}

/** The query terms (index form) set in `mask`. */
export function termsOf(q: LexicalQuery, mask: number): string[] {
  return q.terms.filter((_, i) => mask & (1 << i));
}

/** Context chunks of an entry that match the query, best first, at most `max`. */
export function matchingChunks(
  chunks: readonly ContextChunk[],
  q: EntryQuery,
  max: number,
): ChunkView[] {
  const terms = new Set(tokenize(q.text));
  const useVec = q.vector && q.info && q.signals !== 'lexical';
  const scored = chunks.map((c) => {
    const words = tokenize(c.text);
    const hits = words.filter((w) => terms.has(w));
    const lexical = terms.size ? new Set(hits).size / terms.size : 0;
    const cos = useVec && c.embedding.length === q.vector!.length ? dot(q.vector!, c.embedding) : 0;
    const semantic = useVec ? semanticRelevance(cos, q.info!, q.baseline) : 0;
    return {
      view: { role: c.role, text: c.text, similarity: round(cos) },
      relevance: fuse(lexical, semantic, useVec ? (q.signals ?? 'both') : 'lexical'),
      strong: hits.length > 0 || (useVec && cos > q.info!.threshold),
    };
  });
  return scored
    .filter((s) => s.strong)
    .sort((a, b) => b.relevance - a.relevance)
    .slice(0, max)
    .map((s) => ({ ...s.view, relevance: round(s.relevance) }));
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/** Candidates per result each signal brings to the fusion of a chunk search. */
const CHUNK_CANDIDATES_PER_RESULT = 4;
const MIN_CHUNK_CANDIDATES = 64;
/**
 * A sentence's context (docs/search.md): its turn is the unit (the turn's words, counted once,
 * are the sentence's); words that only the turns just before and after hold count at
 * NEIGHBOUR_WEIGHT.
 */
const TURN_CONTEXT = { parent: 1, neighbours: NEIGHBOUR_WEIGHT, after: true };

/** A chunk ranked from the index alone (no row read): what a search and recall decide on. */
export interface ChunkMatch {
  id: number;
  /** Fused relevance on its own scale (thresholds use it). */
  match: number;
  /**
   * The match from the sentence and its turn alone, without its chat's evidence, its words
   * weighed by the query's coverage (`floorMatch`): a floor is applied to it, so a chat's other
   * topics do not ride along, nor a common word when the question's other words are in no chat.
   */
  ownMatch: number;
  /**
   * Cosine with the query (0 without a model): exact while the f32 vectors are in RAM, else the
   * int8 one (`SemanticIndex.exactCosines`; docs/search.md, "Two stages", gives its error).
   */
  similarity: number;
  terms: string[];
}

export interface ChunkSearchHit extends Omit<ChunkMatch, 'id'> {
  row: Chunk;
  /** Exact cosine with the query (0 without a model), from the row when the ranking's was int8. */
  similarity: number;
  /** Relative to the best match of the search: the blend's. */
  relevance: number;
  recency: number;
  score: number;
}

/**
 * The chunks of a conversation (or of all with `null`) that match the query, by the one ranking
 * function, best first: the vector index and the word index each bring their best `m`
 * candidates; the union is ranked with a bound for the cosine a word-only candidate lacks, then
 * the best `leaders` are ranked with their cosines from the vectors in RAM (exact while the f32
 * vectors fit, else int8). No chunk row is read.
 */
export async function rankChunks(
  idx: SemanticIndex,
  conversationId: number | null,
  q: EntryQuery,
  m: number,
  leaders: number,
): Promise<ChunkMatch[]> {
  const signals: Signals = q.vector && q.info ? (q.signals ?? 'both') : 'lexical';
  const cos = new Map<number, number>();
  let cosBound = -1;
  if (signals !== 'lexical') {
    const vec = await idx.search(conversationId, q.vector!, m);
    for (const h of vec) cos.set(h.id, h.similarity);
    cosBound = vec.length >= m ? vec[vec.length - 1].similarity : -1;
  }
  const query = idx.words.prepare(q.text);
  // A chat sitting as a whole is evidence for each of its sentences (CHAT_WEIGHT): its words as
  // one text, its best sentence's meaning; across chats and within one long chat alike. One
  // sitting alone tells its sentences nothing apart.
  const bySitting = CHAT_WEIGHT > 0 && idx.episodeCount > 1;
  const sittingWords =
    bySitting && signals !== 'semantic' ? idx.words.episodeMatches(query) : undefined;
  const weights = sittingWords ? { ...TURN_CONTEXT, group: CHAT_WEIGHT } : TURN_CONTEXT;
  // A chunk's words, and with them the words of its whole turn (what the person said at once):
  // a sentence rarely holds every word of a question about its turn.
  const words = new Map<number, LexicalMatch>();
  const lexical = new Map<number, number>();
  if (signals !== 'semantic') {
    for (const w of idx.words.searchTop(
      query,
      conversationId,
      m,
      weights,
      cos.keys(),
      sittingWords,
    )) {
      words.set(w.key, w);
      lexical.set(w.key, inParent(w.relevance, w.context ?? 0, TURN_CONTEXT.parent));
    }
  }
  let baseline: number | undefined;
  if (signals !== 'lexical') {
    const { sumDot, count } = idx.centroidDot(q.vector!);
    baseline = baselineCosine(sumDot, count, q.info!);
  }
  const sem = (c: number | undefined) =>
    signals === 'lexical' ? 0 : semanticRelevance(c ?? cosBound, q.info!, baseline);
  // A sitting's meaning as a whole: its best sentence's among the vector candidates.
  const sittingSem = new Map<number, number>();
  if (bySitting && signals !== 'lexical') {
    for (const [id, c] of cos) {
      const sitting = idx.episodeOf(id);
      if (sitting === undefined) continue;
      const r = sem(c);
      if (r > (sittingSem.get(sitting) ?? 0)) sittingSem.set(sitting, r);
    }
  }
  /** A sentence's match: its own (with its turn) and, over several sittings, its sitting's. */
  const matchOf = (lex: number, semantic: number, id: number) => {
    const sitting = bySitting ? idx.episodeOf(id) : undefined;
    if (sitting === undefined) return fuse(lex, semantic, signals);
    return fuse(
      withContext(lex, sittingWords?.[sitting] ?? 0, CHAT_WEIGHT),
      signals === 'lexical' ? 0 : withContext(semantic, sittingSem.get(sitting) ?? 0, CHAT_WEIGHT),
      signals,
    );
  };
  // A sentence that matches nothing itself is no candidate, whatever its chat adds: it would
  // take a leader's place and be dropped.
  const first = [...new Set([...cos.keys(), ...words.keys()])]
    .filter((id) => fuse(lexical.get(id) ?? 0, sem(cos.get(id)), signals) > 0)
    .map((id) => ({ id, rel: matchOf(lexical.get(id) ?? 0, sem(cos.get(id)), id) }))
    .sort((a, b) => b.rel - a.rel)
    .slice(0, leaders);
  // Word-only leaders get their cosine (the bound ranked them so far).
  const lacking = signals === 'lexical' ? [] : first.filter((c) => !cos.has(c.id)).map((c) => c.id);
  const exact = lacking.length ? await idx.similarities(lacking, q.vector!) : undefined;
  // A leader's meaning is read with its turn's, as its words are: the turn's sentences taken
  // together, where that matches better than the sentence alone (docs/search.md).
  const turnCos =
    signals === 'lexical'
      ? undefined
      : idx.turnCosines(
          first.map((c) => c.id),
          q.vector!,
        );
  const out: ChunkMatch[] = [];
  for (const { id } of first) {
    const c = cos.get(id) ?? exact?.get(id);
    // The floor holds the sentence's own meaning: a turn's mean direction lies nearer every
    // question than one sentence does (held to the floor, it let unrelated turns in).
    const ownSem = signals === 'lexical' ? 0 : sem(c ?? -1);
    const turn = turnCos?.get(id);
    const semantic = turn === undefined ? ownSem : Math.max(ownSem, sem(turn));
    const ownMatch = floorMatch(lexical.get(id) ?? 0, ownSem, query.coverage, signals);
    if (!(ownMatch > 0)) continue;
    const w = words.get(id);
    out.push({
      id,
      match: matchOf(lexical.get(id) ?? 0, semantic, id),
      ownMatch,
      similarity: c ?? 0,
      terms: w ? termsOf(query, w.mask) : [],
    });
  }
  return out.sort((a, b) => b.match - a.match || b.id - a.id);
}

/** Candidates each signal brings to a chunk search for `k` results (rankChunks' `m`). */
export function chunkCandidates(k: number): number {
  return Math.max(MIN_CHUNK_CANDIDATES, k * CHUNK_CANDIDATES_PER_RESULT);
}

/**
 * The best `k` chunks of a conversation (or of all with `null`) by the one ranking function
 * (`rankChunks`), blended with recency by `bias`, with their rows: only the `k` returned are
 * read (with a recency blend, every leader, for its time), in one transaction. Their
 * similarity is exact: where the ranking's cosines were int8, from the rows read.
 */
export async function searchChunkIndex(
  chunks: Table<Chunk, number>,
  idx: SemanticIndex,
  conversationId: number | null,
  q: EntryQuery,
  k: number,
  bias: number,
  nowMs: number,
): Promise<ChunkSearchHit[]> {
  const m = chunkCandidates(k);
  const ranked = await rankChunks(idx, conversationId, q, m, bias > 0 ? m : k * 2);
  const read = bias > 0 ? ranked : ranked.slice(0, k);
  const rows = await chunks.bulkGet(read.map((c) => c.id));
  const rescore = q.vector && q.info && q.signals !== 'lexical' && !idx.exactCosines;
  const out: ChunkSearchHit[] = [];
  rows.forEach((row, i) => {
    if (!row || row.id === undefined) return;
    const { id: _id, ...hit } = read[i];
    if (rescore && row.model === idx.model && row.embedding.length === q.vector!.length)
      hit.similarity = dot(q.vector!, row.embedding);
    out.push({ row, ...hit, relevance: 0, recency: 0, score: 0 });
  });
  let best = 0;
  for (const h of out) if (h.match > best) best = h.match;
  for (const h of out) {
    const time = h.row.time instanceof Date ? h.row.time.getTime() : 0;
    Object.assign(h, rank(relativeRelevance(h.match, best), time, nowMs, bias));
  }
  // Sentences of one turn often match alike (its words and its meaning are theirs): the one
  // whose own meaning is nearest (exact, from its row) comes first.
  out.sort(
    (a, b) => b.score - a.score || b.similarity - a.similarity || (b.row.id ?? 0) - (a.row.id ?? 0),
  );
  return out.slice(0, k);
}
