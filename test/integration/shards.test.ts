// Packed vector shards: every write path (recordTurn, importJson merge and replace, reembed,
// deleteConversation) keeps them equal to the chunk rows, in the same transaction; an aborted
// transaction leaves both as they were; a cold start reads shards, not rows; rows written
// without shards (an older version, or by hand) are noticed and the shards rebuilt.
import Dexie from 'dexie';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryDB } from '../../src/memory/db';
import {
  SHARD_SPAN,
  addToShards,
  hasWords,
  headOf,
  removeFromShards,
  tidyShards,
  type ChunkShard,
} from '../../src/memory/shards';
import type { Chunk } from '../../src/memory/types';
import { tokenize } from '../../src/memory/lexical/tokenize';
import { quantiseRow } from '../../src/memory/kernels/int8';
import { signCode, signCodeBytes } from '../../src/memory/kernels/signs';
import { closeAll, openTestMemory, otherModel, sharedEmbedder } from './helpers';

afterEach(closeAll);

/**
 * The shard invariant: per model, shards hold exactly the chunk rows' (id, conversation,
 * vector), each id once, ids ascending within a shard and inside its range; few pieces per
 * range, and once tidied, one per range below a model's highest.
 */
async function expectConsistent(
  db: MemoryDB,
  { tidy = false, whole = false } = {},
): Promise<{ shards: number; vectors: number }> {
  const [rows, shards, heads, codes] = await db.transaction(
    'r',
    [db.chunks, db.shards, db.shardHeads, db.shardCodes],
    async () =>
      Promise.all([
        db.chunks.toArray(),
        db.shards.toArray(),
        db.shardHeads.toArray(),
        db.shardCodes.toArray(),
      ]),
  );
  // Each piece's compact part and int8 part sit under its vector row's key, and nothing else
  // does. (`whole`: as version 2 wrote them, words in the vector row and neither part.)
  const headOfKey = new Map(heads.map((h) => [h.id, h]));
  expect(heads.length).toBe(whole ? 0 : shards.length);
  expect(codes.length).toBe(whole ? 0 : shards.length);
  const codesOfKey = new Map(codes.map((c) => [c.id, c]));
  const fromRows = new Map<string, Map<number, Chunk>>();
  for (const r of rows) {
    if (!fromRows.has(r.model)) fromRows.set(r.model, new Map());
    fromRows.get(r.model)!.set(r.id!, r);
  }
  const seen = new Map<string, Set<number>>();
  const pieces = new Map<string, number>();
  for (const s of shards) {
    if (whole) {
      expect(hasWords(s)).toBe(true);
      headOfKey.set(s.id!, { ...headOf(s, s.id!) });
      s.words = undefined;
    }
    const head = headOfKey.get(s.id!);
    expect(head, `shard ${s.id} without its compact part`).toBeDefined();
    const h = head!;
    expect([h.model, h.range, h.count]).toEqual([s.model, s.range, s.count]);
    expect([...h.ids]).toEqual([...s.ids]);
    expect([...h.conversations]).toEqual([...s.conversations]);
    expect(s.words, 'words live in the compact part').toBeUndefined();
    // The sign codes are the vectors' around the centre stored with them, the mean.
    const d = s.vectors.length / s.count;
    const bytes = signCodeBytes(d);
    for (let k = 0; k < d; k++) {
      let sum = 0;
      for (let i = 0; i < s.count; i++) sum += s.vectors[i * d + k];
      expect(h.sum[k]).toBeCloseTo(sum, 9);
      expect(h.centre[k]).toBeCloseTo(sum / s.count, 6);
    }
    const code = new Uint8Array(bytes);
    for (let i = 0; i < s.count; i++) {
      signCode(s.vectors.subarray(i * d, (i + 1) * d), h.centre, code, 0);
      expect([...h.signs.subarray(i * bytes, (i + 1) * bytes)]).toEqual([...code]);
    }
    // The int8 part: each row as quantiseRow makes it from the piece's vector.
    if (!whole) {
      const c = codesOfKey.get(s.id!);
      expect(c, `shard ${s.id} without its int8 part`).toBeDefined();
      expect(c!.count).toBe(s.count);
      const want = new Int8Array(d);
      for (let i = 0; i < s.count; i++) {
        const scale = quantiseRow(s.vectors.subarray(i * d, (i + 1) * d), want, 0);
        expect(c!.scales[i]).toBe(scale);
        expect([...c!.codes.subarray(i * d, (i + 1) * d)]).toEqual([...want]);
      }
    }
    expect(s.count).toBe(s.ids.length);
    expect(s.conversations.length).toBe(s.count);
    const dims = s.vectors.length / s.count;
    expect(Number.isInteger(dims)).toBe(true);
    const mine = fromRows.get(s.model);
    expect(mine, `shard of model ${s.model} without rows`).toBeDefined();
    if (!seen.has(s.model)) seen.set(s.model, new Set());
    const key = `${s.model}/${s.range}`;
    pieces.set(key, (pieces.get(key) ?? 0) + 1);
    for (let i = 0; i < s.count; i++) {
      const id = s.ids[i];
      if (i) expect(id).toBeGreaterThan(s.ids[i - 1]);
      expect(Math.floor(id / SHARD_SPAN)).toBe(s.range);
      expect(seen.get(s.model)!.has(id), `id ${id} twice`).toBe(false);
      seen.get(s.model)!.add(id);
      const row = mine!.get(id);
      expect(row, `shard id ${id} has no row`).toBeDefined();
      expect(s.conversations[i]).toBe(row!.conversationId);
      expect([...s.vectors.subarray(i * dims, (i + 1) * dims)]).toEqual([...row!.embedding]);
      // The words the index loads without tokenising: the row's terms, counted.
      expect(h.turns[i]).toBe(row!.turnId);
      expect(hasWords(h)).toBe(true);
      const w = h.words;
      const held = new Map<string, number>();
      for (let j = w.offsets[i]; j < w.offsets[i + 1]; j++)
        held.set(w.vocab[w.terms[j]], w.freqs[j]);
      const want = new Map<string, number>();
      for (const t of tokenize(row!.text)) want.set(t, (want.get(t) ?? 0) + 1);
      expect(held).toEqual(want);
    }
  }
  for (const [model, byId] of fromRows) {
    expect(seen.get(model)?.size ?? 0, `rows of ${model} missing from shards`).toBe(byId.size);
    const ranges = [...pieces].filter(([k]) => k.startsWith(`${model}/`));
    const top = Math.max(...ranges.map(([k]) => Number(k.split('/').pop())));
    for (const [k, n] of ranges) {
      // Tidied: one piece per completed range and a few in the highest; untidied, still few.
      if (tidy && Number(k.split('/').pop()) < top) expect(n, k).toBe(1);
      else expect(n, k).toBeLessThan(tidy ? 46 : 64);
    }
  }
  return { shards: shards.length, vectors: rows.length };
}

