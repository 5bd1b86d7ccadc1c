// The change feed's engine side (docs/design.md, "Change notifications"): what `describeChanges`
// says after writes here, through another connection (another tab) and as a key range.
import Dexie, { type ObservabilitySet } from 'dexie';
import { afterEach, describe, expect, it } from 'vitest';
import { mutatedKeys } from '../../src/memory/live-indexes';
import { MemoryDB } from '../../src/memory/db';
import type { ChangedKeys } from '../../src/memory/types';
import { closeAll, openTestMemory } from './helpers';

afterEach(closeAll);

/** Collects the keys of the storagemutated reports for `name` while `fn` runs. */
async function keysOf(name: string, fn: () => Promise<unknown>): Promise<ChangedKeys> {
  const all: ChangedKeys = {};
  const listen = (parts: ObservabilitySet) => {
    for (const [table, ids] of Object.entries(mutatedKeys(parts, name))) {
      const had = all[table];
      all[table] = had === 'all' || ids === 'all' ? 'all' : [...(had ?? []), ...ids!];
    }
  };
  Dexie.on('storagemutated', listen);
  try {
    await fn();
  } finally {
    Dexie.on('storagemutated').unsubscribe(listen);
  }
  return all;
}

describe('describeChanges', () => {
  it('tells the entries saved, moved and deleted by path, with their summaries', async () => {
    const { mem, name } = openTestMemory();
    await mem.saveMemory('Garden/Roses', 'Prune in late winter.');
    await mem.memoryIndex(); // what the page has loaded

    let keys = await keysOf(name, () => mem.saveMemory('Garden/Tulips', 'Plant in autumn.'));
    expect(keys.structured_memory).toHaveLength(1);
    let change = await mem.describeChanges(keys);
    expect(change.entries?.removed).toEqual([]);
    expect(change.entries?.upserted).toEqual([
      expect.objectContaining({ path: 'Garden/Tulips', version: 1 }),
    ]);
    expect(change.history).toBeUndefined();

    keys = await keysOf(name, () => mem.moveMemory('Garden/Roses', 'Flowers/Roses'));
    change = await mem.describeChanges(keys);
    expect(change.entries?.removed).toEqual(['Garden/Roses']);
    expect(change.entries?.upserted.map((e) => e.path)).toEqual(['Flowers/Roses']);
    expect(change.history?.paths).toEqual(['Garden/Roses']);

    keys = await keysOf(name, () => mem.deleteMemory('Garden/Tulips'));
    change = await mem.describeChanges(keys);
    expect(change.entries).toEqual({ upserted: [], removed: ['Garden/Tulips'] });
    // The summaries told match what a full read gives.
    expect((await mem.memoryIndex()).map((e) => e.path)).toEqual(['Flowers/Roses']);
  });

  it('tells a write made through another connection (another tab)', async () => {
    const { mem, name } = openTestMemory();
    await mem.saveMemory('A/One', 'first');
    await mem.memoryIndex();
    const other = openTestMemory({ name }).mem;
    const keys = await keysOf(name, () => other.saveMemory('A/Two', 'second'));
    const change = await mem.describeChanges(keys);
    expect(change.entries?.upserted.map((e) => e.path)).toEqual(['A/Two']);
  });

  it('tells conversations renamed, added and deleted by id, with their rows', async () => {
    const { mem, name } = openTestMemory();
    const made = await mem.createConversation('Before');
    if (!('id' in made)) throw new Error('not created');
    let keys = await keysOf(name, () => mem.renameConversation(made.id, 'After'));
    let change = await mem.describeChanges(keys);
    expect(change.conversations?.upserted).toEqual([
      expect.objectContaining({ id: made.id, title: 'After' }),
    ]);
    keys = await keysOf(name, () => mem.deleteConversation(made.id));
    change = await mem.describeChanges(keys);
    expect(change.conversations).toEqual({ upserted: [], removed: [made.id] });
  });

  it('tells what a range (a clear) changed, from the index it rebuilt', async () => {
    const { mem, name } = openTestMemory();
    await mem.saveMemory('A/One', 'first');
    await mem.memoryIndex();
    const db = new MemoryDB(name);
    const keys = await keysOf(name, () => db.structured_memory.clear());
    db.close();
    expect(keys.structured_memory).toBe('all');
    expect((await mem.describeChanges(keys)).entries).toEqual({ upserted: [], removed: ['A/One'] });
    // The next write is told again.
    const next = await keysOf(name, () => mem.saveMemory('B', 'again'));
    expect((await mem.describeChanges(next)).entries?.upserted.map((e) => e.path)).toEqual(['B']);
  });
});
