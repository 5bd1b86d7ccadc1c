// JSON backup and restore (a backup merged into a store that holds some of it already: versions,
// history snapshots, alike messages), the explorer's entry summary, settings, stats and
// re-embedding after a model switch.
import { afterEach, describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/embeddings/types';
import { MemoryDB } from '../../src/memory/db';
import type { HistoryRow, MemoryApi, MemoryEntry } from '../../src/memory/types';
import {
  closeAll,
  expectError,
  gatedEmbedder,
  ok,
  openTestMemory,
  otherModel,
  sharedEmbedder,
  snapshotDb,
} from './helpers';

afterEach(closeAll);

async function seeded(mem: MemoryApi) {
  const conv = ok(await mem.createConversation('Planning'));
  await mem.recordTurn({
    conversationId: conv.id,
    role: 'user',
    text: 'I prefer vanilla JavaScript. I avoid npm build steps.',
  });
  await mem.recordTurn({
    conversationId: conv.id,
    role: 'assistant',
    text: 'Noted: plain scripts, no bundler.',
  });
  ok(
    await mem.saveMemory('User/Preferences/CodingStyle', {
      language: 'vanilla JavaScript',
      buildSteps: false,
    }),
  );
  ok(
    await mem.saveMemory('User/Preferences/CodingStyle', {
      language: 'vanilla JavaScript',
      buildSteps: 'none',
    }),
  );
  ok(await mem.saveMemory('Projects/HaloWeave', 'A window manager for notes'));
  return conv.id;
}

/** A memory holding the chat "Trip" of one message, and its backup. */
async function tripBackup() {
  const a = openTestMemory();
  const trip = ok(await a.mem.createConversation('Trip'));
  ok(await a.mem.addMessage({ conversationId: trip.id, role: 'user', text: 'We fly on the 9th.' }));
  return { a, trip, json: (await a.mem.exportJson()) as string };
}

const comparable = async (mem: MemoryApi, path: string) => {
  const r = ok(await mem.queryMemory(path));
  return {
    content: r.content,
    chunks: r.contextChunks,
    created: r.metadata.created,
    modified: r.metadata.modified,
    version: r.metadata.version,
  };
};

describe('JSON backup', () => {
  it('restores entries, history, conversations and a working semantic index into a fresh database', async () => {
    const a = openTestMemory();
    const convId = await seeded(a.mem);
    const json = await a.mem.exportJson();
    expect(typeof json).toBe('string');
    const parsed = JSON.parse(json as string) as { format: string; entries: unknown[] };
    expect(parsed.format).toBe('structured-memory-backup');
    expect(JSON.stringify(parsed)).not.toMatch(/embedding/);

    const b = openTestMemory({ clock: a.clock });
    const r = ok(await b.mem.importJson(json, 'replace'));
    expect(r).toMatchObject({ imported: 2, created: 2, updated: 0 });
    for (const path of ['User/Preferences/CodingStyle', 'Projects/HaloWeave']) {
      expect(await comparable(b.mem, path)).toEqual(await comparable(a.mem, path));
    }
    const history = ok(await b.mem.getHistory('User/Preferences/CodingStyle'));
    expect(history.versions.map((v) => v.version)).toEqual([1]);
    expect(await b.mem.listConversations()).toMatchObject([{ id: convId, title: 'Planning' }]);
    expect((await b.mem.getMessages(convId)).map((m) => m.text)).toEqual([
      'I prefer vanilla JavaScript. I avoid npm build steps.',
      'Noted: plain scripts, no bundler.',
    ]);
    const hits = await b.mem.searchChunks(convId, 'no build tools', 1);
    expect(hits[0]?.chunk.text).toBe('I avoid npm build steps.');
  });

  it('keeps the version a sync conflict set aside, and which device it came from', async () => {
    const a = openTestMemory();
    await seeded(a.mem);
    // As sync stores a version that lost a conflict (docs/sync.md): a history row with its device.
    const db = new MemoryDB(a.name);
    const [row] = await db.history.where('path').equals('User/Preferences/CodingStyle').toArray();
    await db.history.put({ ...row!, conflictFrom: 'laptop' });
    db.close();
    const json = (await a.mem.exportJson()) as string;

    const b = openTestMemory({ clock: a.clock });
    ok(await b.mem.importJson(json, 'replace'));
    const versions = ok(await b.mem.getHistory('User/Preferences/CodingStyle')).versions;
    expect(versions.map((v) => [v.version, v.conflictFrom])).toEqual([[1, 'laptop']]);
  });

  it('merges into a non-empty database without clobbering its conversations', async () => {
    const a = openTestMemory();
    await seeded(a.mem);
    const json = (await a.mem.exportJson()) as string;
    const b = openTestMemory();
    const own = ok(await b.mem.createConversation('Mine'));
    ok(await b.mem.addMessage({ conversationId: own.id, role: 'user', text: 'my own message' }));
    ok(await b.mem.saveMemory('Projects/HaloWeave', 'an older description'));
    const r = ok(await b.mem.importJson(json, 'merge'));
    expect(r).toMatchObject({ imported: 2, created: 1, updated: 1 });
    const convs = await b.mem.listConversations();
    expect(convs.map((c) => c.title).sort()).toEqual(['Mine', 'Planning']);
    expect((await b.mem.getMessages(own.id)).map((m) => m.text)).toEqual(['my own message']);
    const planning = convs.find((c) => c.title === 'Planning')!;
    expect(await b.mem.getMessages(planning.id!)).toHaveLength(2);
    // The replaced local version is in history.
    const h = ok(await b.mem.getHistory('Projects/HaloWeave'));
    expect(h.versions.map((v) => v.content)).toContain('an older description');
    // Context chunks point at the imported messages' new ids.
    const entry = ok(await b.mem.queryMemory('User/Preferences/CodingStyle'));
    expect(entry.contextChunks.length).toBeGreaterThan(0);
  });

  it('merged, a reply’s Recalled links and a keeper card follow their messages to their new ids', async () => {
    const a = openTestMemory();
    const planning = ok(await a.mem.createConversation('Planning'));
    const fact = ok(
      await a.mem.addMessage({
        conversationId: planning.id,
        role: 'user',
        text: 'We fly on the 9th.',
      }),
    );
    const later = ok(await a.mem.createConversation('Later'));
    ok(await a.mem.addMessage({ conversationId: later.id, role: 'user', text: 'When do we fly?' }));
    const reply = ok(
      await a.mem.addMessage({
        conversationId: later.id,
        role: 'assistant',
        text: 'On the 9th.',
        meta: {
          recalledTurns: [
            { conversationId: planning.id, turnId: fact.id, chat: 'Planning', time: '2026-01-01' },
            { conversationId: 999, turnId: 999, chat: 'Gone', time: '2026-01-01' },
          ],
        },
      }),
    );
    ok(
      await a.mem.addMessage({
        conversationId: later.id,
        role: 'assistant',
        text: '',
        meta: {
          keeper: {
            ops: [{ op: 'add', path: 'Trips/Flight', content: 'On the 9th.', version: 1 }],
            replyId: reply.id,
          },
        },
      }),
    );
    const json = (await a.mem.exportJson()) as string;
    const b = openTestMemory();
    const own = ok(await b.mem.createConversation('Mine'));
    for (const text of ['one', 'two', 'three'])
      ok(await b.mem.addMessage({ conversationId: own.id, role: 'user', text }));
    ok(await b.mem.importJson(json, 'merge'));
    const convs = await b.mem.listConversations();
    const id = (title: string) => convs.find((c) => c.title === title)!.id!;
    const told = (await b.mem.getMessages(id('Planning')))[0];
    const [, merged, card] = await b.mem.getMessages(id('Later'));
    expect(merged.meta?.recalledTurns).toEqual([
      { conversationId: id('Planning'), turnId: told.id, chat: 'Planning', time: '2026-01-01' },
    ]);
    expect((card.meta?.keeper as { replyId: number }).replyId).toBe(merged.id);
  });

  it('merged, an empty chat nobody named is left out, and the result counts the chats and messages added; replaced, all come back', async () => {
    const a = openTestMemory();
    await seeded(a.mem);
    ok(await a.mem.createConversation('New chat'));
    const json = (await a.mem.exportJson()) as string;
    const b = openTestMemory();
    const merged = ok(await b.mem.importJson(json, 'merge'));
    expect(merged).toMatchObject({ chatsAdded: 1, messagesAdded: 2 });
    expect((await b.mem.listConversations()).map((c) => c.title)).toEqual(['Planning']);
    const c = openTestMemory();
    const replaced = ok(await c.mem.importJson(json, 'replace'));
    expect(replaced).toMatchObject({ chatsAdded: 2, messagesAdded: 2 });
    expect((await c.mem.listConversations()).map((x) => x.title).sort()).toEqual([
      'New chat',
      'Planning',
    ]);
  });

  it('merging the same backup again adds none of its chats twice, and says how many were here', async () => {
    const a = openTestMemory();
    await seeded(a.mem);
    const json = (await a.mem.exportJson()) as string;
    const b = openTestMemory();
    const first = ok(await b.mem.importJson(json, 'merge'));
    const statsOnce = await b.mem.stats();
    const before = await snapshotDb(b.name);
    const again = ok(await b.mem.importJson(json, 'merge'));
    // Its entries are here with their content and its versions in their history: none again.
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: first.imported });
    const after = await snapshotDb(b.name);
    const versions = (db: typeof after) =>
      (db.structured_memory as MemoryEntry[]).map((r) => `${r.path} ${r.version}`).sort();
    expect(versions(after)).toEqual(versions(before));
    expect(before.history.length).toBeGreaterThan(0);
    expect(after.history).toHaveLength(before.history.length);
    const convs = await b.mem.listConversations();
    expect(convs.map((c) => c.title)).toEqual(['Planning']);
    expect([first.chatsAlreadyHere, again.chatsAlreadyHere]).toEqual([0, 1]);
    expect((await b.mem.getMessages(convs[0].id!)).map((m) => m.text)).toEqual([
      'I prefer vanilla JavaScript. I avoid npm build steps.',
      'Noted: plain scripts, no bundler.',
    ]);
    const stats = await b.mem.stats();
    expect([stats.conversations, stats.messages, stats.chunks]).toEqual([
      statsOnce.conversations,
      statsOnce.messages,
      statsOnce.chunks,
    ]);
    // The entries' snapshots still lead to the chat's messages.
    const ids = new Set((await b.mem.getMessages(convs[0].id!)).map((m) => m.id));
    const rows = (await snapshotDb(b.name)).structured_memory as MemoryEntry[];
    const turns = rows.flatMap((r) => r.contextChunks.map((c) => c.turn_id));
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.filter((t) => !ids.has(t))).toEqual([]);
    // Its own backup merged back into the store it came from adds no chat either.
    const home = ok(await a.mem.importJson(json, 'merge'));
    expect(await a.mem.listConversations()).toHaveLength(1);
    expect(home.chatsAlreadyHere).toBe(1);
  });

  it('merged again, a chat continued since on either side keeps every message', async () => {
    const { a, trip: conv, json: older } = await tripBackup();
    const b = openTestMemory();
    ok(await b.mem.importJson(older, 'merge'));
    const [here] = await b.mem.listConversations();
    // Renamed and continued here: merging the same backup again adds nothing.
    ok(await b.mem.renameConversation(here.id!, 'Lisbon trip'));
    ok(await b.mem.addMessage({ conversationId: here.id!, role: 'user', text: 'Hotel: Alfama.' }));
    const same = ok(await b.mem.importJson(older, 'merge'));
    expect((await b.mem.listConversations()).map((c) => c.title)).toEqual(['Lisbon trip']);
    expect((await b.mem.getMessages(here.id!)).map((m) => m.text)).toEqual([
      'We fly on the 9th.',
      'Hotel: Alfama.',
    ]);
    expect(same.chatsAlreadyHere).toBe(1);
    ok(
      await a.mem.addMessage({ conversationId: conv.id, role: 'user', text: 'Back on the 16th.' }),
    );
    const newer = (await a.mem.exportJson()) as string;
    // Continued there: the backup holds a message this chat lacks, so it comes in whole.
    const r = ok(await b.mem.importJson(newer, 'merge'));
    const convs = await b.mem.listConversations();
    expect(convs.map((c) => c.title).sort()).toEqual(['Lisbon trip', 'Trip']);
    const trip = convs.find((c) => c.title === 'Trip')!;
    expect((await b.mem.getMessages(trip.id!)).map((m) => m.text)).toEqual([
      'We fly on the 9th.',
      'Back on the 16th.',
    ]);
    expect(r.chatsAlreadyHere).toBe(0);
    const last = ok(await b.mem.importJson(newer, 'merge'));
    expect(await b.mem.listConversations()).toHaveLength(2);
    expect(last.chatsAlreadyHere).toBe(1);
  });

  it('a chat found here that is deleted while the backup is read: nothing changes, and it says so', async () => {
    const { a, json } = await tripBackup();
    const g = gatedEmbedder(sharedEmbedder(), 'GATE', { armed: false });
    const b = openTestMemory({ embedder: g.embedder });
    ok(await b.mem.importJson(json, 'merge'));
    const later = ok(await a.mem.createConversation('Later'));
    await a.mem.recordTurn({ conversationId: later.id, role: 'user', text: 'GATE: hotel Alfama.' });
    const newer = (await a.mem.exportJson()) as string;
    g.arm();
    const running = b.mem.importJson(newer, 'merge');
    await g.atGate; // Trip was found here; the new chat's sentences are being embedded
    const [here] = await b.mem.listConversations();
    ok(await b.mem.deleteConversation(here.id!));
    g.release();
    const r = await running;
    expectError(r, 'CHANGED');
    expect((r as { message: string }).message).toMatch(/nothing changed.*import it again/);
    const after = await snapshotDb(b.name);
    expect([after.conversations, after.messages, after.chunks]).toEqual([[], [], []]);
    // Again, both chats come in.
    ok(await b.mem.importJson(newer, 'merge'));
    expect((await b.mem.listConversations()).map((c) => c.title).sort()).toEqual(['Later', 'Trip']);
  });

  it('keeps the name a person gave a chat, and when they gave it', async () => {
    const { mem: a, clock } = openTestMemory();
    const conv = ok(await a.createConversation('New chat'));
    clock.advanceDays(1);
    const renamed = clock.t;
    ok(await a.renameConversation(conv.id, 'New chat'));
    const json = await a.exportJson();
    const { mem: b } = openTestMemory();
    ok(await b.importJson(json, 'replace'));
    const [back] = await b.listConversations();
    expect(back).toMatchObject({ title: 'New chat', named: true });
    // Sync tells the newer of two devices' names by it.
    expect(back.titled?.getTime()).toBe(renamed);
    // A bad one is refused, naming where.
    const bad = JSON.parse(json as string) as { conversations: { titled?: string }[] };
    bad.conversations[0].titled = 'yesterday';
    const r = await b.importJson(JSON.stringify(bad), 'replace');
    expect(r).toMatchObject({ status: 'ERROR' });
    expect((r as { message: string }).message).toMatch(/conversations\/0\/titled/);
  });

  it('a bad backup changes nothing and says what is wrong', async () => {
    const b = openTestMemory();
    await seeded(b.mem);
    const good = JSON.parse((await b.mem.exportJson()) as string) as {
      entries: { path: string; version: number }[];
    };
    const before = await snapshotDb(b.name);
    const bad: [string, RegExp][] = [
      ['{ not json', /not valid JSON/],
      [JSON.stringify({ format: 'something-else', version: 1, entries: [] }), /format/],
      [
        JSON.stringify({ ...good, entries: [{ ...good.entries[0], path: 'A//B' }] }),
        /invalid path "A\/\/B"/,
      ],
      [JSON.stringify({ ...good, entries: [good.entries[0], good.entries[0]] }), /duplicate path/],
      [JSON.stringify({ ...good, entries: [{ ...good.entries[0], version: 0 }] }), /version/],
      [
        JSON.stringify({ ...good, entries: [{ ...good.entries[0], content: 'x'.repeat(40_000) }] }),
        /32 KB/,
      ],
    ];
    for (const [text, reason] of bad) {
      for (const mode of ['merge', 'replace']) {
        const r = await b.mem.importJson(text, mode);
        expectError(r, 'INVALID_CONTENT');
        expect((r as { message: string }).message).toMatch(/nothing changed/);
        expect((r as { message: string }).message).toMatch(reason);
      }
    }
    expectError(await b.mem.importJson(JSON.stringify(good), 'overwrite'), 'INVALID_ARGUMENT');
    expect(await snapshotDb(b.name)).toEqual(before);
  });

  it('a backup over 64 MB is refused in a sentence before it is parsed, and nothing changes', async () => {
    const a = openTestMemory();
    await seeded(a.mem);
    // A good backup with spaces before its last brace: only its size is wrong.
    const good = (await a.mem.exportJson()) as string;
    const huge = `${good.slice(0, -1)}${' '.repeat(65 * 1024 * 1024)}}`;
    const b = openTestMemory();
    ok(await b.mem.saveMemory('Projects/HaloWeave', 'mine'));
    const before = await snapshotDb(b.name);
    const sentence =
      'Nothing was imported; nothing changed. The backup is 65 MB: a backup or Markdown file of this app is imported up to 64 MB at a time, as much as a browser tab can hold while it reads and indexes it. Split it into smaller files (in a backup, each chat with its messages) and import them one after the other.';
    for (const r of [
      await b.mem.checkBackup(huge),
      await b.mem.importJson(huge, 'merge'),
      await b.mem.importJson(huge, 'replace'),
    ]) {
      expectError(r, 'INVALID_CONTENT');
      expect((r as { message: string }).message).toBe(sentence);
    }
    expect(await snapshotDb(b.name)).toEqual(before);
  });
});

