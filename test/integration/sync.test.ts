// Sync between two memories through a real server of the CouchDB replication protocol
// (express-pouchdb, in memory, on 127.0.0.1): what syncs, conflicts, deletes and moves, a restore
// after sync, hostile documents, and the errors a user sees.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createSync,
  type SyncConfig,
  type SyncEngine,
  type SyncOptions,
} from '../../src/sync/engine';
import type { MemoryApi } from '../../src/memory/types';
import { nodePouchFactory, startSyncServer, type TestSyncServer } from '../sync-server';
import { Clock, closeAll, ok, openTestMemory, sharedEmbedder } from './helpers';
import { chatTexts, openDevice, synced, type Device } from './sync-device';
import { recalledTurnsOf } from '../../src/chat/recall';
import { keeperCardMessage, readKeeperCard } from '../../src/chat/keeper-card';

let server: TestSyncServer;
const engines: SyncEngine[] = [];

beforeAll(async () => {
  server = await startSyncServer();
  await sharedEmbedder().ready();
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  await closeAll();
});

let dbSerial = 0;

/** A memory with a sync engine over it, configured for `database` on the test server. */
function device(
  label: string,
  database: string,
  clock = new Clock(),
  extra: Partial<SyncConfig> = {},
  engine: Partial<SyncOptions> = {},
): Promise<Device> {
  return openDevice({ url: server.url, database, label, engines, clock, extra, engine });
}

const freshDb = () => `sync-${process.pid}-${++dbSerial}`;

/** Two devices on a fresh database; B has a chat of its own first, so its ids differ from A's. */
async function apart() {
  const db = freshDb();
  const a = await device('Desktop', db);
  const b = await device('Laptop', db);
  const own = await b.mem.createConversation('Laptop notes');
  if (own.status !== 'SUCCESS') throw new Error(own.message);
  for (let i = 0; i < 5; i++)
    ok(await b.mem.addMessage({ conversationId: own.id, role: 'user', text: `Note ${i}` }));
  await synced(b);
  return { db, a, b };
}

/** A and B on one clock, both holding the chat "Trip" with two messages A wrote. */
async function tripOnBoth() {
  const clock = new Clock();
  const db = freshDb();
  const a = await device('Desktop', db, clock);
  const b = await device('Laptop', db, clock);
  const chat = await a.mem.createConversation('Trip');
  if (chat.status !== 'SUCCESS') throw new Error(chat.message);
  for (const text of ['We fly to Oslo on the 9th.', 'Back on the 14th.'])
    ok(await a.mem.addMessage({ conversationId: chat.id, role: 'user', text }));
  await synced(a);
  await synced(b);
  const [onB] = await b.mem.listConversations();
  return { clock, a, b, chat: chat.id, onB: onB.id! };
}

async function content(mem: MemoryApi, path: string) {
  const r = await mem.queryMemory(path);
  return r.status === 'SUCCESS' ? r.content : r.status;
}

