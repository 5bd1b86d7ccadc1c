// Entry search over the in-memory index (docs/search.md): every candidate scored by the one
// ranking function (ranking.ts) from its lexical matches (own words, snapshot words) and its
// vectors (own, snapshot chunks), with what made it match. No row reads.
import type { Table } from 'dexie';
import type { ModelInfo } from '../embeddings/types';
import type { EntryIndex, EntryRef } from './entry-index';
import type { LexicalMatch, LexicalQuery } from './lexical/bm25-index';
import type { SemanticIndex } from './semantic-index';
import { tokenize } from './lexical/tokenize';
import {
  baselineCosine,
  fuse,
  rank,
  relativeRelevance,
  semanticRelevance,
  SNAPSHOT_WEIGHT,
  withContext,
  withSnapshot,
  type Signals,
} from './ranking';
import { dot, dotRow, maxDotRows } from './scoring';
import type { Chunk, ChunkView, ContextChunk, MatchReason } from './types';

export interface EntryHit {
  ref: EntryRef;
  /** Fused lexical and semantic relevance, 0..1, on its own scale (thresholds use it). */
  match: number;
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
 * Scores `refs` against the query and returns those with any relevance, best first (ties: the
 * newer, then path order).
 */
export function searchEntries(
  idx: EntryIndex,
  refs: readonly EntryRef[],
  q: EntryQuery,
  nowMs: number,
  bias: number,
): EntryHit[] {
  const signals: Signals = q.vector && q.info ? (q.signals ?? 'both') : 'lexical';
  if (q.baseline === undefined) q = withEntryBaseline(idx, q);
  const lex = idx.lexical(q.text);
  const out: EntryHit[] = [];
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
    const match = fuse(lexical, semantic, signals);
    if (!(match > 0)) continue;
    const ownMask = own?.mask ?? 0;
    const snapMask = snap?.mask ?? 0;
    out.push({
      ref,
      match,
      relevance: 0,
      recency: 0,
      score: 0,
      similarity,
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
 * A sentence's context (docs/search.md): its turn's words count in full; words that only the
 * turns just before and after hold count as a snapshot's do (SNAPSHOT_WEIGHT).
 */
const TURN_CONTEXT = { parent: 1, neighbours: SNAPSHOT_WEIGHT, after: true };

export interface ChunkSearchHit {
  row: Chunk;
  /** Fused relevance on its own scale (thresholds use it). */
  match: number;
  /** Relative to the best match of the search: the blend's. */
  relevance: number;
  recency: number;
  score: number;
  similarity: number;
  terms: string[];
}

/**
 * The best `k` chunks of a conversation (or of all with `null`) by the one ranking function:
 * the vector index and the word index each bring their best candidates; the union is ranked
 * with a bound for the cosine a word-only candidate lacks, then the leaders are read and
 * ranked exactly.
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
  const signals: Signals = q.vector && q.info ? (q.signals ?? 'both') : 'lexical';
  const m = Math.max(MIN_CHUNK_CANDIDATES, k * CHUNK_CANDIDATES_PER_RESULT);
  const cos = new Map<number, number>();
  let cosBound = -1;
  if (signals !== 'lexical') {
    const vec = await idx.search(conversationId, q.vector!, m);
    for (const h of vec) cos.set(h.id, h.similarity);
    cosBound = vec.length >= m ? vec[vec.length - 1].similarity : -1;
  }
  const query = idx.words.prepare(q.text);
  // A chunk's words, and with them the words of its whole turn (what the person said at once):
  // a sentence rarely holds every word of a question about its turn.
  const words = new Map<number, LexicalMatch>();
  const lexical = new Map<number, number>();
  if (signals !== 'semantic') {
    for (const w of idx.words.searchTop(query, conversationId, m, TURN_CONTEXT, cos.keys())) {
      words.set(w.key, w);
      lexical.set(w.key, withContext(w.relevance, w.context ?? 0, TURN_CONTEXT.parent));
    }
  }
  let baseline: number | undefined;
  if (signals !== 'lexical') {
    const { sumDot, count } = idx.centroidDot(q.vector!);
    baseline = baselineCosine(sumDot, count, q.info!);
  }
  const sem = (c: number | undefined) =>
    signals === 'lexical' ? 0 : semanticRelevance(c ?? cosBound, q.info!, baseline);
  const first = [...new Set([...cos.keys(), ...words.keys()])]
    .map((id) => ({ id, rel: fuse(lexical.get(id) ?? 0, sem(cos.get(id)), signals) }))
    .filter((c) => c.rel > 0)
    .sort((a, b) => b.rel - a.rel)
    .slice(0, bias > 0 ? m : k * 2);
  const rows = await chunks.bulkGet(first.map((c) => c.id));
  const out: ChunkSearchHit[] = [];
  rows.forEach((row, i) => {
    if (!row || row.id === undefined) return;
    const id = first[i].id;
    let c = cos.get(id);
    if (c === undefined && signals !== 'lexical' && row.embedding.length === q.vector!.length)
      c = dot(q.vector!, row.embedding);
    const w = words.get(id);
    const match = fuse(lexical.get(id) ?? 0, signals === 'lexical' ? 0 : sem(c ?? -1), signals);
    if (!(match > 0)) return;
    out.push({
      row,
      match,
      relevance: 0,
      recency: 0,
      score: 0,
      similarity: c ?? 0,
      terms: w ? termsOf(query, w.mask) : [],
    });
  });
  let best = 0;
  for (const h of out) if (h.match > best) best = h.match;
  for (const h of out) {
    const time = h.row.time instanceof Date ? h.row.time.getTime() : 0;
    Object.assign(h, rank(relativeRelevance(h.match, best), time, nowMs, bias));
  }
  out.sort((a, b) => b.score - a.score || (b.row.id ?? 0) - (a.row.id ?? 0));
  return out.slice(0, k);
}
