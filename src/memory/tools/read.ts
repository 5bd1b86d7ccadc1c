// Reading entries: queryMemory, queryMemoryHeading (similarity blended with recency) and listMemory.
import type { Table } from 'dexie';
import type { StoreContext } from '../store';
import { getOwn, intArg, isToolError, numberArg, setOwn, short, toolError } from '../validate';
import { headingOf, parentOf } from '../paths';
import { DEFAULT_RECENCY_BIAS, type Signals } from '../ranking';
import {
  matchingChunks,
  searchEntries,
  withEntryBaseline,
  type EntryHit,
  type EntryQuery,
} from '../search';
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
  ToolError,
  TreeNode,
} from '../types';

const MAX_RELEVANT_CHUNKS = 5;

const DEFAULT_LIST_CHARS = 8000;
const SCOPES = ['subtree', 'children'] as const;
const SIGNALS = ['both', 'lexical', 'semantic'] as const;

/** One of `allowed`, or `def` when absent. */
function enumArg<T extends string>(
  value: unknown,
  name: string,
  allowed: readonly T[],
  def: T,
): T | ToolError {
  if (value === undefined || value === null) return def;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value))
    return value as T;
  return toolError(
    'INVALID_ARGUMENT',
    `${name} must be one of ${allowed.join(', ')}, got ${short(value)}`,
  );
}

function effectiveSignals(q: EntryQuery): Signals {
  return q.vector ? (q.signals ?? 'both') : 'lexical';
}

/** The entry rows with these ids, by id (ids with no row left out). */
export async function entryRows(
  table: Table<MemoryEntry, number>,
  ids: number[],
): Promise<Map<number, MemoryEntry>> {
  const rows = new Map<number, MemoryEntry>();
  (await table.bulkGet(ids)).forEach((r) => r?.id !== undefined && rows.set(r.id, r));
  return rows;
}

/**
 * An entry's context chunks that match the query, best first (at most 5); by words alone when
 * the row's vectors are of another model than the query's.
 */
export function relevantChunks(row: MemoryEntry | undefined, q: EntryQuery): ChunkView[] {
  if (!row) return [];
  const sameModel = q.info && row.model === q.info.id;
  return matchingChunks(
    row.contextChunks,
    sameModel ? q : { text: q.text, signals: 'lexical' },
    MAX_RELEVANT_CHUNKS,
  );
}

