// Search finds the right memory: the ranking's promises (relevance before age at the default,
// the newer among equals, the two ends of recencyBias), the subtree search with its reasons,
// snapshots that explain without stealing, recall on relevance, the word index kept current by
// every write path, and bad queries answered without a throw.
import { afterEach, describe, expect, it } from 'vitest';
import { MIN_RELEVANCE } from '../../src/memory/ranking';
import type { Embedder } from '../../src/embeddings/types';
import type { HeadingResult, MemoryApi } from '../../src/memory/types';
import { closeAll, ok, openTestMemory } from './helpers';

afterEach(closeAll);

const paths = (r: HeadingResult) => r.children.map((c) => c.path);

async function search(mem: MemoryApi, q: string, bias?: number, heading = '') {
  return ok(await mem.queryMemoryHeading(heading, q, bias, { limit: 50 }));
}

describe('one calibrated ranking', () => {
  it('at the default blend, a clearly relevant memory a year old beats a loosely related one from today', async () => {
    const { mem, clock } = openTestMemory();
    ok(
      await mem.saveMemory(
        'Work/Billing/Database',
        'We chose PostgreSQL 16 as the database of the billing service.',
        0,
      ),
    );
    clock.advanceDays(365);
    ok(
      await mem.saveMemory(
        'Notes/Lunch',
        'Lunch with the team; we talked about the new coffee service downstairs.',
        0,
      ),
    );
    const r = await search(mem, 'Which database did we choose for the billing service?');
    expect(r.children[0].path).toBe('Work/Billing/Database');
    const [old, fresh] = ['Work/Billing/Database', 'Notes/Lunch'].map((p) =>
      r.children.find((c) => c.path === p)!,
    );
    expect(old.recency!).toBeLessThan(0.01);
    // The fresh, weak match is listed too (below), with the full recency of a memory saved now.
    expect(fresh, 'Notes/Lunch listed').toBeDefined();
    expect(fresh.recency!).toBeCloseTo(1, 6);
  });

  it('among equally relevant memories the newer wins', async () => {
    const { mem, clock } = openTestMemory();
    const text = 'The garden gate code is 4711.';
    ok(await mem.saveMemory('Home/GateOld', text, 0));
    clock.advanceDays(10);
    ok(await mem.saveMemory('Home/GateNew', text, 0));
    for (const bias of [undefined, 0.1]) {
      const r = await search(mem, 'garden gate code', bias);
      expect(paths(r).slice(0, 2)).toEqual(['Home/GateNew', 'Home/GateOld']);
      expect(r.children[0].relevance).toBeCloseTo(r.children[1].relevance!, 6);
    }
  });

  it('recencyBias 1 gives recency order; 0 gives pure relevance', async () => {
    const { mem, clock } = openTestMemory();
    ok(await mem.saveMemory('T/Exact', 'kayak trip on the river Wye in June', 0));
    clock.advanceDays(20);
    ok(await mem.saveMemory('T/Partial', 'a river walk', 0));
    clock.advanceDays(20);
    ok(await mem.saveMemory('T/Newest', 'the kayak needs a new paddle', 0));
    const byAge = await search(mem, 'kayak trip river Wye', 1);
    const mod = byAge.children.map((c) => new Date(c.modified).getTime());
    expect([...mod].sort((a, b) => b - a)).toEqual(mod);
    const byRel = await search(mem, 'kayak trip river Wye', 0);
    expect(byRel.children[0].path).toBe('T/Exact');
    const rel = byRel.children.map((c) => c.relevance!);
    expect([...rel].sort((a, b) => b - a)).toEqual(rel);
    for (const c of byRel.children) {
      expect(c.relevance!).toBeGreaterThan(0);
      expect(c.relevance!).toBeLessThanOrEqual(1);
      expect(c.score).toBeCloseTo(c.relevance!, 9);
    }
  });

  it('names, numbers and rare words decide: possessives, case and plurals do not matter', async () => {
    const { mem } = openTestMemory();
    ok(
      await mem.saveMemory('People/Caroline', "Caroline's adoption agencies: she called three.", 0),
    );
    ok(
      await mem.saveMemory('People/Melanie', 'Melanie painted a sunrise over the lake in 2022.', 0),
    );
    ok(await mem.saveMemory('People/Other', 'Someone talked about painting and lakes.', 0));
    expect((await search(mem, 'Which adoption agency did CAROLINE call?')).children[0].path).toBe(
      'People/Caroline',
    );
    const sunrise = await search(mem, 'When did Melanie paint a sunrise? 2022');
    expect(sunrise.children[0].path).toBe('People/Melanie');
    expect(sunrise.children[0].why!.terms).toEqual(
      expect.arrayContaining(['melani', 'paint', 'sunris', '2022']),
    );
  });
});

