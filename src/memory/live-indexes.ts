// The engine's two in-memory indexes (docs/design.md, "Architecture"): the entry index and the
// semantic index, each rebuilt from the database and kept current from the primary keys that
// writes touched, as Dexie's storagemutated reports them (this connection's, other connections',
// other tabs'), applied before the next read (docs/design.md, "Change notifications").
import Dexie from 'dexie';
import type { IntervalTree, ObservabilitySet } from 'dexie';
import type { ModelInfo } from '../embeddings/types';
import { CHUNK_TABLE, ENTRY_TABLE, type MemoryDB } from './db';
import type { ModelAccess, Result } from './embedding-model';
import { EntryIndex } from './entry-index';
import { SemanticIndex } from './semantic-index';
import type { OpenMemoryOptions } from './types';
import { isToolError, toolError } from './validate';

export interface LiveIndexes {
  /**
   * The entry index, brought up to date. With `waitForModel: false` (the explorer's tree and
   * counts) it does not wait for a model still downloading: it serves the tree without vectors
   * meanwhile, and the next call after the model is ready rebuilds it with them.
   */
  entries(options?: { waitForModel?: boolean }): Promise<EntryIndex>;
  /** The semantic index of the active model, brought up to date. */
  chunksIndex(info: ModelInfo): Promise<SemanticIndex>;
  /** Our own writes are applied to the indexes before the next read, events or not. */
  noteWrite(ids: Iterable<number | undefined>): void;
  noteChunkWrite(ids: Iterable<number | undefined>): void;
  /** Stops listening for writes. */
  stop(): void;
}

/** Indexes over `db` (named `name`), for the model that `models` loads. */
export function createLiveIndexes(
  name: string,
  db: MemoryDB,
  models: ModelAccess,
  vectorIndex: OpenMemoryOptions['vectorIndex'],
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
  const prefix = `idb://${name}/`;
  const onMutated = (parts: ObservabilitySet) => {
    for (const [part, tree] of Object.entries(parts)) {
      if (!part.startsWith(prefix)) continue;
      const [table, index] = part.slice(prefix.length).split('/');
      if (index !== '' && index !== ':dels') continue;
      if (table === ENTRY_TABLE) {
        if (!collectKeys(tree, pending.entries)) pending.entriesAll = true;
      } else if (table === CHUNK_TABLE) {
        if (!collectKeys(tree, pending.chunks)) pending.chunksAll = true;
      }
    }
  };
  Dexie.on('storagemutated', onMutated);

  function entries({ waitForModel = true } = {}): Promise<EntryIndex> {
    const sync = () => syncEntries(waitForModel);
    const next = entrySync.then(sync, sync);
    entrySync = next.catch(() => undefined);
    return next;
  }
  let entrySync: Promise<unknown> = Promise.resolve();

  async function syncEntries(waitForModel: boolean): Promise<EntryIndex> {
    let info: Result<ModelInfo>;
    const readyModel = models.loaded();
    if (waitForModel || readyModel) info = readyModel ?? (await model());
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
      entryIndex = null;
      const fresh = new EntryIndex(
        db.structured_memory,
        modelId,
        isToolError(info) ? 0 : info.dims,
      );
      await fresh.load();
      entryIndex = fresh;
    }
    if (pending.entries.size) {
      const ids = [...pending.entries];
      pending.entries.clear();
      await entryIndex.refresh(ids);
    }
    return entryIndex;
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
      semanticIndex = null;
      const fresh = new SemanticIndex(db, info.id, info.dims, vectorIndex);
      await fresh.load();
      semanticIndex = fresh;
      // The full shard check runs after the index is in use; if it had to rebuild the shards,
      // the next use reloads (queued behind syncs already under way).
      fresh.verify().then(
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
      await semanticIndex.catchUp();
    }
    if (pending.chunks.size) {
      const ids = [...pending.chunks];
      pending.chunks.clear();
      await semanticIndex.refresh(ids);
    }
    return semanticIndex;
  }

  function noteWrite(ids: Iterable<number | undefined>) {
    for (const id of ids) if (id !== undefined) pending.entries.add(id);
  }

  function noteChunkWrite(ids: Iterable<number | undefined>) {
    for (const id of ids) if (id !== undefined) pending.chunks.add(id);
  }

  return {
    entries,
    chunksIndex,
    noteWrite,
    noteChunkWrite,
    stop: () => Dexie.on('storagemutated').unsubscribe(onMutated),
  };
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
