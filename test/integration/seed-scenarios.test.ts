// Acceptance tests of the memory engine's behaviour, written from its contracts (docs/design.md:
// "Paths", "Semantic index", "The tools", "Library API"): context snapshots, queries, recency,
// implicit headings, paths, history, move, patch, list.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type {
  Chunk,
  ContextChunk,
  HeadingChild,
  HeadingChildHeading,
  MemoryApi,
  MemoryEntry,
  TreeNode,
} from '../../src/memory/types';
import {
  Clock,
  DAY,
  T0,
  closeAll,
  containsTypedArray,
  contentSnapshot,
  expectError,
  expectNotFound,
  ms,
  ok,
  openTestMemory,
  sentences,
  sharedEmbedder,
  snapshotDb,
  tableRows,
} from './helpers';

beforeAll(async () => {
  await sharedEmbedder().ready();
});
afterEach(closeAll);

const HALOWEAVE = 1;
const COOKING = 2;
const MARKETING = 3;

const haloWeaveTurns = [
  {
    role: 'user',
    text: 'I want HaloWeave to support multiple windows. Each window should stay in sync with the other windows. Users should be able to drag tabs between windows.',
  },
  {
    role: 'assistant',
    text: 'Multi-window support needs a shared state channel between the windows. A BroadcastChannel can sync the window state. Dragging a tab between windows moves its document to the target window.',
  },
  {
    role: 'user',
    text: 'Let us also design the database schema. We need tables for documents, windows and tabs.',
  },
  {
    role: 'assistant',
    text: 'The database schema has a documents table, a windows table and a tabs table. Add indexes on the window id and the document id. Every schema change ships as a numbered migration.',
  },
  { role: 'user', text: 'Great. Please remember the multi-window goal.' },
] as const;

// Recorded before the HaloWeave conversation; it repeats one HaloWeave sentence word for word,
// so chunk provenance must be checked by turn id, not by text.
const cookingTurns = [
  {
    role: 'user',
    text: 'My favourite recipe is pasta with tomato sauce. Each window should stay in sync with the other windows.',
  },
  { role: 'assistant', text: 'Pasta with fresh tomato sauce and basil is a classic dinner.' },
] as const;

const marketingTurns = [
  {
    role: 'user',
    text: 'We plan the marketing launch for the spring. Press releases and social media posts go out on launch day.',
  },
  {
    role: 'assistant',
    text: 'The marketing campaign needs a press kit, a launch video and advertising on social media.',
  },
] as const;

const multiWindowGoal = {
  goal: 'Support multiple windows in HaloWeave',
  details: 'Keep the window state in sync and let users drag tabs between windows',
};
const schemaGoal = {
  goal: 'Design the database schema',
  details: 'Database tables, indexes and schema migrations for documents, windows and tabs',
};
const marketingGoal = {
  goal: 'Marketing launch',
  details: 'Press releases, social media posts and advertising for the spring launch campaign',
};

interface Recorded {
  turnIds: Map<number, number[]>;
}

async function recordConversation(
  mem: MemoryApi,
  conversationId: number,
  turns: readonly { role: 'user' | 'assistant'; text: string }[],
  rec: Recorded,
): Promise<void> {
  const ids = rec.turnIds.get(conversationId) ?? [];
  for (const t of turns) {
    const r = ok(await mem.recordTurn({ conversationId, role: t.role, text: t.text }));
    expect(typeof r.turnId).toBe('number');
    expect(r.chunks).toBe(sentences(t.text).length);
    ids.push(r.turnId);
  }
  rec.turnIds.set(conversationId, ids);
}

/** A database holding the three conversations, HaloWeave recorded last (the current one). */
async function seededConversations() {
  const tm = openTestMemory();
  const rec: Recorded = { turnIds: new Map() };
  await recordConversation(tm.mem, COOKING, cookingTurns, rec);
  await recordConversation(tm.mem, MARKETING, marketingTurns, rec);
  await recordConversation(tm.mem, HALOWEAVE, haloWeaveTurns, rec);
  return { ...tm, rec };
}

async function entryRow(name: string, path: string): Promise<MemoryEntry> {
  const rows = await tableRows<MemoryEntry>(name, 'structured_memory');
  const row = rows.find((r) => r.path === path);
  expect(row, `row ${path} in structured_memory`).toBeDefined();
  return row as MemoryEntry;
}

const chunkKey = (c: ContextChunk) => `${c.turn_id}:${c.sentence_id}`;
const tokenSum = (chunks: ContextChunk[]) => chunks.reduce((s, c) => s + c.tokenCount, 0);

const childPaths = (children: HeadingChild[]) => children.map((c) => c.path);
const isHeadingChild = (c: HeadingChild): c is HeadingChildHeading =>
  (c as HeadingChildHeading).isHeading === true;

