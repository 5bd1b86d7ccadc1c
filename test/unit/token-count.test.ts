import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COUNT_CONCURRENCY,
  COUNT_GROUP_CHARS,
  countSentenceTokens,
} from '../../src/memory/token-count';
import { estimateTokens } from '../../src/memory/text';

const sentences = (n: number, size = 40) =>
  Array.from({ length: n }, (_, i) => `Sentence ${i} ${'moves the plan on '.repeat(size / 20)}.`);

describe('countSentenceTokens', () => {
  it('gives the estimates without a counter', async () => {
    const s = sentences(5);
    expect(await countSentenceTokens(s, null)).toEqual(s.map(estimateTokens));
  });

  it('asks once for a turn of ordinary length, and the counts add up to the answer', async () => {
    const asked: string[] = [];
    const s = sentences(30);
    const counts = await countSentenceTokens(s, (text) => {
      asked.push(text);
      return 1000;
    });
    expect(asked).toEqual([s.join(' ')]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(counts.every((c) => c >= 1)).toBe(true);
  });

  it('splits a long reply into groups of bounded size, a few in flight at a time', async () => {
    const s = sentences(3000);
    let inFlight = 0;
    let most = 0;
    const asked: string[] = [];
    const counts = await countSentenceTokens(s, async (text) => {
      asked.push(text);
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
      return Math.ceil(text.length / 5);
    });
    expect(asked.join(' ')).toBe(s.join(' '));
    expect(asked.every((t) => t.length <= COUNT_GROUP_CHARS)).toBe(true);
    expect(most).toBeLessThanOrEqual(COUNT_CONCURRENCY);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(
      asked.reduce((a, t) => a + Math.ceil(t.length / 5), 0),
    );
  });

  it('keeps the estimates of a group whose count failed or made no sense', async () => {
    const s = sentences(3);
    expect(await countSentenceTokens(s, () => Promise.reject(new Error('gone')))).toEqual(
      s.map(estimateTokens),
    );
    expect(await countSentenceTokens(s, () => Number.NaN)).toEqual(s.map(estimateTokens));
    expect(await countSentenceTokens(s, () => -3)).toEqual(s.map(estimateTokens));
  });

  it('shares any answer out in proportion, each sentence at least one token', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ minLength: 1, maxLength: 300 }), fc.constant(' ')), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.nat(100_000),
        async (texts, total) => {
          const counts = await countSentenceTokens(texts, () => total);
          expect(counts).toHaveLength(texts.length);
          expect(counts.every((c) => Number.isInteger(c) && c >= 1)).toBe(true);
          expect(counts.reduce((a, b) => a + b, 0)).toBe(Math.max(total, texts.length));
        },
      ),
    );
  });
});
