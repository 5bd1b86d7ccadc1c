// The shared state of one open memory: the database, the embedding model, the in-memory indexes
// (kept current from Dexie's storagemutated keys, from this or any other connection) and the
// helpers every tool uses.
import Dexie from 'dexie';
import type { IntervalTree, ObservabilitySet } from 'dexie';
import type { Embedder, ModelInfo } from '../embeddings/types';
import { CHUNK_TABLE, DEFAULT_DB_NAME, ENTRY_TABLE, MemoryDB, isQuotaError } from './db';
import { EntryIndex, changedPaths, entrySummary } from './entry-index';
import { parsePath } from './paths';
import { SemanticIndex } from './semantic-index';
import { MIN_RELEVANCE } from './ranking';
import { dot } from './scoring';
import { searchChunkIndex } from './search';
import { countSentenceTokens } from './token-count';
import { contentText, pathWords } from './text';
import type {
  ChangedKeys,
  Chunk,
  ChunkView,
  EntrySummary,
  ContextChunk,
  HistoryRow,
  JsonValue,
  MemoryEntry,
  NotFoundResult,
  OpenMemoryOptions,
  ToolError,
} from './types';
import { errorText, isToolError, toolError } from './validate';

export type Result<T> = T | ToolError;

const SNAPSHOT_CANDIDATES = 50;
/**
 * Most entry paths one change report lists; beyond, the page loads the index again (a report
 * as long as the index would cost as much, docs/design.md "Change notifications").
 */
export const MAX_ENTRY_CHANGES = 500;
/** Turns before the save that a snapshot keeps first (the exchange that led to it). */
const SNAPSHOT_RECENT_TURNS = 2;
/** Chunks read to find those turns. */
const SNAPSHOT_RECENT_CHUNKS = 32;

export interface StoreState {
  /** Conversation of the latest recordTurn: the default for context snapshots. */
  lastConversationId: number | undefined;
  countTokens: ((text: string) => number | Promise<number>) | null;
  closed: boolean;
}

export type StoreContext = ReturnType<typeof createStoreContext>;

