// The engine's two in-memory indexes (docs/design.md, "Architecture"): the entry index and the
// semantic index, each rebuilt from the database and kept current from the primary keys that
// writes touched, as Dexie's storagemutated reports them (this connection's, other connections',
// other tabs'), applied before the next read (docs/design.md, "Change notifications").
import Dexie from 'dexie';
import type { IntervalTree, ObservabilitySet } from 'dexie';
import type { ModelInfo } from '../embeddings/types';
import { CHUNK_TABLE, ENTRY_TABLE, type MemoryDB } from './db';
import type { ModelAccess, Result } from './embedding-model';
import { EntryIndex, changedPaths, entrySummary } from './entry-index';
import { SemanticIndex } from './semantic-index';
import type { ChangedKeys, Chunk, EntrySummary, OpenMemoryOptions } from './types';
import { isToolError, toolError } from './validate';

export interface LiveIndexes {
  /**
   * The entry index, brought up to date. With `waitForModel: false` (the explorer's tree and
   * counts) it does not wait for a model still downloading: it serves the tree without vectors
   * meanwhile, and the next call after the model is ready rebuilds it with them.
   */
  entries(options?: { waitForModel?: boolean }): Promise<EntryIndex>;
  /**
   * The entries whose summary changed since the last call, once the index has taken in every
   * write noted so far; undefined when it cannot say (then the page loads the whole index).
   */
  entryChanges(): Promise<{ upserted: EntrySummary[]; removed: string[] } | undefined>;
  /** The semantic index of the active model, brought up to date. */
  chunksIndex(info: ModelInfo): Promise<SemanticIndex>;
  /** Our own writes are applied to the indexes before the next read, events or not. */
  noteWrite(ids: Iterable<number | undefined>): void;
  /**
   * With `rows`, the rows just written: the index takes them as they are at its next use, with no
   * read (chunk rows never change once written; a delete noted after drops them).
   */
  noteChunkWrite(ids: Iterable<number | undefined>, rows?: readonly Chunk[]): void;
  /** Stops listening for writes. */
  stop(): void;
}

/**
 * Most entry paths one change report lists; beyond, the page loads the index again (a report
 * as long as the index would cost as much, docs/design.md "Change notifications").
 */
export const MAX_ENTRY_CHANGES = 500;

/** Most rows of our own chunk writes kept for the index's next use (a chat turn's are a few). */
const WRITTEN_ROWS = 256;

