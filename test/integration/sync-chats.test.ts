// Sync of chats between devices, the hard cases (docs/sync.md, "Messages"): a chat's order after
// messages were deleted from its middle; an entry whose message reaches a device a cycle later; a
// reply whose recalled chat was never synced; a chat deleted on one device while offline in Keep
// in sync and continued on the other; a chat deleted on one device that the other only received.
import { describe, expect, it, vi } from 'vitest';
import type { SyncConfig, SyncOptions } from '../../src/sync/engine';
import { Clock, ok } from './helpers';
import { chatTexts, openDevice, serverForFile, synced, type Device } from './sync-device';
import { recalledTurnsOf } from '../../src/chat/recall';

const file = serverForFile();
const { engines, stopWhen } = file;

let dbSerial = 0;
const freshDb = () => `sync-chats-${process.pid}-${++dbSerial}`;
function device(
  label: string,
  database: string,
  clock = new Clock(),
  extra: Partial<SyncConfig> = {},
  engine: Partial<SyncOptions> = {},
): Promise<Device> {
  return openDevice({ url: file.server.url, database, label, engines, clock, extra, engine });
}

describe('chats across devices', () => {
  it('a new device gets a chat in its order after two middle messages were deleted and the chat went on', async () => {
    const db = freshDb();
    const clock = new Clock();
    const a = await device('Desktop', db, clock);
    const chat = await a.mem.createConversation('Order');
    if (chat.status !== 'SUCCESS') throw new Error(chat.message);
    const ids: number[] = [];
    const say = async (text: string) => {
      clock.advance(1000);
      const r = await a.mem.addMessage({ conversationId: chat.id, role: 'user', text });
      ids.push(ok(r).id);
    };
    for (const t of ['m0', 'm1', 'm2', 'm3', 'm4', 'm5']) await say(t);
    await synced(a);
    ok(await a.mem.deleteMessage(ids[1]));
    ok(await a.mem.deleteMessage(ids[2]));
    await synced(a);
    await say('m6');
    await say('m7');
    await synced(a);
    const want = (await a.mem.getMessages(chat.id)).map((m) => m.text);
    expect(want).toEqual(['m0', 'm3', 'm4', 'm5', 'm6', 'm7']);
    const c = await device('Tablet', db, new Clock());
    await synced(c);
    expect((await chatTexts(c.mem)).Order).toEqual(want);
  });

  it('a chat renamed on one device while the other went on with it keeps its new name on both', async () => {
    for (const encrypt of [false, true]) {
      const db = freshDb();
      const clock = new Clock();
      const sealed = encrypt ? { encrypt: true, passphrase: 'a long enough passphrase' } : {};
      const a = await device('Desktop', db, clock, sealed);
      const b = await device('Laptop', db, clock, sealed);
      const chat = await a.mem.createConversation('New chat');
      if (chat.status !== 'SUCCESS') throw new Error(chat.message);
      ok(await a.mem.addMessage({ conversationId: chat.id, role: 'user', text: 'Gate code 1234' }));
      await synced(a);
      await synced(b);
      const [onB] = await b.mem.listConversations();
      // Both offline: renamed on B, then A goes on with the chat (its time moves past the rename).
      clock.advance(1000);
      ok(await b.mem.renameConversation(onB.id, 'Household codes'));
      clock.advance(1000);
      ok(await a.mem.addMessage({ conversationId: chat.id, role: 'user', text: 'Alarm 9876' }));
      await synced(a);
      await synced(b);
      await synced(a);
      const want = { 'Household codes': ['Gate code 1234', 'Alarm 9876'] };
      expect(await chatTexts(a.mem), `encrypt ${encrypt}`).toEqual(want);
      expect(await chatTexts(b.mem), `encrypt ${encrypt}`).toEqual(want);
      // A later rename on A is not taken back by B's older one.
      clock.advance(1000);
      const [onA] = await a.mem.listConversations();
      ok(await a.mem.renameConversation(onA.id, 'Codes at home'));
      await synced(a);
      await synced(b);
      expect(Object.keys(await chatTexts(b.mem))).toEqual(['Codes at home']);
    }
  });

  it('an entry’s chunks name the message on the other device when the message reaches it a cycle later', async () => {
    const db = freshDb();
    const a = await device('Desktop', db);
    const chat = await a.mem.createConversation('Family news');
    if (chat.status !== 'SUCCESS') throw new Error(chat.message);
    const told = 'My sister Ana is moving to Lisbon in May.';
    ok(await a.mem.recordTurn({ conversationId: chat.id, role: 'user', text: told }));
    ok(
      await a.mem.saveMemory('aaa/ana', 'Moving to Lisbon in May', 200, {
        conversationId: chat.id,
      }),
    );
    // Many more entries: A's push takes more than one batch of 500; the chat and its message go
    // in the last one.
    const at = new Date(Date.UTC(2025, 0, 1)).toISOString();
    const backup = JSON.stringify({
      format: 'structured-memory-backup',
      version: 1,
      entries: Array.from({ length: 600 }, (_, i) => ({
        path: `bulk/g${Math.floor(i / 50)}/n${i}`,
        content: `note ${i}`,
        contextChunks: [],
        version: 1,
        created: at,
        modified: at,
        accessed: at,
      })),
    });
    expect(await a.mem.importJson(backup, 'merge')).toMatchObject({ status: 'SUCCESS' });
    let bulkDocs = 0;
    stopWhen((path) => path.includes('_bulk_docs') && ++bulkDocs === 2);
    expect((await a.sync.syncNow()).error?.code).toBe('UNREACHABLE');
    await file.server.start();
    // B syncs while A's push is half done: the entry is there, its message not yet.
    const b = await device('Laptop', db);
    await synced(b);
    expect((await b.mem.getEntry('aaa/ana')) as object).toHaveProperty('path', 'aaa/ana');
    expect(await b.mem.listConversations()).toHaveLength(0);
    // A finishes its push; B syncs again and gets the chat.
    await synced(a);
    await synced(b);
    await synced(b); // and later cycles do not name it either
    const [chatOnB] = await b.mem.listConversations();
    const [toldOnB] = await b.mem.getMessages(chatOnB.id!);
    expect(toldOnB.text).toBe(told);
    const entry = await b.mem.getEntry('aaa/ana');
    if ('status' in entry) throw new Error(entry.message);
    expect(entry.contextChunks.map((c) => c.turn_id)).toContain(toldOnB.id);
  });

  it('a reply whose recalled chat was deleted on the sending device names no chat of the receiving device', async () => {
    const db = freshDb();
    const a = await device('Desktop', db);
    const b = await device('Laptop', db);
    // B has a chat and a message of its own with the ids A's will have.
    const own = await b.mem.createConversation('Laptop private notes');
    if (own.status !== 'SUCCESS') throw new Error(own.message);
    const ownMsg = ok(
      await b.mem.addMessage({ conversationId: own.id, role: 'user', text: 'Unrelated.' }),
    ).id;
    const family = await a.mem.createConversation('Family news');
    const later = await a.mem.createConversation('Later');
    if (family.status !== 'SUCCESS' || later.status !== 'SUCCESS') throw new Error('no chat');
    const told = ok(
      await a.mem.addMessage({ conversationId: family.id, role: 'user', text: 'Ana: Lisbon.' }),
    ).id;
    expect([family.id, told]).toEqual([own.id, ownMsg]);
    ok(await a.mem.addMessage({ conversationId: later.id, role: 'user', text: 'Where?' }));
    ok(
      await a.mem.addMessage({
        conversationId: later.id,
        role: 'assistant',
        text: 'Lisbon.',
        meta: {
          recalledTurns: [
            { conversationId: family.id, turnId: told, chat: 'Family news', time: '2026-05-01' },
          ],
        },
      }),
    );
    // The recalled chat is deleted on A before the reply was ever synced.
    ok(await a.mem.deleteConversation(family.id));
    await synced(a);
    await synced(b);
    const chats = new Map((await b.mem.listConversations()).map((c) => [c.title, c.id!]));
    const [, replyOnB] = await b.mem.getMessages(chats.get('Later')!);
    expect(replyOnB.text).toBe('Lisbon.');
    // It must not open B's own, unrelated chat and message.
    const named = recalledTurnsOf(replyOnB.meta).map((t) => [t.conversationId, t.turnId]);
    expect(named).not.toContainEqual([own.id, ownMsg]);
  });

  it('a chat deleted on A stays deleted when B only received it (B never went on with it)', async () => {
    const db = freshDb();
    const clock = new Clock();
    const a = await device('Desktop', db, clock);
    const b = await device('Laptop', db, clock);
    const chat = await a.mem.createConversation('Secret plans');
    if (chat.status !== 'SUCCESS') throw new Error(chat.message);
    for (const text of ['Surprise party on Friday.', 'Do not tell Sam.'])
      ok(await a.mem.recordTurn({ conversationId: chat.id, role: 'user', text }));
    await synced(a);
    // A deletes the chat before its next sync.
    clock.advance(1000);
    ok(await a.mem.deleteConversation(chat.id));
    clock.advance(1000);
    // B syncs (it receives the chat) and syncs again; B's user does nothing with the chat.
    await synced(b);
    await synced(b);
    await synced(a);
    await synced(b);
    await synced(a);
    expect(await a.mem.listConversations()).toEqual([]);
    expect(await b.mem.listConversations()).toEqual([]);
  });

  it('Keep in sync on A: a chat deleted on A while offline, continued on B, comes back whole', async () => {
    const db = freshDb();
    const clock = new Clock();
    const a = await device('Desktop', db, clock, { live: true });
    const b = await device('Laptop', db, clock);
    const chat = await a.mem.createConversation('Trip');
    if (chat.status !== 'SUCCESS') throw new Error(chat.message);
    for (const text of ['We fly to Oslo on the 9th.', 'Back on the 14th.'])
      ok(await a.mem.addMessage({ conversationId: chat.id, role: 'user', text }));
    const waitOn = (fn: () => Promise<void>) => vi.waitFor(fn, { timeout: 30_000, interval: 100 });
    await waitOn(async () => {
      expect(a.sync.status().waiting).toBe(0);
      await synced(b);
      expect(await b.mem.listConversations()).toHaveLength(1);
    });
    const [onB] = await b.mem.listConversations();
    // A goes offline (the server is gone), deletes the chat; B goes on with it later.
    await file.server.stop();
    clock.advance(1000);
    ok(await a.mem.deleteConversation(chat.id));
    await new Promise((r) => setTimeout(r, 1000)); // A's live reconcile runs
    clock.advance(1000);
    await b.mem.recordTurn({ conversationId: onB.id!, role: 'user', text: 'Book the hotel too.' });
    await file.server.start();
    await synced(b);
    await waitOn(async () => {
      await synced(b);
      expect(await chatTexts(a.mem)).toEqual(await chatTexts(b.mem));
    });
    await new Promise((r) => setTimeout(r, 2000));
    await synced(b);
    const ta = await chatTexts(a.mem);
    const tb = await chatTexts(b.mem);
    expect(ta).toEqual(tb);
    expect(tb.Trip).toEqual([
      'We fly to Oslo on the 9th.',
      'Back on the 14th.',
      'Book the hotel too.',
    ]);
  });
});
