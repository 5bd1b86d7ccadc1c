// Parts of the history and trash tools lifted out of their closures (src/memory/tools/history.ts,
// src/memory/tools/trash.ts, src/memory/tools/lineage.ts): the refusals of a delete and a move,
// the rows a move and a restore write, the order of an entry's versions, the trash's items and
// how an old path's moves are followed.
import { describe, expect, it } from 'vitest';
import type { HistoryRow } from '../../src/memory/types';
import {
  hasChildren,
  historyVersions,
  invalidMove,
  movedPath,
  movedRow,
  moveRefusal,
} from '../../src/memory/tools/history';
import { movedVersion, revivedRow, versionAbove } from '../../src/memory/tools/lineage';
import { isToolError, MAX_VERSION } from '../../src/memory/validate';
import {
  commonRoot,
  groupOf,
  highestVersions,
  MAX_MOVES,
  newer,
  nextMove,
  trashItem,
  TRASH_PATHS_LISTED,
} from '../../src/memory/tools/trash';
import { chunk, entryAt, T0, T1, T2 } from './rows';

let nextId = 1;
const hist = (path: string, over: Partial<HistoryRow> = {}): HistoryRow => {
  const { id: _id, ...e } = entryAt(path);
  return {
    id: nextId++,
    path,
    version: 1,
    reason: 'delete',
    replaced: T1,
    entry: e,
    ...over,
  } as HistoryRow;
};

describe('deleteMemory and moveMemory refusals', () => {
  it('a delete with entries below says how many and how to delete them all', () => {
    expect(hasChildren('Travel', 1).message).toMatch(/has 1 entry below it; nothing was deleted/);
    const e = hasChildren('Travel', 3);
    expect(e.code).toBe('HAS_CHILDREN');
    expect(e.message).toContain('3 entries');
    expect(e.message).toContain('deleteMemory("Travel", true)');
  });

  it('a move to the same path or into its own subtree is refused; a sibling with the prefix is not', () => {
    expect(moveRefusal('A/B', 'A/B')?.message).toBe(
      '"A/B" is already at that path; nothing moved. Give the new path to move it to.',
    );
    expect(moveRefusal('A/B', 'A/B/C')?.message).toBe(
      '"A/B" cannot move below itself ("A/B/C" is inside it); nothing moved. Give a path outside it.',
    );
    expect(moveRefusal('A/B', 'A/BC')).toBeUndefined();
    expect(moveRefusal('A/B', 'X')).toBeUndefined();
  });

  it('moved paths keep what is below the moved root', () => {
    expect(movedPath('A/B', 'X', 'A/B')).toBe('X');
    expect(movedPath('A/B', 'X/Y', 'A/B/C/D')).toBe('X/Y/C/D');
  });

  it('a move that would make a path too long or invalid is refused, naming it', () => {
    // Four segments of 100 characters: 403 characters, room for a few more.
    const deep = Array.from({ length: 4 }, () => 'Z'.repeat(100)).join('/');
    const rename = (p: string) => movedPath('A', deep, p);
    expect(invalidMove(['A', 'A/short'], rename)).toBeUndefined();
    const long = invalidMove(['A', 'A/short', 'A/' + 'b'.repeat(120)], rename);
    expect(long?.code).toBe('INVALID_PATH');
    expect(long?.message).toMatch(/moving would make an invalid path/);
    const bad = invalidMove(['A/b'], (p) => movedPath('A', 'X//Y', p));
    expect(bad?.code).toBe('INVALID_PATH');
    expect(bad?.message).toContain('X//Y/b');
  });
});

