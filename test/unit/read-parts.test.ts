// Parts of the read tools lifted out of their closure (src/memory/tools/read.ts): the rows of a
// search's hits by id, and an entry's context chunks that match a query.
import { describe, expect, it } from 'vitest';
import type { ModelInfo } from '../../src/embeddings/types';
import { MemoryDB } from '../../src/memory/db';
import type { EntryQuery } from '../../src/memory/search';
import { entryRows, relevantChunks } from '../../src/memory/tools/read';
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