function fakeRow(id: number, conv: number, model = 'm', dims = 8): Chunk {
  return {
    id,
    conversationId: conv,
    turnId: id,
    sentenceId: 0,
    role: 'user',
    text: `row ${id} of conversation ${conv}; row ${id} again`,
    tokenCount: 3,
    embedding: Float32Array.from({ length: dims }, (_, i) => Math.sin(id * 31 + i)),
    model,
    time: new Date(0),
  };
}

/** Adds rows like recordTurn does: chunk rows and their shards in one transaction. */
async function addRows(db: MemoryDB, rows: Chunk[], tidy = true): Promise<void> {
  await db.transaction('rw', db.chunks, db.shards, db.shardHeads, db.shardCodes, async () => {
    await db.chunks.bulkAdd(rows);
    await addToShards(db, rows, { tidy });
  });
}

async function deleteRows(db: MemoryDB, ids: number[]): Promise<void> {
  await db.transaction('rw', db.chunks, db.shards, db.shardHeads, db.shardCodes, async () => {
    await db.chunks.bulkDelete(ids);
    await removeFromShards(db, ids);
  });
}

const TEXTS = [
  'We planned the garden beds. Tomatoes go on the south side. Basil goes next to them.',
  'The database schema needs an index on paths. Windows and tabs get their own tables.',
  'Remind me to call the plumber on Monday.',
  'My favourite editor is Helix. I use a light theme in the morning!',
];

