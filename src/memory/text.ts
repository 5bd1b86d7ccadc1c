// Sentence splitting and token estimates for the semantic index (docs/design.md,
// "Semantic index").

/** Sentences longer than this many (estimated) tokens are split further. */
export const MAX_CHUNK_TOKENS = 128;

/**
 * Estimated tokens of `text` for a typical BPE tokenizer: about 4 characters or 0.75 words
 * per token, whichever says more. Used until the server's tokenizer is plugged in.
 */
export function estimateTokens(text: string): number {
  const t = text.trim();
  if (!t) return 0;
  const words = t.split(/\s+/).length;
  const punct = (t.match(/[^\p{L}\p{N}\s]/gu) ?? []).length;
  return Math.max(1, Math.ceil(Math.max(t.length / 4, words * 1.3 + punct * 0.5)));
}

const sentenceSegmenter = (() => {
  let segmenter: Intl.Segmenter | undefined;
  return () => (segmenter ??= new Intl.Segmenter(undefined, { granularity: 'sentence' }));
})();

/** Splits text into sentences with `Intl.Segmenter`, then long sentences into word runs. */
export function splitSentences(text: string, maxTokens = MAX_CHUNK_TOKENS): string[] {
  const out: string[] = [];
  for (const { segment } of sentenceSegmenter().segment(text)) {
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