describe('seed scenario: a conversation about multi-window support and schema design', () => {
  it('saveMemory stores context chunks of the current conversation within the token budget', async () => {
    const { mem, name, rec } = await seededConversations();
    const saved = ok(await mem.saveMemory('HaloWeave/Goals/MultiWindowSupport', multiWindowGoal));
    expect(saved).toMatchObject({ path: 'HaloWeave/Goals/MultiWindowSupport', version: 1 });
    expect(saved.chunksStored).toBeGreaterThan(0);

    const row = await entryRow(name, 'HaloWeave/Goals/MultiWindowSupport');
    expect(row.heading).toBe('MultiWindowSupport');
    expect(row.parent_path).toBe('HaloWeave/Goals');
    expect(row.content).toEqual(multiWindowGoal);
    expect(row.contextChunks).toHaveLength(saved.chunksStored);
    const used = tokenSum(row.contextChunks);
    expect(used).toBeLessThanOrEqual(1000);
    expect(saved.contextTokens).toBe(used);
    const haloSentences = haloWeaveTurns.flatMap((t) => sentences(t.text));
    expect(saved.chunksStored).toBeLessThanOrEqual(haloSentences.length);
    expect(row.contextChunks.some((c) => /window/i.test(c.text))).toBe(true);

    const haloTurnIds = rec.turnIds.get(HALOWEAVE) ?? [];
    for (const c of row.contextChunks) {
      expect(haloTurnIds, `chunk "${c.text}" comes from the HaloWeave conversation`).toContain(
        c.turn_id,
      );
      expect(haloSentences).toContain(c.text.trim());
      expect(['user', 'assistant']).toContain(c.role);
      expect(c.embedding).toBeInstanceOf(Float32Array);
      expect(c.tokenCount).toBeGreaterThan(0);
    }
    expect(row.embedding).toBeInstanceOf(Float32Array);
    expect(row.model).toBe((await mem.modelInfo()).id);
  });

  it('saveMemory with { conversationId } takes its chunks from that conversation', async () => {
    const { mem, name, rec } = await seededConversations();
    const saved = ok(
      await mem.saveMemory('HaloWeave/Goals/MarketingLaunch', marketingGoal, 1000, {
        conversationId: MARKETING,
      }),
    );
    expect(saved.chunksStored).toBeGreaterThan(0);
    expect(saved.chunksStored).toBeLessThanOrEqual(
      marketingTurns.flatMap((t) => sentences(t.text)).length,
    );
    const row = await entryRow(name, 'HaloWeave/Goals/MarketingLaunch');
    const ids = rec.turnIds.get(MARKETING) ?? [];
    for (const c of row.contextChunks) expect(ids).toContain(c.turn_id);
  });

  it('a small contextTokens (20) limits the chunks to what the walk fits', async () => {
    const { mem, name } = await seededConversations();
    const path = 'HaloWeave/Goals/MultiWindowSupport';
    // Budget 1000 holds every candidate the walk accepts (the whole conversation is ~150 tokens).
    ok(await mem.saveMemory(path, multiWindowGoal, 1000));
    const candidates = (await entryRow(name, path)).contextChunks;
    expect(tokenSum(candidates)).toBeGreaterThan(20);

    // Same heading and content, so the same query and the same candidates, budget 20 (at
    // another path: saved again at this one, the same content would write nothing).
    const other = 'Elsewhere/MultiWindowSupport';
    const small = ok(await mem.saveMemory(other, multiWindowGoal, 20));
    const smallRow = await entryRow(name, other);
    const used = tokenSum(smallRow.contextChunks);
    expect(used).toBeLessThanOrEqual(20);
    expect(small.contextTokens).toBe(used);
    expect(small.chunksStored).toBe(smallRow.contextChunks.length);
    expect(small.chunksStored).toBeGreaterThan(0);
    expect(small.chunksStored).toBeLessThan(candidates.length);
    // The small snapshot takes from the same walk: nothing the large one left out.
    const large = new Set(candidates.map(chunkKey));
    for (const k of smallRow.contextChunks.map(chunkKey)) expect(large.has(k)).toBe(true);
  });

  it('contextTokens 0 stores no chunks', async () => {
    const { mem, name } = await seededConversations();
    const none = ok(await mem.saveMemory('HaloWeave/Goals/None', multiWindowGoal, 0));
    expect(none).toMatchObject({ contextTokens: 0, chunksStored: 0, version: 1 });
    expect((await entryRow(name, 'HaloWeave/Goals/None')).contextChunks).toEqual([]);
    const q = ok(await mem.queryMemory('HaloWeave/Goals/None'));
    expect(q.contextChunks).toEqual([]);
  });

  it('queryMemory returns content, vector-free chunks and metadata, and updates accessed', async () => {
    const { mem, name, clock } = await seededConversations();
    ok(await mem.saveMemory('HaloWeave/Goals/MultiWindowSupport', multiWindowGoal));
    const savedAt = clock.t;

    const readAt = clock.advance(DAY);
    const q = ok(await mem.queryMemory('HaloWeave/Goals/MultiWindowSupport'));
    expect(q.path).toBe('HaloWeave/Goals/MultiWindowSupport');
    expect(q.content).toEqual(multiWindowGoal);
    expect(q.contextChunks.length).toBeGreaterThan(0);
    for (const c of q.contextChunks) {
      expect(Object.keys(c).sort()).toEqual(['role', 'similarity', 'text']);
      expect(['user', 'assistant']).toContain(c.role);
      expect(typeof c.text).toBe('string');
      expect(c.similarity).toBeGreaterThanOrEqual(-1);
      expect(c.similarity).toBeLessThanOrEqual(1.000001);
    }
    expect(containsTypedArray(q)).toBe(false);
    expect(q.metadata.version).toBe(1);
    expect(q.metadata.created).toBeInstanceOf(Date);
    expect(ms(q.metadata.created)).toBe(savedAt);
    expect(ms(q.metadata.modified)).toBe(savedAt);
    expect([savedAt, readAt]).toContain(ms(q.metadata.accessed));

    const row = await entryRow(name, 'HaloWeave/Goals/MultiWindowSupport');
    expect(ms(row.accessed)).toBe(readAt);
    expect(ms(row.modified)).toBe(savedAt);
    expect(row.version).toBe(1);

    clock.advance(DAY);
    const again = ok(await mem.queryMemory('HaloWeave/Goals/MultiWindowSupport'));
    expect(ms(again.metadata.accessed)).toBeGreaterThanOrEqual(readAt);
    expect(again.metadata.version).toBe(1);
  });

  it('saving again bumps version and writes the previous version to history', async () => {
    const { mem, clock } = await seededConversations();
    ok(await mem.saveMemory('HaloWeave/Goals/MultiWindowSupport', multiWindowGoal));
    const firstAt = clock.t;
    const second = { ...multiWindowGoal, status: 'in progress' };
    const secondAt = clock.advance(DAY);
    const r = ok(await mem.saveMemory('HaloWeave/Goals/MultiWindowSupport', second));
    expect(r.version).toBe(2);

    const q = ok(await mem.queryMemory('HaloWeave/Goals/MultiWindowSupport'));
    expect(q.content).toEqual(second);
    expect(q.metadata.version).toBe(2);
    expect(ms(q.metadata.created)).toBe(firstAt);
    expect(ms(q.metadata.modified)).toBe(secondAt);

    const h = ok(await mem.getHistory('HaloWeave/Goals/MultiWindowSupport'));
    expect(h.versions).toHaveLength(1);
    expect(h.versions[0]).toMatchObject({ version: 1, reason: 'update', content: multiWindowGoal });
    expect(ms(h.versions[0].modified)).toBe(firstAt);
  });

  it('saving the content an entry holds already writes nothing and says so', async () => {
    const { mem, name, clock } = await seededConversations();
    const path = 'HaloWeave/Goals/MultiWindowSupport';
    const first = ok(await mem.saveMemory(path, multiWindowGoal));
    expect(first.chunksStored).toBeGreaterThan(0);
    const before = await snapshotDb(name);
    clock.advance(DAY);
    // Again, from another conversation: the snapshot that says why it was saved stays.
    const again = ok(
      await mem.saveMemory(path, structuredClone(multiWindowGoal), 1000, {
        conversationId: COOKING,
      }),
    );
    expect(again).toEqual({ ...first, unchanged: true });
    expect(await snapshotDb(name)).toEqual(before);
    expect(ok(await mem.getHistory(path)).versions).toHaveLength(0);
    // As the memory keeper saves: over the version it read, or expecting none there.
    expect(ok(await mem.saveMemory(path, multiWindowGoal, 1000, { expectedVersion: 1 }))).toEqual(
      again,
    );
    expectError(
      await mem.saveMemory(path, multiWindowGoal, 1000, { expectedVersion: null }),
      'CHANGED',
    );
    expect(await snapshotDb(name)).toEqual(before);
    // Another content is a new version as ever.
    const changed = ok(await mem.saveMemory(path, { ...multiWindowGoal, status: 'done' }));
    expect(changed.version).toBe(2);
    expect(changed.unchanged).toBeUndefined();
  });

  it('queryMemoryHeading ranks a schema-related goal above an unrelated one', async () => {
    const { mem } = await seededConversations();
    ok(await mem.saveMemory('HaloWeave/Goals/MultiWindowSupport', multiWindowGoal));
    ok(await mem.saveMemory('HaloWeave/Goals/SchemaDesign', schemaGoal));
    ok(
      await mem.saveMemory('HaloWeave/Goals/MarketingLaunch', marketingGoal, 1000, {
        conversationId: MARKETING,
      }),
    );
    const r = ok(
      await mem.queryMemoryHeading('HaloWeave/Goals', 'What goals are related to database schema?'),
    );
    expect(r.totalChildren).toBe(3);
    const paths = childPaths(r.children);
    expect(paths.sort()).toEqual(
      [
        'HaloWeave/Goals/MarketingLaunch',
        'HaloWeave/Goals/MultiWindowSupport',
        'HaloWeave/Goals/SchemaDesign',
      ].sort(),
    );
    const order = childPaths(r.children);
    expect(order.indexOf('HaloWeave/Goals/SchemaDesign')).toBeLessThan(
      order.indexOf('HaloWeave/Goals/MarketingLaunch'),
    );
    const scores = r.children.map((c) => c.score as number);
    expect(scores.every((s) => typeof s === 'number')).toBe(true);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(containsTypedArray(r)).toBe(false);
  });
});