describe('shard bookkeeping (helpers)', () => {
  it('many small writes across ranges merge into one shard per completed range', async () => {
    const db = new MemoryDB(`shards-${crypto.randomUUID()}`);
    let id = 1;
    for (let turn = 0; turn < 1900; turn++) {
      const n = 1 + (turn % 9);
      // Tidied every 16 writes, as recordTurn does.
      await addRows(
        db,
        Array.from({ length: n }, () => fakeRow(id++, turn % 3)),
        turn % 16 === 15,
      );
      if (turn % 400 === 0) await expectConsistent(db);
    }
    expect(id - 1).toBeGreaterThan(2 * SHARD_SPAN);
    await db.transaction('rw', db.shards, db.shardHeads, db.shardCodes, async () =>
      tidyShards(db, 'm'),
    );
    const { shards, vectors } = await expectConsistent(db, { tidy: true });
    expect(vectors).toBe(id - 1);
    expect(shards).toBeLessThan(2 + 46);
    // Deletes spread over every range, then a whole conversation.
    await deleteRows(
      db,
      Array.from({ length: 700 }, (_, i) => 1 + ((i * 97) % (id - 1))),
    );
    await expectConsistent(db);
    const conv1 = (await db.chunks.where('conversationId').equals(1).primaryKeys()) as number[];
    await deleteRows(db, conv1);
    const after = await expectConsistent(db);
    expect(after.vectors).toBe(await db.chunks.count());
    db.close();
  });

  it('a transaction that aborts after writing rows and shards leaves all three unchanged', async () => {
    const db = new MemoryDB(`shards-${crypto.randomUUID()}`);
    await addRows(db, [fakeRow(1, 1), fakeRow(2, 1)]);
    const before = await db.shards.toArray();
    const headsBefore = await db.shardHeads.toArray();
    await expect(
      db.transaction('rw', db.chunks, db.shards, db.shardHeads, db.shardCodes, async () => {
        const rows = Array.from({ length: 40 }, (_, i) => fakeRow(3 + i, 2));
        await db.chunks.bulkAdd(rows);
        await addToShards(db, rows); // merges pieces on the way
        await removeFromShards(db, [1]);
        throw new Error('crash');
      }),
    ).rejects.toThrow('crash');
    // Both parts of every piece as they were: none was written outside the transaction.
    expect(await db.shards.toArray()).toEqual(before);
    expect(await db.shardHeads.toArray()).toEqual(headsBefore);
    expect(await db.chunks.count()).toBe(2);
    await expectConsistent(db);
    db.close();
  });

  it('opening a version-1 database builds the shards from its chunk rows', async () => {
    const name = `shards-v1-${crypto.randomUUID()}`;
    const old = new Dexie(name);
    old.version(1).stores({
      structured_memory: '++id, &path, parent_path, heading, modified',
      conversations: '++id, modified',
      messages: '++id, conversationId, time',
      chunks: '++id, conversationId, turnId, model',
      history: '++id, path, replaced',
      settings: '&key',
    });
    const rows = [
      ...Array.from({ length: 30 }, (_, i) => fakeRow(i + 1, 1, 'a')),
      ...Array.from({ length: 5 }, (_, i) => fakeRow(SHARD_SPAN + i, 2, 'b', 4)),
    ];
    await old.table('chunks').bulkAdd(rows);
    old.close();
    const db = new MemoryDB(name);
    // Version 2's upgrade wrote them whole; versions 3 and 4 add the compact and int8 parts'
    // tables, empty.
    const { shards, vectors } = await expectConsistent(db, { tidy: true, whole: true });
    expect(vectors).toBe(35);
    expect(shards).toBe(2);
    expect(db.verno).toBe(4);
    db.close();
  });
});

