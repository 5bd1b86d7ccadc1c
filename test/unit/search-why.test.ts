import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { queryTerms } from '../../src/memory/lexical/tokenize';
import { MIN_RELEVANCE } from '../../src/memory/ranking';
import {
  STRONG_RELEVANCE,
  excerpt,
  firstMatch,
  highlight,
  isRelevant,
  scoreParts,
  splitAtCutoff,
  strengthOf,
  type Segment,
} from '../../src/ui/search-why';

/** The marked pieces only. */
const marks = (segments: Segment[]) => segments.filter((s) => s.match).map((s) => s.text);
const join = (segments: Segment[]) => segments.map((s) => s.text).join('');

describe('highlight', () => {
  it('marks every form of a query word the index would match (case, stems, possessives)', () => {
    const terms = queryTerms('running coffee');
    const text = 'Runs daily; RUNNING shoes. Coffee’s too strong, coffees fine. Runner up.';
    expect(marks(highlight(text, terms))).toEqual(['Runs', 'RUNNING', 'Coffee’s', 'coffees']);
  });

  it('gives back the text exactly, pieces in order', () => {
    const text = '  Flat white, no sugar;\n oat milk on weekdays.  ';
    const out = highlight(text, queryTerms('oat milk'));
    expect(join(out)).toBe(text);
    expect(out).toEqual([
      { text: '  Flat white, no sugar;\n ', match: false },
      { text: 'oat', match: true },
      { text: ' ', match: false },
      { text: 'milk', match: true },
      { text: ' on weekdays.  ', match: false },
    ]);
  });

  it('never marks stop words, part of a word, or anything without terms', () => {
    expect(marks(highlight('The plan of the planet', queryTerms('the plan')))).toEqual(['plan']);
    expect(highlight('nothing here', [])).toEqual([{ text: 'nothing here', match: false }]);
    expect(highlight('', ['x'])).toEqual([]);
    expect(marks(highlight('the and of', queryTerms('the and of')))).toEqual([]);
  });

  it('matches numbers whole, with or without thousands separators', () => {
    const terms = queryTerms('1000 3.5');
    expect(marks(highlight('Paid 1,000 for 3.5 kg, not 10000 or 35.', terms))).toEqual([
      '1,000',
      '3.5',
    ]);
  });

  it('folds accents and compatibility forms as the index does', () => {
    expect(marks(highlight('A café and a naïve plan', queryTerms('cafe naive')))).toEqual([
      'café',
      'naïve',
    ]);
    expect(marks(highlight('ＡＢＣ corp', queryTerms('abc')))).toEqual(['ＡＢＣ']);
  });

  it('marks the characters of matched pairs in Chinese, Japanese and Korean, merged', () => {
    // 東京 is one indexed pair of 東京タワーに: only those two characters are marked.
    expect(marks(highlight('明日は東京タワーに行く', queryTerms('東京')))).toEqual(['東京']);
    // Overlapping pairs (東京, 京タ, タワ, ワー) mark one run.
    expect(marks(highlight('明日は東京タワーに行く', queryTerms('東京タワー')))).toEqual([
      '東京タワー',
    ]);
    expect(marks(highlight('서울 여행', queryTerms('서울')))).toEqual(['서울']);
    // A Latin word glued to CJK text is matched on its own.
    expect(marks(highlight('新しいiPhoneを買った', queryTerms('iphone')))).toEqual(['iPhone']);
  });

  it('keeps markup as plain text (the component renders segments as text nodes)', () => {
    const text = '<img src=x onerror=alert(1)> script <b>alert</b>';
    const out = highlight(text, queryTerms('alert'));
    expect(join(out)).toBe(text);
    expect(marks(out)).toEqual(['alert', 'alert']);
  });

  it('accepts terms as any iterable and handles emoji and astral characters', () => {
    const text = '🎉 party 🎉 𠮷野家 party';
    const out = highlight(text, new Set(['parti']));
    expect(join(out)).toBe(text);
    expect(marks(out)).toEqual(['party', 'party']);
  });

  it('always gives back the input, whatever the text and terms (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), fc.string(), (text, query) => {
        const out = highlight(text, queryTerms(query));
        expect(join(out)).toBe(text);
        for (const s of out) expect(s.text.length).toBeGreaterThan(0);
        for (let i = 1; i < out.length; i++) {
          // Neighbours differ: marked runs are merged, unmarked runs never split.
          expect(out[i].match && out[i - 1].match).toBe(false);
        }
      }),
    );
  });
});

describe('excerpt', () => {
  const long = `${'Filler words about nothing in particular. '.repeat(12)}The oat milk is key. ${'More filler follows here. '.repeat(6)}`;

  it('leaves short text whole, as one line', () => {
    expect(excerpt('a\n  b\tc', ['b'], 50)).toBe('a b c');
  });

  it('starts near the first marked word when it would fall outside', () => {
    const out = excerpt(long, queryTerms('oat'), 120);
    expect(out.length).toBeLessThanOrEqual(120);
    expect(out.startsWith('…')).toBe(true);
    expect(out.endsWith('…')).toBe(true);
    expect(firstMatch(out, queryTerms('oat'))).toBeGreaterThan(0);
    // It starts on a word.
    expect(out[1]).toMatch(/\S/);
    expect(long).toContain(out.slice(1, -1));
  });

  it('keeps the head when the match is already in view, or when nothing matches', () => {
    const text = `oat ${'x'.repeat(300)}`;
    expect(excerpt(text, queryTerms('oat'), 100).startsWith('oat')).toBe(true);
    const none = excerpt(long, queryTerms('zebra'), 100);
    expect(none.startsWith('Filler')).toBe(true);
    expect(none.length).toBeLessThanOrEqual(100);
  });
});

describe('strength, cut-off and score parts', () => {
  it('reads relevance as words around the cut-off', () => {
    expect(strengthOf(STRONG_RELEVANCE)).toBe('strong');
    expect(strengthOf(MIN_RELEVANCE)).toBe('good');
    expect(strengthOf(MIN_RELEVANCE - 0.01)).toBe('weak');
    expect(strengthOf(0)).toBe('weak');
    expect(strengthOf(undefined)).toBe('good');
  });

  it('splits hits at the cut-off, each part in the given order', () => {
    const hits = [
      { path: 'a', relevance: 0.2 },
      { path: 'b', relevance: 0.9 },
      { path: 'c', relevance: MIN_RELEVANCE },
      { path: 'd', relevance: 0.1 },
      { path: 'e' },
    ];
    const { relevant, weaker } = splitAtCutoff(hits);
    expect(relevant.map((h) => h.path)).toEqual(['b', 'c', 'e']);
    expect(weaker.map((h) => h.path)).toEqual(['a', 'd']);
    expect(isRelevant({ relevance: Number.NaN })).toBe(true);
  });

  it('parts add up to the score the engine computes', () => {
    const hit = { relevance: 0.8, recency: 0.5 };
    const p = scoreParts(hit, 0.3);
    expect(p.relevance).toBeCloseTo(0.56);
    expect(p.recency).toBeCloseTo(0.15);
    expect(scoreParts(hit, 0)).toEqual({ relevance: 0.8, recency: 0 });
    expect(scoreParts(hit, 1)).toEqual({ relevance: 0, recency: 0.5 });
    // Out-of-range inputs stay inside the bar.
    expect(scoreParts({ relevance: 2, recency: -1 }, 5)).toEqual({ relevance: 0, recency: 0 });
    expect(scoreParts({}, 0.3)).toEqual({ relevance: 0, recency: 0 });
  });
});