describe('queryMemoryHeading: recency and ranking', () => {
  // Three topics, each 30 days newer than the last; the oldest one is about database schemas.
  async function topics() {
    const tm = openTestMemory();
    const { mem, clock } = tm;
    ok(
      await mem.saveMemory('Topics/Schema', { note: 'database schema with tables and indexes' }, 0),
    );
    clock.advanceDays(30);
    ok(
      await mem.saveMemory('Topics/Marketing', { note: 'marketing launch with press releases' }, 0),
    );
    clock.advanceDays(30);
    ok(await mem.saveMemory('Topics/Cooking', { note: 'pasta recipe with tomato sauce' }, 0));
    return tm;
  }
  const query = 'database schema tables and indexes';

  it('recencyBias 1 puts the newest first regardless of relevance; recency = exp(-ageDays/30)', async () => {
    const { mem } = await topics();
    const r = ok(await mem.queryMemoryHeading('Topics', query, 1));
    const order = ['Topics/Cooking', 'Topics/Marketing', 'Topics/Schema'];
    const paths = childPaths(r.children);
    expect(paths).toContain('Topics/Schema');
    expect(paths).toEqual(order.filter((p) => paths.includes(p)));
    const expected: Record<string, number> = {
      'Topics/Cooking': 1,
      'Topics/Marketing': Math.exp(-1),
      'Topics/Schema': Math.exp(-2),
    };
    for (const c of r.children) {
      expect(c.recency as number).toBeCloseTo(expected[c.path], 4);
      expect(c.score as number).toBeCloseTo(expected[c.path], 4);
    }
  });

  it('recencyBias 0 ranks by relevance alone regardless of age', async () => {
    const { mem } = await topics();
    const r = ok(await mem.queryMemoryHeading('Topics', query, 0));
    expect(r.children[0].path).toBe('Topics/Schema');
    for (const c of r.children) expect(c.score as number).toBeCloseTo(c.relevance as number, 6);
    const rel = r.children.map((c) => c.relevance as number);
    expect([...rel].sort((a, b) => b - a)).toEqual(rel);
  });

  it('the default recencyBias is 0.3: score = 0.7 * relevance + 0.3 * recency', async () => {
    const { mem } = await topics();
    const r = ok(await mem.queryMemoryHeading('Topics', query));
    expect(r.children.length).toBeGreaterThan(0);
    for (const c of r.children) {
      expect(c.score as number).toBeCloseTo(
        0.7 * (c.relevance as number) + 0.3 * (c.recency as number),
        6,
      );
    }
  });

  it("scope 'children': a sub-heading scores as its best descendant and names it", async () => {
    const { mem } = await topics();
    const top = ok(await mem.queryMemoryHeading('', query, 0, { scope: 'children' }));
    const child = top.children.find((c) => c.path === 'Topics');
    expect(child).toBeDefined();
    expect(child).toMatchObject({ isHeading: true, descendants: 3 });
    const heading = child as HeadingChildHeading;
    expect(heading.bestMatch?.path).toBe('Topics/Schema');
    const inside = ok(await mem.queryMemoryHeading('Topics', query, 0));
    expect(heading.score as number).toBeCloseTo(inside.children[0].score as number, 6);
  });

  it('by default a query searches the whole subtree and says why each hit matched', async () => {
    const { mem } = await topics();
    const r = ok(await mem.queryMemoryHeading('', query, 0));
    expect(r.scope).toBe('subtree');
    expect(r.children[0]).toMatchObject({
      path: 'Topics/Schema',
      content: { note: expect.any(String) },
    });
    const why = r.children[0].why!;
    expect(why.terms).toEqual(expect.arrayContaining(['databas', 'schema', 'tabl', 'index']));
    expect(why.lexical).toBeGreaterThan(0.9);
    expect(why.fromSnapshot).toBe(false);
  });

  it('without a query, children come newest first and a sub-heading dates from its newest descendant', async () => {
    const { mem, clock } = openTestMemory();
    ok(await mem.saveMemory('R/Old', 'old', 0));
    clock.advanceDays(1);
    ok(await mem.saveMemory('R/Sub/Early', 'early', 0));
    clock.advanceDays(1);
    ok(await mem.saveMemory('R/Mid', 'mid', 0));
    clock.advanceDays(1);
    const newest = clock.t;
    ok(await mem.saveMemory('R/Sub/Late', 'late', 0));
    const r = ok(await mem.queryMemoryHeading('R'));
    expect(childPaths(r.children)).toEqual(['R/Sub', 'R/Mid', 'R/Old']);
    expect(r.totalChildren).toBe(3);
    expect(r.children[0]).toMatchObject({ heading: 'Sub', isHeading: true, descendants: 2 });
    expect(ms(r.children[0].modified)).toBe(newest);
    expect(r.children[1]).toMatchObject({ path: 'R/Mid', heading: 'Mid', content: 'mid' });
  });

  it('limit caps the children returned while totalChildren counts them all', async () => {
    const { mem } = await topics();
    const r = ok(await mem.queryMemoryHeading('Topics', query, 0.3, { limit: 2 }));
    expect(r.children).toHaveLength(2);
    expect(r.totalChildren).toBe(3);
  });
});

