// entryDetail: what the explorer shows for one path, in one call.
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryDB } from '../../src/memory/db';
import { closeAll, ok, openTestMemory } from './helpers';

afterEach(closeAll);

describe('entryDetail', () => {
  it('an entry: its content, history, and the conversation of each context chunk', async () => {
    const { mem } = openTestMemory();
    const conv = ok(await mem.createConversation('Trip'));
    ok(await mem.recordTurn({ conversationId: conv.id, role: 'user', text: 'I fly to Lisbon.' }));
    ok(await mem.saveMemory('Travel/Lisbon', 'Flight on the ninth.'));
    ok(await mem.saveMemory('Travel/Lisbon', 'Flight on the tenth.'));
    const d = ok(await mem.entryDetail('Travel/Lisbon'));
    expect(d.kind).toBe('entry');
    expect(d.entry?.content).toBe('Flight on the tenth.');
    expect(d.history.map((v) => v.content)).toEqual(['Flight on the ninth.']);
    expect(d.below).toEqual([]);
    const turns = d.entry!.contextChunks.map((c) => c.turn_id);
    expect(turns.length).toBeGreaterThan(0);
    for (const t of turns) expect(d.sources?.[t]).toBe(conv.id);
  });

  it('no source for a chunk whose message id now names another message', async () => {
    const { mem, name } = openTestMemory();
    const conv = ok(await mem.createConversation('Trip'));
    const said = ok(
      await mem.recordTurn({ conversationId: conv.id, role: 'user', text: 'I fly to Lisbon.' }),
    );
    ok(await mem.saveMemory('Travel/Lisbon', 'Flight on the ninth.'));
    // As on a device that received this entry by sync: its message ids are another device's.
    ok(await mem.deleteConversation(conv.id));
    const other = ok(await mem.createConversation('Groceries'));
    const db = new MemoryDB(name);
    await db.messages.put({
      id: said.turnId,
      conversationId: other.id,
      role: 'user',
      text: 'Milk.',
      time: new Date(),
    });
    db.close();
    const d = ok(await mem.entryDetail('Travel/Lisbon'));
    expect(d.entry!.contextChunks.length).toBeGreaterThan(0);
    expect(d.sources).toEqual({});
  });

  it('a heading: the entries below and its first children', async () => {
    const { mem } = openTestMemory();
    for (const p of ['A/B/One', 'A/B/Two', 'A/C']) ok(await mem.saveMemory(p, p));
    const d = ok(await mem.entryDetail('A'));
    expect(d.kind).toBe('heading');
    expect(d.below).toEqual(['A/B/One', 'A/B/Two', 'A/C']);
    expect(d.children.map((c) => c.path).sort()).toEqual(['A/B', 'A/C']);
    expect(d.totalChildren).toBe(2);
    const root = ok(await mem.entryDetail(''));
    expect(root.kind).toBe('heading');
    const few = ok(await mem.entryDetail('A', { childLimit: 1 }));
    expect(few.children).toHaveLength(1);
    expect(few.totalChildren).toBe(2);
  });

  it('a moved entry: the old path says where it went; a bad path is an error', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Old/Place', 'x'));
    ok(await mem.moveMemory('Old/Place', 'New/Place'));
    const d = ok(await mem.entryDetail('Old/Place'));
    expect(d.kind).toBe('missing');
    expect(d.moved).toEqual({ to: 'New/Place', live: true });
    const never = ok(await mem.entryDetail('Never/Saved'));
    expect(never).toMatchObject({ kind: 'missing', history: [], below: [] });
    expect(await mem.entryDetail('a//b')).toMatchObject({ status: 'ERROR', code: 'INVALID_PATH' });
  });
});