describe('movedRow', () => {
  const computed = {
    version: 3,
    embedding: new Float32Array([1, 1]),
    contextChunks: [chunk('re-embedded')],
  };

  it('is the entry at its new path, same version, with the new vectors and where it came from', () => {
    const r = entryAt('A/B');
    const row = movedRow(r, 'X/B', computed, 'new-model', T1);
    expect(row).toMatchObject({
      path: 'X/B',
      heading: 'B',
      parent_path: 'X',
      version: 3,
      modified: T1,
      created: T0,
      model: 'new-model',
      movedFrom: 'A/B',
    });
    // Its snapshot is its own version's: nothing to say it was kept from an earlier one.
    expect('contextVersion' in row).toBe(false);
    expect('id' in row).toBe(false);
    expect(row.embedding).toBe(computed.embedding);
    expect(row.contextChunks).toBe(computed.contextChunks);
  });

  it('at a later version (History at the new path lists its own), says which save took the snapshot', () => {
    const row = movedRow(entryAt('A/B'), 'X/B', computed, 'new-model', T1, 5);
    expect(row).toMatchObject({ version: 5, contextVersion: 3 });
  });

  it('keeps its own snapshot when it changed since the vectors were computed', () => {
    const r = entryAt('A/B', { version: 5 });
    const row = movedRow(r, 'X/B', computed, 'new-model', T1);
    expect(row.contextChunks).toBe(r.contextChunks);
    expect(row.embedding).toBe(computed.embedding);
  });

  it('keeps its own vectors and model when none were computed for it', () => {
    const r = entryAt('A/B');
    const row = movedRow(r, 'X/B', undefined, 'new-model', T1);
    expect(row.model).toBe('old-model');
    expect(row.embedding).toBe(r.embedding);
    expect(row.contextChunks).toBe(r.contextChunks);
  });

  it('moved back where it came from, it is no longer moved from anywhere', () => {
    const row = movedRow(entryAt('X/B', { movedFrom: 'A/B' }), 'A/B', computed, 'm', T1);
    expect('movedFrom' in row).toBe(false);
    const again = movedRow(entryAt('X/B', { movedFrom: 'A/B' }), 'Y/B', computed, 'm', T1);
    expect(again.movedFrom).toBe('X/B');
  });
});