describe('implicit headings and segment-aware prefixes', () => {
  it('after saving only A/B/C, A and A/B act as headings everywhere', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('A/B/C', { x: 1 }, 0));

    const root = ok(await mem.queryMemoryHeading(''));
    expect(root.children).toHaveLength(1);
    expect(root.children[0]).toMatchObject({
      path: 'A',
      heading: 'A',
      isHeading: true,
      descendants: 1,
    });
    const a = ok(await mem.queryMemoryHeading('A'));
    expect(a.children).toHaveLength(1);
    expect(a.children[0]).toMatchObject({ path: 'A/B', isHeading: true, descendants: 1 });
    const ab = ok(await mem.queryMemoryHeading('A/B'));
    expect(ab.children).toHaveLength(1);
    expect(ab.children[0]).toMatchObject({ path: 'A/B/C', heading: 'C', content: { x: 1 } });
    expect(isHeadingChild(ab.children[0])).toBe(false);

    const list = ok(await mem.listMemory());
    expect(list.tree).toEqual({ A: { B: { C: { x: 1 } } } });
    expect(list.totalEntries).toBe(1);

    const nf = await mem.queryMemory('A/B');
    expect(nf).toMatchObject({ status: 'NOT_FOUND', path: 'A/B', children: 1 });
    expect((nf as { message: string }).message).toContain('queryMemoryHeading');

    expectNotFound(await mem.queryMemoryHeading('A/B/C'));
    expectNotFound(await mem.queryMemoryHeading('Nowhere'));
  });

  it('the root heading of an empty memory has no children: NOT_FOUND', async () => {
    const { mem } = openTestMemory();
    expectNotFound(await mem.queryMemoryHeading(''));
  });

  async function prefs() {
    const tm = openTestMemory();
    const { mem } = tm;
    ok(await mem.saveMemory('User/Pref/Color', 'blue', 0));
    ok(await mem.saveMemory('User/Pref/Size', 'large', 0));
    ok(await mem.saveMemory('User/Preferences/Theme', 'dark', 0));
    ok(await mem.saveMemory('User/Preferences/Font', 'serif', 0));
    // Sort right around the range bounds of User/Pref/ ('.' < '/' < '0').
    ok(await mem.saveMemory('User/Pref.bak', 'backup', 0));
    ok(await mem.saveMemory('User/Pref0/X', 'zero', 0));
    return tm;
  }
  const outside = ['Preferences', 'Theme', 'Font', 'dark', 'serif', 'backup', 'zero', 'Pref0'];

  it('listMemory("User/Pref") never includes User/Preferences/… or other look-alikes', async () => {
    const { mem } = await prefs();
    const r = ok(await mem.listMemory('User/Pref'));
    expect(r.totalEntries).toBe(2);
    const text = JSON.stringify(r.tree);
    for (const word of outside) expect(text).not.toContain(word);
    expect(text).toContain('blue');
    expect(text).toContain('large');
  });

  it('queryMemoryHeading("User/Pref") lists only User/Pref/*', async () => {
    const { mem } = await prefs();
    const r = ok(await mem.queryMemoryHeading('User/Pref'));
    expect(childPaths(r.children).sort()).toEqual(['User/Pref/Color', 'User/Pref/Size']);
    expect(r.totalChildren).toBe(2);
    const q = ok(await mem.queryMemoryHeading('User/Pref', 'what colour do I like', 0.3));
    expect(childPaths(q.children).sort()).toEqual(['User/Pref/Color', 'User/Pref/Size']);
  });

  it('recursive deleteMemory("User/Pref") deletes only User/Pref/*', async () => {
    const { mem } = await prefs();
    const r = ok(await mem.deleteMemory('User/Pref', true));
    expect(r.deleted).toBe(2);
    const list = ok(await mem.listMemory());
    expect(list.totalEntries).toBe(4);
    for (const p of [
      'User/Preferences/Theme',
      'User/Preferences/Font',
      'User/Pref.bak',
      'User/Pref0/X',
    ]) {
      ok(await mem.queryMemory(p));
    }
    expectNotFound(await mem.queryMemory('User/Pref/Color'));
    expectNotFound(await mem.queryMemory('User/Pref/Size'));
  });

  it('non-recursive delete of a heading with children is HAS_CHILDREN and deletes nothing', async () => {
    const { mem, name } = await prefs();
    const before = await contentSnapshot(name);
    const r = await mem.deleteMemory('User/Pref');
    expectError(r, 'HAS_CHILDREN');
    expect((r as { message: string }).message).toContain('2');
    expect(await contentSnapshot(name)).toEqual(before);
  });

  it('an entry that is also a heading: listed under _content, non-recursive delete is HAS_CHILDREN', async () => {
    const { mem, name } = openTestMemory();
    ok(await mem.saveMemory('A', 'top', 0));
    ok(await mem.saveMemory('A/B', 'child', 0));
    const list = ok(await mem.listMemory());
    expect(list.tree).toEqual({ A: { _content: 'top', B: 'child' } });
    expect(list.totalEntries).toBe(2);
    const root = ok(await mem.queryMemoryHeading(''));
    expect(root.children[0]).toMatchObject({ path: 'A', content: 'top', descendants: 1 });

    const before = await contentSnapshot(name);
    const r = await mem.deleteMemory('A', false);
    expectError(r, 'HAS_CHILDREN');
    expect((r as { message: string }).message).toContain('1');
    expect(await contentSnapshot(name)).toEqual(before);

    const all = ok(await mem.deleteMemory('A', true));
    expect(all.deleted).toBe(2);
    expectNotFound(await mem.queryMemory('A'));
    expectNotFound(await mem.queryMemory('A/B'));
  });
});

