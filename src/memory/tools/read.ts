// Reading entries: queryMemory, queryMemoryHeading (similarity blended with recency) and listMemory.
import type { StoreContext } from '../context';
import { intArg, isToolError, numberArg, short, toolError } from '../validate';
import { headingOf, parentOf } from '../paths';
import { blend, dot, dotRow, maxDotRows, recency } from '../scoring';
import type {
  ChunkView,
  HeadingChild,
  HeadingResult,
  JsonValue,
  ListResult,
  MemoryEntry,
  NotFoundResult,
  OutlineNode,
  QueryResult,
  RecallHit,
  ToolError,
  TreeNode,
} from '../types';
import type { ModelInfo } from '../../embeddings/types';
import type { EntryIndex, EntryRef } from '../entry-index';

const MAX_RELEVANT_CHUNKS = 5;

const DEFAULT_LIST_CHARS = 8000;

export function readTools(ctx: StoreContext) {
  const { db, now, embed, entries, guard, pathArg, notFound, chunkView } = ctx;

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

  /** Top `depth` levels of the tree with entry counts (no row reads), for the prompt outline. */
  async function memoryOutline(depthIn: unknown = 2): Promise<OutlineNode[]> {
    const depth =
      typeof depthIn === 'number' && depthIn >= 1 && depthIn <= 4 ? Math.floor(depthIn) : 2;
    const idx = await entries();
    const walk = (path: string, level: number): OutlineNode[] =>
      idx
        .children(path)
        .sort()
        .map((p) => {
          const node: OutlineNode = { path: p, entries: idx.subtree(p).length };
          if (level < depth && idx.children(p).length) node.children = walk(p, level + 1);
          return node;
        });
    return walk('', 1);
  }

  /** Entries most similar to `query` anywhere in memory, above the model's threshold. */
  async function recallMemory(
    queryIn: unknown,
    limitIn: unknown = 3,
  ): Promise<RecallHit[] | ToolError> {
    return guard(async () => {
      if (typeof queryIn !== 'string' || !queryIn.trim()) return [];
      const limit = intArg(limitIn, 'limit', 3, 1, 50);
      if (isToolError(limit)) return limit;
      const emb = await embed([queryIn.trim()]);
      if (isToolError(emb)) return emb;
      const idx = await entries();
      const q = emb.vectors[0];
      const scored = idx
        .subtree('')
        .map((ref) => ({ ref, similarity: similarityOf(idx, ref, q) }))
        .filter((s) => s.similarity > emb.info.threshold)
        .sort((a, b) => b.similarity - a.similarity)
        .slice(0, limit);
      const rows = await db.structured_memory.bulkGet(scored.map((s) => s.ref.id));
      return scored.flatMap((s, i) => {
        const row = rows[i];
        return row ? [{ path: row.path, content: row.content, similarity: s.similarity }] : [];
      });
    });
  }

  return { queryMemory, queryMemoryHeading, listMemory, memoryOutline, recallMemory };
}
/** `max(cos(query, entry), max cos(query, chunk))`; 0 for rows of another model. */
function similarityOf(idx: EntryIndex, ref: EntryRef, q: Float32Array): number {
  if (ref.vectorRow < 0 || !idx.entryVectors || !idx.chunkVectors) return 0;
  const own = dotRow(q, idx.entryVectors.buffer, ref.vectorRow, idx.dims);
  const chunks = maxDotRows(q, idx.chunkVectors.buffer, ref.chunkRow, ref.chunkCount, idx.dims);
  return Math.max(own, chunks);
}

function preview(content: JsonValue, n: number): string {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  return text.length <= n ? text : text.slice(0, n) + '…';
}