/** Indexes over `db` (named `name`), for the model that `models` loads. */
export function createLiveIndexes(
  name: string,
  db: MemoryDB,
  models: ModelAccess,
  vectorIndex: OpenMemoryOptions['vectorIndex'],
  onIndexProgress?: OpenMemoryOptions['onIndexProgress'],
): LiveIndexes {
  const { model } = models;
  let entryIndex: EntryIndex | null = null;
  let semanticIndex: SemanticIndex | null = null;

  // Keys touched by writes (ours, other connections', other tabs'), applied before the next read.
  const pending = {
    entries: new Set<number>(),
    chunks: new Set<number>(),
    entriesAll: false,
    chunksAll: false,
  };
  // Paths whose summary the entry index changed since the change feed last asked (`entryChanges`);
  // `all` when it cannot say (no index to compare with, or too many).
  const entryLog = { paths: new Set<string>(), all: true };
  const logEntry = (path: string) => {
    if (entryLog.all) return;
    entryLog.paths.add(path);
    if (entryLog.paths.size > MAX_ENTRY_CHANGES) {
      entryLog.all = true;
      entryLog.paths.clear();
    }
  };
  // Rows of this engine's own chunk writes not yet in the index, by id (at most WRITTEN_ROWS).
  const written = new Map<number, Chunk>();
  const dropWritten = (dels: IntervalTree) => {
    const ids = new Set<number>();
    if (!collectKeys(dels, ids)) written.clear();
    else for (const id of ids) written.delete(id);
  };
  const prefix = `idb://${name}/`;
  const onMutated = (parts: ObservabilitySet) => {
    for (const [part, tree] of Object.entries(parts)) {
      if (!part.startsWith(prefix)) continue;
      const [table, index] = part.slice(prefix.length).split('/');
      if (index !== '' && index !== ':dels') continue;
      if (table === ENTRY_TABLE) {
        if (!collectKeys(tree, pending.entries)) pending.entriesAll = true;
      } else if (table === CHUNK_TABLE) {
        if (index === ':dels') dropWritten(tree);
        if (!collectKeys(tree, pending.chunks)) pending.chunksAll = true;
      }
    }
  };
  Dexie.on('storagemutated', onMutated);

  function entries({ waitForModel = true } = {}): Promise<EntryIndex> {
    // The wait for a model still loading comes before the queue, not in it: a search waiting
    // for a download must not hold up the tree, the counts or an entry's detail behind it.
    const ready = waitForModel && !models.loaded() ? model() : Promise.resolve(undefined);
    return ready.then((loaded) => {
      const sync = () => syncEntries(waitForModel, loaded);
      const next = entrySync.then(sync, sync);
      entrySync = next.catch(() => undefined);
      return next;
    });
  }
  let entrySync: Promise<unknown> = Promise.resolve();

  /** Brings the entry index up to date; `loaded` is the model's load just waited for, if any. */
  async function syncEntries(
    waitForModel: boolean,
    loaded?: Result<ModelInfo>,
  ): Promise<EntryIndex> {
    let info: Result<ModelInfo>;
    const readyModel = models.loaded();
    if (waitForModel || readyModel) info = readyModel ?? loaded ?? (await model());
    else {
      void model(); // start loading; do not wait
      info = toolError('MODEL_UNAVAILABLE', 'The embedding model is still loading');
      // An index built while waiting stays usable for the tree until the model is ready.
      if (entryIndex && entryIndex.model === null && !pending.entriesAll) {
        if (pending.entries.size) {
          const ids = [...pending.entries];
          pending.entries.clear();
          await entryIndex.refresh(ids);
        }
        return entryIndex;
      }
    }
    const modelId = isToolError(info) ? null : info.id;
    if (!entryIndex || entryIndex.model !== modelId || pending.entriesAll) {
      pending.entriesAll = false;
      pending.entries.clear();
      const before = entryIndex;
      entryIndex = null;
      const fresh: EntryIndex = new EntryIndex(
        db.structured_memory,
        modelId,
        isToolError(info) ? 0 : info.dims,
        (path) => {
          if (entryIndex === fresh) logEntry(path);
        },
      );
      await fresh.load();
      entryIndex = fresh;
      // What the rebuild changed, compared with the index it replaces; the first load is what
      // every read so far has seen, so the log starts from it.
      if (before) for (const path of changedPaths(before, fresh)) logEntry(path);
      else {
        entryLog.all = false;
        entryLog.paths.clear();
      }
    }
    if (pending.entries.size) {
      const ids = [...pending.entries];
      pending.entries.clear();
      await entryIndex.refresh(ids);
    }
    return entryIndex;
  }

  async function entryChanges(): Promise<
    { upserted: EntrySummary[]; removed: string[] } | undefined
  > {
    await entries({ waitForModel: false });
    const idx = entryIndex;
    if (!idx || entryLog.all) {
      // From here on the log holds every change: the caller loads the index as it is now.
      entryLog.all = !idx;
      entryLog.paths.clear();
      return undefined;
    }
    const upserted: EntrySummary[] = [];
    const removed: string[] = [];
    for (const path of entryLog.paths) {
      const ref = idx.entry(path);
      if (ref) upserted.push(entrySummary(ref));
      else removed.push(path);
    }
    entryLog.paths.clear();
    return { upserted, removed };
  }

  function chunksIndex(info: ModelInfo): Promise<SemanticIndex> {
    const next = chunkSync.then(
      () => syncChunks(info),
      () => syncChunks(info),
    );
    chunkSync = next.catch(() => undefined);
    return next;
  }
  let chunkSync: Promise<unknown> = Promise.resolve();

  async function syncChunks(info: ModelInfo): Promise<SemanticIndex> {
    if (!semanticIndex || semanticIndex.model !== info.id) {
      pending.chunksAll = false;
      pending.chunks.clear();
      written.clear();
      semanticIndex = null;
      const fresh = new SemanticIndex(db, info.id, info.dims, vectorIndex, onIndexProgress);
      await fresh.load();
      semanticIndex = fresh;
      // The full shard check runs after the index is in use, once its vectors are in (a count
      // of the rows would compete with their read); if it had to rebuild the shards, the next
      // use reloads (queued behind syncs already under way).
      void fresh
        .whenExact()
        .then(() => fresh.verify())
        .then(
          (ok) => {
            if (ok) return;
            chunkSync = chunkSync.then(() => {
              if (semanticIndex === fresh) semanticIndex = null;
            });
          },
          () => undefined, // closed meanwhile: the next open checks again
        );
    }
    if (pending.chunksAll) {
      // Chunk rows are append-only: read the new ones; reload only if some were deleted.
      pending.chunksAll = false;
      written.clear();
      await semanticIndex.catchUp();
    }
    if (pending.chunks.size) {
      const ids = [...pending.chunks];
      pending.chunks.clear();
      const known = new Map<number, Chunk>();
      for (const id of ids) {
        const row = written.get(id);
        if (row) known.set(id, row);
      }
      written.clear();
      await semanticIndex.refresh(ids, known);
    }
    return semanticIndex;
  }

  function noteWrite(ids: Iterable<number | undefined>) {
    for (const id of ids) if (id !== undefined) pending.entries.add(id);
  }

  function noteChunkWrite(ids: Iterable<number | undefined>, rows?: readonly Chunk[]) {
    for (const id of ids) {
      if (id === undefined) continue;
      pending.chunks.add(id);
      written.delete(id);
    }
    for (const row of rows ?? []) {
      if (row.id !== undefined && written.size < WRITTEN_ROWS) written.set(row.id, row);
    }
  }

  return {
    entries,
    entryChanges,
    chunksIndex,
    noteWrite,
    noteChunkWrite,
    stop: () => Dexie.on('storagemutated').unsubscribe(onMutated),
  };
}