describe('path normalisation', () => {
  it("' A / B ' and '/A/B/' are the same entry as 'A/B'", async () => {
    const { mem } = openTestMemory();
    const a = ok(await mem.saveMemory(' A / B ', 1, 0));
    expect(a.path).toBe('A/B');
    const b = ok(await mem.saveMemory('/A/B/', 2, 0));
    expect(b).toMatchObject({ path: 'A/B', version: 2 });
    const q = ok(await mem.queryMemory('A/B'));
    expect(q).toMatchObject({ path: 'A/B', content: 2 });
    ok(await mem.queryMemory(' /A / B/ '));
    expect(ok(await mem.listMemory()).totalEntries).toBe(1);
  });

  it('NFC: a decomposed é and a precomposed é name the same entry', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Cafe\u0301/Menu', 'decomposed', 0));
    const r = ok(await mem.saveMemory('Caf\u00e9/Menu', 'precomposed', 0));
    expect(r).toMatchObject({ path: 'Caf\u00e9/Menu', version: 2 });
    const q = ok(await mem.queryMemory('Cafe\u0301/Menu'));
    expect(q).toMatchObject({ path: 'Caf\u00e9/Menu', content: 'precomposed' });
    expect(ok(await mem.listMemory()).totalEntries).toBe(1);
  });

  it('paths are case-sensitive', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Notes/Todo', 'upper', 0));
    ok(await mem.saveMemory('notes/todo', 'lower', 0));
    expect(ok(await mem.queryMemory('Notes/Todo')).content).toBe('upper');
    expect(ok(await mem.queryMemory('notes/todo')).content).toBe('lower');
    expectNotFound(await mem.queryMemory('Notes/todo'));
    expect(ok(await mem.listMemory()).totalEntries).toBe(2);
  });

  it('the limits themselves are valid: a 128-character segment, 12 levels, 512 characters', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('S/' + 'x'.repeat(128), 1, 0));
    const twelve = Array.from({ length: 12 }, (_, i) => `L${i}`).join('/');
    ok(await mem.saveMemory(twelve, 2, 0));
    const long = ['a', 'b', 'c'].map((c) => c.repeat(128)).join('/') + '/' + 'd'.repeat(125);
    expect(long.length).toBe(512);
    ok(await mem.saveMemory(long, 3, 0));
    expect(ok(await mem.listMemory()).totalEntries).toBe(3);
  });
});

