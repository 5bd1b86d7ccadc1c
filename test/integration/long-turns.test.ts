// A reply far longer than any model's context (a server that ignored its token limit): the turn
// is stored whole and indexed up to MAX_INDEXED_TURN_CHARS, with few tokenizer requests.
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_INDEXED_TURN_CHARS } from '../../src/memory/text';
import { closeAll, ok, openTestMemory } from './helpers';

afterEach(closeAll);

describe('a very long turn', () => {
  it('is stored whole, its start is searchable, and the rest is reported as not indexed', async () => {
    const { mem } = openTestMemory();
    const start = 'The lighthouse keeper paints the stairs blue. ';
    const filler = 'Waves roll over the grey pebbles again. '.repeat(
      Math.ceil((MAX_INDEXED_TURN_CHARS * 1.5) / 40),
    );
    const end = 'Nobody ever found the saffron kettle.';
    const text = start + filler + end;
    const counted: string[] = [];
    mem.setTokenCounter((t) => {
      counted.push(t);
      return Math.ceil(t.length / 4);
    });
    const result = ok(await mem.recordTurn({ conversationId: 1, role: 'assistant', text }));
    expect(result.unindexedChars).toBeGreaterThan(MAX_INDEXED_TURN_CHARS * 0.4);
    expect((await mem.getMessages(1))[0]?.text).toBe(text);
    // One request per 16 KB group of sentences, not one per sentence.
    expect(counted.length).toBeLessThan(result.chunks / 50);

    const hits = async (q: string) => {
      const found = await mem.searchChunks(1, q, 3);
      if (!Array.isArray(found)) throw new Error(`searchChunks failed: ${JSON.stringify(found)}`);
      return found.map((h) => h.chunk.text);
    };
    expect(await hits('lighthouse keeper stairs')).toContain(start.trim());
    expect(await hits('saffron kettle')).not.toContain(end);
  });

  it('a turn of ordinary length is indexed whole and says nothing more', async () => {
    const { mem } = openTestMemory();
    const result = ok(
      await mem.recordTurn({
        conversationId: 1,
        role: 'user',
        text: 'I adopted a cat. Her name is Miso.',
      }),
    );
    expect(result).toEqual({ status: 'SUCCESS', turnId: result.turnId, chunks: 2 });
  });
});