export function readTools(ctx: StoreContext) {
  const { db, now, embed, entries, guard, pathArg, notFound, chunkView } = ctx;

  async function queryMemory(pathIn: unknown): Promise<QueryResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const row = await db.structured_memory.where('path').equals(path).first();
      if (!row || row.id === undefined) return notFound(path);
      const accessed = new Date(now());
      // Not `update()`: Dexie's modify copies the row by assignment, which turns a `__proto__`
      // key of the content into the copy's prototype, so the write would drop the key.
      await db.transaction('rw', db.structured_memory, async () => {
        const fresh = await db.structured_memory.get(row.id!);
        if (fresh) await db.structured_memory.put({ ...fresh, accessed });
      });
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
      const bias = numberArg(biasIn, 'recencyBias', DEFAULT_RECENCY_BIAS, 0, 1);
      if (isToolError(bias)) return bias;
      const opts = (optionsIn && typeof optionsIn === 'object' ? optionsIn : {}) as {
        limit?: unknown;
        scope?: unknown;
        signals?: unknown;
      };
      const limit = intArg(opts.limit, 'limit', 10, 1, 1000);
      if (isToolError(limit)) return limit;
      const scope = enumArg(opts.scope, 'scope', SCOPES, 'subtree');
      if (isToolError(scope)) return scope;
      const signals = enumArg(opts.signals, 'signals', SIGNALS, 'both');
      if (isToolError(signals)) return signals;

      let q = query !== undefined ? await queryOf(query, signals) : undefined;
      // Browsing lists children by date: it needs no model, so it never waits for one to load.
      const idx = await entries({ waitForModel: q !== undefined });
      const childPaths = idx.children(path);
      if (!childPaths.length) {
        return noChildren(path, idx.entry(path) !== undefined);
      }
      const at = now();

      if (!q) {
        // Browsing: the direct children, newest first.
        const shown = childPaths
          .map((p) => {
            const entry = idx.entry(p);
            const below = idx.descendants(p);
            let modified = entry?.modified ?? -Infinity;
            for (const d of below) modified = Math.max(modified, d.modified);
            return { path: p, entry, descendants: below.length, modified };
          })
          .sort((a, b) => b.modified - a.modified || a.path.localeCompare(b.path))
          .slice(0, limit);
        const rows = await rowsOf(shown.flatMap((s) => (s.entry ? [s.entry.id] : [])));
        const children: HeadingChild[] = shown.map((s) =>
          s.entry
            ? {
                path: s.path,
                heading: headingOf(s.path),
                content: rows.get(s.entry.id)?.content ?? null,
                modified: new Date(s.entry.modified),
                ...(s.descendants ? { descendants: s.descendants } : {}),
              }
            : {
                path: s.path,
                heading: headingOf(s.path),
                isHeading: true as const,
                descendants: s.descendants,
                modified: new Date(s.modified),
              },
        );
        return { status: 'SUCCESS' as const, path, children, totalChildren: childPaths.length };
      }

      const candidates = path === '' ? idx.subtree('') : idx.descendants(path);
      q = withEntryBaseline(idx, q);
      const hits = searchEntries(idx, candidates, q, at, bias, path);
      const scoreFields = (h: EntryHit) => ({
        score: h.score,
        relevance: h.relevance,
        similarity: h.similarity,
        recency: h.recency,
        why: h.why,
      });

      const entryChild = (h: EntryHit, row: MemoryEntry | undefined): HeadingChild => {
        const descendants = idx.countDescendants(h.ref.path);
        return {
          path: h.ref.path,
          heading: headingOf(h.ref.path),
          content: row?.content ?? null,
          modified: new Date(h.ref.modified),
          ...(descendants ? { descendants } : {}),
          ...scoreFields(h),
          relevantChunks: relevantChunks(row, q),
        };
      };
      const searched = (children: HeadingChild[], matched: number): HeadingResult => ({
        status: 'SUCCESS' as const,
        path,
        query,
        scope,
        signals: effectiveSignals(q),
        children,
        totalChildren: childPaths.length,
        matched,
      });

      if (scope === 'subtree') {
        const shown = hits.slice(0, limit);
        const rows = await rowsOf(shown.map((h) => h.ref.id));
        return searched(
          shown.map((h) => entryChild(h, rows.get(h.ref.id))),
          hits.length,
        );
      }

      // scope 'children': each direct child ranked by itself (an entry) or its best descendant.
      const best = bestPerChild(path, hits);
      const ranked = [...best.entries()].slice(0, limit);
      const rows = await rowsOf(ranked.map(([, h]) => h.ref.id));
      const children: HeadingChild[] = ranked.map(([c, h]) => {
        const row = rows.get(h.ref.id);
        if (h.ref.path === c) return entryChild(h, row);
        return {
          path: c,
          heading: headingOf(c),
          isHeading: true as const,
          descendants: idx.countDescendants(c),
          modified: new Date(h.ref.modified),
          ...scoreFields(h),
          bestMatch: {
            path: h.ref.path,
            heading: headingOf(h.ref.path),
            content: row?.content ?? null,
            relevantChunks: relevantChunks(row, q),
          },
        };
      });
      return searched(children, best.size);
    });
  }

  /** The query's words and, when the model loads, its vector; lexical alone when it does not. */
  async function queryOf(text: string, signals: Signals): Promise<EntryQuery> {
    if (signals === 'lexical') return { text, signals };
    const emb = await embed([text]);
    if (isToolError(emb)) return { text, signals: 'lexical' };
    return { text, vector: emb.vectors[0], info: emb.info, signals };
  }

  const rowsOf = (ids: number[]) => entryRows(db.structured_memory, ids);

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
      const rows = (await db.structured_memory.bulkGet(refs.map((r) => r.id))).filter(
        (r): r is MemoryEntry => !!r,
      );
      return { status: 'SUCCESS' as const, path: root, ...fitTree(root, rows, cap) };
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

  return { queryMemory, queryMemoryHeading, listMemory, memoryOutline };
}

/** queryMemoryHeading's answer for a path with nothing below it: what is there, and what to call. */
export function noChildren(path: string, isEntry: boolean): NotFoundResult {
  return {
    status: 'NOT_FOUND' as const,
    path,
    message: isEntry
      ? `"${path}" is an entry with no children. Call queryMemory("${path}") to read it.`
      : path === ''
        ? 'Memory is empty: nothing has been saved yet.'
        : `Nothing is saved at or below "${path}". Call listMemory to see what exists.`,
  };
}

