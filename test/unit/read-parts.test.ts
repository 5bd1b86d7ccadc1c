// Parts of the read tools lifted out of their closure (src/memory/tools/read.ts): the rows of a
// search's hits by id, an entry's context chunks that match a query, what queryMemoryHeading
// says of a path with nothing below it and how it groups hits by child, and listMemory's tree.
import { describe, expect, it } from 'vitest';
import type { ModelInfo } from '../../src/embeddings/types';
import { MemoryDB } from '../../src/memory/db';
import type { EntryQuery } from '../../src/memory/search';
import {
  bestPerChild,
  childUnder,
  entryRows,
  fitTree,
  listTree,
  noChildren,
  preview,
  relevantChunks,
} from '../../src/memory/tools/read';
import type { ContextChunk, MemoryEntry } from '../../src/memory/types';

const chunk = (text: string, embedding = new Float32Array([1, 0])): ContextChunk => ({
  turn_id: 1,
  sentence_id: 0,
  role: 'user',
  text,
  embedding,
  similarity: 0.5,
  tokenCount: 4,
});

const row = (path: string, chunks: ContextChunk[] = [], model = 'm1'): MemoryEntry =>
  ({ path, model, contextChunks: chunks, content: 'x' }) as unknown as MemoryEntry;

describe('entryRows', () => {
  it('gives the rows by id and leaves out ids with none', async () => {
    const db = new MemoryDB(`read-parts-${crypto.randomUUID()}`);
    try {
      const [a, b] = (await db.structured_memory.bulkAdd([row('A'), row('B')], {
        allKeys: true,
      })) as number[];
      const rows = await entryRows(db.structured_memory, [b, 999, a]);
      expect([...rows.keys()].sort()).toEqual([a, b].sort());
      expect(rows.get(a)?.path).toBe('A');
      expect(rows.get(b)?.path).toBe('B');
    } finally {
      db.close();
    }
  });
});

describe('relevantChunks', () => {
  const entry = row('Travel/Lisbon', [
    chunk('Pack the blue umbrella.'),
    chunk('The hotel is in Alfama.'),
  ]);

  it('none without a row', () => {
    expect(relevantChunks(undefined, { text: 'umbrella', signals: 'lexical' })).toEqual([]);
  });

  it('the chunks with the query words', () => {
    const found = relevantChunks(entry, { text: 'blue umbrella', signals: 'lexical' });
    expect(found.map((c) => c.text)).toEqual(['Pack the blue umbrella.']);
  });

  it("by words alone when the row's vectors are of another model", () => {
    const info = { id: 'm2', dims: 2, threshold: 0 } as unknown as ModelInfo;
    const q: EntryQuery = { text: 'blue umbrella', vector: new Float32Array([1, 0]), info };
    expect(relevantChunks(entry, q)).toEqual(
      relevantChunks(entry, { text: 'blue umbrella', signals: 'lexical' }),
    );
  });
});

describe('noChildren', () => {
  it('an entry without children: read it with queryMemory', () => {
    const r = noChildren('Travel/Lisbon', true);
    expect(r.status).toBe('NOT_FOUND');
    expect(r.message).toBe(
      '"Travel/Lisbon" is an entry with no children. Call queryMemory("Travel/Lisbon") to read it.',
    );
  });

  it('an empty memory, and a path with nothing saved at or below it', () => {
    expect(noChildren('', false).message).toMatch(/Memory is empty/);
    expect(noChildren('Nowhere', false).message).toMatch(
      /Nothing is saved at or below "Nowhere". Call listMemory/,
    );
  });
});

describe('childUnder and bestPerChild', () => {
  it('names the direct child a path is in, from the root or a heading', () => {
    expect(childUnder('', 'A/B/C')).toBe('A');
    expect(childUnder('A', 'A/B/C')).toBe('A/B');
    expect(childUnder('A/B', 'A/B/C')).toBe('A/B/C');
  });

  it('keeps the first (best) hit of each child, in hit order', () => {
    const hit = (path: string, score: number) => ({ ref: { path }, score });
    const best = bestPerChild('Travel', [
      hit('Travel/Lisbon/Hotel', 0.9),
      hit('Travel/Porto', 0.8),
      hit('Travel/Lisbon', 0.7),
      hit('Travel/Porto/Food', 0.6),
    ]);
    expect([...best.keys()]).toEqual(['Travel/Lisbon', 'Travel/Porto']);
    expect(best.get('Travel/Lisbon')?.score).toBe(0.9);
    expect(best.get('Travel/Porto')?.score).toBe(0.8);
  });
});

