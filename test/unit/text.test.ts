import { describe, expect, it } from 'vitest';
import { MAX_CHUNK_TOKENS, SEGMENT_WINDOW_CHARS, splitSentences } from '../../src/memory/text';

/** The sentences of `text` as one walk of the whole text gives them (fine for short texts). */
const wholeSentences = (text: string): string[] =>
  [...new Intl.Segmenter(undefined, { granularity: 'sentence' }).segment(text)]
    .map((s) => s.segment.trim())
    .filter(Boolean);

const WORDS = ['the', 'plan', 'Dr.', 'Mrs.', 'e.g.', '3.5', 'café', '🧠', 'moves', 'on'];
const ENDS = ['.', '!', '?', '…', '."', '.\n\n', '', '.'];
const GAPS = [' ', '\n', '  ', '\r\n'];

/** A text of 2.5 windows or more, made of varied sentences drawn from `seed`. */
function textFrom(seed: number): string {
  let state = seed;
  const pick = <T>(xs: T[]): T => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return xs[state % xs.length]!;
  };
  const parts: string[] = [];
  const n = 1 + (seed % 40);
  for (let i = 0; i < n; i++) {
    const words = Array.from({ length: 1 + (i % 12) }, () => pick(WORDS));
    parts.push(words.join(' ') + pick(ENDS) + pick(GAPS));
  }
  let text = parts.join('');
  while (text.length < SEGMENT_WINDOW_CHARS * 2.5) text += ' ' + parts.join('');
  return text;
}

describe('splitSentences', () => {
  it('splits a text longer than the window into the same sentences as one walk would', () => {
    let compared = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const text = textFrom(seed * 7919);
      const whole = wholeSentences(text);
      // The comparison holds where no sentence needs cutting into word runs.
      if (whole.some((s) => s.length >= 500)) continue;
      expect(splitSentences(text)).toEqual(whole);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(3);
  });

  it('cuts one huge sentence without spaces into pieces that keep every character', () => {
    const text = '🧠'.repeat(SEGMENT_WINDOW_CHARS) + 'x'.repeat(SEGMENT_WINDOW_CHARS * 2 + 7);
    const pieces = splitSentences(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.length).toBeGreaterThan(2);
  });

  it('keeps every word of a long run-on sentence, in order, in pieces of bounded size', () => {
    const words = Array.from({ length: 20_000 }, (_, i) => `w${i}`);
    const pieces = splitSentences(words.join(' '));
    expect(pieces.join(' ').split(' ')).toEqual(words);
    expect(pieces.every((p) => p.split(' ').length <= MAX_CHUNK_TOKENS)).toBe(true);
  });
});