/** The direct child of `path` that `below` (a path under it) is in. */
export function childUnder(path: string, below: string): string {
  const rest = path === '' ? below : below.slice(path.length + 1);
  const seg = rest.split('/')[0];
  return path === '' ? seg : `${path}/${seg}`;
}

/**
 * Scope 'children': for each direct child of `path`, its best hit (itself or one below it), in
 * the order of `hits` (best first).
 */
export function bestPerChild<H extends { ref: { path: string } }>(
  path: string,
  hits: readonly H[],
): Map<string, H> {
  const best = new Map<string, H>();
  for (const h of hits) {
    const c = childUnder(path, h.ref.path);
    if (!best.has(c)) best.set(c, h);
  }
  return best;
}

/** The key of listMemory's tree under which an entry that also has children keeps its content. */
export const CONTENT_KEY = '_content';

/**
 * The key of a segment in listMemory's tree: the segment itself, except that a child literally
 * named `_content` is listed as `_content/`, so it never takes the place of (or is taken for) its
 * parent's own content. No segment holds a `/`, and a path ending in one `/` names the same entry.
 */
export function treeKey(segment: string): string {
  return segment === CONTENT_KEY ? `${segment}/` : segment;
}

/** The rows under `root` as listMemory's nested tree: `leaf` gives each entry's value. */
export function listTree(
  root: string,
  rows: readonly Pick<MemoryEntry, 'path' | 'content'>[],
  leaf: (c: JsonValue) => JsonValue,
  count = rows.length,
): TreeNode {
  // Branches are the objects we create; leaves may be objects too (their content).
  const branchMark = new WeakSet<object>();
  const isBranch = (o: object) => branchMark.has(o);
  const tree: TreeNode = {};
  const hasChildren = new Set(rows.map((r) => parentOf(r.path)));
  for (const row of rows.slice(0, count)) {
    const rel = root === '' ? row.path : row.path === root ? '' : row.path.slice(root.length + 1);
    const segs = rel === '' ? [] : rel.split('/').map(treeKey);
    let node = tree;
    for (const seg of segs.slice(0, -1)) {
      const next = getOwn(node, seg);
      if (next && typeof next === 'object' && !Array.isArray(next) && isBranch(next)) {
        node = next as TreeNode;
      } else {
        const branch: TreeNode = {};
        branchMark.add(branch);
        if (next !== undefined) branch[CONTENT_KEY] = next; // should not happen: parents sort first
        setOwn(node, seg, branch);
        node = branch;
      }
    }
    const last = segs[segs.length - 1];
    const value = leaf(row.content);
    if (last === undefined) {
      setOwn(tree, CONTENT_KEY, value);
    } else if (hasChildren.has(row.path)) {
      const branch: TreeNode = { [CONTENT_KEY]: value };
      branchMark.add(branch);
      setOwn(node, last, branch);
    } else {
      setOwn(node, last, value);
    }
  }
  return tree;
}

/**
 * listMemory's tree of `rows` under `root` within `cap` characters of JSON: whole if it fits,
 * else with contents cut to previews of 120, 48, then 16 characters, else the first entries in
 * path order that fit with 16-character previews (and how many were left out).
 */
export function fitTree(
  root: string,
  rowsIn: readonly Pick<MemoryEntry, 'path' | 'content'>[],
  cap: number,
): { tree: TreeNode; totalEntries: number; truncated?: true; omittedEntries?: number } {
  const rows = [...rowsIn].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const totalEntries = rows.length;
  let tree = listTree(root, rows, (c) => c);
  if (JSON.stringify(tree).length <= cap) return { tree, totalEntries };
  for (const n of [120, 48, 16]) {
    tree = listTree(root, rows, (c) => preview(c, n));
    if (JSON.stringify(tree).length <= cap) return { tree, totalEntries, truncated: true };
  }
  // Still too big: keep as many entries (in path order) as fit, with short previews.
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (JSON.stringify(listTree(root, rows, (c) => preview(c, 16), mid)).length <= cap) lo = mid;
    else hi = mid - 1;
  }
  return {
    tree: listTree(root, rows, (c) => preview(c, 16), lo),
    totalEntries,
    truncated: true,
    omittedEntries: rows.length - lo,
  };
}

/** A content's first `n` characters (as JSON unless it is text), with an ellipsis if cut. */
export function preview(content: JsonValue, n: number): string {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  return text.length <= n ? text : text.slice(0, n) + '…';
}