describe('explorer summary, stats and settings', () => {
  it('memoryIndex lists every entry with sizes, chunk counts and dates; stats count rows', async () => {
    const { mem, clock } = openTestMemory();
    await seeded(mem);
    const index = await mem.memoryIndex();
    expect(index.map((e) => e.path).sort()).toEqual([
      'Projects/HaloWeave',
      'User/Preferences/CodingStyle',
    ]);
    const style = index.find((e) => e.path === 'User/Preferences/CodingStyle')!;
    expect(style).toMatchObject({
      version: 2,
      size: JSON.stringify({ language: 'vanilla JavaScript', buildSteps: 'none' }).length,
    });
    expect(style.chunks).toBeGreaterThan(0);
    clock.advance(1000);
    await mem.queryMemory('Projects/HaloWeave');
    const after = (await mem.memoryIndex()).find((e) => e.path === 'Projects/HaloWeave')!;
    expect(after.accessed).toBe(clock.t);
    expect(await mem.stats()).toMatchObject({
      entries: 2,
      chunks: 3,
      conversations: 1,
      messages: 2,
      stale: 0,
    });
  });

  it('settings persist across connections', async () => {
    const a = openTestMemory();
    await a.mem.setSetting('app', { endpoint: 'http://localhost:8080', temperature: 0.2 });
    const b = openTestMemory({ name: a.name });
    expect(await b.mem.getSetting('app')).toEqual({
      endpoint: 'http://localhost:8080',
      temperature: 0.2,
    });
    expect(await b.mem.getSetting('missing')).toBeUndefined();
  });
});

