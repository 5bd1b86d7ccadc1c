// The in-memory indexes: queries read only the rows they return, and writes made through another
// connection (another tab or worker) show up without reopening.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUNDLED_MODEL, createEmbedder, openMemory, type Embedder } from '../../src/memory';
import { MemoryDB } from '../../src/memory/db';

let embedder: Embedder;
beforeAll(async () => {
  embedder = createEmbedder({ model: BUNDLED_MODEL });
  await embedder.ready();
});
afterAll(() => embedder.dispose());

const dbName = () => `fresh-${crypto.randomUUID()}`;

/** Counts the IndexedDB reads that touch the entry table while `fn` runs. */
const countEntryReads = (fn: () => Promise<unknown>) => countReads('structured_memory', fn);

/** Counts the IndexedDB reads that touch `table` (its rows or its indexes) while `fn` runs. */
async function countReads(table: string, fn: () => Promise<unknown>) {
  const counts = { get: 0, scans: 0 };
  const store = IDBObjectStore.prototype;
  const index = IDBIndex.prototype;
  const spies: { mockRestore(): void }[] = [];
  const wrap = <T extends object, K extends keyof T>(
    proto: T,
    key: K,
    kind: 'get' | 'scans',
    owner: (o: T) => string,
  ) => {
    const orig = proto[key] as unknown as (...a: unknown[]) => unknown;
    const spy = vi.spyOn(proto, key as never).mockImplementation(function (
      this: T,
      ...a: unknown[]
    ) {
      if (owner(this) === table) counts[kind]++;
      return orig.apply(this, a);
    } as never);
    spies.push(spy);
  };
  wrap(store, 'get', 'get', (s) => s.name);
  for (const k of ['openCursor', 'getAll', 'openKeyCursor', 'getAllKeys'] as const) {
    wrap(store, k, 'scans', (s) => s.name);
    wrap(index, k, 'scans', (i) => i.objectStore.name);
  }
  try {
    await fn();
  } finally {
    spies.forEach((s) => s.mockRestore());
  }
  return counts;
}

