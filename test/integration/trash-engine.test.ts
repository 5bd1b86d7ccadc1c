// The trash and the lineage of an entry (docs/trash.md): listTrash, restoreDeleted, emptyTrash,
// resolvePath, editMemory keeping the context snapshot, moves taking their history along, and
// the new fields through a JSON backup.
import { afterEach, describe, expect, it } from 'vitest';
import type {
  EntryView,
  HistoryRow,
  MemoryApi,
  MemoryEntry,
  ToolError,
} from '../../src/memory/types';
import {
  DAY,
  closeAll,
  contentSnapshot,
  expectError,
  expectNotFound,
  ok,
  openTestMemory,
  tableRows,
} from './helpers';

afterEach(closeAll);

/** An entry view (getEntry has no status on success). */
function view(r: EntryView | ToolError): EntryView {
  if ('status' in r) throw new Error(`expected an entry, got ${r.message}`);
  return r;
}

/** A conversation about a trip, so saves take a context snapshot. */
async function withConversation(mem: MemoryApi): Promise<void> {
  const conversationId = ok(await mem.createConversation('Trip')).id;
  for (const text of [
    'We are planning a trip to Lisbon in May with the whole family.',
    'The budget for the flights is 900 euros, and the hotel must be near Alfama.',
  ]) {
    ok(await mem.recordTurn({ conversationId, role: 'user', text }));
  }
}

async function seeded() {
  const tm = openTestMemory();
  await withConversation(tm.mem);
  for (const [path, content] of [
    ['Trip/Lisbon', 'Lisbon in May, with the family'],
    ['Trip/Lisbon/Budget', { flights: 900, currency: 'EUR' }],
    ['Trip/Lisbon/Hotel', 'near Alfama'],
    ['Work/Plan', 'ship the trash view'],
  ] as const) {
    ok(await tm.mem.saveMemory(path, content, 200));
    tm.clock.advance(1000);
  }
  return tm;
}

describe('listTrash', () => {
  it('is empty at first, and lists a single delete and a recursive delete as one item each, newest first', async () => {
    const { mem, clock } = await seeded();
    expect(ok(await mem.listTrash()).items).toEqual([]);

    const one = ok(await mem.deleteMemory('Work/Plan'));
    expect(one.trashId).toEqual(expect.any(Number));
    clock.advance(DAY);
    const tree = ok(await mem.deleteMemory('Trip', true));
    expect(tree.deleted).toBe(3);

    const { items } = ok(await mem.listTrash());
    expect(items.map((i) => [i.path, i.entries, i.paths])).toEqual([
      ['Trip', 3, ['Trip/Lisbon', 'Trip/Lisbon/Budget', 'Trip/Lisbon/Hotel']],
      ['Work/Plan', 1, ['Work/Plan']],
    ]);
    expect(items[0].id).toBe(tree.trashId);
    expect(items[1].id).toBe(one.trashId);
    expect(items[1].content).toBe('ship the trash view');
    expect(items[0].deleted.getTime()).toBeGreaterThan(items[1].deleted.getTime());
    expect(items[0].chunks).toBeGreaterThan(0);
  });

  it('leaves out a path that is live again, and shows a path deleted twice once, as its latest delete', async () => {
    const { mem, clock } = await seeded();
    ok(await mem.deleteMemory('Trip', true));
    ok(await mem.saveMemory('Trip/Lisbon/Hotel', 'saved again', 0));
    let { items } = ok(await mem.listTrash());
    expect(items.find((i) => i.path === 'Trip')?.paths).toEqual([
      'Trip/Lisbon',
      'Trip/Lisbon/Budget',
    ]);

    ok(await mem.deleteMemory('Trip/Lisbon/Hotel'));
    clock.advance(1000);
    ok(await mem.saveMemory('Trip/Lisbon/Hotel', 'third time', 0));
    clock.advance(1000);
    ok(await mem.deleteMemory('Trip/Lisbon/Hotel'));
    ({ items } = ok(await mem.listTrash()));
    expect(items.filter((i) => i.paths.includes('Trip/Lisbon/Hotel'))).toHaveLength(1);
    expect(items[0]).toMatchObject({ path: 'Trip/Lisbon/Hotel', content: 'third time' });
  });

  it('does not list a moved entry: it is not deleted', async () => {
    const { mem } = await seeded();
    ok(await mem.moveMemory('Work/Plan', 'Work/Done'));
    expect(ok(await mem.listTrash()).items).toEqual([]);
  });
});

