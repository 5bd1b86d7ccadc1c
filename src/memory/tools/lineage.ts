// What an entry carries across changes that are not a new save: the version its context snapshot
// came from, and the path it was moved from. Shared by edits, moves, restores and the trash.
import type { ModelInfo } from '../../embeddings/types';
import { placedAt } from '../paths';
import { isToolError, nextVersion, toolError } from '../validate';
import type { ContextChunk, HistoryRow, MemoryEntry, ToolError } from '../types';

type Embed = (texts: string[]) => Promise<{ info: ModelInfo; vectors: Float32Array[] } | ToolError>;

/**
 * The context snapshots of `rows` with vectors of the model `info`, row by row: as they are when
 * the row's vectors are already that model's, else re-embedded in one call (a row kept across a
 * model switch, or one from a backup without vectors). A row's `model` names every vector it
 * holds, its snapshot's too: re-embedding finds stale rows by it, and search compares only
 * vectors of one model.
 */
export async function snapshotsFor(
  rows: readonly Pick<MemoryEntry, 'model' | 'contextChunks'>[],
  info: Pick<ModelInfo, 'id' | 'dims'>,
  embed: Embed,
): Promise<ContextChunk[][] | ToolError> {
  const stale = (r: (typeof rows)[number]) =>
    r.contextChunks.some((c) => r.model !== info.id || c.embedding?.length !== info.dims);
  const texts = rows.flatMap((r) => (stale(r) ? r.contextChunks.map((c) => c.text) : []));
  if (!texts.length) return rows.map((r) => r.contextChunks);
  const emb = await embed(texts);
  if (isToolError(emb)) return emb;
  if (emb.info.id !== info.id)
    return toolError(
      'MODEL_UNAVAILABLE',
      'The embedding model changed during the write; try again',
    );
  let at = 0;
  return rows.map((r) =>
    stale(r)
      ? r.contextChunks.map((c) => ({ ...c, embedding: emb.vectors[at++] }))
      : r.contextChunks,
  );
}

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
    entry: { ...row.entry, ...placedAt(path) },
  };
}

/** What a write puts in a row: its vectors (and snapshot) under the model `model`, and the time. */
export interface Vectors {
  contextChunks: ContextChunk[];
  embedding: Float32Array;
  model: string;
  at: Date;
}

/**
 * A stored version back as the live entry at `path` (a restore from history or from the trash):
 * its content and lineage, with new vectors, at `version`. It keeps where it was moved from unless
 * that is `path` itself, the version its context came from, and, when it replaces a live entry
 * (`current`), that entry's creation and access times.
 */
export function revivedRow(
  entry: Omit<MemoryEntry, 'id'>,
  path: string,
  v: Vectors,
  version: number,
  current?: Pick<MemoryEntry, 'created' | 'accessed'>,
): MemoryEntry {
  const { movedFrom } = entry;
  return {
    ...withoutLineage(entry),
    ...(movedFrom !== undefined && movedFrom !== path ? { movedFrom } : {}),
    ...keptContext(entry),
    contextChunks: v.contextChunks,
    ...placedAt(path),
    embedding: v.embedding,
    model: v.model,
    created: current?.created ?? entry.created,
    modified: v.at,
    accessed: current?.accessed ?? entry.accessed,
    version,
  };
}

/**
 * The version of a new live row at `path` (a save, an edit, a restore): one above the highest of
 * `current` (the live row it replaces; 0 for none) and `listed` (the versions History lists at
 * `path`). So History never lists the live version or a later one, whatever came before: a save
 * after a delete goes on from the deleted versions instead of starting again at 1.
 */
export function versionAbove(
  listed: readonly number[],
  path: string,
  current = 0,
): number | ToolError {
  return nextVersion(Math.max(current, ...listed), path);
}

/**
 * The version an entry at `version` keeps when it moves to `path`, where History will list
 * `listed` (the history it takes along, and any the path had before): the same number, since a
 * move changes where the entry is, not what it holds; above them all when the path already lists
 * that number or a later one (a move back, an Undo, leaves the entry's signpost there).
 */
export function movedVersion(
  version: number,
  listed: readonly number[],
  path: string,
): number | ToolError {
  return listed.every((v) => v < version) ? version : versionAbove(listed, path);
}
