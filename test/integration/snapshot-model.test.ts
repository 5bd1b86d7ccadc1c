// An entry's `model` names every vector it holds, its context snapshot's too: after a model
// switch, an update, an edit, a move, a restore and a restore from the trash re-embed the kept
// snapshot with the active model (docs/trash.md), so re-embedding never skips a stale snapshot
// and search never compares vectors of two models (here of the same length).
import { afterEach, describe, expect, it } from 'vitest';
import type { MemoryApi, MemoryEntry } from '../../src/memory/types';
import { closeAll, ok, openTestMemory, otherModel, tableRows } from './helpers';

afterEach(closeAll);

async function savedWithContext(): Promise<string> {
  const a = openTestMemory();
  const conversationId = ok(await a.mem.createConversation('Trip')).id;
  for (const text of [
    'We are planning a trip to Lisbon in May with the whole family.',
    'The budget for the flights is 900 euros, and the hotel must be near Alfama.',
  ]) {
    ok(await a.mem.recordTurn({ conversationId, role: 'user', text }));
  }
  for (const path of ['Trip/Lisbon', 'Trip/Budget', 'Trip/Hotel', 'Trip/Gone'])
    ok(await a.mem.saveMemory(path, { note: `${path} in May` }, 200, { conversationId }));
  ok(await a.mem.deleteMemory('Trip/Gone'));
  await a.mem.close();
  return a.name;
}

/** Every vector of the live row at `path` is the other model's vector of its text. */
async function expectOtherModel(name: string, path: string): Promise<void> {
  const rows = await tableRows<MemoryEntry>(name, 'structured_memory');
  const row = rows.find((r) => r.path === path);
  expect(row, path).toBeDefined();
  expect(row!.model).toBe('test/rotated');
  expect(row!.contextChunks.length, `${path} kept its snapshot`).toBeGreaterThan(0);
  const want = await otherModel().embed(row!.contextChunks.map((c) => c.text));
  row!.contextChunks.forEach((c, i) => expect([...c.embedding]).toEqual([...want[i]]));
}

describe('a kept context snapshot follows the active model', () => {
  it('update, edit, move, restore and restore from the trash re-embed it', async () => {
    const name = await savedWithContext();
    const b = openTestMemory({ name, embedder: otherModel() });
    const mem: MemoryApi = b.mem;
    ok(await mem.updateMemory('Trip/Lisbon', { family: true }));
    await expectOtherModel(name, 'Trip/Lisbon');
    ok(await mem.editMemory('Trip/Budget', { flights: 900 }));
    await expectOtherModel(name, 'Trip/Budget');
    ok(await mem.moveMemory('Trip/Hotel', 'Trip/Stay'));
    await expectOtherModel(name, 'Trip/Stay');
    const trash = ok(await mem.listTrash());
    const gone = trash.items.find((i) => i.path === 'Trip/Gone');
    expect(gone).toBeDefined();
    ok(await mem.restoreDeleted(gone!.id));
    await expectOtherModel(name, 'Trip/Gone');
    const history = ok(await mem.getHistory('Trip/Lisbon'));
    ok(await mem.restoreMemory(history.versions[0].id));
    await expectOtherModel(name, 'Trip/Lisbon');
  });
});