describe('restoreDeleted', () => {
  it('brings a deleted subtree back at once, with its content, context snapshot and history', async () => {
    const { mem, name, clock } = await seeded();
    ok(await mem.saveMemory('Trip/Lisbon/Hotel', 'near Alfama, with a view', 200));
    const before = new Map(
      (await tableRows<MemoryEntry>(name, 'structured_memory')).map((r) => [r.path, r]),
    );
    const { trashId } = ok(await mem.deleteMemory('Trip', true));
    clock.advance(DAY);

    const r = ok(await mem.restoreDeleted(trashId));
    expect(r).toMatchObject({ path: 'Trip', restored: 3 });
    expect(r.paths).toEqual(['Trip/Lisbon', 'Trip/Lisbon/Budget', 'Trip/Lisbon/Hotel']);
    for (const path of r.paths) {
      const entry = ok(await mem.queryMemory(path));
      const old = before.get(path)!;
      expect(entry.content).toEqual(old.content);
      expect(entry.contextChunks.map((c) => c.text)).toEqual(old.contextChunks.map((c) => c.text));
      expect(entry.metadata.version).toBeGreaterThan(old.version);
    }
    expect(ok(await mem.queryMemory('Trip/Lisbon')).contextChunks.length).toBeGreaterThan(0);
    // Its history is all there: the first save, and the deleted version.
    const h = ok(await mem.getHistory('Trip/Lisbon/Hotel'));
    expect(h.versions.map((v) => [v.version, v.reason, v.content])).toEqual([
      [2, 'delete', 'near Alfama, with a view'],
      [1, 'update', 'near Alfama'],
    ]);
    expect(view(await mem.getEntry('Trip/Lisbon/Hotel')).contextVersion).toBe(2);
    expect(ok(await mem.listTrash()).items).toEqual([]);
    // Searchable again.
    const found = ok(await mem.queryMemoryHeading('Trip', 'hotel Alfama'));
    expect(found.children.map((c) => c.path)).toContain('Trip/Lisbon/Hotel');
  });

  it('any id of the item restores it whole', async () => {
    const { mem } = await seeded();
    const { trashId } = ok(await mem.deleteMemory('Trip', true));
    const r = ok(await mem.restoreDeleted(trashId! + 2));
    expect(r.restored).toBe(3);
    expect(ok(await mem.listMemory()).totalEntries).toBe(4);
  });

  it('is one transaction: when one entry cannot come back, none does', async () => {
    const { mem, name } = await seeded();
    // An entry at the highest version cannot get a new one.
    const top = {
      path: 'Trip/Top',
      content: 'at the top',
      contextChunks: [],
      version: Number.MAX_SAFE_INTEGER,
      created: '2025-01-01T00:00:00.000Z',
      modified: '2025-01-01T00:00:00.000Z',
      accessed: '2025-01-01T00:00:00.000Z',
    };
    ok(
      await mem.importJson(
        JSON.stringify({ format: 'structured-memory-backup', version: 1, entries: [top] }),
      ),
    );
    const { trashId } = ok(await mem.deleteMemory('Trip', true));
    const before = await contentSnapshot(name);
    expectError(await mem.restoreDeleted(trashId), 'INVALID_ARGUMENT');
    expect(await contentSnapshot(name)).toEqual(before);
    expect(ok(await mem.listTrash()).items[0].entries).toBe(4);
  });

  it('restores only what is still deleted when part of the item came back', async () => {
    const { mem } = await seeded();
    const { trashId } = ok(await mem.deleteMemory('Trip', true));
    ok(await mem.saveMemory('Trip/Lisbon', 'new text', 0));
    const r = ok(await mem.restoreDeleted(trashId));
    expect(r.paths).toEqual(['Trip/Lisbon/Budget', 'Trip/Lisbon/Hotel']);
    expect(ok(await mem.queryMemory('Trip/Lisbon')).content).toBe('new text');
  });

  it('a second restore of the same item is NOT_FOUND and changes nothing', async () => {
    const { mem, name } = await seeded();
    const { trashId } = ok(await mem.deleteMemory('Work/Plan'));
    ok(await mem.restoreDeleted(trashId));
    const before = await contentSnapshot(name);
    expectNotFound(await mem.restoreDeleted(trashId));
    expect(await contentSnapshot(name)).toEqual(before);
  });

  it('bad ids are clear errors that write nothing', async () => {
    const { mem, name } = await seeded();
    ok(await mem.saveMemory('Work/Plan', 'second', 0));
    const [update] = ok(await mem.getHistory('Work/Plan')).versions;
    const before = await contentSnapshot(name);
    for (const bad of [undefined, null, 'x', -1, 0, 1.5, {}, [], Number.NaN, 2 ** 60]) {
      expectError(await mem.restoreDeleted(bad), 'INVALID_ARGUMENT');
    }
    expectNotFound(await mem.restoreDeleted(987654));
    const notDeleted = await mem.restoreDeleted(update.id);
    expectError(notDeleted, 'INVALID_ARGUMENT');
    expect((notDeleted as { message: string }).message).toMatch(/restoreMemory/);
    expect(await contentSnapshot(name)).toEqual(before);
  });
});