describe('history, delete and restore', () => {
  it('deleteMemory moves the row to history; restoreMemory brings it back as a new version', async () => {
    const { mem, clock } = openTestMemory();
    ok(await mem.saveMemory('Notes/Idea', 'first', 0));
    clock.advanceDays(1);
    ok(await mem.saveMemory('Notes/Idea', 'second', 0));
    clock.advanceDays(1);
    const d = ok(await mem.deleteMemory('Notes/Idea'));
    expect(d).toMatchObject({ path: 'Notes/Idea', deleted: 1 });
    expectNotFound(await mem.queryMemory('Notes/Idea'));

    const h = ok(await mem.getHistory('Notes/Idea'));
    expect(h.versions.map((v) => [v.version, v.reason, v.content])).toEqual([
      [2, 'delete', 'second'],
      [1, 'update', 'first'],
    ]);

    clock.advanceDays(1);
    const restored = ok(await mem.restoreMemory(h.versions[0].id));
    expect(restored.path).toBe('Notes/Idea');
    expect(restored.version).toBeGreaterThan(2);
    const q = ok(await mem.queryMemory('Notes/Idea'));
    expect(q.content).toBe('second');
    expect(q.metadata.version).toBe(restored.version);
  });

  it('restoring an older version of a live entry makes it current and keeps the replaced one', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Notes/Plan', 'v1', 0));
    ok(await mem.saveMemory('Notes/Plan', 'v2', 0));
    const h = ok(await mem.getHistory('Notes/Plan'));
    const v1 = h.versions.find((v) => v.version === 1);
    expect(v1).toBeDefined();
    const r = ok(await mem.restoreMemory(v1?.id));
    expect(r.version).toBe(3);
    expect(ok(await mem.queryMemory('Notes/Plan')).content).toBe('v1');
    const after = ok(await mem.getHistory('Notes/Plan'));
    expect(after.versions.map((v) => [v.version, v.content])).toContainEqual([2, 'v2']);
  });

  it('restoreMemory of an unknown history id is NOT_FOUND', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Notes/Plan', 'v1', 0));
    expectNotFound(await mem.restoreMemory(987654));
  });
});

