import { describe, expect, it } from 'vitest';
import {
  MAX_CONTENT_BYTES,
  intArg,
  isToolError,
  numberArg,
  validateContent,
} from '../../src/memory/validate';
import { mergePatch } from '../../src/memory/memory-store';
import { estimateTokens, pathWords, splitSentences } from '../../src/memory/text';

describe('validateContent', () => {
  it('refuses content nested more than 100 levels deep, in a sentence; 100 levels are fine', () => {
    const nest = (levels: number): unknown => {
      let v: unknown = 'x';
      for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
      return v;
    };
    expect(isToolError(validateContent(nest(100)))).toBe(false);
    const deep = validateContent(nest(101));
    expect(deep).toMatchObject({ status: 'ERROR', code: 'INVALID_CONTENT' });
    expect((deep as { message: string }).message).toMatch(/nested more than 100 levels deep/);
    // Far deeper (as a model might send): the same sentence, no stack overflow.
    expect(validateContent(nest(100_000))).toMatchObject({ code: 'INVALID_CONTENT' });
  });

  it('accepts every kind of JSON value and copies it', () => {
    for (const v of ['x', '', 0, -1.5, true, false, null, [1, 'a', null], { a: { b: [1] } }]) {
      const r = validateContent(v);
      expect(isToolError(r)).toBe(false);
      if (!isToolError(r)) expect(r.value).toEqual(v);
    }
    const obj = { a: [1] };
    const r = validateContent(obj);
    obj.a.push(2);
    expect(!isToolError(r) && r.value).toEqual({ a: [1] });
  });

  it('refuses what JSON cannot hold', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const cases: unknown[] = [
      undefined,
      () => 1,
      10n,
      Symbol('s'),
      NaN,
      Infinity,
      cyclic,
      new Map(),
      { f: () => 1 },
    ];
    for (const v of cases) {
      const r = validateContent(v);
      expect(isToolError(r) && r.code).toBe('INVALID_CONTENT');
    }
  });

  it('measures size in UTF-8 bytes of JSON', () => {
    const fits = 'a'.repeat(MAX_CONTENT_BYTES - 2);
    expect(isToolError(validateContent(fits))).toBe(false);
    const over = validateContent('a'.repeat(MAX_CONTENT_BYTES - 1));
    expect(isToolError(over) && over.code).toBe('CONTENT_TOO_LARGE');
    const wide = validateContent('é'.repeat(MAX_CONTENT_BYTES / 2));
    expect(isToolError(wide) && wide.code).toBe('CONTENT_TOO_LARGE');
    const huge = validateContent(Array.from({ length: 1_000_000 }, () => 1));
    expect(isToolError(huge) && huge.code).toBe('CONTENT_TOO_LARGE');
  });

  it('shares shape with a non-cyclic repeated reference', () => {
    const shared = { x: 1 };
    const r = validateContent({ a: shared, b: shared });
    expect(!isToolError(r) && r.value).toEqual({ a: { x: 1 }, b: { x: 1 } });
  });
});

describe('argument checks', () => {
  it('intArg and numberArg take defaults and refuse out-of-range values', () => {
    expect(intArg(undefined, 'n', 7, 0, 10)).toBe(7);
    expect(intArg(3, 'n', 7, 0, 10)).toBe(3);
    for (const v of [-1, 11, 1.5, '3', NaN])
      expect(isToolError(intArg(v, 'n', 7, 0, 10))).toBe(true);
    expect(numberArg(0.5, 'b', 0.3, 0, 1)).toBe(0.5);
    for (const v of [-0.1, 1.1, NaN, 'x'])
      expect(isToolError(numberArg(v, 'b', 0.3, 0, 1))).toBe(true);
  });
});

describe('mergePatch (RFC 7396)', () => {
  it('merges, replaces and removes keys', () => {
    expect(mergePatch({ a: 1, b: { c: 2, d: 3 } }, { a: null, b: { c: 4 }, e: [1] })).toEqual({
      b: { c: 4, d: 3 },
      e: [1],
    });
    expect(mergePatch({ a: 1 }, ['x'])).toEqual(['x']);
    expect(mergePatch('text', { a: 1 })).toEqual({ a: 1 });
  });
});

describe('text', () => {
  it('splits sentences and long runs', () => {
    expect(splitSentences('One thing. Another thing! A third?')).toEqual([
      'One thing.',
      'Another thing!',
      'A third?',
    ]);
    const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const parts = splitSentences(long);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.join(' ')).toBe(long);
    for (const p of parts) expect(estimateTokens(p)).toBeLessThanOrEqual(128);
  });

  it('estimates tokens and turns path segments into words', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('hello world')).toBeGreaterThanOrEqual(2);
    // Written without spaces: a token a character at least, not one "word" of a few tokens.
    const zh = '我妹妹安娜五月要搬到里斯本去住了，她很高兴。我们下个月去看她，然后一起去波尔图。';
    expect(estimateTokens(zh)).toBeGreaterThanOrEqual(zh.length - 3);
    expect(estimateTokens('東京 in May')).toBeGreaterThanOrEqual(2 + estimateTokens('in May'));
    expect(estimateTokens('안녕하세요')).toBe(5);
    expect(pathWords('HaloWeave/Goals/MultiWindowSupport')).toBe(
      'Halo Weave Goals Multi Window Support',
    );
    expect(pathWords('user_prefs/dark-mode')).toBe('user prefs dark mode');
  });
});
