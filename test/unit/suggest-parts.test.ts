// Parts of suggestMemoryPath lifted out of its tool (src/memory/tools/suggest.ts): which heading a
// text's matches point to, the name made from the text, a free path, and the proposal.
import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, MAX_SEGMENT_CHARS, parsePath } from '../../src/memory/paths';
import { MIN_RELEVANCE } from '../../src/memory/ranking';
import {
  DEFAULT_NAME,
  NAME_CHARS,
  freePath,
  headingMatches,
  memoryName,
  suggestPath,
} from '../../src/memory/tools/suggest';

const none = () => false;
const takenOf = (paths: string[]) => {
  const set = new Set(paths);
  return (p: string) => set.has(p);
};

describe('headingMatches', () => {
  it("scores each heading by its best entry's match, best first, and leaves out loose matches", () => {
    const hits = [
      { path: 'Family/Ana/Job', match: 0.5 },
      { path: 'Travel/Lisbon', match: 0.6 },
      { path: 'Family/Ana/Move', match: 0.9 },
      { path: 'Recipes/Dinner/Risotto', match: MIN_RELEVANCE - 0.01 },
    ];
    expect(headingMatches(hits)).toEqual([
      { heading: 'Family/Ana', match: 0.9 },
      { heading: 'Travel', match: 0.6 },
    ]);
  });

  it('takes a match exactly at MIN_RELEVANCE, and no heading for a top-level entry', () => {
    expect(headingMatches([{ path: 'Notes/Shopping', match: MIN_RELEVANCE }])).toEqual([
      { heading: 'Notes', match: MIN_RELEVANCE },
    ]);
    expect(headingMatches([{ path: 'Shopping', match: 1 }])).toEqual([]);
  });
});

describe('memoryName', () => {
  it('keeps the first meaningful words, each starting with a capital', () => {
    expect(memoryName('Ana is moving to Porto in May with the kids.')).toBe('Ana Moving Porto May');
  });

  it("leaves out words the heading's path already says", () => {
    expect(memoryName('Ana is moving to Porto in May', 'Family/Ana')).toBe('Moving Porto May');
  });

  it('reads the first line with words, markdown marks dropped', () => {
    expect(memoryName('\n\n## **Budget**: 300 a month\nmore later')).toBe('Budget 300 Month');
  });

  it('keeps stop words when the text has nothing else, and names a text with no words Note', () => {
    expect(memoryName('Why not?')).toBe('Why Not');
    expect(memoryName('?! …')).toBe(DEFAULT_NAME);
  });

  it('is one valid segment of at most NAME_CHARS characters, however the text looks', () => {
    for (const text of [
      'a/b\\c: d..e /// ..',
      'x'.repeat(500),
      'Überraschung für Zoë\u0000 und \u2028 Émile',
      '東京 に 行く',
    ]) {
      const name = memoryName(text);
      expect(name.length).toBeLessThanOrEqual(NAME_CHARS);
      expect(name.length).toBeLessThanOrEqual(MAX_SEGMENT_CHARS);
      const parsed = parsePath(`Notes/${name}`);
      expect(parsed.ok && parsed.segments).toEqual(['Notes', name]);
    }
    expect(memoryName('Überraschung für Zoë')).toBe('Überraschung Für Zoë');
  });
});

describe('freePath', () => {
  it('numbers the name past paths that are entries or headings', () => {
    expect(freePath('Notes', 'Budget', none)).toBe('Notes/Budget');
    expect(freePath('Notes', 'Budget', takenOf(['Notes/Budget', 'Notes/Budget 2']))).toBe(
      'Notes/Budget 3',
    );
  });

  it('gives up on a heading as deep as a path may be', () => {
    const deep = Array.from({ length: MAX_DEPTH }, (_, i) => `L${i}`).join('/');
    expect(freePath(deep, 'Budget', none)).toBeUndefined();
  });
});

describe('suggestPath', () => {
  it('proposes a free path under the best matching heading', () => {
    const r = suggestPath(
      [
        { heading: 'Family/Ana', match: 0.8 },
        { heading: 'Travel', match: 0.5 },
      ],
      'Ana is moving to Porto',
      takenOf(['Family/Ana/Moving Porto']),
    );
    expect(r).toEqual({
      status: 'SUCCESS',
      path: 'Family/Ana/Moving Porto 2',
      heading: 'Family/Ana',
      basis: 'match',
    });
  });

  it('passes over a heading no path fits under, and falls back to Notes when none matched', () => {
    const deep = Array.from({ length: MAX_DEPTH }, (_, i) => `L${i}`).join('/');
    expect(suggestPath([{ heading: deep, match: 0.9 }], 'Buy stamps', none)).toEqual({
      status: 'SUCCESS',
      path: 'Notes/Buy Stamps',
      heading: 'Notes',
      basis: 'default',
    });
    expect(suggestPath([], 'Buy stamps', takenOf(['Notes/Buy Stamps'])).path).toBe(
      'Notes/Buy Stamps 2',
    );
  });
});