describe('moveMemory', () => {
  async function tree() {
    const tm = openTestMemory();
    const { mem } = tm;
    ok(await mem.saveMemory('A/B', 'b', 0));
    ok(await mem.saveMemory('A/B/C', 'c', 0));
    ok(await mem.saveMemory('A/B/D/E', { e: true }, 0));
    ok(await mem.saveMemory('A/Bx', 'sibling', 0));
    return tm;
  }

  it('moves an entry with its whole subtree, segment-aware', async () => {
    const { mem } = await tree();
    const r = ok(await mem.moveMemory('A/B', 'Z/Y'));
    expect(r).toMatchObject({ from: 'A/B', to: 'Z/Y', moved: 3 });
    expect(ok(await mem.queryMemory('Z/Y')).content).toBe('b');
    expect(ok(await mem.queryMemory('Z/Y/C')).content).toBe('c');
    expect(ok(await mem.queryMemory('Z/Y/D/E')).content).toEqual({ e: true });
    for (const p of ['A/B', 'A/B/C', 'A/B/D/E']) expectNotFound(await mem.queryMemory(p));
    expect(ok(await mem.queryMemory('A/Bx')).content).toBe('sibling');
    expect(ok(await mem.listMemory()).totalEntries).toBe(4);
  });

  it('moves a pure heading (all its descendants)', async () => {
    const { mem } = await tree();
    const r = ok(await mem.moveMemory('A/B/D', 'Q'));
    expect(r.moved).toBe(1);
    expect(ok(await mem.queryMemory('Q/E')).content).toEqual({ e: true });
  });

  it('refuses an existing target, a target inside the source, and a colliding descendant', async () => {
    const { mem, name } = await tree();
    ok(await mem.saveMemory('Q/C', 'occupied', 0));
    const before = await contentSnapshot(name);
    for (const [from, to] of [
      ['A/B/C', 'A/Bx'],
      ['A/B', 'A/B/C/Inner'],
      ['A/B', 'Q'],
    ]) {
      const r = await mem.moveMemory(from, to);
      expect(r.status, `moveMemory(${from}, ${to})`).toBe('ERROR');
      expect((r as { message: string }).message.length).toBeGreaterThan(0);
      expect(await contentSnapshot(name)).toEqual(before);
    }
  });
});

describe('updateMemory (RFC 7396 merge patch)', () => {
  it('merges a patch, null deletes a key, arrays are replaced, version bumps', async () => {
    const { mem, clock } = openTestMemory();
    ok(await mem.saveMemory('Cfg', { a: 1, b: { c: 2, d: 3 }, e: [1, 2] }, 0));
    const at = clock.advanceDays(1);
    const r = ok(
      await mem.updateMemory('Cfg', { a: null, b: { c: null, x: 5 }, e: [9], f: 'new' }),
    );
    expect(r).toMatchObject({ path: 'Cfg', version: 2 });
    const q = ok(await mem.queryMemory('Cfg'));
    expect(q.content).toEqual({ b: { d: 3, x: 5 }, e: [9], f: 'new' });
    expect(ms(q.metadata.modified)).toBe(at);
    const h = ok(await mem.getHistory('Cfg'));
    expect(h.versions[0]).toMatchObject({
      version: 1,
      content: { a: 1, b: { c: 2, d: 3 }, e: [1, 2] },
    });
  });

  it('a patch that changes nothing writes nothing and says so', async () => {
    const { mem, name, clock } = openTestMemory();
    ok(await mem.saveMemory('Cfg', { a: 1, b: { c: 2 } }, 0));
    const before = await snapshotDb(name);
    clock.advanceDays(1);
    const r = ok(await mem.updateMemory('Cfg', { a: 1, b: { c: 2 }, gone: null }));
    expect(r).toMatchObject({ path: 'Cfg', version: 1, unchanged: true });
    expect(await snapshotDb(name)).toEqual(before);
  });

  it('updateMemory of non-object content is an error and changes nothing', async () => {
    const { mem, name } = openTestMemory();
    ok(await mem.saveMemory('Text', 'just a string', 0));
    ok(await mem.saveMemory('List', [1, 2], 0));
    const before = await contentSnapshot(name);
    expectError(await mem.updateMemory('Text', { a: 1 }), ['INVALID_ARGUMENT', 'INVALID_CONTENT']);
    expectError(await mem.updateMemory('List', { a: 1 }), ['INVALID_ARGUMENT', 'INVALID_CONTENT']);
    expect(await contentSnapshot(name)).toEqual(before);
  });
});

