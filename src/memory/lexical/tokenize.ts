// Words for the lexical index (docs/search.md): the same function for stored text and for
// queries, so both meet on the same terms. Unicode-aware: case and compatibility forms folded
// (NFKC), Latin diacritics folded, possessives and apostrophes dropped, numbers kept whole
// ("1,000" → "1000", "3.5" stays), English words stemmed (Porter) after irregular forms are
// taken back to their word ("went" → "go", irregular.ts), English stop words left out,
// and runs of Chinese, Japanese or Korean characters (written without spaces) indexed as
// overlapping character pairs, so a query matches whatever a word boundary would have been.
import { stemmer } from 'stemmer';
import { baseForm } from './irregular';
import { ENGLISH_STOP_WORDS } from './stop-words';

/**
 * Version of the terms this file makes. Terms are stored (the chunk shards keep their chunks'
 * terms): change this with any change to what `tokenize` returns, so stored terms are rebuilt.
 */
export const TOKENIZER_VERSION = 3;

/** Longest text tokenised (characters); a longer query or entry is cut here. */
export const MAX_TOKENISED_CHARS = 20_000;
/** Longest single word kept (a run of letters longer than this is noise, not a word). */
const MAX_WORD = 40;

const TOKEN = /\p{N}+(?:[.,]\p{N}+)*|[\p{L}\p{M}\p{N}]+(?:'[\p{L}\p{M}]+)*/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUNS =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]+/gu;
const LATIN_WORD = /^[\p{Script=Latin}\p{M}\p{N}]+$/u;
const ASCII_LETTERS = /^[a-z]+$/;
const MARKS = /\p{M}+/gu;

// Stems of the words seen, so a corpus's vocabulary is stemmed once (bounded).
const stems = new Map<string, string>();
const STEM_CACHE = 50_000;

function stem(word: string): string {
  let s = stems.get(word);
  if (s === undefined) {
    s = word.length > 3 && ASCII_LETTERS.test(word) ? stemmer(word) : word;
    if (stems.size >= STEM_CACHE) stems.clear();
    stems.set(word, s);
  }
  return s;
}

function pushWord(raw: string, out: string[]): void {
  if (/^\p{N}/u.test(raw)) {
    // A number: "1,000" and "1000" are one term; a decimal point stays.
    out.push(raw.replace(/,/g, ''));
    return;
  }
  if (ENGLISH_STOP_WORDS.has(raw)) return;
  let w = raw.replace(/'s$/, '').replace(/'/g, '');
  if (LATIN_WORD.test(w)) w = w.normalize('NFD').replace(MARKS, '');
  if (!w || w.length > MAX_WORD) return;
  if (w.length === 1 && ASCII_LETTERS.test(w)) return;
  if (ENGLISH_STOP_WORDS.has(w)) return;
  out.push(stem(baseForm(w)));
}

function pushCjk(run: string, out: string[]): void {
  const chars = [...run];
  if (chars.length === 1) {
    out.push(chars[0]);
    return;
  }
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
}

/** The index terms of `text`, in order, repeats kept (term frequency counts them). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  if (typeof text !== 'string' || !text) return out;
  const t = text
    .slice(0, MAX_TOKENISED_CHARS)
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[’‘`]/g, "'");
  for (const m of t.matchAll(TOKEN)) {
    const token = m[0];
    if (!CJK.test(token)) {
      pushWord(token, out);
      continue;
    }
    for (const part of token.matchAll(CJK_RUNS)) {
      if (CJK.test(part[0])) pushCjk(part[0], out);
      else pushWord(part[0], out);
    }
  }
  return out;
}

/** The distinct terms of a query, in their first order. */
export function queryTerms(text: string): string[] {
  return [...new Set(tokenize(text))];
}