describe('words stored by an older tokeniser', () => {
  it('are made again from the chunk rows when the memory opens, so a search meets them', async () => {
    const a = openTestMemory();
    const c = await a.mem.createConversation('group');
    if (c.status !== 'SUCCESS') throw new Error('no conversation');
    const said = 'I went to a support group yesterday.';
    expect(
      (await a.mem.recordTurn({ conversationId: c.id, role: 'user', text: said })).status,
    ).toBe('SUCCESS');
    // As the tokeniser before irregular forms stored them: "went" its own term.
    const db = new MemoryDB(a.name);
    const heads = await db.shardHeads.toArray();
    expect(heads.length).toBeGreaterThan(0);
    for (const h of heads) {
      const words = h.words!;
      await db.shardHeads.put({
        ...h,
        words: {
          ...words,
          version: words.version - 1,
          vocab: words.vocab.map((t) => (t === 'go' ? 'went' : t)),
        },
      });
    }
    db.close();
    await a.mem.close();
    const b = openTestMemory({ name: a.name });
    // Its one word that is not a stop word is "go", which only the words made again hold.
    const found = await b.mem.searchChunks(null, 'When did she go?', 5, { signals: 'lexical' });
    expect(found.map((h) => h.chunk.text)).toEqual([said]);
  });
});