describe('queryMemoryHeading searches the subtree', () => {
  it('finds a deep entry from the top heading and says why it matched', async () => {
    const { mem } = openTestMemory();
    ok(
      await mem.saveMemory('Conversations/2024/March/Trip', 'Booked the ferry to Skye for May.', 0),
    );
    ok(await mem.saveMemory('Conversations/2024/April/Work', 'Quarterly report is due Friday.', 0));
    ok(await mem.saveMemory('Conversations/Other', 'Nothing much happened.', 0));
    const r = await search(mem, 'When is the ferry to Skye?', undefined, 'Conversations');
    expect(r.scope).toBe('subtree');
    expect(r.children[0]).toMatchObject({
      path: 'Conversations/2024/March/Trip',
      content: 'Booked the ferry to Skye for May.',
    });
    expect(r.children[0].why).toMatchObject({ terms: ['ferri', 'skye'], fromSnapshot: false });
    expect(r.matched).toBeGreaterThanOrEqual(1);
    // The old behaviour stays one option away.
    const kids = ok(
      await mem.queryMemoryHeading('Conversations', 'ferry to Skye', 0, { scope: 'children' }),
    );
    expect(kids.children[0]).toMatchObject({
      path: 'Conversations/2024',
      isHeading: true,
      bestMatch: { path: 'Conversations/2024/March/Trip' },
    });
  });

  it('rejects an unknown scope or signals value with a clear error', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('A/B', 'x', 0));
    for (const opts of [{ scope: 'everything' }, { signals: 'magic' }]) {
      const r = await mem.queryMemoryHeading('A', 'x', 0, opts as never);
      expect(r).toMatchObject({ status: 'ERROR', code: 'INVALID_ARGUMENT' });
    }
  });
});

describe('context snapshots explain without stealing', () => {
  it("another turn's words in an entry's snapshot never make it the top hit for that turn", async () => {
    const { mem } = openTestMemory();
    const turns = [
      'I adopted a grey cat called Pixel from the shelter last week.',
      'My sister is moving to Lisbon in September for her new job.',
      'We should plan a visit once she has settled in.',
    ];
    for (const [i, text] of turns.entries()) {
      ok(await mem.recordTurn({ conversationId: 1, role: i % 2 ? 'assistant' : 'user', text }));
      ok(await mem.saveMemory(`Chat/T${i}`, text));
    }
    // T2's snapshot holds the Lisbon turn (the turns just before its save) ...
    const t2 = ok(await mem.queryMemory('Chat/T2'));
    expect(t2.contextChunks.map((c) => c.text).join(' ')).toContain('Lisbon');
    // ... yet the question about Lisbon finds T1, and T2 is marked as matched by its snapshot.
    const r = await search(mem, 'Where is my sister moving?', 0);
    expect(r.children[0].path).toBe('Chat/T1');
    const viaSnapshot = r.children.find((c) => c.path === 'Chat/T2');
    expect(viaSnapshot, 'Chat/T2 listed').toBeDefined();
    expect(viaSnapshot!.why!.fromSnapshot).toBe(true);
    const cat = await search(mem, 'What is the name of the cat?', 0);
    expect(cat.children[0].path).toBe('Chat/T0');
  });
});

describe('recallMemory', () => {
  it('filters on the calibrated relevance, takes up to 100, and refuses more', async () => {
    const { mem } = openTestMemory();
    for (let i = 0; i < 120; i++) ok(await mem.saveMemory(`Bulk/N${i}`, `violin lesson ${i}`, 0));
    ok(await mem.saveMemory('Other/Soup', 'tomato soup recipe', 0));
    const hits = await mem.recallMemory('violin lesson', 100);
    expect(Array.isArray(hits) && hits.length).toBe(100);
    if (!Array.isArray(hits)) return;
    expect(
      hits.every(
        (h) => h.kind === 'entry' && h.path.startsWith('Bulk/') && h.relevance >= MIN_RELEVANCE,
      ),
    ).toBe(true);
    expect(await mem.recallMemory('violin lesson', 101)).toMatchObject({
      status: 'ERROR',
      code: 'INVALID_ARGUMENT',
    });
    expect(await mem.recallMemory('quantum chromodynamics lecture', 5)).toEqual([]);
  });
});