describe('emptyTrash', () => {
  it('removes every stored version of the deleted paths, in one transaction, and nothing else', async () => {
    const { mem, name } = await seeded();
    ok(await mem.saveMemory('Work/Plan', 'second', 0));
    ok(await mem.saveMemory('Trip/Lisbon', 'edited', 0));
    ok(await mem.deleteMemory('Work/Plan'));
    ok(await mem.deleteMemory('Trip/Lisbon/Hotel'));
    const r = ok(await mem.emptyTrash());
    expect(r).toEqual({ status: 'SUCCESS', items: 2, entries: 2, versions: 3 });
    expect(ok(await mem.listTrash()).items).toEqual([]);
    const history = await tableRows<HistoryRow>(name, 'history');
    expect(history.map((h) => [h.path, h.reason])).toEqual([['Trip/Lisbon', 'update']]);
    expect(ok(await mem.getHistory('Work/Plan')).versions).toEqual([]);
    expect(ok(await mem.emptyTrash())).toMatchObject({ items: 0, versions: 0 });
  });
});

describe('moves', () => {
  it('take the history along, say where the entry came from, and leave a row saying where it went', async () => {
    const { mem } = await seeded();
    ok(await mem.saveMemory('Work/Plan', 'ship it soon', 200));
    ok(await mem.moveMemory('Work/Plan', 'Done/Plan'));

    const moved = view(await mem.getEntry('Done/Plan'));
    expect(moved.movedFrom).toBe('Work/Plan');
    // A move keeps the number: the snapshot is still this version's own.
    expect(moved.version).toBe(2);
    expect(moved.contextVersion).toBeUndefined();
    expect(moved.contextChunks.length).toBeGreaterThan(0);
    const h = ok(await mem.getHistory('Done/Plan'));
    expect(h.versions.map((v) => [v.version, v.content])).toEqual([[1, 'ship the trash view']]);

    const old = ok(await mem.getHistory('Work/Plan'));
    expect(old.versions).toHaveLength(1);
    expect(old.versions[0]).toMatchObject({ reason: 'move', movedTo: 'Done/Plan', version: 2 });

    expect(ok(await mem.resolvePath('Work/Plan'))).toEqual({
      status: 'SUCCESS',
      path: 'Done/Plan',
      live: true,
      moves: ['Done/Plan'],
    });
    ok(await mem.moveMemory('Done/Plan', 'Archive/Plan'));
    expect(ok(await mem.resolvePath('Work/Plan'))).toMatchObject({
      path: 'Archive/Plan',
      moves: ['Done/Plan', 'Archive/Plan'],
    });
    expect(ok(await mem.resolvePath('Archive/Plan'))).toMatchObject({ live: true, moves: [] });
    expect(ok(await mem.resolvePath('Never/Saved'))).toMatchObject({
      path: 'Never/Saved',
      live: false,
    });
    expectError(await mem.resolvePath('A//B'), 'INVALID_PATH');
    expectError(await mem.resolvePath(7), 'INVALID_PATH');
  });

  it('a subtree move records each destination; moving back clears "moved from"', async () => {
    const { mem } = await seeded();
    ok(await mem.moveMemory('Trip', 'Holidays'));
    expect(ok(await mem.getHistory('Trip/Lisbon/Hotel')).versions[0].movedTo).toBe(
      'Holidays/Lisbon/Hotel',
    );
    expect(view(await mem.getEntry('Holidays/Lisbon/Budget')).movedFrom).toBe('Trip/Lisbon/Budget');
    ok(await mem.moveMemory('Holidays', 'Trip'));
    expect(view(await mem.getEntry('Trip/Lisbon/Budget')).movedFrom).toBeUndefined();
    expect(ok(await mem.resolvePath('Holidays/Lisbon')).path).toBe('Trip/Lisbon');
  });

  it('a cycle of moves ends', async () => {
    const { mem } = await seeded();
    ok(await mem.moveMemory('Work/Plan', 'B'));
    ok(await mem.moveMemory('B', 'Work/Plan'));
    ok(await mem.deleteMemory('Work/Plan'));
    const r = ok(await mem.resolvePath('B'));
    expect(r.live).toBe(false);
    expect(r.moves.length).toBeLessThanOrEqual(2);
  });
});