describe('in-memory indexes', () => {
  it('a warm heading query reads only the rows it returns, not every entry', async () => {
    const name = dbName();
    const mem = openMemory({ name, embedder });
    for (let i = 0; i < 60; i++) {
      const r = await mem.saveMemory(
        `Notes/Topic${i % 6}/Item${i}`,
        `note number ${i} about topic ${i % 6}`,
      );
      expect(r.status).toBe('SUCCESS');
    }
    // A fresh connection fills its index once (a scan: this also proves the counter works)...
    await mem.close();
    const fresh = openMemory({ name, embedder });
    const cold = await countEntryReads(() => fresh.queryMemoryHeading('Notes', 'topic three'));
    expect(cold.scans).toBeGreaterThan(0);
    await fresh.close();
    const mem2 = openMemory({ name, embedder });
    await mem2.queryMemoryHeading('Notes', 'topic three');
    // ...and then a query reads only the rows it returns.
    const counts = await countEntryReads(() =>
      mem2.queryMemoryHeading('Notes/Topic3', 'note number 33', 0.3, { limit: 4 }),
    );
    expect(counts.scans).toBe(0);
    expect(counts.get).toBeGreaterThan(0);
    expect(counts.get).toBeLessThanOrEqual(4);
    await mem2.close();
  });

  it("a save's context snapshot reads only the chunk rows it may keep, and walks none of its chat's", async () => {
    const name = dbName();
    const mem = openMemory({ name, embedder });
    const said: string[] = [];
    for (let i = 0; i < 40; i++) {
      const text = `Turn ${i} talks about garden plot ${i}. It has ${i} rows of beans. The soil is wet.`;
      await mem.recordTurn({ conversationId: 1, role: i % 2 ? 'assistant' : 'user', text });
      await mem.recordTurn({ conversationId: 2, role: 'user', text: `Another chat, line ${i}.` });
      said.push(text);
    }
    await mem.saveMemory('Garden/First', 'beans in the garden', undefined, { conversationId: 1 });
    const counts = await countReads('chunks', () =>
      mem.saveMemory('Garden/Beans', 'rows of beans', undefined, { conversationId: 1 }),
    );
    // The newest sentences (at most 32) and the best 50 matches, read by key; no cursor over
    // the chat's index (IndexedDB walks one backwards slowly: bench/README.md, "Saves").
    expect(counts.scans).toBe(0);
    expect(counts.get).toBeGreaterThan(0);
    expect(counts.get).toBeLessThanOrEqual(32 + 50);
    // The snapshot still begins with the exchange that led to the save: the chat's last two turns.
    const entry = await mem.getEntry('Garden/Beans');
    if ('status' in entry) throw new Error(entry.message);
    const kept = entry.contextChunks.map((c) => c.text);
    for (const sentence of [
      'Turn 39 talks about garden plot 39.',
      'Turn 38 talks about garden plot 38.',
    ])
      expect(kept).toContain(sentence);
    expect(kept.join(' ')).not.toContain('Another chat');
    await mem.close();
  });

  it('saves and deletes through another connection show up in this one', async () => {
    const name = dbName();
    const a = openMemory({ name, embedder });
    const b = openMemory({ name, embedder });
    await a.saveMemory('Shared/First', 'the first note');
    const before = await b.queryMemoryHeading('Shared', 'note');
    expect(before.status === 'SUCCESS' && before.children.map((c) => c.path)).toEqual([
      'Shared/First',
    ]);

    await a.saveMemory('Shared/Second', 'the second note about gardens');
    const after = await b.queryMemoryHeading('Shared', 'gardens');
    expect(after.status === 'SUCCESS' && after.children.map((c) => c.path).sort()).toEqual([
      'Shared/First',
      'Shared/Second',
    ]);

    await a.deleteMemory('Shared/First');
    const list = await b.listMemory('Shared');
    expect(list.status === 'SUCCESS' && list.tree).toEqual({
      Second: 'the second note about gardens',
    });

    // A bulk write (import of 60 entries) is seen as well.
    const md = await a.exportMarkdown();
    const c = openMemory({ name: dbName(), embedder });
    const bulk = Array.from({ length: 60 }, (_, i) => `Bulk/Entry${i}`);
    for (const p of bulk) await c.saveMemory(p, p);
    const bulkMd = await c.exportMarkdown();
    expect(typeof md).toBe('string');
    const imported = await a.importMarkdown(bulkMd);
    expect(imported.status).toBe('SUCCESS');
    const seen = await b.listMemory('Bulk');
    expect(seen.status === 'SUCCESS' && seen.totalEntries).toBe(60);
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  it('chunks recorded through another connection are searchable here', async () => {
    const name = dbName();
    const a = openMemory({ name, embedder });
    const b = openMemory({ name, embedder });
    await b.searchChunks(1, 'warm up the index');
    await a.recordTurn({
      conversationId: 1,
      role: 'user',
      text: 'My cat is called Miso. She likes tuna.',
    });
    const hits = await b.searchChunks(1, 'What is the name of my cat?', 1);
    expect(hits[0]?.chunk.text).toBe('My cat is called Miso.');
    await Promise.all([a.close(), b.close()]);
  });

  it('a turn just recorded is searched without reading its rows back; one another connection deleted meanwhile is not found', async () => {
    const name = dbName();
    const a = openMemory({ name, embedder });
    const b = openMemory({ name, embedder });
    await a.searchChunks(null, 'warm up the index');
    await a.recordTurn({
      conversationId: 1,
      role: 'user',
      text: 'My cat is called Miso. She likes tuna.',
    });
    let hits: Awaited<ReturnType<typeof a.searchChunks>> = [];
    const reads = await countReads('chunks', async () => {
      hits = await a.searchChunks(1, 'What is the name of my cat?', 1);
    });
    expect(hits[0]?.chunk.text).toBe('My cat is called Miso.');
    // The hit's row only: the two rows the turn wrote went into the index as written.
    expect(reads.get).toBe(1);

    await a.recordTurn({
      conversationId: 2,
      role: 'user',
      text: 'The spare key is under the blue flowerpot.',
    });
    expect(await b.deleteConversation(2)).toMatchObject({ status: 'SUCCESS' });
    const gone = await a.searchChunks(null, 'spare key blue flowerpot', 5);
    expect(gone.map((h) => h.chunk.text)).not.toContain(
      'The spare key is under the blue flowerpot.',
    );
    const info = await a.indexInfo();
    await Promise.all([a.close(), b.close()]);
    expect('chunks' in info && info.chunks).toBe(2);
  });

  it('rebuilds nothing it should not: the raw table matches after many mixed writes', async () => {
    const name = dbName();
    const mem = openMemory({ name, embedder });
    for (let i = 0; i < 30; i++) await mem.saveMemory(`M/K${i % 7}`, i);
    await mem.moveMemory('M', 'N');
    await mem.deleteMemory('N/K3');
    const listed = await mem.listMemory('');
    const db = new MemoryDB(name);
    const rows = await db.structured_memory.toArray();
    db.close();
    expect(listed.status === 'SUCCESS' && listed.totalEntries).toBe(rows.length);
    expect(rows.map((r) => r.path).sort()).toEqual([
      'N/K0',
      'N/K1',
      'N/K2',
      'N/K4',
      'N/K5',
      'N/K6',
    ]);
    await mem.close();
  });
});

describe('a deleted chat', () => {
  it('leaves the search as if it had never been: the same relevance as in a memory that never held it', async () => {
    const kept = [
      'My sister Ana is moving to Lisbon in May.',
      'She found a flat near the river.',
      'I will visit her in the summer.',
    ];
    const gone = Array.from(
      { length: 40 },
      (_, i) => `My brother and his wife are relocating to Porto, flat number ${i}.`,
    );
    const record = async (mem: ReturnType<typeof openMemory>, title: string, lines: string[]) => {
      const chat = await mem.createConversation(title);
      if (chat.status !== 'SUCCESS') throw new Error(chat.message);
      for (const text of lines)
        await mem.recordTurn({ conversationId: chat.id, role: 'user', text });
      return chat.id;
    };
    const both = openMemory({ name: dbName(), embedder });
    const only = openMemory({ name: dbName(), embedder });
    await record(both, 'Family', kept);
    const work = await record(both, 'Work', gone);
    await record(only, 'Family', kept);
    // The index is in use (warm) when the chat is deleted, as in a running app.
    await both.searchChunks(null, 'warm up the index');
    await both.deleteConversation(work);
    // Both signals, and the meaning alone: its relevance is measured against the centroid of
    // what the index holds.
    const ask = async (mem: ReturnType<typeof openMemory>) =>
      Promise.all(
        (['both', 'semantic'] as const).map(async (signals) =>
          (
            await mem.searchChunks(null, 'Which city will my sibling relocate to?', 3, { signals })
          ).map((h) => [h.chunk.text, Math.round(h.match * 1000)]),
        ),
      );
    const after = await ask(both);
    expect(after[1].map(([text]) => text)).toContain(kept[0]);
    expect(after).toEqual(await ask(only));
    await both.close();
    await only.close();
  });
});