describe('listTree and fitTree', () => {
  const rows = [
    { path: 'Travel/Lisbon/Hotel', content: { name: 'Alfama Inn', nights: 3 } },
    { path: 'Travel', content: 'trips' },
    { path: 'Travel/Lisbon', content: 'Lisbon in May' },
    { path: 'Travel/Porto', content: ['wine', 'bridges'] },
  ];

  it('nests entries by path; an entry with children holds its content in _content', () => {
    const tree = fitTree('', rows, 10_000);
    expect(tree).toEqual({
      totalEntries: 4,
      tree: {
        Travel: {
          _content: 'trips',
          Lisbon: { _content: 'Lisbon in May', Hotel: { name: 'Alfama Inn', nights: 3 } },
          Porto: ['wine', 'bridges'],
        },
      },
    });
  });

  it('under a root, paths are relative and the root entry is the tree’s _content', () => {
    const sorted = [...rows].sort((a, b) => (a.path < b.path ? -1 : 1));
    const under = sorted.filter((r) => r.path.startsWith('Travel/Lisbon'));
    expect(listTree('Travel/Lisbon', under, (c) => c)).toEqual({
      _content: 'Lisbon in May',
      Hotel: { name: 'Alfama Inn', nights: 3 },
    });
  });

  it('a child named _content is listed as "_content/", beside its parent’s own content', () => {
    const rows = [
      { path: 'A', content: 'top' },
      { path: 'A/_content', content: 'child' },
      { path: 'B', content: 'b' },
      { path: 'B/_content/C', content: 'deep' },
      { path: '_content', content: 'at the top' },
    ];
    expect(fitTree('', rows, 10_000).tree).toEqual({
      A: { _content: 'top', '_content/': 'child' },
      B: { _content: 'b', '_content/': { C: 'deep' } },
      '_content/': 'at the top',
    });
    // Under a root, the root entry's own content and a child named _content both stay.
    expect(listTree('A', rows.slice(0, 2), (c) => c)).toEqual({
      _content: 'top',
      '_content/': 'child',
    });
  });

  it('a content shaped like a branch stays a leaf', () => {
    const tree = listTree('', [{ path: 'A', content: { B: 'x' } }], (c) => c);
    expect(tree).toEqual({ A: { B: 'x' } });
  });

  it('too big: contents become previews, then the first entries that fit', () => {
    const big = Array.from({ length: 40 }, (_, i) => ({
      path: `Notes/n${String(i).padStart(2, '0')}`,
      content: 'word '.repeat(100),
    }));
    const whole = JSON.stringify(fitTree('', big, 10_000_000).tree).length;
    const cut = fitTree('', big, Math.floor(whole / 2));
    expect(cut.truncated).toBe(true);
    expect(cut.omittedEntries).toBeUndefined();
    const notes = (cut.tree as { Notes: Record<string, string> }).Notes;
    expect(Object.keys(notes)).toHaveLength(40);
    expect(notes['n00'].endsWith('…')).toBe(true);

    const small = fitTree('', big, 300);
    expect(small.truncated).toBe(true);
    expect(JSON.stringify(small.tree).length).toBeLessThanOrEqual(300);
    const kept = Object.keys((small.tree as { Notes: object }).Notes);
    expect(kept.length + small.omittedEntries!).toBe(40);
    // The entries kept are the first in path order.
    expect(kept[0]).toBe('n00');
    expect(kept).toEqual(kept.slice().sort());
  });

  it('preview: text as it is, anything else as JSON, cut with an ellipsis', () => {
    expect(preview('short', 16)).toBe('short');
    expect(preview({ a: 1 }, 16)).toBe('{"a":1}');
    expect(preview('x'.repeat(20), 16)).toBe('x'.repeat(16) + '…');
  });
});