describe('editMemory (an edit by hand)', () => {
  it('replaces the content and keeps the context snapshot of the save it edits', async () => {
    const { mem } = await seeded();
    const before = view(await mem.getEntry('Trip/Lisbon'));
    expect(before.contextChunks.length).toBeGreaterThan(0);
    expect(before.contextVersion).toBeUndefined();

    const r = ok(await mem.editMemory('Trip/Lisbon', 'Lisbon in late May, the four of us'));
    expect(r.version).toBe(2);
    expect(r.chunksStored).toBe(before.contextChunks.length);
    const after = view(await mem.getEntry('Trip/Lisbon'));
    expect(after.content).toBe('Lisbon in late May, the four of us');
    expect(after.contextChunks).toEqual(before.contextChunks);
    expect(after.contextVersion).toBe(1);
    expect(ok(await mem.getHistory('Trip/Lisbon')).versions[0]).toMatchObject({
      version: 1,
      reason: 'update',
      content: 'Lisbon in May, with the family',
    });
    // A second edit still names the save that took the snapshot.
    ok(await mem.editMemory('Trip/Lisbon', { note: 'now an object' }));
    expect(view(await mem.getEntry('Trip/Lisbon')).contextVersion).toBe(1);
    // A merge patch keeps it too; a new save by the model takes a new snapshot.
    ok(await mem.updateMemory('Trip/Lisbon', { more: true }));
    expect(view(await mem.getEntry('Trip/Lisbon')).contextVersion).toBe(1);
    ok(await mem.saveMemory('Trip/Lisbon', 'saved by the model', 200));
    expect(view(await mem.getEntry('Trip/Lisbon')).contextVersion).toBeUndefined();
  });

  it('bad input is a clear error that writes nothing', async () => {
    const { mem, name } = await seeded();
    const before = await contentSnapshot(name);
    expectError(await mem.editMemory('A//B', 'x'), 'INVALID_PATH');
    expectError(await mem.editMemory('Trip/Lisbon', undefined), 'INVALID_CONTENT');
    expectError(await mem.editMemory('Trip/Lisbon', 'x'.repeat(40_000)), 'CONTENT_TOO_LARGE');
    expectNotFound(await mem.editMemory('Nope/Missing', 'x'));
    expect(await contentSnapshot(name)).toEqual(before);
  });
});