/**
 * The primary keys a storagemutated report names per table of database `name` ('all' for a
 * range: a bulk write or a clear). Every table written is there.
 */
export function mutatedKeys(parts: ObservabilitySet, name: string): ChangedKeys {
  const prefix = `idb://${name}/`;
  const keys = new Map<string, Set<number> | 'all'>();
  for (const [part, tree] of Object.entries(parts)) {
    if (!part.startsWith(prefix)) continue;
    const [table, index] = part.slice(prefix.length).split('/');
    if (!keys.has(table)) keys.set(table, new Set());
    const into = keys.get(table);
    if (into === 'all' || (index !== '' && index !== ':dels')) continue;
    if (!collectKeys(tree, into!)) keys.set(table, 'all');
  }
  const out: ChangedKeys = {};
  for (const [table, ids] of keys) out[table] = ids === 'all' ? 'all' : [...ids];
  return out;
}

/**
 * Adds the keys of a Dexie mutation range set to `into`. Returns false when the set holds a
 * real range (a bulk write or a clear), which calls for a full reload instead.
 */
export function collectKeys(tree: IntervalTree, into: Set<number>): boolean {
  const stack: IntervalTree[] = [tree];
  while (stack.length) {
    const node = stack.pop()!;
    if (!('from' in node)) continue;
    if (node.from !== node.to || typeof node.from !== 'number') return false;
    into.add(node.from);
    if (node.l) stack.push(node.l);
    if (node.r) stack.push(node.r);
  }
  return true;
}