describe('the word index follows every write path', () => {
  it('save, update, move, delete, restore, imports and another connection', async () => {
    const { mem, name, clock } = openTestMemory();
    const other = openTestMemory({ name, clock });
    const words = async (w: string) => {
      const r = await mem.queryMemoryHeading('', w, 0, { limit: 50 });
      if (r.status === 'NOT_FOUND') return []; // nothing saved at all
      return ok(r)
        .children.filter((c) => c.why!.terms.length > 0)
        .map((c) => c.path);
    };

    ok(await mem.saveMemory('W/One', { note: 'zanzibar' }, 0));
    expect(await words('zanzibar')).toEqual(['W/One']);
    ok(await mem.updateMemory('W/One', { note: 'quixotic' }));
    expect(await words('zanzibar')).toEqual([]);
    expect(await words('quixotic')).toEqual(['W/One']);
    ok(await mem.moveMemory('W/One', 'W/Two'));
    expect(await words('quixotic')).toEqual(['W/Two']);
    ok(await mem.deleteMemory('W/Two'));
    expect(await words('quixotic')).toEqual([]);
    const hist = ok(await mem.getHistory('W/Two'));
    ok(await mem.restoreMemory(hist.versions[0].id));
    expect(await words('quixotic')).toEqual(['W/Two']);

    ok(await other.mem.saveMemory('W/FromOtherTab', 'marmalade', 0));
    expect(await words('marmalade')).toEqual(['W/FromOtherTab']);

    const md = await mem.exportMarkdown('W/Two');
    expect(typeof md).toBe('string');
    ok(await mem.importMarkdown((md as string).replace(/quixotic/g, 'xylophone')));
    expect(await words('xylophone')).toEqual(['W/Two']);

    const backup = await mem.exportJson();
    const fresh = openTestMemory();
    ok(await fresh.mem.importJson(backup as string, 'replace'));
    expect(
      (await search(fresh.mem, 'marmalade', 0)).children.filter((c) => c.why!.terms.length).length,
    ).toBe(1);
  });

  it('conversation chunks are found by their words, and a deleted conversation is gone', async () => {
    const { mem } = openTestMemory();
    const c = ok(await mem.createConversation('x'));
    ok(
      await mem.recordTurn({
        conversationId: c.id,
        role: 'user',
        text: 'The wifi password is hunter2.',
      }),
    );
    const hits = await mem.searchChunks(c.id, 'wifi password', 5);
    expect(hits[0].chunk.text).toBe('The wifi password is hunter2.');
    expect(hits[0].terms).toEqual(['wifi', 'password']);
    ok(await mem.deleteConversation(c.id));
    expect(await mem.searchChunks(c.id, 'wifi password', 5)).toEqual([]);
  });
});

describe('bad queries get a sensible answer', () => {
  it('never throws or hangs, and answers SUCCESS (or an empty list) for odd text', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Lang/Chinese', '我们明天去北京看长城', 0));
    ok(await mem.saveMemory('Lang/English', 'Tomorrow we visit the Great Wall near Beijing', 0));
    ok(await mem.recordTurn({ conversationId: 1, role: 'user', text: 'hello there' }));
    const queries = [
      '   ',
      'the of and is it',
      '🙂🙃🎉',
      '长城',
      'x'.repeat(10_000),
      'word '.repeat(2_000),
      'Lang/Chinese/../..',
      'ሰላም ለዓለም',
      '\u0000\u0001',
    ];
    for (const q of queries) {
      const r = await mem.queryMemoryHeading('', q);
      expect(['SUCCESS'], q.slice(0, 20)).toContain(r.status);
      expect(Array.isArray(await mem.recallMemory(q, 5))).toBe(true);
      expect(Array.isArray(await mem.searchChunks(1, q, 5))).toBe(true);
    }
    // CJK text is found by a word inside it (no spaces to split on).
    const cjk = await search(mem, '长城');
    expect(cjk.children[0].path).toBe('Lang/Chinese');
  });
});

/** A model whose vector of a text is the sum of one axis per known word, normalised. */
function axisEmbedder(words: readonly string[]): Embedder {
  const dims = 8;
  return {
    ready: async () => ({
      id: 'test/axes',
      dims,
      threshold: 0.3,
      calibration: { unrelated: 0, related: 1.2 },
      bundled: false,
    }),
    async embed(texts) {
      return texts.map((text) => {
        const v = new Float32Array(dims);
        for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
          const axis = words.indexOf(w);
          if (axis !== -1) v[axis] += 1;
        }
        if (!v.some((x) => x !== 0)) v[dims - 1] = 1;
        const norm = Math.hypot(...v);
        return v.map((x) => x / norm);
      });
    },
    dispose: async () => undefined,
  };
}

describe('a sentence read with its turn', () => {
  it("has its turn's meaning where the turn as a whole matches the question better", async () => {
    const { mem } = openTestMemory({ embedder: axisEmbedder(['alpha', 'beta', 'gamma', 'delta']) });
    const chat = ok(await mem.createConversation('greek'));
    // Each sentence holds half of the question; together the turn holds all of it.
    ok(
      await mem.recordTurn({
        conversationId: chat.id,
        role: 'user',
        text: 'Alpha here. Beta there.',
      }),
    );
    // One sentence holding the question with as much else (a cosine of 0.71, as each above).
    ok(
      await mem.recordTurn({
        conversationId: chat.id,
        role: 'assistant',
        text: 'Alpha beta gamma delta.',
      }),
    );
    const hits = await mem.searchChunks(null, 'alpha beta', 3, { signals: 'semantic' });
    expect(hits.map((h) => h.chunk.text)).toEqual([
      expect.stringMatching(/^(Alpha here|Beta there)\.$/),
      expect.stringMatching(/^(Alpha here|Beta there)\.$/),
      'Alpha beta gamma delta.',
    ]);
    // The similarity reported is the sentence's own.
    expect(hits[0]!.similarity).toBeCloseTo(Math.SQRT1_2, 5);
  });
});
