// The memory tools (SPEC §4) over Dexie: validation, context snapshots, ranking and history.
// Every method resolves to a result object; bad input and failures come back as ToolError and
// write nothing. Multi-row writes are single transactions.
import Dexie from 'dexie';
import type { IntervalTree, ObservabilitySet } from 'dexie';
import type { Embedder, ModelInfo } from '../embeddings/types';
import { CHUNK_TABLE, DEFAULT_DB_NAME, ENTRY_TABLE, MemoryDB, isQuotaError } from './db';
import { EntryIndex, type EntryRef } from './entry-index';
import { entriesToMarkdown, parseMarkdown, type PortableEntry } from './markdown';
import { descendantRange, headingOf, parentOf, parsePath } from './paths';
import { blend, dot, dotRow, maxDotRows, recency } from './scoring';
import { SemanticIndex } from './semantic-index';
import { contentText, estimateTokens, pathWords, splitSentences } from './text';
import type {
  Chunk,
  ChunkHit,
  ChunkView,
  ContextChunk,
  DeleteResult,
  HeadingChild,
  HeadingResult,
  HistoryResult,
  HistoryRow,
  ImportResult,
  JsonValue,
  ListResult,
  MemoryApi,
  MemoryEntry,
  MoveResult,
  NotFoundResult,
  OpenMemoryOptions,
  QueryResult,
  RecordTurnResult,
  Role,
  SaveResult,
  ToolError,
  TreeNode,
} from './types';
import {
  boolArg,
  errorText,
  intArg,
  isToolError,
  numberArg,
  short,
  toolError,
  validateContent,
} from './validate';

const SNAPSHOT_CANDIDATES = 50;
/**
 * A chunk joins a context snapshot only if its similarity reaches this share of the model's
 * relevance threshold: filling the budget with unrelated sentences would make an unrelated
 * entry look relevant later (similarity counts its best chunk).
 */
const SNAPSHOT_FLOOR = 0.6;
const QUERY_CONTENT_CHARS = 200;
const MAX_RELEVANT_CHUNKS = 5;
const DEFAULT_LIST_CHARS = 8000;
const ROLES: readonly Role[] = ['user', 'assistant', 'system', 'tool'];

type Result<T> = T | ToolError;

