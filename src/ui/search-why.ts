// Why a search hit matched, in a form people can read: the query's words marked where they
// occur in shown text (found with the index's own tokeniser, so "running" marks for "run"),
// an excerpt that keeps the first marked word in view, the strength of a match in words, the
// relevance and recency parts of its score, and the cut-off between relevant and weaker hits.
// Pure: no DOM, so the component renders the segments as text nodes and <mark>s.
import { tokenize } from '../memory/lexical/tokenize';
import { DEFAULT_RECENCY_BIAS, MIN_RELEVANCE } from '../memory/ranking';

/** A run of displayed text, marked when it holds one of the matched words. */
export interface Segment {
  text: string;
  match: boolean;
}

// The tokeniser's word shape (src/memory/lexical/tokenize.ts), with typographic apostrophes
// accepted as it does once it has folded them.
const WORD = /\p{N}+(?:[.,]\p{N}+)*|[\p{L}\p{M}\p{N}]+(?:['’‘`][\p{L}\p{M}]+)*/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUNS =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]+/gu;

/** Longest text searched for words to mark; the rest is returned unmarked. */
const MAX_MARKED_CHARS = 20_000;

function hits(text: string, terms: ReadonlySet<string>): boolean {
  return tokenize(text).some((t) => terms.has(t));
}

/** Marked [start, end) ranges of one word of `text` at `at`. */
function wordRanges(word: string, at: number, terms: ReadonlySet<string>, out: number[][]): void {
  if (!CJK.test(word)) {
    if (hits(word, terms)) out.push([at, at + word.length]);
    return;
  }
  // Chinese, Japanese and Korean are indexed as overlapping character pairs: mark both
  // characters of every pair that matched (a lone character is its own term).
  for (const part of word.matchAll(CJK_RUNS)) {
    const start = at + (part.index ?? 0);
    if (!CJK.test(part[0])) {
      if (hits(part[0], terms)) out.push([start, start + part[0].length]);
      continue;
    }
    const chars = [...part[0]];
    const offsets: number[] = [];
    let o = start;
    for (const c of chars) {
      offsets.push(o);
      o += c.length;
    }
    offsets.push(o);
    if (chars.length === 1) {
      if (hits(chars[0], terms)) out.push([offsets[0], offsets[1]]);
      continue;
    }
    for (let i = 0; i + 1 < chars.length; i++) {
      if (hits(chars[i] + chars[i + 1], terms)) out.push([offsets[i], offsets[i + 2]]);
    }
  }
}

/**
 * `text` split into segments, those holding a word whose index form is in `terms` marked.
 * Adjacent marked pieces (a matched CJK run) merge into one segment; joined, the segments give
 * back `text` exactly.
 */
export function highlight(text: string, terms: Iterable<string>): Segment[] {
  const set = terms instanceof Set ? (terms as ReadonlySet<string>) : new Set(terms);
  if (!text) return [];
  if (set.size === 0) return [{ text, match: false }];
  const ranges: number[][] = [];
  const head = text.slice(0, MAX_MARKED_CHARS);
  for (const m of head.matchAll(WORD)) wordRanges(m[0], m.index, set, ranges);
  const out: Segment[] = [];
  let at = 0;
  for (const [start, end] of ranges) {
    if (end <= at) continue;
    const from = Math.max(start, at);
    const last = out[out.length - 1];
    if (from > at) out.push({ text: text.slice(at, from), match: false });
    else if (last?.match) {
      // Overlapping or touching CJK pairs: one mark.
      last.text += text.slice(from, end);
      at = end;
      continue;
    }
    out.push({ text: text.slice(from, end), match: true });
    at = end;
  }
  if (at < text.length) out.push({ text: text.slice(at), match: false });
  return out;
}

/** Index of the first character of the first marked word of `text`, or -1. */
export function firstMatch(text: string, terms: Iterable<string>): number {
  let at = 0;
  for (const s of highlight(text, terms)) {
    if (s.match) return at;
    at += s.text.length;
  }
  return -1;
}

/** Characters of context kept before the first marked word when the excerpt starts later. */
const LEAD = 60;

/**
 * `text` as one line of at most `max` characters (an ellipsis marks each cut), starting early
 * enough that its first marked word is in view: the start of the text when the word is near
 * it, else shortly before the word, at a word boundary.
 */
export function excerpt(text: string, terms: Iterable<string>, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= max) return line;
  const first = firstMatch(line.slice(0, MAX_MARKED_CHARS), terms);
  let start = 0;
  if (first > max - LEAD) {
    start = first - LEAD;
    // Back to the start of a word (not past the marked one).
    const space = line.lastIndexOf(' ', start);
    start = space < 0 ? 0 : space + 1;
  }
  const lead = start > 0 ? '…' : '';
  const room = max - lead.length;
  let body = line.slice(start, start + room);
  if (start + room < line.length) {
    // End at a word boundary when one is near, so no half word is left unmarked.
    body = body.slice(0, room - 1);
    const space = body.lastIndexOf(' ');
    if (space > room * 0.75) body = body.slice(0, space);
    body += '…';
  }
  return lead + body;
}

/** How well a hit matches, in words. */
export type Strength = 'strong' | 'good' | 'weak';

/** From this relevance on a match reads as strong (the cut-off, MIN_RELEVANCE, makes it good). */
export const STRONG_RELEVANCE = 0.7;

/** The strength of a hit of fused relevance `relevance` (unknown counts as good). */
export function strengthOf(relevance: number | undefined): Strength {
  if (relevance === undefined || !Number.isFinite(relevance)) return 'good';
  if (relevance >= STRONG_RELEVANCE) return 'strong';
  return relevance >= MIN_RELEVANCE ? 'good' : 'weak';
}

/** Whether a hit is above the cut-off (a hit with no relevance, as when browsing, is). */
export function isRelevant(hit: { relevance?: number }): boolean {
  return hit.relevance === undefined || !(hit.relevance < MIN_RELEVANCE);
}

/** The two parts of a hit's score: score = relevance part + recency part. */
export interface ScoreParts {
  /** (1 − recencyBias) × relevance. */
  relevance: number;
  /** recencyBias × recency. */
  recency: number;
}

/** The relevance and recency parts of a hit's score under `recencyBias`. */
export function scoreParts(
  hit: { relevance?: number; recency?: number },
  recencyBias = DEFAULT_RECENCY_BIAS,
): ScoreParts {
  const bias = Math.min(1, Math.max(0, recencyBias));
  return {
    relevance: (1 - bias) * clamp01(hit.relevance ?? 0),
    recency: bias * clamp01(hit.recency ?? 0),
  };
}

function clamp01(n: number): number {
  return Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
}

/** The engine's hits split at the cut-off, each part in the engine's order. */
export function splitAtCutoff<T extends { relevance?: number }>(
  hits: readonly T[],
): { relevant: T[]; weaker: T[] } {
  const relevant: T[] = [];
  const weaker: T[] = [];
  for (const h of hits) (isRelevant(h) ? relevant : weaker).push(h);
  return { relevant, weaker };
}