describe('listMemory', () => {
  it('builds a nested tree by segment with _content for entries that have children', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('P/A', 'alpha', 0));
    ok(await mem.saveMemory('P/A/B', 'beta', 0));
    ok(await mem.saveMemory('P/C', { x: 1 }, 0));
    ok(await mem.saveMemory('Q', 3, 0));
    const r = ok(await mem.listMemory());
    expect(r.tree).toEqual({ P: { A: { _content: 'alpha', B: 'beta' }, C: { x: 1 } }, Q: 3 });
    expect(r.totalEntries).toBe(4);
    expect(r.truncated ?? false).toBe(false);

    // The subtree may be given relative to P or from the root: both are read the same way.
    const sub = ok(await mem.listMemory('P'));
    expect(sub.totalEntries).toBe(3);
    const t = sub.tree as TreeNode;
    const rel = Object.keys(t).length === 1 && 'P' in t ? (t.P as TreeNode) : t;
    expect(rel).toEqual({ A: { _content: 'alpha', B: 'beta' }, C: { x: 1 } });
  });

  it('an entry named _content shows beside its parent’s own content, and its key reads it back', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Notes', 'the notes heading', 0));
    ok(await mem.saveMemory('Notes/_content', 'an entry a model named _content', 0));
    const r = ok(await mem.listMemory());
    expect(r.tree).toEqual({
      Notes: { _content: 'the notes heading', '_content/': 'an entry a model named _content' },
    });
    // The key, put after its parent's path, is a path to that entry (a trailing "/" is ignored).
    const child = ok(await mem.queryMemory('Notes/_content/'));
    expect(child.content).toBe('an entry a model named _content');
  });

  it('past maxChars, leaf contents become short previews and truncated is set', async () => {
    const { mem } = openTestMemory();
    const n = 30;
    const contentOf = (i: number) =>
      `Entry ${String(i).padStart(2, '0')}: ` + 'lorem ipsum dolor sit amet '.repeat(20);
    for (let i = 0; i < n; i++) {
      ok(await mem.saveMemory(`Big/E${String(i).padStart(2, '0')}`, contentOf(i), 0));
    }
    const full = ok(await mem.listMemory('', { maxChars: 100_000 }));
    expect(full.truncated ?? false).toBe(false);
    expect((full.tree.Big as TreeNode).E07).toBe(contentOf(7));

    const r = ok(await mem.listMemory('', { maxChars: 4000 }));
    expect(r.truncated).toBe(true);
    expect(r.totalEntries).toBe(n);
    expect(JSON.stringify(r.tree).length).toBeLessThanOrEqual(4000);
    const big = r.tree.Big as TreeNode;
    expect(Object.keys(big)).toHaveLength(n);
    for (let i = 0; i < n; i++) {
      const preview = big[`E${String(i).padStart(2, '0')}`];
      const text = typeof preview === 'string' ? preview : JSON.stringify(preview);
      expect(text.length).toBeLessThan(contentOf(i).length);
      expect(text).toContain(`Entry ${String(i).padStart(2, '0')}`);
    }
  });

  it('the default cap is 8,000 characters', async () => {
    const { mem } = openTestMemory();
    for (let i = 0; i < 30; i++) {
      ok(await mem.saveMemory(`Big/E${i}`, `Entry ${i} ` + 'x'.repeat(500), 0));
    }
    const r = ok(await mem.listMemory());
    expect(r.truncated).toBe(true);
    expect(JSON.stringify(r.tree).length).toBeLessThanOrEqual(8000);
  });
});

describe('recordTurn and searchChunks', () => {
  it('returns the top-k chunks of that conversation only, by relevance', async () => {
    const { mem, rec } = await seededConversations();
    const hits = await mem.searchChunks(HALOWEAVE, 'each window should stay in sync', 3);
    expect(hits).toHaveLength(3);
    const ids = rec.turnIds.get(HALOWEAVE) ?? [];
    for (const h of hits) {
      expect(h.chunk.conversationId).toBe(HALOWEAVE);
      expect(ids).toContain(h.chunk.turnId);
      expect('embedding' in h.chunk).toBe(false);
      expect(h.chunk.tokenCount).toBeGreaterThan(0);
    }
    const scores = hits.map((h) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(hits[0].terms).toEqual(expect.arrayContaining(['window', 'sync']));
    expect(hits[0].chunk.text.trim()).toBe(
      'Each window should stay in sync with the other windows.',
    );

    // The cooking conversation holds the very same sentence; it must not leak in, and its own
    // search finds its copy.
    const cooking = await mem.searchChunks(COOKING, 'each window should stay in sync', 10);
    expect(cooking.length).toBeGreaterThan(0);
    expect(cooking.every((h) => h.chunk.conversationId === COOKING)).toBe(true);
    expect(cooking[0].chunk.text.trim()).toBe(
      'Each window should stay in sync with the other windows.',
    );
    expect(cooking[0].chunk.turnId).not.toBe(hits[0].chunk.turnId);
  });

  it('recordTurn splits a turn into sentences with roles kept', async () => {
    const { mem, name } = openTestMemory();
    const r = ok(
      await mem.recordTurn({
        conversationId: 7,
        role: 'assistant',
        text: 'First sentence here. Second one follows! And a third?',
      }),
    );
    expect(r.chunks).toBe(3);
    const rows = await tableRows<Chunk>(name, 'chunks');
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((c) => c.sentenceId)).size).toBe(3);
    expect(rows.map((c) => c.text.trim()).sort()).toEqual(
      ['And a third?', 'First sentence here.', 'Second one follows!'].sort(),
    );
    expect(rows.every((c) => c.role === 'assistant' && c.turnId === r.turnId)).toBe(true);
    // Each sentence is found by its own words.
    for (const [q, text] of [
      ['sentence here', 'First sentence here.'],
      ['follows', 'Second one follows!'],
      ['third', 'And a third?'],
    ]) {
      expect((await mem.searchChunks(7, q, 1))[0]?.chunk.text).toBe(text);
    }
  });
});

describe('clock', () => {
  it('created/modified follow the injected clock', async () => {
    const clock = new Clock(T0 + 5 * DAY);
    const { mem } = openTestMemory({ clock });
    ok(await mem.saveMemory('X', 1, 0));
    const q = ok(await mem.queryMemory('X'));
    expect(ms(q.metadata.created)).toBe(T0 + 5 * DAY);
  });
});