describe('historyVersions', () => {
  it('lists the newest version first, then the latest replaced, then the latest row', () => {
    const rows = [
      hist('P', { id: 1, version: 1, replaced: T1 }),
      hist('P', { id: 2, version: 3, replaced: T0, reason: 'update' }),
      hist('P', { id: 3, version: 2, replaced: T0 }),
      hist('P', { id: 4, version: 2, replaced: T2, reason: 'move', movedTo: 'Q' }),
      hist('P', { id: 5, version: 2, replaced: T0, conflictFrom: 'laptop' }),
    ];
    const versions = historyVersions(rows);
    expect(versions.map((v) => v.id)).toEqual([2, 4, 5, 3, 1]);
    expect(versions[1]).toMatchObject({ reason: 'move', movedTo: 'Q', version: 2 });
    expect(versions[2].conflictFrom).toBe('laptop');
    expect('movedTo' in versions[0]).toBe(false);
    expect(versions[0].content).toEqual({ note: 'P' });
    // The caller's rows are left as they were.
    expect(rows.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('revivedRow', () => {
  const v = {
    contextChunks: [chunk('new')],
    embedding: new Float32Array([1, 1]),
    model: 'm2',
    at: T2,
  };

  it('brings a stored version back at its path with new vectors, keeping its lineage', () => {
    const { id: _id, ...stored } = entryAt('A/B', { movedFrom: 'Old/B', contextVersion: 1 });
    const row = revivedRow(stored, 'A/B', v, 9);
    expect(row).toMatchObject({
      path: 'A/B',
      version: 9,
      movedFrom: 'Old/B',
      contextVersion: 1,
      model: 'm2',
      created: T0,
      accessed: T0,
      modified: T2,
    });
    expect(row.contextChunks).toBe(v.contextChunks);
  });

  it('at the path it was moved from, it is no longer moved from anywhere', () => {
    const { id: _id, ...stored } = entryAt('A/B', { movedFrom: 'A/B' });
    expect('movedFrom' in revivedRow(stored, 'A/B', v, 2)).toBe(false);
  });

  it('replacing a live entry, it keeps that entry’s creation and access times', () => {
    const { id: _id, ...stored } = entryAt('A/B');
    const row = revivedRow(stored, 'A/B', v, 4, { created: T1, accessed: T2 });
    expect(row.created).toBe(T1);
    expect(row.accessed).toBe(T2);
  });
});

describe('the trash', () => {
  it('newer: the later delete, or the higher id at the same time', () => {
    expect(newer(hist('P', { replaced: T2 }), hist('P', { replaced: T1 }))).toBe(true);
    expect(newer(hist('P', { id: 50, replaced: T1 }), hist('P', { id: 40, replaced: T1 }))).toBe(
      true,
    );
    expect(newer(hist('P', { id: 40, replaced: T1 }), hist('P', { id: 50, replaced: T1 }))).toBe(
      false,
    );
  });

  it('commonRoot: the deepest path over all of them', () => {
    expect(commonRoot(['A/B/C', 'A/B/D', 'A/B'])).toBe('A/B');
    expect(commonRoot(['A/B', 'A/BC'])).toBe('A');
    expect(commonRoot(['A', 'B'])).toBe('');
  });

  it('an item lists its root, its count, the first paths and what the root held', () => {
    const rows = Array.from({ length: TRASH_PATHS_LISTED + 5 }, (_, i) =>
      hist(`T/${String(i).padStart(3, '0')}`, { id: 100 + i, deleteRoot: 'T' }),
    );
    rows.push(hist('T', { id: 99, deleteRoot: 'T' }));
    const item = trashItem(groupOf(rows.reverse()));
    expect(item.id).toBe(99);
    expect(item.path).toBe('T');
    expect(item.entries).toBe(TRASH_PATHS_LISTED + 6);
    expect(item.paths).toHaveLength(TRASH_PATHS_LISTED);
    expect(item.paths.slice(0, 2)).toEqual(['T', 'T/000']);
    expect(item.content).toEqual({ note: 'T' });
    expect(item.chunks).toBe(TRASH_PATHS_LISTED + 6);
    expect(item.deleted).toBe(T1);
  });

  it('rows from before delete roots were stored are grouped under their common path', () => {
    const item = trashItem(groupOf([hist('A/B/C'), hist('A/B/D')]));
    expect(item.path).toBe('A/B');
    // No row at the root: the first path's content stands for the item.
    expect(item.content).toEqual({ note: 'A/B/C' });
  });

  it('an undelete goes on from the highest version in the history of each path', () => {
    const top = highestVersions([
      hist('P', { version: 2 }),
      hist('P', { version: 5 }),
      hist('Q', { version: 1 }),
    ]);
    expect([...top]).toEqual([
      ['P', 5],
      ['Q', 1],
    ]);
  });

  it('nextMove follows the latest row only when it is a move, and stops at cycles and the limit', () => {
    const moved = hist('A', { reason: 'move', movedTo: 'B', replaced: T2 });
    const deleted = hist('A', { reason: 'delete', replaced: T1 });
    expect(nextMove([deleted, moved], 'A', [])).toBe('B');
    expect(nextMove([moved, hist('A', { reason: 'delete', replaced: T2, id: 1e6 })], 'A', [])).toBe(
      undefined,
    );
    expect(nextMove([moved], 'B', [])).toBeUndefined(); // back at the start
    expect(nextMove([moved], 'A', ['C', 'B'])).toBeUndefined(); // a cycle
    expect(
      nextMove(
        [moved],
        'A',
        Array.from({ length: MAX_MOVES }, (_, i) => `M${i}`),
      ),
    ).toBe(undefined);
    expect(nextMove([], 'A', [])).toBeUndefined();
  });
});

describe('versionAbove and movedVersion', () => {
  it('a new live version goes one above the live row and every version History lists', () => {
    expect(versionAbove([], 'P')).toBe(1);
    expect(versionAbove([1, 2], 'P', 3)).toBe(4);
    expect(versionAbove([4, 2, 1], 'P')).toBe(5);
    expect(versionAbove([1, 7], 'P', 3)).toBe(8);
  });

  it('a move keeps the number unless History at the new path lists it or a later one', () => {
    expect(movedVersion(3, [1, 2], 'Q')).toBe(3);
    expect(movedVersion(3, [], 'Q')).toBe(3);
    // Moved back: the signpost it left (version 3, moved to Q) is listed there.
    expect(movedVersion(3, [3, 2, 1], 'P')).toBe(4);
    expect(movedVersion(3, [9], 'P')).toBe(10);
  });

  it('refuses to go past the highest version', () => {
    const refused = versionAbove([MAX_VERSION], 'P');
    expect(isToolError(refused) && refused.message).toMatch(/highest version/);
  });
});
