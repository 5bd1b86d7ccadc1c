// Rows read by key for a search's hits: through IndexedDB's own calls outside a transaction, and
// through the caller's transaction inside one (a save's snapshot search must see its own writes
// and must not wait for itself).
import Dexie from 'dexie';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryDB, readRows } from '../../src/memory/db';
import type { Chunk } from '../../src/memory/types';

const open: MemoryDB[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

function chunk(id: number, text: string): Chunk {
  return {
    id,
    conversationId: 1,
    turnId: id,
    sentenceId: 0,
    role: 'user',
    text,
    tokenCount: 3,
    embedding: Float32Array.of(id, 0.5, -1),
    model: 'm',
    time: new Date(1_700_000_000_000 + id),
  };
}

async function filled(): Promise<MemoryDB> {
  const db = new MemoryDB(`read-rows-${crypto.randomUUID()}`);
  open.push(db);
  await db.chunks.bulkAdd([chunk(1, 'one'), chunk(2, 'two'), chunk(5, 'five')]);
  return db;
}

describe('readRows', () => {
  it('gives what bulkGet gives: rows in the order asked, undefined where none', async () => {
    const db = await filled();
    const keys = [5, 3, 1, 5, 2];
    const rows = await readRows(db.chunks, keys);
    expect(rows).toEqual(await db.chunks.bulkGet(keys));
    expect(rows.map((r) => r?.text)).toEqual(['five', undefined, 'one', 'five', 'two']);
    expect(rows[0]?.embedding).toBeInstanceOf(Float32Array);
    expect(rows[0]?.time).toBeInstanceOf(Date);
    expect(await readRows(db.chunks, [])).toEqual([]);
  });

  it('inside a write transaction, sees its writes and lets it finish', async () => {
    const db = await filled();
    const seen = await db.transaction('rw', db.chunks, async () => {
      await db.chunks.add(chunk(9, 'nine, not yet committed'));
      await db.chunks.delete(1);
      return readRows(db.chunks, [9, 1, 2]);
    });
    expect(seen.map((r) => r?.text)).toEqual(['nine, not yet committed', undefined, 'two']);
    expect((await db.chunks.get(9))?.text).toBe('nine, not yet committed');
  });

  it('on a closed database, says so instead of waiting', async () => {
    const db = await filled();
    db.close();
    await expect(readRows(db.chunks, [1])).rejects.toBeInstanceOf(Dexie.DatabaseClosedError);
  });
});