describe('re-embedding after a model switch', () => {
  it('re-embeds every entry and chunk, batch by batch, and search works with the new model', async () => {
    const a = openTestMemory();
    const convId = await seeded(a.mem);
    const b = openTestMemory({ name: a.name, embedder: otherModel() });
    await b.mem.modelInfo(); // stale rows are counted once the active model is known
    const before = await b.mem.stats();
    expect(before.stale).toBe(2 + 3);
    const seen: number[] = [];
    const r = await b.mem.reembed((p) => seen.push(p.done));
    expect(r).toEqual({ done: 5, total: 5 });
    expect(seen[0]).toBe(0);
    expect(seen[seen.length - 1]).toBe(5);
    expect((await b.mem.stats()).stale).toBe(0);
    // Versions are untouched: re-embedding is not an edit.
    expect(ok(await b.mem.queryMemory('User/Preferences/CodingStyle')).metadata.version).toBe(2);
    const hits = await b.mem.searchChunks(convId, 'no build tools', 1);
    expect(hits[0]?.chunk.text).toBe('I avoid npm build steps.');
    const ranked = ok(await b.mem.queryMemoryHeading('', 'coding style preferences', 0));
    expect(ranked.children[0].path).toBe('User/Preferences/CodingStyle');
    expect(await b.mem.reembed()).toMatchObject({ status: 'ERROR', code: 'NOT_FOUND' });
  });
});