describe('the JSON backup', () => {
  it('carries movedFrom, contextVersion, movedTo and deleteRoot, and restores the trash', async () => {
    const { mem } = await seeded();
    ok(await mem.moveMemory('Work/Plan', 'Done/Plan'));
    ok(await mem.editMemory('Trip/Lisbon', 'edited by hand'));
    ok(await mem.deleteMemory('Trip/Lisbon', true));
    const json = await mem.exportJson();
    expect(typeof json).toBe('string');
    const data = JSON.parse(json as string) as {
      entries: { path: string; movedFrom?: string }[];
      history: { reason: string; movedTo?: string; deleteRoot?: string }[];
    };
    expect(data.entries.find((e) => e.path === 'Done/Plan')?.movedFrom).toBe('Work/Plan');
    expect(data.history.find((h) => h.reason === 'move')?.movedTo).toBe('Done/Plan');
    expect(data.history.find((h) => h.reason === 'delete')?.deleteRoot).toBe('Trip/Lisbon');

    const other = openTestMemory();
    ok(await other.mem.importJson(json, 'replace'));
    expect(view(await other.mem.getEntry('Done/Plan')).movedFrom).toBe('Work/Plan');
    const trash = ok(await other.mem.listTrash()).items;
    expect(trash.map((i) => [i.path, i.entries])).toEqual([['Trip/Lisbon', 3]]);
    const r = ok(await other.mem.restoreDeleted(trash[0].id));
    expect(r.restored).toBe(3);
    expect(view(await other.mem.getEntry('Trip/Lisbon'))).toMatchObject({
      content: 'edited by hand',
      contextVersion: 1,
    });
  });

  it('accepts a backup without the new fields, and refuses bad ones with the reason', async () => {
    const { mem } = await seeded();
    const backup = {
      format: 'structured-memory-backup',
      version: 1,
      entries: [
        {
          path: 'A/B',
          content: 'x',
          contextChunks: [],
          version: 2,
          created: '2025-01-01T00:00:00.000Z',
          modified: '2025-01-01T00:00:00.000Z',
          accessed: '2025-01-01T00:00:00.000Z',
        },
      ],
      history: [] as Record<string, unknown>[],
    };
    ok(await mem.importJson(JSON.stringify(backup)));
    const withBad = (entry: Record<string, unknown>, row: Record<string, unknown> = {}) =>
      JSON.stringify({
        ...backup,
        entries: [{ ...backup.entries[0], ...entry }],
        history: [
          {
            path: 'A/C',
            version: 1,
            reason: 'move',
            replaced: '2025-01-01T00:00:00.000Z',
            entry: { ...backup.entries[0], path: 'A/C', version: 1 },
            ...row,
          },
        ],
      });
    for (const [bad, pattern] of [
      [withBad({ movedFrom: 'A//B' }), /movedFrom/],
      [withBad({ movedFrom: 5 }), /movedFrom/],
      [withBad({ contextVersion: 3 }), /contextVersion 3 is after/],
      [withBad({ contextVersion: 0 }), /contextVersion/],
      [withBad({}, { movedTo: '' }), /movedTo/],
      [withBad({}, { deleteRoot: ' A ' }), /deleteRoot/],
    ] as const) {
      const r = await mem.importJson(bad);
      expectError(r, 'INVALID_CONTENT');
      expect((r as { message: string }).message).toMatch(pattern);
    }
    ok(
      await mem.importJson(withBad({ movedFrom: 'Old/B', contextVersion: 1 }, { movedTo: 'A/D' })),
    );
  });
});