describe('shard bookkeeping (tools)', () => {
  it('recordTurn, importJson (merge and replace), reembed and deleteConversation keep shards equal to the rows', async () => {
    const a = openTestMemory();
    const db = new MemoryDB(a.name);
    const c1 = await a.mem.createConversation('one');
    const c2 = await a.mem.createConversation('two');
    if (c1.status !== 'SUCCESS' || c2.status !== 'SUCCESS') throw new Error('no conversation');
    for (let i = 0; i < 20; i++) {
      const r = await a.mem.recordTurn({
        conversationId: i % 2 ? c1.id : c2.id,
        role: i % 2 ? 'assistant' : 'user',
        text: TEXTS[i % TEXTS.length],
      });
      expect(r.status).toBe('SUCCESS');
    }
    const before = await expectConsistent(db);
    const backup = await a.mem.exportJson();
    if (typeof backup !== 'string') throw new Error('export failed');

    // Merged back after chat "one" was deleted, that chat comes in again with its sentences;
    // chat "two" is here already and is left as it is.
    expect((await a.mem.deleteConversation(c1.id)).status).toBe('SUCCESS');
    await expectConsistent(db);
    expect((await a.mem.importJson(backup, 'merge')).status).toBe('SUCCESS');
    const merged = await expectConsistent(db);
    expect(merged.vectors).toBe(before.vectors);

    const one = (await a.mem.listConversations()).find((c) => c.title === 'one')!;
    expect(one.id).not.toBe(c1.id);
    expect((await a.mem.deleteConversation(one.id!)).status).toBe('SUCCESS');
    await expectConsistent(db);

    // Another model takes over: rows and shards move over batch by batch.
    const b = openTestMemory({ name: a.name, embedder: otherModel() });
    const progress = await b.mem.reembed();
    expect(progress).toMatchObject({ done: expect.any(Number) });
    await expectConsistent(db);
    expect(new Set((await db.shards.toArray()).map((s) => s.model))).toEqual(
      new Set(['test/rotated']),
    );
    const hits = await b.mem.searchChunks(c2.id, 'plumber on Monday', 1);
    expect(hits[0]?.chunk.text).toBe('Remind me to call the plumber on Monday.');

    expect((await b.mem.importJson(backup, 'replace')).status).toBe('SUCCESS');
    const replaced = await expectConsistent(db);
    expect(replaced.vectors).toBe(await db.chunks.count());
    expect(new Set((await db.shards.toArray()).map((s) => s.model))).toEqual(
      new Set(['test/rotated']),
    );
    db.close();
  });

  // A crash between a piece's two parts (its vector row written, its compact part not) cannot
  // leave them apart: both are written in the transaction that writes the rows.
  it.each(['shards', 'shardHeads'])(
    'a write whose %s update fails writes nothing',
    async (store) => {
      const a = openTestMemory();
      const db = new MemoryDB(a.name);
      await a.mem.recordTurn({ conversationId: 1, role: 'user', text: TEXTS[0] });
      const rowsBefore = await db.chunks.toArray();
      const shardsBefore = await db.shards.toArray();
      const headsBefore = await db.shardHeads.toArray();
      expect(headsBefore.length).toBe(shardsBefore.length);
      const put = IDBObjectStore.prototype.put;
      const spy = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(function (
        this: IDBObjectStore,
        ...args: Parameters<IDBObjectStore['put']>
      ) {
        if (this.name === store) throw new DOMException('disk on fire', 'UnknownError');
        return put.apply(this, args);
      });
      try {
        const r = await a.mem.recordTurn({ conversationId: 1, role: 'user', text: TEXTS[1] });
        expect(r).toMatchObject({ status: 'ERROR', code: 'INTERNAL_ERROR' });
      } finally {
        spy.mockRestore();
      }
      expect(await db.chunks.toArray()).toEqual(rowsBefore);
      expect(await db.shards.toArray()).toEqual(shardsBefore);
      expect(await db.shardHeads.toArray()).toEqual(headsBefore);
      // The search still sees exactly the first turn.
      const hits = await a.mem.searchChunks(1, 'database schema index', 10);
      expect(hits.map((h) => h.chunk.turnId)).toEqual(hits.map(() => rowsBefore[0].turnId));
      db.close();
    },
  );

  it('a cold start reads the shards, not one row per chunk', async () => {
    const a = openTestMemory();
    for (let i = 0; i < 8; i++) {
      await a.mem.recordTurn({ conversationId: 1, role: 'user', text: TEXTS[i % TEXTS.length] });
    }
    await a.mem.close();
    const b = openTestMemory({ name: a.name });
    await b.mem.modelInfo();
    const scans: string[] = [];
    const proto = IDBObjectStore.prototype;
    const index = IDBIndex.prototype;
    const spies = (['openCursor', 'getAll'] as const).flatMap((k) => {
      const onStore = proto[k] as unknown as (...a: unknown[]) => unknown;
      const onIndex = index[k] as unknown as (...a: unknown[]) => unknown;
      return [
        vi.spyOn(proto as unknown as Record<string, () => unknown>, k).mockImplementation(function (
          this: IDBObjectStore,
          ...args: unknown[]
        ) {
          scans.push(`${this.name}.${k}`);
          return onStore.apply(this, args);
        } as never),
        vi.spyOn(index as unknown as Record<string, () => unknown>, k).mockImplementation(function (
          this: IDBIndex,
          ...args: unknown[]
        ) {
          scans.push(`${this.objectStore.name}.${this.name}.${k}`);
          return onIndex.apply(this, args);
        } as never),
      ];
    });
    try {
      const hits = await b.mem.searchChunks(1, 'plumber', 3);
      expect(hits.length).toBe(3);
    } finally {
      spies.forEach((s) => s.mockRestore());
    }
    expect(scans.filter((s) => s.startsWith('chunks'))).toEqual([]);
    const info = await b.mem.indexInfo();
    expect(info).toMatchObject({ chunks: expect.any(Number), quantised: false, f32InMemory: true });
  });

  it('rows written without shards are noticed at load and the shards rebuilt', async () => {
    const a = openTestMemory();
    await a.mem.recordTurn({ conversationId: 1, role: 'user', text: TEXTS[0] });
    const info = await a.mem.modelInfo();
    await a.mem.close();
    const db = new MemoryDB(a.name);
    const [vector] = await sharedEmbedder().embed(['the plumber comes on Monday']);
    await db.chunks.add({
      ...fakeRow(0, 1, info.id, info.dims),
      id: undefined,
      text: 'the plumber comes on Monday',
      embedding: vector,
    });
    const b = openTestMemory({ name: a.name });
    const hits = await b.mem.searchChunks(1, 'plumber Monday', 1);
    expect(hits[0]?.chunk.text).toBe('the plumber comes on Monday');
    await expectConsistent(db);
    db.close();
  });
  it('shards without stored words, or with words of another tokeniser, are rebuilt at load', async () => {
    const a = openTestMemory();
    await a.mem.recordTurn({ conversationId: 1, role: 'user', text: TEXTS[0] });
    await a.mem.recordTurn({ conversationId: 1, role: 'user', text: TEXTS[2] });
    await a.mem.close();
    const db = new MemoryDB(a.name);
    const shards = await db.shards.toArray();
    const heads = await db.shardHeads.bulkGet(shards.map((s) => s.id!));
    expect(shards.length).toBeGreaterThan(0);
    // As an older version wrote them (whole, no compact part): one shard without words, another
    // from an older tokeniser.
    await db.shardHeads.clear();
    await db.shards.bulkPut(
      shards.map((s, i) =>
        i % 2
          ? { ...s, words: { ...heads[i]!.words, version: 0 }, turns: heads[i]!.turns }
          : { ...s, words: undefined },
      ),
    );
    // And an int8 part whose vector row is gone (left by a version that did not know them).
    await db.shardCodes.put({
      id: 987_654,
      count: 0,
      codes: new Int8Array(),
      scales: new Float32Array(),
    });
    const b = openTestMemory({ name: a.name });
    const hits = await b.mem.searchChunks(1, 'plumber Monday', 1);
    expect(hits[0]?.chunk.text).toBe('Remind me to call the plumber on Monday.');
    await expectConsistent(db);
    db.close();
  });
});