describe('re-embedding while a sync brings another edit of the same version', () => {
  it('leaves the edit that arrived: the old text is not written back', async () => {
    const a = openTestMemory();
    ok(await a.mem.saveMemory('Trips/Oslo', 'We fly on the 9th (B).', 0));
    const g = gatedEmbedder(otherModel(), '(B)');
    const b = openTestMemory({ name: a.name, embedder: g.embedder });
    await b.mem.modelInfo();
    const running = b.mem.reembed();
    await g.atGate;
    // Meanwhile a sync puts the other device's edit of the same version there (it won).
    const db = new MemoryDB(a.name);
    const row = (await db.structured_memory.where('path').equals('Trips/Oslo').first())!;
    await db.structured_memory.put({
      ...row,
      content: 'We fly on the 10th (C).',
      modified: new Date(row.modified.getTime() + 60_000),
    });
    db.close();
    g.release();
    await running;
    expect(ok(await b.mem.queryMemory('Trips/Oslo')).content).toBe('We fly on the 10th (C).');
  });
});

describe('while the embedding model is still loading', () => {
  it('the explorer tree and counts do not wait for it; search works once it is ready', async () => {
    const a = openTestMemory();
    await seeded(a.mem);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const base = sharedEmbedder();
    const slow: Embedder = {
      ready: async () => {
        await gate;
        return base.ready();
      },
      embed: async (t) => {
        await gate;
        return base.embed(t);
      },
      dispose: async () => undefined,
    };
    const b = openTestMemory({ name: a.name, embedder: slow });
    const index = await b.mem.memoryIndex();
    expect(index.map((e) => e.path).sort()).toEqual([
      'Projects/HaloWeave',
      'User/Preferences/CodingStyle',
    ]);
    expect(await b.mem.stats()).toMatchObject({ entries: 2, stale: 0 });
    const search = b.mem.queryMemoryHeading('', 'coding style preferences', 0);
    release();
    const ranked = ok(await search);
    expect(ranked.children[0].path).toBe('User/Preferences/CodingStyle');
    expect(ranked.children[0].similarity).toBeGreaterThan(0);
  });

  it("an entry's detail and the tree answer while a search waits for the model", async () => {
    const a = openTestMemory();
    await seeded(a.mem);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const base = sharedEmbedder();
    const slow: Embedder = {
      ready: async () => {
        await gate;
        return base.ready();
      },
      embed: async (t) => {
        await gate;
        return base.embed(t);
      },
      dispose: async () => undefined,
    };
    const b = openTestMemory({ name: a.name, embedder: slow });
    // A search (the chat's auto-recall) is waiting for the model to download...
    let searched = false;
    const search = b.mem.queryMemoryHeading('', 'coding style preferences', 0).then((r) => {
      searched = true;
      return r;
    });
    // ...while the person opens a heading in the explorer and the tree loads.
    const detail = ok(await b.mem.entryDetail('User'));
    expect(detail.kind).toBe('heading');
    expect(detail.children.map((c) => c.path)).toEqual(['User/Preferences']);
    const index = await b.mem.memoryIndex();
    expect(index).toHaveLength(2);
    expect(searched).toBe(false);
    release();
    expect(ok(await search).children[0].path).toBe('User/Preferences/CodingStyle');
  });
});

