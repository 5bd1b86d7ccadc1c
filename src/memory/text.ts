// Sentence splitting and token estimates for the semantic index (docs/design.md,
// "Semantic index").
import { withoutThinking } from '../llm/thinking';

/** Sentences longer than this many (estimated) tokens are split further. */
export const MAX_CHUNK_TOKENS = 128;

/** Han, kana and hangul: written without spaces, about a token a character or more. */
const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;

/**
 * Estimated tokens of `text` for a typical BPE tokenizer: about 4 characters or 0.75 words
 * per token, whichever says more, and a token for each Chinese, Japanese or Korean character
 * (the rule for words would count a run of them as one word, a quarter or less of what a model's
 * tokenizer makes of it). Used until the server's tokenizer is plugged in.
 */
export function estimateTokens(text: string): number {
  const t = text.trim();
  if (!t) return 0;
  const cjk = t.match(CJK_CHAR)?.length ?? 0;
  const rest = cjk ? t.replace(CJK_CHAR, ' ').trim() : t;
  if (!rest) return cjk;
  const words = rest.split(/\s+/).length;
  const punct = (rest.match(/[^\p{L}\p{N}\s]/gu) ?? []).length;
  return cjk + Math.max(1, Math.ceil(Math.max(rest.length / 4, words * 1.3 + punct * 0.5)));
}

const sentenceSegmenter = (() => {
  let segmenter: Intl.Segmenter | undefined;
  return () => (segmenter ??= new Intl.Segmenter(undefined, { granularity: 'sentence' }));
})();

/**
 * Characters handed to `Intl.Segmenter` at once. V8's sentence segmenter takes time quadratic
 * in its input's length (16,000 sentences in one string: 6 s), so a long text is walked in
 * windows of this size, each cut after its last complete sentence.
 */
export const SEGMENT_WINDOW_CHARS = 4 * 1024;

/** Sentences of `text` as the segmenter finds them, walking windows of bounded size. */
function* sentenceSegments(text: string): Generator<string> {
  const segmenter = sentenceSegmenter();
  let pos = 0;
  while (pos < text.length) {
    if (text.length - pos <= SEGMENT_WINDOW_CHARS) {
      for (const { segment } of segmenter.segment(text.slice(pos))) yield segment;
      return;
    }
    const window = text.slice(pos, pos + SEGMENT_WINDOW_CHARS);
    // Every sentence but the last is complete; the last may go on past the window.
    let last = -1;
    let previous: string | undefined;
    for (const { segment, index } of segmenter.segment(window)) {
      if (previous !== undefined) yield previous;
      previous = segment;
      last = index;
    }
    if (last > 0) {
      pos += last;
      continue;
    }
    // One sentence fills the window: cut it at its last space (or anywhere but inside a
    // surrogate pair); it is split into word runs later anyway.
    let cut = window.search(/\s\S*$/);
    if (cut <= 0) {
      cut = window.length;
      if (/[\uD800-\uDBFF]/.test(window[cut - 1] ?? '')) cut--;
    }
    yield window.slice(0, cut);
    pos += cut;
  }
}

/**
 * Characters of one turn that go into the semantic index. A reply this long only comes from a
 * server that ignored its token limit (a 128k-token context holds about 512 KB); indexing 5 MB
 * of it would take minutes and fill the index with one message. The message itself is kept
 * whole.
 */
export const MAX_INDEXED_TURN_CHARS = 256 * 1024;

/**
 * What of a message is indexed: its text, a reply's without the thinking that starts it (what
 * it said: src/llm/thinking.ts), up to MAX_INDEXED_TURN_CHARS (`indexedPart`).
 */
export function indexedText(role: string, text: string): string {
  return indexedPart(saidText(role, text));
}

/** What a message said: its text, a reply's without the thinking that starts it. */
export function saidText(role: string, text: string): string {
  return role === 'assistant' ? withoutThinking(text) : text;
}

/** The part of a turn's text that is indexed: all of it, or its start cut at a space. */
export function indexedPart(text: string): string {
  if (text.length <= MAX_INDEXED_TURN_CHARS) return text;
  const head = text.slice(0, MAX_INDEXED_TURN_CHARS);
  const space = head.search(/\s\S*$/);
  return space > 0 ? head.slice(0, space) : head;
}

/** Splits text into sentences with `Intl.Segmenter`, then long sentences into word runs. */
export function splitSentences(text: string, maxTokens = MAX_CHUNK_TOKENS): string[] {
  const out: string[] = [];
  for (const segment of sentenceSegments(text)) {
    const s = segment.trim();
    if (!s) continue;
    if (estimateTokens(s) <= maxTokens) {
      out.push(s);
      continue;
    }
    const words = s.split(/\s+/);
    let piece: string[] = [];
    for (const w of words) {
      piece.push(w);
      if (estimateTokens(piece.join(' ')) >= maxTokens * 0.8) {
        out.push(piece.join(' '));
        piece = [];
      }
    }
    if (piece.length) out.push(piece.join(' '));
  }
  return out;
}

/** Words of a path for embedding: segments, camelCase and snake_case split apart. */
export function pathWords(path: string): string {
  return path
    .split('/')
    .map((seg) =>
      seg
        .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
        .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
        .replace(/[_\-.]+/g, ' '),
    )
    .join(' ');
}

/** The readable text of a JSON value: strings and keys, in order, capped. */
export function contentText(value: unknown, maxChars = 2000): string {
  const parts: string[] = [];
  let size = 0;
  const walk = (v: unknown) => {
    if (size > maxChars) return;
    if (typeof v === 'string') {
      parts.push(v);
      size += v.length;
    } else if (typeof v === 'number' || typeof v === 'boolean') {
      parts.push(String(v));
      size += 6;
    } else if (Array.isArray(v)) {
      v.forEach(walk);
    } else if (v && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        parts.push(pathWords(k));
        size += k.length;
        walk(item);
      }
    }
  };
  walk(value);
  return parts.join(' ').slice(0, maxChars);
}
