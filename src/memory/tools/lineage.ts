// What an entry carries across changes that are not a new save: the version its context snapshot
// came from, and the path it was moved from. Shared by edits, moves, restores and the trash.
import { headingOf, parentOf } from '../paths';
import type { HistoryRow, MemoryEntry } from '../types';

/**
 * `{ contextVersion }` for a row that keeps `from`'s context chunks in a new version: the version
 * whose save took them. Nothing when there are none (an empty snapshot has no origin to name).
 */
export function keptContext(
  from: Pick<MemoryEntry, 'contextChunks' | 'contextVersion' | 'version'>,
): Pick<MemoryEntry, 'contextVersion'> {
  return from.contextChunks.length ? { contextVersion: from.contextVersion ?? from.version } : {};
}

/** A row without the optional lineage fields (so none is stored as `undefined`). */
export function withoutLineage<
  T extends Partial<Pick<MemoryEntry, 'movedFrom' | 'contextVersion'>>,
>(row: T): Omit<T, 'movedFrom' | 'contextVersion'> {
  const { movedFrom: _m, contextVersion: _c, ...rest } = row;
  return rest;
}

/**
 * A history row listed under another path: its row and its entry both name `path`, so the
 * version lists and restores there (a backup refuses rows whose two paths differ).
 */
export function repathed(row: HistoryRow, path: string): HistoryRow {
  return {
    ...row,
    path,
    entry: { ...row.entry, path, heading: headingOf(path), parent_path: parentOf(path) },
  };
}