describe('merge: an unchanged entry with the backup history of a later version', () => {
  it('keeps the entry above every version its History lists', async () => {
    // Device A: saved, changed (the memory keeper), changed back (its Undo restores v1).
    const a = openTestMemory();
    const v1 = ok(await a.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    a.clock.advance(1000);
    ok(await a.mem.saveMemory('Trips/Flight', 'On the 10th.', 0));
    a.clock.advance(1000);
    const first = ok(await a.mem.getHistory('Trips/Flight')).versions[0];
    ok(await a.mem.restoreMemory(first.id));
    expect(v1.version).toBe(1);
    expect(await a.mem.getEntry('Trips/Flight')).toMatchObject({ version: 3 });
    const json = (await a.mem.exportJson()) as string;

    // Device B holds the same content at version 1 (saved there, or an older backup merged).
    const b = openTestMemory();
    ok(await b.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    const r = ok(await b.mem.importJson(json, 'merge'));
    expect(r).toMatchObject({ unchanged: 1 });

    const entry = (await b.mem.getEntry('Trips/Flight')) as { version: number };
    const listed = ok(await b.mem.getHistory('Trips/Flight')).versions.map((v) => v.version);
    // The rule of docs/trash.md "Version numbers": an entry's version is above every version
    // History lists at its path.
    expect(
      Math.max(...listed),
      `History lists ${listed} but the entry is v${entry.version}`,
    ).toBeLessThan(entry.version);
  });

  it('a save after such a merge makes a version number History lists already', async () => {
    const a = openTestMemory();
    ok(await a.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    a.clock.advance(1000);
    ok(await a.mem.saveMemory('Trips/Flight', 'On the 10th.', 0));
    a.clock.advance(1000);
    ok(await a.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    const json = (await a.mem.exportJson()) as string;
    const b = openTestMemory();
    ok(await b.mem.saveMemory('Trips/Flight', 'On the 9th.', 0));
    ok(await b.mem.importJson(json, 'merge'));
    const saved = ok(await b.mem.saveMemory('Trips/Flight', 'On the 11th.', 0));
    const listed = ok(await b.mem.getHistory('Trips/Flight')).versions.map((v) => v.version);
    // The new content is shown as "version 2" while History lists A's "On the 10th." as version 2.
    expect(listed, `saved as v${saved.version}; History lists ${listed}`).not.toContain(
      saved.version,
    );
  });
});

describe('merge: history versions of an entry', () => {
  it('name the merged messages in their snapshots', async () => {
    const a = openTestMemory();
    const trip = ok(await a.mem.createConversation('Trip'));
    ok(
      await a.mem.recordTurn({
        conversationId: trip.id,
        role: 'user',
        text: 'We fly to Lisbon on the 9th.',
      }),
    );
    ok(
      await a.mem.saveMemory('Trips/Flight', 'Lisbon, on the 9th.', 1000, {
        conversationId: trip.id,
      }),
    );
    ok(
      await a.mem.saveMemory('Trips/Flight', 'Lisbon, on the 10th.', 1000, {
        conversationId: trip.id,
      }),
    );
    const json = (await a.mem.exportJson()) as string;

    const b = openTestMemory();
    const own = ok(await b.mem.createConversation('Mine'));
    for (const text of ['one', 'two', 'three'])
      ok(await b.mem.addMessage({ conversationId: own.id, role: 'user', text }));
    ok(await b.mem.importJson(json, 'merge'));
    const tripHere = (await b.mem.listConversations()).find((c) => c.title === 'Trip')!;
    const ids = new Set((await b.mem.getMessages(tripHere.id!)).map((m) => m.id));
    const history = (await snapshotDb(b.name)).history as HistoryRow[];
    const turns = history.flatMap((h) => h.entry.contextChunks.map((c) => c.turn_id));
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.filter((t) => !ids.has(t))).toEqual([]);
  });
});

describe('merge: a chat here that lost one of two messages alike', () => {
  it('is not taken for the backup chat: the backup chat comes in whole', async () => {
    const a = openTestMemory();
    const conv = ok(await a.mem.createConversation('Story'));
    // One moment, as an imported KoboldAI save stores them (every message at the import's time).
    for (const [role, text] of [
      ['user', 'Go on.'],
      ['assistant', 'The door creaks open.'],
      ['user', 'Go on.'],
      ['assistant', 'A lamp flickers inside.'],
    ] as const)
      ok(await a.mem.addMessage({ conversationId: conv.id, role, text }));
    const json = (await a.mem.exportJson()) as string;

    const b = openTestMemory();
    ok(await b.mem.importJson(json, 'merge'));
    const [here] = await b.mem.listConversations();
    const msgs = await b.mem.getMessages(here.id!);
    expect(new Set(msgs.map((m) => m.time.getTime())).size).toBe(1);
    // Deleted here by mistake; merging the backup should bring it back (as a chat of its own).
    ok(await b.mem.deleteMessage(msgs[2].id));
    const r = ok(await b.mem.importJson(json, 'merge'));
    const all = await Promise.all(
      (await b.mem.listConversations()).map(async (c) =>
        (await b.mem.getMessages(c.id!)).map((m) => m.text),
      ),
    );
    expect(
      all.some((texts) => texts.filter((t) => t === 'Go on.').length === 2),
      `chats here: ${JSON.stringify(all)}; chatsAlreadyHere ${r.chatsAlreadyHere}`,
    ).toBe(true);
  });
});