export function createStoreContext(options: OpenMemoryOptions) {
  const name = options.name ?? DEFAULT_DB_NAME;
  const embedder: Embedder = options.embedder;
  const now = options.now ?? Date.now;
  const db = new MemoryDB(name);

  let readyModel: ModelInfo | undefined;
  let modelPromise: Promise<ModelInfo> | null = null;
  let entryIndex: EntryIndex | null = null;
  let semanticIndex: SemanticIndex | null = null;
  const state: StoreState = { lastConversationId: undefined, countTokens: null, closed: false };

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

  // ---- model and indexes -------------------------------------------------------------------

  async function model(): Promise<Result<ModelInfo>> {
    try {
      modelPromise ??= embedder.ready();
      readyModel = await modelPromise;
      return readyModel;
    } catch (e) {
      modelPromise = null; // try again next time: the hub may come back
      return toolError(
        'MODEL_UNAVAILABLE',
        `The embedding model could not be loaded: ${errorText(e)}`,
      );
    }
  }

  async function embed(
    texts: string[],
  ): Promise<Result<{ info: ModelInfo; vectors: Float32Array[] }>> {
    const info = await model();
    if (isToolError(info)) return info;
    try {
      const vectors = await embedder.embed(texts);
      if (vectors.length !== texts.length || vectors.some((v) => v.length !== info.dims)) {
        return toolError(
          'MODEL_UNAVAILABLE',
          'The embedding model returned vectors of the wrong shape',
        );
      }
      return { info, vectors };
    } catch (e) {
      return toolError('MODEL_UNAVAILABLE', `The embedding model failed: ${errorText(e)}`);
    }
  }

  /** The entry index for the active model (tree only when no model loads), brought up to date. */
  /**
   * The entry index, brought up to date. With `waitForModel: false` (the explorer's tree and
   * counts) it does not wait for a model still downloading: it serves the tree without vectors
   * meanwhile, and the next call after the model is ready rebuilds it with them.
   */
  function entries({ waitForModel = true } = {}): Promise<EntryIndex> {
    const sync = () => syncEntries(waitForModel);
    const next = entrySync.then(sync, sync);
    entrySync = next.catch(() => undefined);
    return next;
  }
  let entrySync: Promise<unknown> = Promise.resolve();

  async function syncEntries(waitForModel: boolean): Promise<EntryIndex> {
    let info: Result<ModelInfo>;
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

  /** The semantic index of the active model, brought up to date. */
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
      const fresh = new SemanticIndex(db, info.id, info.dims, options.vectorIndex);
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

  /**
   * The entries whose summary changed since the last call, once the index has taken in every
   * write noted so far; undefined when it cannot say (then the page loads the whole index).
   */
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

  // ---- shared helpers ------------------------------------------------------------------------

  /** Runs a tool body, turning anything thrown into a ToolError (nothing reaches the caller). */
  async function guard<T>(body: () => Promise<T>): Promise<T | ToolError> {
    if (state.closed) return toolError('INTERNAL_ERROR', 'This memory has been closed');
    try {
      return await body();
    } catch (e) {
      if (isQuotaError(e)) {
        return toolError(
          'STORAGE_FULL',
          'Browser storage is full; nothing was written. Delete or export old memories, or allow more storage.',
        );
      }
      return toolError(
        'INTERNAL_ERROR',
        `Memory storage failed; nothing was written: ${errorText(e)}`,
      );
    }
  }

  function pathArg(value: unknown, allowRoot = false, name = 'path'): Result<string> {
    const p = parsePath(value, { allowRoot });
    return p.ok
      ? p.path
      : toolError('INVALID_PATH', name === 'path' ? p.message : `${name}: ${p.message}`);
  }

  function entryText(path: string, content: JsonValue): string {
    return `${pathWords(path)}. ${contentText(content)}`;
  }

  async function notFound(path: string): Promise<NotFoundResult> {
    const idx = await entries();
    const children = idx.children(path).length;
    if (children > 0) {
      return {
        status: 'NOT_FOUND',
        path,
        isHeading: true,
        children,
        message: `"${path}" is a heading with ${children} ${children === 1 ? 'child' : 'children'}, not an entry. Call queryMemoryHeading("${path}") to see them.`,
      };
    }
    return {
      status: 'NOT_FOUND',
      path,
      message: `Nothing is saved at "${path}". Call listMemory to see what exists.`,
    };
  }

  function chunkView(c: ContextChunk): ChunkView {
    return { role: c.role, text: c.text, similarity: c.similarity };
  }

  function withoutId(row: MemoryEntry): Omit<MemoryEntry, 'id'> {
    const { id: _id, ...rest } = row;
    return rest;
  }

  function historyRow(row: MemoryEntry, reason: HistoryRow['reason'], at: Date): HistoryRow {
    return { path: row.path, version: row.version, reason, replaced: at, entry: withoutId(row) };
  }

  /** Our own writes are applied to the indexes before the next read, events or not. */
  function noteWrite(ids: Iterable<number | undefined>) {
    for (const id of ids) if (id !== undefined) pending.entries.add(id);
  }

  function noteChunkWrite(ids: Iterable<number | undefined>) {
    for (const id of ids) if (id !== undefined) pending.chunks.add(id);
  }

  /** Token counts of sentences, a few requests to the server's tokenizer for all of them. */
  function tokensOfSentences(sentences: readonly string[]): Promise<number[]> {
    return countSentenceTokens(sentences, state.countTokens);
  }

  /**
   * Context snapshot (docs/search.md): why the entry was saved. First the turns just before the
   * save (the exchange that led to it), within half the budget; then the chunks of the whole
   * conversation most relevant to the entry, by the one ranking function, above
   * MIN_RELEVANCE. Stored in conversation order.
   */
  async function snapshot(
    info: ModelInfo,
    conversationId: number | undefined,
    query: { text: string; vector: Float32Array },
    budget: number,
  ): Promise<{ chunks: ContextChunk[]; used: number }> {
    if (conversationId === undefined || budget <= 0) return { chunks: [], used: 0 };
    const idx = await chunksIndex(info);
    const taken = new Map<number, ContextChunk>();
    let used = 0;
    const take = (row: Chunk, similarity: number, limit: number): boolean => {
      if (row.id === undefined || taken.has(row.id) || row.tokenCount > limit - used) return false;
      used += row.tokenCount;
      taken.set(row.id, {
        turn_id: row.turnId,
        sentence_id: row.sentenceId,
        role: row.role,
        text: row.text,
        embedding: row.embedding,
        similarity: Math.round(similarity * 1000) / 1000,
        tokenCount: row.tokenCount,
      });
      return true;
    };
    const cosine = (row: Chunk) =>
      row.embedding.length === query.vector.length ? dot(query.vector, row.embedding) : 0;

    // 1. The latest turns, newest first, whole turns only, within half the budget.
    const recent = await db.chunks
      .where('conversationId')
      .equals(conversationId)
      .reverse()
      .limit(SNAPSHOT_RECENT_CHUNKS)
      .toArray();
    const turns: Chunk[][] = [];
    for (const row of recent) {
      if (row.model !== info.id) continue;
      const last = turns[turns.length - 1];
      if (last && last[0].turnId === row.turnId) last.unshift(row);
      else if (turns.length < SNAPSHOT_RECENT_TURNS) turns.push([row]);
    }
    const half = Math.floor(budget / 2);
    for (const turn of turns) {
      const cost = turn.reduce((n, r) => n + r.tokenCount, 0);
      if (cost > half - used) break;
      for (const row of turn) take(row, cosine(row), half);
    }

    // 2. The most relevant chunks of the conversation.
    const hits = await searchChunkIndex(
      db.chunks,
      idx,
      conversationId,
      { text: query.text, vector: query.vector, info },
      SNAPSHOT_CANDIDATES,
      0,
      now(),
    );
    for (const hit of hits) {
      if (hit.match < MIN_RELEVANCE) continue;
      take(hit.row, hit.similarity, budget);
    }
    // Stored in conversation order, so a reader sees the exchange as it happened.
    const chunks = [...taken.values()].sort(
      (a, b) => a.turn_id - b.turn_id || a.sentence_id - b.sentence_id,
    );
    return { chunks, used };
  }

  function close(): void {
    if (state.closed) return;
    state.closed = true;
    Dexie.on('storagemutated').unsubscribe(onMutated);
    db.close();
  }

  return {
    db,
    now,
    embedder,
    state,
    model,
    embed,
    entries,
    entryChanges,
    chunksIndex,
    guard,
    pathArg,
    entryText,
    notFound,
    chunkView,
    historyRow,
    noteWrite,
    noteChunkWrite,
    tokensOfSentences,
    snapshot,
    close,
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