export function createMemoryStore(options: OpenMemoryOptions): MemoryApi {
  const name = options.name ?? DEFAULT_DB_NAME;
  const embedder: Embedder = options.embedder;
  const now = options.now ?? Date.now;
  const db = new MemoryDB(name);

  let modelPromise: Promise<ModelInfo> | null = null;
  let entryIndex: EntryIndex | null = null;
  let semanticIndex: SemanticIndex | null = null;
  let lastConversationId: number | undefined;
  let countTokens: ((text: string) => number | Promise<number>) | null = null;
  let closed = false;

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

  // ---- model and indexes -------------------------------------------------------------------

  async function model(): Promise<Result<ModelInfo>> {
    try {
      modelPromise ??= embedder.ready();
      return await modelPromise;
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
  function entries(): Promise<EntryIndex> {
    const next = entrySync.then(syncEntries, syncEntries);
    entrySync = next.catch(() => undefined);
    return next;
  }
  let entrySync: Promise<unknown> = Promise.resolve();

  async function syncEntries(): Promise<EntryIndex> {
    const info = await model();
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
      const fresh = new SemanticIndex(db.chunks, info.id, info.dims);
      await fresh.load();
      semanticIndex = fresh;
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

  // ---- shared helpers ------------------------------------------------------------------------

  /** Runs a tool body, turning anything thrown into a ToolError (nothing reaches the caller). */
  async function guard<T>(body: () => Promise<T>): Promise<T | ToolError> {
    if (closed) return toolError('INTERNAL_ERROR', 'This memory has been closed');
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

  function noteWrite(ids: Iterable<number | undefined>) {
    for (const id of ids) if (id !== undefined) pending.entries.add(id);
  }

  async function tokensOf(text: string): Promise<number> {
    if (countTokens) {
      try {
        const n = await countTokens(text);
        if (Number.isFinite(n) && n >= 0) return Math.round(n);
      } catch {
        // the server's tokenizer is gone: fall back to the estimate
      }
    }
    return estimateTokens(text);
  }

  /** Context snapshot: the best chunks of a conversation for `query` within `budget` tokens. */
  async function snapshot(
    info: ModelInfo,
    conversationId: number | undefined,
    query: Float32Array,
    budget: number,
  ): Promise<{ chunks: ContextChunk[]; used: number }> {
    if (conversationId === undefined || budget <= 0) return { chunks: [], used: 0 };
    const idx = await chunksIndex(info);
    const hits = idx.search(conversationId, query, SNAPSHOT_CANDIDATES);
    const rows = await db.chunks.bulkGet(hits.map((h) => h.id));
    const taken: { chunk: ContextChunk; order: [number, number] }[] = [];
    let used = 0;
    const floor = info.threshold * SNAPSHOT_FLOOR;
    hits.forEach((hit, i) => {
      const row = rows[i];
      if (!row || hit.similarity < floor || row.tokenCount > budget - used) return;
      used += row.tokenCount;
      taken.push({
        order: [row.turnId, row.sentenceId],
        chunk: {
          turn_id: row.turnId,
          sentence_id: row.sentenceId,
          role: row.role,
          text: row.text,
          embedding: row.embedding,
          similarity: hit.similarity,
          tokenCount: row.tokenCount,
        },
      });
    });
    // Stored in conversation order, so a reader sees the exchange as it happened.
    taken.sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1]);
    return { chunks: taken.map((t) => t.chunk), used };
  }

  // ---- the tools -----------------------------------------------------------------------------

  async function saveMemory(
    pathIn: unknown,
    contentIn: unknown,
    contextTokensIn?: unknown,
    optionsIn?: unknown,
  ): Promise<SaveResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const content = validateContent(contentIn);
      if (isToolError(content)) return content;
      const budget = intArg(contextTokensIn, 'contextTokens', 1000, 0, 4000);
      if (isToolError(budget)) return budget;
      let conversationId = lastConversationId;
      if (optionsIn !== undefined && optionsIn !== null) {
        if (typeof optionsIn !== 'object') {
          return toolError(
            'INVALID_ARGUMENT',
            `options must be an object like { conversationId: 3 }, got ${short(optionsIn)}`,
          );
        }
        const cid = (optionsIn as { conversationId?: unknown }).conversationId;
        if (cid !== undefined) {
          const checked = intArg(cid, 'conversationId', 0, 0, Number.MAX_SAFE_INTEGER);
          if (isToolError(checked)) return checked;
          conversationId = checked;
        }
      }

      const queryText = `${headingOf(path)} ${content.json.slice(0, QUERY_CONTENT_CHARS)}`;
      const emb = await embed([queryText, entryText(path, content.value)]);
      if (isToolError(emb)) return emb;
      const { chunks, used } = await snapshot(emb.info, conversationId, emb.vectors[0], budget);

      const at = new Date(now());
      const written = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const existing = await db.structured_memory.where('path').equals(path).first();
        const row: MemoryEntry = {
          path,
          heading: headingOf(path),
          parent_path: parentOf(path),
          content: content.value,
          contextChunks: chunks,
          embedding: emb.vectors[1],
          model: emb.info.id,
          created: existing?.created ?? at,
          modified: at,
          accessed: existing?.accessed ?? at,
          version: existing ? existing.version + 1 : 1,
        };
        if (existing) {
          await db.history.add(historyRow(existing, 'update', at));
          row.id = existing.id;
          await db.structured_memory.put(row);
        } else {
          row.id = await db.structured_memory.add(row);
        }
        return row;
      });
      noteWrite([written.id]);
      return {
        status: 'SUCCESS' as const,
        path,
        version: written.version,
        contextTokens: used,
        chunksStored: chunks.length,
      };
    });
  }

  async function queryMemory(pathIn: unknown): Promise<QueryResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const row = await db.structured_memory.where('path').equals(path).first();
      if (!row || row.id === undefined) return notFound(path);
      const accessed = new Date(now());
      await db.structured_memory.update(row.id, { accessed });
      return {
        status: 'SUCCESS' as const,
        path,
        content: row.content,
        contextChunks: row.contextChunks.map(chunkView),
        metadata: { created: row.created, modified: row.modified, accessed, version: row.version },
      };
    });
  }

  async function queryMemoryHeading(
    pathIn: unknown,
    queryIn?: unknown,
    biasIn?: unknown,
    optionsIn?: unknown,
  ): Promise<HeadingResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn, true);
      if (isToolError(path)) return path;
      if (queryIn !== undefined && queryIn !== null && typeof queryIn !== 'string') {
        return toolError(
          'INVALID_ARGUMENT',
          `query must be text (a question or keywords), got ${short(queryIn)}`,
        );
      }
      const query = typeof queryIn === 'string' && queryIn.trim() ? queryIn.trim() : undefined;
      const bias = numberArg(biasIn, 'recencyBias', 0.3, 0, 1);
      if (isToolError(bias)) return bias;
      const limitIn =
        optionsIn && typeof optionsIn === 'object'
          ? (optionsIn as { limit?: unknown }).limit
          : undefined;
      const limit = intArg(limitIn, 'limit', 10, 1, 1000);
      if (isToolError(limit)) return limit;

      let queryVec: Float32Array | undefined;
      let info: ModelInfo | undefined;
      if (query !== undefined) {
        const emb = await embed([query]);
        if (isToolError(emb)) return emb;
        queryVec = emb.vectors[0];
        info = emb.info;
      }
      const idx = await entries();
      const childPaths = idx.children(path);
      if (!childPaths.length) {
        const self = idx.entry(path);
        return {
          status: 'NOT_FOUND' as const,
          path,
          message: self
            ? `"${path}" is an entry with no children. Call queryMemory("${path}") to read it.`
            : path === ''
              ? 'Memory is empty: nothing has been saved yet.'
              : `Nothing is saved at or below "${path}". Call listMemory to see what exists.`,
        };
      }
      const at = now();

      interface Scored {
        path: string;
        entry?: EntryRef;
        descendants: number;
        modified: number;
        best?: EntryRef;
        similarity: number;
        recency: number;
        score: number;
      }
      const scoreEntry = (ref: EntryRef) => {
        const sim = queryVec ? similarityOf(idx, ref, queryVec) : 0;
        const rec = recency(ref.modified, at);
        return { sim, rec, score: blend(sim, rec, bias) };
      };
      const scored: Scored[] = childPaths.map((p) => {
        const entry = idx.entry(p);
        const below = idx.descendants(p);
        let modified = entry?.modified ?? -Infinity;
        for (const d of below) modified = Math.max(modified, d.modified);
        if (entry) {
          const s = scoreEntry(entry);
          return {
            path: p,
            entry,
            descendants: below.length,
            modified,
            similarity: s.sim,
            recency: s.rec,
            score: s.score,
          };
        }
        let best: Scored | undefined;
        for (const d of below) {
          const s = scoreEntry(d);
          if (!best || s.score > best.score) {
            best = {
              path: p,
              best: d,
              descendants: below.length,
              modified,
              similarity: s.sim,
              recency: s.rec,
              score: s.score,
            };
          }
        }
        return (
          best ?? { path: p, descendants: 0, modified, similarity: 0, recency: 0, score: -Infinity }
        );
      });
      if (query) scored.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
      else scored.sort((a, b) => b.modified - a.modified || a.path.localeCompare(b.path));
      const shown = scored.slice(0, limit);

      const needIds = shown
        .map((s) => (s.entry ?? s.best)?.id)
        .filter((id): id is number => id !== undefined);
      const rows = new Map<number, MemoryEntry>();
      (await db.structured_memory.bulkGet(needIds)).forEach(
        (r) => r?.id !== undefined && rows.set(r.id, r),
      );
      const threshold = info?.threshold ?? 1;
      const relevant = (row: MemoryEntry | undefined): ChunkView[] => {
        if (!row || !queryVec || row.model !== info?.id) return [];
        return row.contextChunks
          .map((c) => ({ ...chunkView(c), similarity: dot(queryVec!, c.embedding) }))
          .filter((c) => c.similarity > threshold)
          .sort((a, b) => b.similarity - a.similarity)
          .slice(0, MAX_RELEVANT_CHUNKS);
      };
      const scoreFields = (s: Scored) =>
        query ? { score: s.score, similarity: s.similarity, recency: s.recency } : {};

      const children: HeadingChild[] = shown.map((s) => {
        if (s.entry) {
          const row = rows.get(s.entry.id);
          return {
            path: s.path,
            heading: headingOf(s.path),
            content: row?.content ?? null,
            modified: new Date(s.entry.modified),
            ...(s.descendants ? { descendants: s.descendants } : {}),
            ...scoreFields(s),
            ...(query ? { relevantChunks: relevant(row) } : {}),
          };
        }
        const bestRow = s.best ? rows.get(s.best.id) : undefined;
        return {
          path: s.path,
          heading: headingOf(s.path),
          isHeading: true as const,
          descendants: s.descendants,
          modified: new Date(s.modified),
          ...scoreFields(s),
          ...(query && s.best
            ? {
                bestMatch: {
                  path: s.best.path,
                  heading: headingOf(s.best.path),
                  content: bestRow?.content ?? null,
                  relevantChunks: relevant(bestRow),
                },
              }
            : {}),
        };
      });
      return {
        status: 'SUCCESS' as const,
        path,
        ...(query ? { query } : {}),
        children,
        totalChildren: childPaths.length,
      };
    });
  }

  async function listMemory(
    rootIn?: unknown,
    optionsIn?: unknown,
  ): Promise<ListResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const root = pathArg(rootIn ?? '', true, 'rootPath');
      if (isToolError(root)) return root;
      const capIn =
        optionsIn && typeof optionsIn === 'object'
          ? (optionsIn as { maxChars?: unknown }).maxChars
          : undefined;
      const cap = intArg(capIn, 'maxChars', DEFAULT_LIST_CHARS, 100, 10_000_000);
      if (isToolError(cap)) return cap;
      const idx = await entries();
      const refs = idx.subtree(root);
      if (!refs.length) {
        if (root === '') return { status: 'SUCCESS' as const, path: '', tree: {}, totalEntries: 0 };
        return notFound(root);
      }
      const rows = (await db.structured_memory.bulkGet(refs.map((r) => r.id)))
        .filter((r): r is MemoryEntry => !!r)
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      // Branches are the objects we create; leaves may be objects too (their content).
      const branchMark = new WeakSet<object>();
      const isBranch = (o: object) => branchMark.has(o);
      const build = (leaf: (c: JsonValue) => JsonValue, count = rows.length): TreeNode => {
        const tree: TreeNode = {};
        const hasChildren = new Set(rows.map((r) => parentOf(r.path)));
        for (const row of rows.slice(0, count)) {
          const rel =
            root === '' ? row.path : row.path === root ? '' : row.path.slice(root.length + 1);
          const segs = rel === '' ? [] : rel.split('/');
          let node = tree;
          for (const seg of segs.slice(0, -1)) {
            const next = node[seg];
            if (next && typeof next === 'object' && !Array.isArray(next) && isBranch(next)) {
              node = next as TreeNode;
            } else {
              const branch: TreeNode = {};
              branchMark.add(branch);
              if (next !== undefined) branch._content = next; // should not happen: parents sort first
              node[seg] = branch;
              node = branch;
            }
          }
          const last = segs[segs.length - 1];
          const value = leaf(row.content);
          if (last === undefined) {
            tree._content = value;
          } else if (hasChildren.has(row.path)) {
            const branch: TreeNode = { _content: value };
            branchMark.add(branch);
            node[last] = branch;
          } else {
            node[last] = value;
          }
        }
        return tree;
      };
      let tree = build((c) => c);
      if (JSON.stringify(tree).length <= cap) {
        return { status: 'SUCCESS' as const, path: root, tree, totalEntries: rows.length };
      }
      for (const n of [120, 48, 16]) {
        tree = build((c) => preview(c, n));
        if (JSON.stringify(tree).length <= cap) {
          return {
            status: 'SUCCESS' as const,
            path: root,
            tree,
            totalEntries: rows.length,
            truncated: true,
          };
        }
      }
      // Still too big: keep as many entries (in path order) as fit, with short previews.
      let lo = 0;
      let hi = rows.length;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (JSON.stringify(build((c) => preview(c, 16), mid)).length <= cap) lo = mid;
        else hi = mid - 1;
      }
      return {
        status: 'SUCCESS' as const,
        path: root,
        tree: build((c) => preview(c, 16), lo),
        totalEntries: rows.length,
        truncated: true,
        omittedEntries: rows.length - lo,
      };
    });
  }

  async function deleteMemory(
    pathIn: unknown,
    recursiveIn?: unknown,
  ): Promise<DeleteResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const recursive = boolArg(recursiveIn, 'recursive', false);
      if (isToolError(recursive)) return recursive;
      const [lo, hi] = descendantRange(path);
      const outcome = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const self = await db.structured_memory.where('path').equals(path).first();
        const below = await db.structured_memory
          .where('path')
          .between(lo, hi, true, false)
          .toArray();
        if (!self && !below.length) return 'missing' as const;
        if (below.length && !recursive) return { hasChildren: below.length };
        const rows = self ? [self, ...below] : below;
        const at = new Date(now());
        await db.history.bulkAdd(rows.map((r) => historyRow(r, 'delete', at)));
        await db.structured_memory.bulkDelete(rows.map((r) => r.id!));
        noteWrite(rows.map((r) => r.id));
        return { deleted: rows.length };
      });
      if (outcome === 'missing') return notFound(path);
      if ('hasChildren' in outcome) {
        const n = outcome.hasChildren;
        return toolError(
          'HAS_CHILDREN',
          `"${path}" has ${n} ${n === 1 ? 'entry' : 'entries'} below it; nothing was deleted. Call deleteMemory("${path}", true) to delete them all.`,
        );
      }
      return { status: 'SUCCESS' as const, path, deleted: outcome.deleted };
    });
  }

  async function updateMemory(
    pathIn: unknown,
    patchIn: unknown,
  ): Promise<SaveResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const patch = validateContent(patchIn, 'patch');
      if (isToolError(patch)) return patch;
      if (!isObject(patch.value)) {
        return toolError(
          'INVALID_ARGUMENT',
          'patch must be a JSON object (an RFC 7396 merge patch; null removes a key)',
        );
      }
      const current = await db.structured_memory.where('path').equals(path).first();
      if (!current) return notFound(path);
      if (!isObject(current.content)) {
        return toolError(
          'INVALID_CONTENT',
          `"${path}" holds ${Array.isArray(current.content) ? 'an array' : typeof current.content}, not an object; use saveMemory to replace it`,
        );
      }
      const merged = validateContent(mergePatch(current.content, patch.value));
      if (isToolError(merged)) return merged;
      const emb = await embed([entryText(path, merged.value)]);
      if (isToolError(emb)) return emb;
      const at = new Date(now());
      const written = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const fresh = await db.structured_memory.where('path').equals(path).first();
        if (!fresh) return null;
        // Merge onto the row as it is now, so a concurrent write is not lost.
        const content =
          fresh.version === current.version ? merged.value : mergePatch(fresh.content, patch.value);
        await db.history.add(historyRow(fresh, 'update', at));
        const row: MemoryEntry = {
          ...fresh,
          content,
          embedding: emb.vectors[0],
          model: emb.info.id,
          modified: at,
          version: fresh.version + 1,
        };
        await db.structured_memory.put(row);
        return row;
      });
      if (!written) return notFound(path);
      noteWrite([written.id]);
      return {
        status: 'SUCCESS' as const,
        path,
        version: written.version,
        contextTokens: written.contextChunks.reduce((s, c) => s + c.tokenCount, 0),
        chunksStored: written.contextChunks.length,
      };
    });
  }

  async function moveMemory(
    fromIn: unknown,
    toIn: unknown,
  ): Promise<MoveResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const from = pathArg(fromIn, false, 'from');
      if (isToolError(from)) return from;
      const to = pathArg(toIn, false, 'to');
      if (isToolError(to)) return to;
      if (from === to) return toolError('INVALID_ARGUMENT', 'from and to are the same path');
      if (to.startsWith(from + '/')) {
        return toolError(
          'INVALID_ARGUMENT',
          `cannot move "${from}" into its own subtree ("${to}")`,
        );
      }
      const [lo, hi] = descendantRange(from);
      const [tlo, thi] = descendantRange(to);
      const readRows = async () => {
        const self = await db.structured_memory.where('path').equals(from).first();
        const below = await db.structured_memory
          .where('path')
          .between(lo, hi, true, false)
          .toArray();
        return self ? [self, ...below] : below;
      };
      const before = await readRows();
      if (!before.length) return notFound(from);
      const renamed = (p: string) => to + p.slice(from.length);
      for (const r of before) {
        if (renamed(r.path).length > 512 || !parsePath(renamed(r.path)).ok) {
          return toolError(
            'INVALID_PATH',
            `moving would make an invalid path: ${parsePath(renamed(r.path)).ok ? 'too long' : renamed(r.path)}`,
          );
        }
      }
      const emb = await embed(before.map((r) => entryText(renamed(r.path), r.content)));
      if (isToolError(emb)) return emb;
      const vectors = new Map(before.map((r, i) => [r.id, emb.vectors[i]]));
      const at = new Date(now());
      const outcome = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const taken =
          (await db.structured_memory.where('path').equals(to).count()) +
          (await db.structured_memory.where('path').between(tlo, thi, true, false).count());
        if (taken) return 'exists' as const;
        const rows = await readRows();
        if (!rows.length) return 'missing' as const;
        await db.history.bulkAdd(rows.map((r) => historyRow(r, 'move', at)));
        await db.structured_memory.bulkDelete(rows.map((r) => r.id!));
        const moved: MemoryEntry[] = rows.map((r) => {
          const p = renamed(r.path);
          const { id: _id, ...rest } = r;
          const vector = vectors.get(r.id);
          return {
            ...rest,
            path: p,
            heading: headingOf(p),
            parent_path: parentOf(p),
            embedding: vector ?? r.embedding,
            model: vector ? emb.info.id : r.model,
            modified: at,
            version: r.version + 1,
          };
        });
        const ids = await db.structured_memory.bulkAdd(moved, { allKeys: true });
        noteWrite([...rows.map((r) => r.id), ...ids]);
        return moved.length;
      });
      if (outcome === 'exists') {
        return toolError(
          'INVALID_ARGUMENT',
          `"${to}" already exists; choose a new path or delete it first`,
        );
      }
      if (outcome === 'missing') return notFound(from);
      return { status: 'SUCCESS' as const, from, to, moved: outcome };
    });
  }

  async function getHistory(pathIn: unknown): Promise<HistoryResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const rows = await db.history.where('path').equals(path).toArray();
      rows.sort(
        (a, b) =>
          b.version - a.version || b.replaced.getTime() - a.replaced.getTime() || b.id! - a.id!,
      );
      return {
        status: 'SUCCESS' as const,
        path,
        versions: rows.map((r) => ({
          id: r.id!,
          version: r.version,
          reason: r.reason,
          replaced: r.replaced,
          content: r.entry.content,
          modified: r.entry.modified,
        })),
      };
    });
  }

  async function restoreMemory(
    historyIdIn: unknown,
  ): Promise<SaveResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const historyId = intArg(historyIdIn, 'historyId', -1, 1, Number.MAX_SAFE_INTEGER);
      if (isToolError(historyId)) return historyId;
      if (historyId < 0)
        return toolError('INVALID_ARGUMENT', 'historyId is required (from getHistory)');
      const hist = await db.history.get(historyId);
      if (!hist) {
        return {
          status: 'NOT_FOUND' as const,
          path: '',
          message: `No history version with id ${historyId}`,
        };
      }
      const emb = await embed([entryText(hist.path, hist.entry.content)]);
      if (isToolError(emb)) return emb;
      const at = new Date(now());
      const row = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const current = await db.structured_memory.where('path').equals(hist.path).first();
        const older = await db.history.where('path').equals(hist.path).toArray();
        const top = Math.max(current?.version ?? 0, ...older.map((h) => h.version));
        if (current) await db.history.add(historyRow(current, 'restore', at));
        const restored: MemoryEntry = {
          ...hist.entry,
          embedding: emb.vectors[0],
          model: emb.info.id,
          created: current?.created ?? hist.entry.created,
          modified: at,
          accessed: current?.accessed ?? hist.entry.accessed,
          version: top + 1,
        };
        if (current) restored.id = current.id;
        restored.id = await db.structured_memory.put(restored);
        return restored;
      });
      noteWrite([row.id]);
      return {
        status: 'SUCCESS' as const,
        path: row.path,
        version: row.version,
        contextTokens: row.contextChunks.reduce((s, c) => s + c.tokenCount, 0),
        chunksStored: row.contextChunks.length,
      };
    });
  }

  async function recordTurn(turn: {
    conversationId: number;
    role: Role;
    text: string;
    turnId?: number;
  }): Promise<RecordTurnResult | ToolError> {
    return guard(async () => {
      if (!turn || typeof turn !== 'object')
        return toolError('INVALID_ARGUMENT', 'recordTurn needs { conversationId, role, text }');
      const conversationId = intArg(
        turn.conversationId,
        'conversationId',
        -1,
        0,
        Number.MAX_SAFE_INTEGER,
      );
      if (isToolError(conversationId)) return conversationId;
      if (conversationId < 0) return toolError('INVALID_ARGUMENT', 'conversationId is required');
      if (!ROLES.includes(turn.role)) {
        return toolError(
          'INVALID_ARGUMENT',
          `role must be one of ${ROLES.join(', ')}, got ${short(turn.role)}`,
        );
      }
      if (typeof turn.text !== 'string')
        return toolError('INVALID_ARGUMENT', `text must be a string, got ${short(turn.text)}`);
      const givenTurn = intArg(turn.turnId, 'turnId', -1, 1, Number.MAX_SAFE_INTEGER);
      if (isToolError(givenTurn)) return givenTurn;

      const sentences = splitSentences(turn.text);
      const counts = await Promise.all(sentences.map(tokensOf));
      let vectors: Float32Array[] = [];
      let modelId = '';
      let info: ModelInfo | undefined;
      if (sentences.length) {
        const emb = await embed(sentences);
        if (isToolError(emb)) return emb;
        vectors = emb.vectors;
        info = emb.info;
        modelId = emb.info.id;
      }
      const at = new Date(now());
      const { turnId, rows } = await db.transaction(
        'rw',
        db.messages,
        db.chunks,
        db.conversations,
        async () => {
          const conv = await db.conversations.get(conversationId);
          if (conv) await db.conversations.update(conversationId, { modified: at });
          else
            await db.conversations.put({
              id: conversationId,
              title: `Conversation ${conversationId}`,
              created: at,
              modified: at,
            });
          const turnId =
            givenTurn > 0
              ? givenTurn
              : await db.messages.add({
                  conversationId,
                  role: turn.role,
                  text: turn.text,
                  time: at,
                });
          const rows: Chunk[] = sentences.map((text, i) => ({
            conversationId,
            turnId,
            sentenceId: i,
            role: turn.role,
            text,
            tokenCount: counts[i],
            embedding: vectors[i],
            model: modelId,
            time: at,
          }));
          if (rows.length) {
            const ids = await db.chunks.bulkAdd(rows, { allKeys: true });
            rows.forEach((r, i) => (r.id = ids[i]));
          }
          return { turnId, rows };
        },
      );
      lastConversationId = conversationId;
      if (info && semanticIndex) (await chunksIndex(info)).addRows(rows);
      return { status: 'SUCCESS' as const, turnId, chunks: rows.length };
    });
  }

  async function searchChunks(conversationId: number, query: string, k = 10): Promise<ChunkHit[]> {
    if (typeof query !== 'string' || !query.trim() || typeof conversationId !== 'number') return [];
    const emb = await embed([query]);
    if (isToolError(emb)) return [];
    const idx = await chunksIndex(emb.info);
    const hits = idx.search(
      conversationId,
      emb.vectors[0],
      Math.max(1, Math.min(1000, Math.floor(k) || 10)),
    );
    const rows = await db.chunks.bulkGet(hits.map((h) => h.id));
    return hits.flatMap((h, i) => {
      const row = rows[i];
      if (!row) return [];
      const { embedding: _e, ...chunk } = row;
      return [{ chunk, similarity: h.similarity }];
    });
  }

  async function exportMarkdown(rootIn?: unknown): Promise<string | ToolError> {
    return guard(async () => {
      const root = pathArg(rootIn ?? '', true, 'rootPath');
      if (isToolError(root)) return root;
      let rows: MemoryEntry[];
      if (root === '') rows = await db.structured_memory.orderBy('path').toArray();
      else {
        const [lo, hi] = descendantRange(root);
        const self = await db.structured_memory.where('path').equals(root).toArray();
        rows = [
          ...self,
          ...(await db.structured_memory.where('path').between(lo, hi, true, false).toArray()),
        ];
        if (!rows.length) return toolError('NOT_FOUND', `Nothing is saved at or below "${root}"`);
      }
      const portable: PortableEntry[] = rows.map((r) => ({
        path: r.path,
        content: r.content,
        contextChunks: r.contextChunks.map((c) => ({
          turn_id: c.turn_id,
          sentence_id: c.sentence_id,
          role: c.role,
          text: c.text,
          similarity: c.similarity,
          tokenCount: c.tokenCount,
        })),
        version: r.version,
        created: r.created,
        modified: r.modified,
        accessed: r.accessed,
      }));
      return entriesToMarkdown(portable, { exported: new Date(now()) });
    });
  }

  async function importMarkdown(textIn: unknown): Promise<ImportResult | ToolError> {
    return guard(async () => {
      if (typeof textIn !== 'string')
        return toolError(
          'INVALID_ARGUMENT',
          `the Markdown file must be text, got ${short(textIn)}`,
        );
      const parsed = parseMarkdown(textIn);
      if (!parsed.ok) {
        const shown = parsed.errors.slice(0, 10).join('; ');
        const more = parsed.errors.length > 10 ? ` (and ${parsed.errors.length - 10} more)` : '';
        return toolError(
          'INVALID_CONTENT',
          `The file was not imported; nothing changed. ${shown}${more}`,
        );
      }
      const list = parsed.entries;
      if (!list.length) return { status: 'SUCCESS' as const, imported: 0, created: 0, updated: 0 };
      const texts = list.flatMap((e) => [
        entryText(e.path, e.content),
        ...e.contextChunks.map((c) => c.text),
      ]);
      const emb = await embed(texts);
      if (isToolError(emb)) return emb;
      let at = 0;
      const rows: MemoryEntry[] = list.map((e) => {
        const embedding = emb.vectors[at++];
        return {
          path: e.path,
          heading: headingOf(e.path),
          parent_path: parentOf(e.path),
          content: e.content,
          contextChunks: e.contextChunks.map((c) => ({ ...c, embedding: emb.vectors[at++] })),
          embedding,
          model: emb.info.id,
          created: e.created,
          modified: e.modified,
          accessed: e.accessed,
          version: e.version,
        };
      });
      const when = new Date(now());
      const counts = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const existing = await db.structured_memory
          .where('path')
          .anyOf(rows.map((r) => r.path))
          .toArray();
        const byPath = new Map(existing.map((r) => [r.path, r]));
        const history: HistoryRow[] = [];
        for (const row of rows) {
          const old = byPath.get(row.path);
          if (!old) continue;
          history.push(historyRow(old, 'import', when));
          row.id = old.id;
          row.version = Math.max(row.version, old.version + 1);
        }
        if (history.length) await db.history.bulkAdd(history);
        const ids = await db.structured_memory.bulkPut(rows, { allKeys: true });
        noteWrite(ids);
        return { created: rows.length - history.length, updated: history.length };
      });
      return { status: 'SUCCESS' as const, imported: rows.length, ...counts };
    });
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    Dexie.on('storagemutated').unsubscribe(onMutated);
    db.close();
  }

  return {
    saveMemory,
    queryMemory,
    queryMemoryHeading,
    listMemory,
    deleteMemory,
    updateMemory,
    moveMemory,
    getHistory,
    restoreMemory,
    recordTurn,
    searchChunks,
    exportMarkdown,
    importMarkdown,
    setTokenCounter: (fn) => {
      countTokens = typeof fn === 'function' ? fn : null;
    },
    modelInfo: async () => {
      modelPromise ??= embedder.ready();
      return modelPromise;
    },
    close,
  };
}

/** `max(cos(query, entry), max cos(query, chunk))`; 0 for rows of another model. */
function similarityOf(idx: EntryIndex, ref: EntryRef, q: Float32Array): number {
  if (ref.vectorRow < 0 || !idx.entryVectors || !idx.chunkVectors) return 0;
  const own = dotRow(q, idx.entryVectors.buffer, ref.vectorRow, idx.dims);
  const chunks = maxDotRows(q, idx.chunkVectors.buffer, ref.chunkRow, ref.chunkCount, idx.dims);
  return Math.max(own, chunks);
}

/**
 * Adds the keys of a Dexie mutation range set to `into`. Returns false when the set holds a
 * real range (a bulk write or a clear), which calls for a full reload instead.
 */
function collectKeys(tree: IntervalTree, into: Set<number>): boolean {
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

function isObject(v: JsonValue): v is { [k: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7396 JSON merge patch. */
export function mergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!isObject(patch)) return patch;
  const out: { [k: string]: JsonValue } = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k] ?? null, v);
  }
  return out;
}

function preview(content: JsonValue, n: number): string {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  return text.length <= n ? text : text.slice(0, n) + '…';
}