describe('shard check after load', () => {
  it('an older row missing from the shards is found by the full check, and the index reloads', async () => {
    const a = openTestMemory();
    const info = await a.mem.modelInfo();
    const db = new MemoryDB(a.name);
    const [vector] = await sharedEmbedder().embed(['the plumber comes on Monday']);
    await db.chunks.add({
      ...fakeRow(0, 1, info.id, info.dims),
      id: undefined,
      text: 'the plumber comes on Monday',
      embedding: vector,
    });
    // A newer turn through the engine: the newest row has its shard, the older one has none.
    await a.mem.recordTurn({ conversationId: 1, role: 'user', text: TEXTS[0] });
    await a.mem.close();
    const b = openTestMemory({ name: a.name });
    let found = false;
    for (let i = 0; i < 50 && !found; i++) {
      const hits = await b.mem.searchChunks(1, 'plumber Monday', 1);
      found = hits[0]?.chunk.text === 'the plumber comes on Monday';
      if (!found) await new Promise((r) => setTimeout(r, 20));
    }
    expect(found).toBe(true);
    await expectConsistent(db);
    db.close();
  });
});

describe('search over every conversation', () => {
  it('searchChunks(null) ranks chunks of all conversations', async () => {
    const a = openTestMemory();
    await a.mem.recordTurn({ conversationId: 1, role: 'user', text: TEXTS[0] });
    await a.mem.recordTurn({ conversationId: 2, role: 'user', text: TEXTS[2] });
    const hits = await a.mem.searchChunks(null, 'plumber Monday', 2);
    expect(hits[0].chunk.conversationId).toBe(2);
    expect(
      (await a.mem.searchChunks(1, 'plumber Monday', 5)).every((h) => h.chunk.conversationId === 1),
    ).toBe(true);
  });
});

export type { ChunkShard };