describe('sync through a CouchDB-protocol server', () => {
  it('a save on A appears on B with its context snapshot and history, and search finds it', async () => {
    const db = freshDb();
    const a = await device('Desktop', db);
    const b = await device('Laptop', db);
    const conv = await a.mem.createConversation('Colours');
    if (conv.status !== 'SUCCESS') throw new Error('no conversation');
    await a.mem.recordTurn({ conversationId: conv.id, role: 'user', text: 'I love teal walls.' });
    await a.mem.saveMemory('home/paint', { colour: 'teal' }, 200, { conversationId: conv.id });
    a.clock.advance(1000);
    await a.mem.updateMemory('home/paint', { room: 'kitchen' });

    await synced(a);
    await synced(b);

    expect(await content(b.mem, 'home/paint')).toEqual({ colour: 'teal', room: 'kitchen' });
    const entry = await b.mem.getEntry('home/paint');
    if ('status' in entry) throw new Error(entry.message);
    expect(entry.version).toBe(2);
    expect(entry.contextChunks.map((c) => c.text)).toContain('I love teal walls.');
    const history = await b.mem.getHistory('home/paint');
    if (history.status !== 'SUCCESS') throw new Error('no history');
    expect(history.versions.map((v) => v.content)).toEqual([{ colour: 'teal' }]);
    const convs = await b.mem.listConversations();
    expect(convs.map((c) => c.title)).toEqual(['Colours']);
    const messages = await b.mem.getMessages(convs[0].id!);
    expect(messages.map((m) => m.text)).toEqual(['I love teal walls.']);
    // Embedded on arrival: found by meaning and by words.
    const found = await b.mem.queryMemoryHeading('home', 'kitchen paint colour');
    if (found.status !== 'SUCCESS') throw new Error('search failed');
    expect(found.children.map((c) => c.path)).toContain('home/paint');
    expect((await b.mem.stats()).stale).toBe(0);
    const chunks = await b.mem.searchChunks(null, 'teal walls', 3);
    expect(chunks.map((c) => c.chunk.text)).toContain('I love teal walls.');
  });

  it('shared settings sync; the model server and its key stay on each device', async () => {
    const db = freshDb();
    const a = await device('Desktop', db);
    const b = await device('Laptop', db);
    await b.mem.setSetting('app', { endpoint: 'http://127.0.0.1:8080', apiKey: 'secret-b' });
    await synced(b);
    a.clock.advance(1000);
    await a.mem.setSetting('app', {
      endpoint: 'http://127.0.0.1:5001',
      apiKey: 'secret-a',
      persona: 'Be brief.',
      temperature: 0.2,
    });
    await synced(a);
    await synced(b);
    expect(await b.mem.getSetting('app')).toEqual({
      endpoint: 'http://127.0.0.1:8080',
      apiKey: 'secret-b',
      persona: 'Be brief.',
      temperature: 0.2,
    });
    const stored = JSON.stringify(await server.storedDocs(db));
    expect(stored).not.toContain('secret-a');
    expect(stored).not.toContain('5001');
  });

  it('offline edits on both: the later wins on both devices, the other is in history on both, restorable', async () => {
    const db = freshDb();
    const clock = new Clock();
    const a = await device('Desktop', db, clock);
    const b = await device('Laptop', db, clock);
    await a.mem.saveMemory('pets/cat', { name: 'Tom' });
    await synced(a);
    await synced(b);
    // Apart: A edits first, B later.
    clock.advance(1000);
    await a.mem.updateMemory('pets/cat', { colour: 'grey' });
    clock.advance(1000);
    await b.mem.updateMemory('pets/cat', { colour: 'black' });
    await synced(a);
    await synced(b);
    await synced(a);
    for (const d of [a, b]) {
      expect(await content(d.mem, 'pets/cat')).toEqual({ name: 'Tom', colour: 'black' });
      const h = await d.mem.getHistory('pets/cat');
      if (h.status !== 'SUCCESS') throw new Error('no history');
      const lost = h.versions.filter((v) => v.conflictFrom);
      expect(lost.map((v) => [v.content, v.conflictFrom])).toEqual([
        [{ name: 'Tom', colour: 'grey' }, 'Desktop'],
      ]);
      expect(h.versions.filter((v) => !v.conflictFrom).map((v) => v.content)).toEqual([
        { name: 'Tom' },
      ]);
    }
    // The lost version comes back, and that travels too.
    const h = await a.mem.getHistory('pets/cat');
    if (h.status !== 'SUCCESS') throw new Error('no history');
    const restored = await a.mem.restoreMemory(h.versions.find((v) => v.conflictFrom)!.id);
    expect(restored.status).toBe('SUCCESS');
    await synced(a);
    await synced(b);
    expect(await content(b.mem, 'pets/cat')).toEqual({ name: 'Tom', colour: 'grey' });
  });

  it('the same tie is decided alike on both devices', async () => {
    const db = freshDb();
    const clock = new Clock();
    const a = await device('Desktop', db, clock);
    const b = await device('Laptop', db, clock);
    await a.mem.saveMemory('x/y', 'one');
    await synced(a);
    await synced(b);
    clock.advance(1000);
    await a.mem.saveMemory('x/y', 'from A');
    await b.mem.saveMemory('x/y', 'from B'); // the same millisecond
    await synced(a);
    await synced(b);
    await synced(a);
    expect(await content(a.mem, 'x/y')).toEqual(await content(b.mem, 'x/y'));
    const ha = await a.mem.getHistory('x/y');
    const hb = await b.mem.getHistory('x/y');
    if (ha.status !== 'SUCCESS' || hb.status !== 'SUCCESS') throw new Error('no history');
    expect(ha.versions.map((v) => v.content).sort()).toEqual(
      hb.versions.map((v) => v.content).sort(),
    );
    expect(ha.versions.filter((v) => v.conflictFrom)).toHaveLength(1);
  });

  it('moves and deletes propagate, and a deleted entry restores from the trash after sync', async () => {
    const db = freshDb();
    const a = await device('Desktop', db);
    const b = await device('Laptop', db);
    await a.mem.saveMemory('work/project/alpha', 'Alpha notes');
    await a.mem.saveMemory('work/project/beta', 'Beta notes');
    await a.mem.saveMemory('old/thing', 'Remove me');
    await synced(a);
    await synced(b);
    a.clock.advance(1000);
    await a.mem.moveMemory('work/project', 'archive/project');
    await a.mem.deleteMemory('old/thing');
    await synced(a);
    await synced(b);
    const tree = (await b.mem.memoryIndex()).map((e) => e.path).sort();
    expect(tree).toEqual(['archive/project/alpha', 'archive/project/beta']);
    expect((await b.mem.resolvePath('work/project/alpha')).status).toBe('SUCCESS');
    const trash = await b.mem.listTrash();
    if (trash.status !== 'SUCCESS') throw new Error('no trash');
    expect(trash.items.map((i) => i.path)).toEqual(['old/thing']);
    const back = await b.mem.restoreDeleted(trash.items[0].id);
    expect(back.status).toBe('SUCCESS');
    await synced(b);
    await synced(a);
    expect(await content(a.mem, 'old/thing')).toBe('Remove me');
    expect((await a.mem.memoryIndex()).length).toBe(3);
  });

  it('a chat deleted on one device goes on the other, its search sentences too, and sync goes on', async () => {
    const db = freshDb();
    const a = await device('Desktop', db);
    const b = await device('Laptop', db);
    const chat = await a.mem.createConversation('Trip');
    if (chat.status !== 'SUCCESS') throw new Error(chat.message);
    await a.mem.recordTurn({
      conversationId: chat.id,
      role: 'user',
      text: 'We fly to Oslo on the 9th.',
    });
    await synced(a);
    await synced(b);
    expect(await b.mem.listConversations()).toHaveLength(1);
    a.clock.advance(1000);
    ok(await a.mem.deleteConversation(chat.id));
    await a.mem.saveMemory('notes/after', 'Saved after the delete');
    await synced(a);
    await synced(b);
    expect(await b.mem.listConversations()).toHaveLength(0);
    const found = await b.mem.searchConversations('Oslo', 5);
    expect(found.status === 'SUCCESS' ? found.results : found).toEqual([]);
    // What came after the delete arrives too: the sync is not stuck on it.
    expect(await content(b.mem, 'notes/after')).toBe('Saved after the delete');
  });

  it('both devices moved to another database (encrypted, as the app advises) keep one copy of each chat', async () => {
    const { a, b } = await tripOnBoth();
    const moved = freshDb();
    const sealed = { encrypt: true, passphrase: 'correct horse battery staple' };
    for (const d of [a, b]) {
      await d.sync.configure({ ...(await d.sync.getConfig())!, database: moved, ...sealed });
      await synced(d);
    }
    await synced(a);
    const trip = { Trip: ['We fly to Oslo on the 9th.', 'Back on the 14th.'] };
    expect(await chatTexts(a.mem)).toEqual(trip);
    expect(await chatTexts(b.mem)).toEqual(trip);
    expect(await a.mem.listConversations()).toHaveLength(1);
    expect(await b.mem.listConversations()).toHaveLength(1);
    // A third device on the new database finds the one chat too.
    const c = await device('Phone', moved, new Clock(), sealed);
    await synced(c);
    expect(await c.mem.listConversations()).toHaveLength(1);
    expect(await chatTexts(c.mem)).toEqual(trip);
  });

  for (const move of [false, true])
    it(`a Replace all on one device (its chats under the ids the synced ones had)${move ? ', then another database' : ''}: each chat keeps its own messages, on both`, async () => {
      const { clock, a, b } = await tripOnBoth();
      // A restores a backup of another memory (Replace all): its chat takes the local id Trip had.
      const other = openTestMemory({ clock }).mem;
      const chat = ok(await other.createConversation('Garden'));
      ok(
        await other.addMessage({ conversationId: chat.id, role: 'user', text: 'Plant the roses.' }),
      );
      const backup = await other.exportJson();
      if (typeof backup !== 'string') throw new Error(backup.message);
      ok(await a.mem.importJson(backup, 'replace'));
      const [onA] = await a.mem.listConversations();
      expect(onA).toMatchObject({ id: chat.id, title: 'Garden' });
      const moved = freshDb();
      for (const d of [a, b]) {
        if (move) await d.sync.configure({ ...(await d.sync.getConfig())!, database: moved });
        await synced(d);
      }
      await synced(a);
      // Nothing on the server is overwritten or deleted: the server's chat comes back to A.
      const both = {
        Garden: ['Plant the roses.'],
        Trip: ['We fly to Oslo on the 9th.', 'Back on the 14th.'],
      };
      expect(await chatTexts(a.mem)).toEqual(both);
      expect(await chatTexts(b.mem)).toEqual(both);
    });

  it('a chat that changed after its messages arrives whole on a new device, in its order', async () => {
    const db = freshDb();
    const clock = new Clock();
    const a = await device('Desktop', db, clock);
    const chat = await a.mem.createConversation('Trip');
    if (chat.status !== 'SUCCESS') throw new Error(chat.message);
    const say = async (role: 'user' | 'assistant', text: string) => {
      clock.advance(1000);
      const r = await a.mem.recordTurn({ conversationId: chat.id, role, text });
      if (r.status !== 'SUCCESS') throw new Error(r.message);
      return r.turnId;
    };
    const first = await say('user', 'We fly to Oslo on the 9th.');
    await say('assistant', 'Noted: Oslo, the 9th.');
    // A long chat: more messages than one page of the server's feed.
    const long = Array.from({ length: 600 }, (_, i) => ({
      conversationId: chat.id,
      role: i % 2 ? ('assistant' as const) : ('user' as const),
      text: `Packing list item ${i + 1}.`,
    }));
    ok(await a.mem.addMessages(long));
    await synced(a);
    // Later changes move the chat and its first message on in the server's feed, after the rest.
    await say('user', 'And back on the 14th.');
    await say('assistant', 'Back on the 14th.');
    ok(await a.mem.updateMessage(first, { meta: { pinned: true } }));
    await synced(a);
    clock.advance(1000);
    ok(await a.mem.renameConversation(chat.id, 'Trip to Oslo'));
    await synced(a);
    const want = (await a.mem.getMessages(chat.id)).map((m) => m.text);
    expect(want).toHaveLength(604);
    // A new device reading its copy of the feed 100 changes at a time (the app: 2,000).
    const b = await device('Laptop', db, new Clock(), {}, { applyPage: 100 });
    const s = await synced(b);
    expect(s.skipped).toBe(0);
    const [got] = await b.mem.listConversations();
    expect(got.title).toBe('Trip to Oslo');
    expect((await b.mem.getMessages(got.id!)).map((m) => m.text)).toEqual(want);
    // And a search from the new device finds what was said.
    const found = await b.mem.searchConversations('when do we come back', 5);
    expect(found.status === 'SUCCESS' ? found.results.map((r) => r.text) : found).toContain(
      'And back on the 14th.',
    );
  });

  it('a chat deleted offline while another device went on with it comes back whole; a later delete wins', async () => {
    const { clock, a, b, chat, onB } = await tripOnBoth();
    // A deletes the chat while offline; later, B goes on with it.
    clock.advance(1000);
    ok(await a.mem.deleteConversation(chat));
    clock.advance(1000);
    await b.mem.recordTurn({ conversationId: onB, role: 'user', text: 'Book the hotel too.' });
    await synced(b);
    await synced(a);
    await synced(b);
    const want = ['We fly to Oslo on the 9th.', 'Back on the 14th.', 'Book the hotel too.'];
    for (const d of [a, b]) {
      const chats = await d.mem.listConversations();
      expect(chats.map((c) => c.title)).toEqual(['Trip']);
      expect((await d.mem.getMessages(chats[0].id!)).map((m) => m.text)).toEqual(want);
    }
    // What came back is found by search on the device that deleted it.
    const found = await a.mem.searchConversations('Oslo flight', 5);
    expect(found.status === 'SUCCESS' ? found.results.length : found).toBeGreaterThan(0);

    // The other way round: B changes the chat, then A deletes it later; the delete wins.
    clock.advance(1000);
    await b.mem.recordTurn({ conversationId: onB, role: 'user', text: 'And a car.' });
    await synced(b);
    clock.advance(1000);
    const [back] = await a.mem.listConversations();
    ok(await a.mem.deleteConversation(back.id!));
    await synced(a);
    await synced(b);
    expect(await a.mem.listConversations()).toEqual([]);
    expect(await b.mem.listConversations()).toEqual([]);
  });

  it('a chat deleted on A while B went on with it, B syncing after A: nothing of the chat is lost', async () => {
    const { clock, a, b, chat, onB } = await tripOnBoth();
    clock.advance(1000);
    ok(await a.mem.deleteConversation(chat));
    await synced(a); // A syncs its delete first
    clock.advance(1000);
    // B, offline meanwhile, goes on with the chat, later than the delete; then syncs.
    await b.mem.recordTurn({ conversationId: onB, role: 'user', text: 'Book the hotel too.' });
    await synced(b);
    await synced(a);
    await synced(b);
    const ta = await chatTexts(a.mem);
    const tb = await chatTexts(b.mem);
    expect(ta).toEqual(tb);
    // Either the delete wins (no chat) or the chat comes back whole; never a chat cut in half.
    if (tb.Trip)
      expect(tb.Trip).toEqual([
        'We fly to Oslo on the 9th.',
        'Back on the 14th.',
        'Book the hotel too.',
      ]);
  });

  it('a reply’s recalled turns and a keeper card name the same messages on the other device', async () => {
    const { a, b } = await apart();
    const family = await a.mem.createConversation('Family news');
    const later = await a.mem.createConversation('Later');
    if (family.status !== 'SUCCESS' || later.status !== 'SUCCESS') throw new Error('no chat');
    const added = async (m: Parameters<MemoryApi['addMessage']>[0]) => {
      const r = await a.mem.addMessage(m);
      if (r.status !== 'SUCCESS') throw new Error(r.message);
      return r.id;
    };
    const told = await added({
      conversationId: family.id,
      role: 'user',
      text: 'My sister Ana is moving to Lisbon in May.',
    });
    ok(
      await a.mem.addMessage({
        conversationId: later.id,
        role: 'user',
        text: 'Where is Ana moving?',
      }),
    );
    const reply = await added({
      conversationId: later.id,
      role: 'assistant',
      text: 'To Lisbon, in May.',
      meta: {
        recalledTurns: [
          {
            conversationId: family.id,
            turnId: told,
            chat: 'Family news',
            time: '2026-05-01T10:00:00.000Z',
          },
        ],
      },
    });
    ok(
      await a.mem.addMessage(
        keeperCardMessage(
          later.id,
          [{ op: 'add', path: 'family/ana', content: 'Moving to Lisbon', version: 1 }],
          reply,
        ),
      ),
    );
    await synced(a);
    await synced(b);
    const chats = new Map((await b.mem.listConversations()).map((c) => [c.title, c.id!]));
    const toldOnB = (await b.mem.getMessages(chats.get('Family news')!))[0];
    const [, replyOnB, cardOnB] = await b.mem.getMessages(chats.get('Later')!);
    expect(toldOnB.id).not.toBe(told);
    expect(replyOnB.text).toBe('To Lisbon, in May.');
    expect(recalledTurnsOf(replyOnB.meta)).toEqual([
      {
        conversationId: chats.get('Family news'),
        turnId: toldOnB.id,
        chat: 'Family news',
        time: '2026-05-01T10:00:00.000Z',
      },
    ]);
    expect(readKeeperCard(cardOnB)?.replyId).toBe(replyOnB.id);
    // Nothing goes back changed: A's messages keep A's ids, and B sends nothing for them.
    expect((await synced(b)).waiting).toBe(0);
    await synced(a);
    const [, replyOnA, cardOnA] = await a.mem.getMessages(later.id);
    expect(recalledTurnsOf(replyOnA.meta)[0]).toMatchObject({
      conversationId: family.id,
      turnId: told,
    });
    expect(readKeeperCard(cardOnA)?.replyId).toBe(reply);
  });

  it('an entry’s Source links open the same messages on the other device, in its history too', async () => {
    const { a, b } = await apart();
    const chat = await a.mem.createConversation('Family news');
    if (chat.status !== 'SUCCESS') throw new Error(chat.message);
    const told = 'My sister Ana is moving to Lisbon in May.';
    ok(await a.mem.recordTurn({ conversationId: chat.id, role: 'user', text: told }));
    ok(
      await a.mem.saveMemory('family/ana', 'Moving to Lisbon in May', 200, {
        conversationId: chat.id,
      }),
    );
    ok(
      await a.mem.saveMemory('family/ana', 'Moving to Lisbon on 12 May', 200, {
        conversationId: chat.id,
      }),
    );
    await synced(a);
    await synced(b);
    const chats = new Map((await b.mem.listConversations()).map((c) => [c.title, c.id!]));
    const [toldOnB] = await b.mem.getMessages(chats.get('Family news')!);
    expect(toldOnB.text).toBe(told);
    const detail = await b.mem.entryDetail('family/ana');
    if (detail.status !== 'SUCCESS') throw new Error(detail.message);
    expect(detail.entry!.contextChunks.map((c) => c.turn_id)).toContain(toldOnB.id);
    expect(detail.sources).toEqual({ [toldOnB.id!]: chats.get('Family news') });
    // The version before it names the message by B's id too (as a backup of B holds it).
    const backup = await b.mem.exportJson();
    if (typeof backup !== 'string') throw new Error(backup.message);
    const older = (
      JSON.parse(backup) as {
        history: {
          path: string;
          version: number;
          entry: { contextChunks: { turn_id: number }[] };
        }[];
      }
    ).history.find((h) => h.path === 'family/ana' && h.version === 1)!;
    expect(older.entry.contextChunks.map((c) => c.turn_id)).toContain(toldOnB.id);
    // Nothing goes back changed.
    expect((await synced(b)).waiting).toBe(0);
  });

  it('an imported chat updated from another device is still known as imported: the same file again adds nothing', async () => {
    const db = freshDb();
    const a = await device('Desktop', db);
    const b = await device('Laptop', db);
    const data = readFileSync(
      new URL('../fixtures/imports/seraphina.jsonl', import.meta.url),
      'utf8',
    );
    const first = await b.mem.importFile({ name: 'Seraphina.jsonl', data });
    expect(first).toMatchObject({ status: 'SUCCESS' });
    expect((first as { duplicate?: boolean }).duplicate).toBeFalsy();
    await synced(b);
    await synced(a);
    const chat = (await a.mem.listConversations())[0];
    a.clock.advance(60_000);
    ok(await a.mem.addMessage({ conversationId: chat.id!, role: 'user', text: 'One more thing.' }));
    await synced(a);
    await synced(b);
    expect((await b.mem.getMessages((await b.mem.listConversations())[0].id!)).at(-1)?.text).toBe(
      'One more thing.',
    );
    expect(await b.mem.importFile({ name: 'Seraphina.jsonl', data })).toMatchObject({
      duplicate: true,
    });
  });

  it('a delete on one device and a later edit on the other: the edit stays live', async () => {
    const db = freshDb();
    const clock = new Clock();
    const a = await device('Desktop', db, clock);
    const b = await device('Laptop', db, clock);
    await a.mem.saveMemory('notes/n', 'first');
    await synced(a);
    await synced(b);
    clock.advance(1000);
    await a.mem.deleteMemory('notes/n');
    clock.advance(1000);
    await b.mem.saveMemory('notes/n', 'edited later');
    await synced(a);
    await synced(b);
    await synced(a);
    expect(await content(a.mem, 'notes/n')).toBe('edited later');
    expect(await content(b.mem, 'notes/n')).toBe('edited later');
  });

  it('Keep in sync with the server away says it tries again, not that sync stopped', async () => {
    // A port where nothing answers.
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as { port: number };
    await new Promise((r) => probe.close(r));
    const away = await openDevice({
      url: `http://127.0.0.1:${port}`,
      database: freshDb(),
      label: 'Desktop',
      engines,
    });
    const s = await away.sync.configure({ ...(await away.sync.getConfig())!, live: true });
    expect(s.state).toBe('retrying');
    expect(s.error?.code).toBe('UNREACHABLE');
    expect(away.sync.status().state).toBe('retrying');
  });

  it('Keep in sync: saves, messages and deletes on one device reach the other by themselves', async () => {
    const db = freshDb();
    const a = await device('Desktop', db, new Clock(), { live: true });
    const b = await device('Laptop', db, new Clock(), { live: true });
    const conv = await a.mem.createConversation('Live chat');
    if (conv.status !== 'SUCCESS') throw new Error('no conversation');
    await a.mem.saveMemory('live/one', 'first');
    const waitOn = (fn: () => Promise<void>) => vi.waitFor(fn, { timeout: 30_000, interval: 100 });
    await waitOn(async () => expect(await content(b.mem, 'live/one')).toBe('first'));
    // A message in a conversation B already has: only the messages table is read again.
    await a.mem.recordTurn({ conversationId: conv.id, role: 'user', text: 'Live hello.' });
    await waitOn(async () => {
      const [c] = await b.mem.listConversations();
      expect((await b.mem.getMessages(c.id!)).map((m) => m.text)).toEqual(['Live hello.']);
    });
    await b.mem.deleteMemory('live/one');
    await waitOn(async () => expect(await content(a.mem, 'live/one')).toBe('NOT_FOUND'));
    await b.mem.saveMemory('live/two', { from: 'B' });
    await waitOn(async () => expect(await content(a.mem, 'live/two')).toEqual({ from: 'B' }));
    expect((await a.mem.memoryIndex()).map((e) => e.path)).toEqual(['live/two']);
  });

  it('a message whose chat reaches the server only later waits for it, then arrives', async () => {
    const db = freshDb();
    const a = await device('Desktop', db);
    await a.mem.saveMemory('good/one', 'kept');
    await synced(a);
    const remote = server.database(db);
    const msg = { t: 'msg', u: 1, d: 'x', conv: 'conv:later', role: 'user', time: 1000 };
    await remote.bulkDocs([
      { _id: 'msg:second', ...msg, text: 'Second, said first to the server.', n: 1 },
      { _id: 'msg:first', ...msg, text: 'First in the chat.', n: 0 },
    ]);
    const b = await device('Laptop', db);
    const s = await synced(b);
    expect(s.skippedWhy).toMatch(/conversation is not here yet/);
    expect(await b.mem.listConversations()).toEqual([]);
    await remote.put({
      _id: 'conv:later',
      t: 'conv',
      u: 1,
      d: 'x',
      title: 'Later',
      created: 1000,
      modified: 1000,
    });
    const after = await synced(b);
    expect(after.skipped).toBe(0);
    const [chat] = await b.mem.listConversations();
    expect(chat.title).toBe('Later');
    expect((await b.mem.getMessages(chat.id!)).map((m) => m.text)).toEqual([
      'First in the chat.',
      'Second, said first to the server.',
    ]);
    expect(await content(b.mem, 'good/one')).toBe('kept');
  });

  it('documents from the server that fail the checks are skipped, said, and nothing else is lost', async () => {
    const db = freshDb();
    const a = await device('Desktop', db);
    await a.mem.saveMemory('good/one', 'kept');
    await synced(a);
    const remote = server.database(db);
    await remote.bulkDocs([
      { _id: 'entry:bad path//', t: 'entry', u: 1, d: 'x', path: 'bad path//' },
      {
        _id: 'entry:evil/markup',
        t: 'entry',
        u: 1,
        d: 'x',
        path: 'evil/markup',
        content: '<img src=x onerror=alert(1)>',
        chunks: [],
        created: 1,
        modified: 1,
        version: 1,
      },
      {
        _id: 'msg:orphan',
        t: 'msg',
        u: 1,
        d: 'x',
        conv: 'conv:none',
        role: 'user',
        text: 'hi',
        time: 1,
      },
      { _id: 'nonsense', hello: 'world' },
    ]);
    const b = await device('Laptop', db);
    const s = await b.sync.syncNow();
    expect(s.error).toBeNull();
    expect(s.skipped).toBeGreaterThanOrEqual(2);
    expect(s.skippedWhy).toMatch(/was not written here/);
    expect(await content(b.mem, 'good/one')).toBe('kept');
    // Markup is data: stored as the text it is.
    expect(await content(b.mem, 'evil/markup')).toBe('<img src=x onerror=alert(1)>');
    expect((await b.mem.memoryIndex()).map((e) => e.path).sort()).toEqual([
      'evil/markup',
      'good/one',
    ]);
  });

  it('says what is wrong: unreachable, wrong credentials, bad settings', async () => {
    const { mem: _m, name } = openTestMemory();
    const sync = createSync({ Pouch: nodePouchFactory, memoryName: name });
    engines.push(sync);
    const base = {
      database: 'memory',
      username: '',
      password: '',
      encrypt: false,
      passphrase: '',
      live: false,
    };
    await sync.configure({ ...base, url: 'http://127.0.0.1:1' });
    let s = await sync.syncNow();
    expect(s.error?.code).toBe('UNREACHABLE');
    expect(s.error?.fix).toMatch(/CouchDB is running/);

    const locked = await startSyncServer({ auth: { username: 'ann', password: 'right' } });
    try {
      await sync.configure({ ...base, url: locked.url, username: 'ann', password: 'wrong' });
      s = await sync.syncNow();
      expect(s.error?.code).toBe('WRONG_CREDENTIALS');
      await sync.configure({ ...base, url: locked.url, username: 'ann', password: 'right' });
      s = await sync.syncNow();
      expect(s.error).toBeNull();
    } finally {
      await locked.close();
    }
    await sync.configure({ ...base, url: 'ftp://example' });
    expect((await sync.syncNow()).error?.code).toBe('INVALID_URL');
    await sync.configure({ ...base, url: server.url, database: 'Bad Name' });
    expect((await sync.syncNow()).error?.code).toBe('INVALID_URL');
  });
});
