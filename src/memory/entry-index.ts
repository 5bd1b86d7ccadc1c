// In-memory view of `structured_memory`: the path tree (with implicit headings), the lexical
// indexes of every entry (its path and content; its context snapshot apart) and, for rows of
// the active model, entry and context-chunk vectors packed for scoring. Filled once from Dexie,
// then kept current from the primary keys each write touched, so no query reads every row.
import type { Table } from 'dexie';
import { Bm25Index, type LexicalMatch, type LexicalQuery } from './lexical/bm25-index';
import { parentOf } from './paths';
import { contentText, pathWords } from './text';
import type { EntrySummary, MemoryEntry } from './types';
import { PackedVectors } from './vector-store';

/** Characters of an entry's content indexed for words. */
const LEXICAL_CONTENT_CHARS = 20_000;

/** The text an entry is found by: its path's words and its content's. */
export function entrySearchText(path: string, content: unknown): string {
  return `${pathWords(path)} ${contentText(content, LEXICAL_CONTENT_CHARS)}`;
}

/**
 * One entry in the index: the summary the explorer sees (`EntrySummary`, counting the context
 * chunks of any model) with where the index keeps the row's vectors.
 */
export interface EntryRef extends EntrySummary {
  id: number;
  /** Row of the entry vector in `entryVectors`, or -1 when the row is of another model. */
  vectorRow: number;
  chunkRow: number;
  chunkCount: number;
}

/** An entry as the explorer and the map see it. */
export function entrySummary(r: EntryRef): EntrySummary {
  return {
    path: r.path,
    version: r.version,
    created: r.created,
    modified: r.modified,
    accessed: r.accessed,
    size: r.size,
    chunks: r.chunks,
  };
}

/** Whether two refs look the same to the explorer (its summary). */
function sameSummary(a: EntryRef, b: EntryRef): boolean {
  return (
    a.version === b.version &&
    a.accessed === b.accessed &&
    a.modified === b.modified &&
    a.created === b.created &&
    a.size === b.size &&
    a.chunks === b.chunks
  );
}

/** Paths whose summary differs between two indexes (one rebuilt from the other's table). */
export function changedPaths(before: EntryIndex, after: EntryIndex): string[] {
  const old = new Map(before.subtree('').map((r) => [r.path, r]));
  const out: string[] = [];
  for (const ref of after.subtree('')) {
    const was = old.get(ref.path);
    old.delete(ref.path);
    if (!was || !sameSummary(was, ref)) out.push(ref.path);
  }
  return [...out, ...old.keys()];
}

interface TreeNode {
  children: Set<string>;
  entry?: EntryRef;
}

export class EntryIndex {
  readonly entryVectors: PackedVectors | null;
  readonly chunkVectors: PackedVectors | null;
  private readonly nodes = new Map<string, TreeNode>([['', { children: new Set() }]]);
  private readonly byId = new Map<number, EntryRef>();
  /** Words of each entry's path and content, grouped by the heading the entry is under. */
  private readonly ownWords = new Bm25Index();
  /** A number for each heading that has had entries (the word index's groups). */
  private readonly headingIds = new Map<string, number>();
  private readonly headingPaths: string[] = [];
  /** Words of each entry's context snapshot. */
  private readonly snapshotWords = new Bm25Index();
  /** Sum of the entry vectors held, for the query's baseline cosine (ranking.ts). */
  private readonly vectorSum: Float64Array;
  private vectorCount = 0;

  constructor(
    private readonly table: Table<MemoryEntry, number>,
    /** Active model, or null when no model could be loaded (tree only). */
    readonly model: string | null,
    readonly dims: number,
    /** Told the path of every entry whose summary a refresh changed (the change feed). */
    private readonly onChange: (path: string) => void = () => undefined,
  ) {
    this.entryVectors = model ? new PackedVectors(dims, 1024) : null;
    this.chunkVectors = model ? new PackedVectors(dims, 4096) : null;
    this.vectorSum = new Float64Array(model ? dims : 0);
  }

  /** `q · Σ entry vectors` and how many there are: the centroid's pull on a query. */
  centroidDot(q: Float32Array): { sumDot: number; count: number } {
    let sumDot = 0;
    const n = Math.min(q.length, this.vectorSum.length);
    for (let i = 0; i < n; i++) sumDot += q[i] * this.vectorSum[i];
    return { sumDot, count: this.vectorCount };
  }

  /** Adds (`sign` 1) or takes away (−1) an entry vector in the sum. */
  private sumVector(v: ArrayLike<number>, offset: number, sign: 1 | -1): void {
    for (let i = 0; i < this.dims; i++) this.vectorSum[i] += sign * v[offset + i];
    this.vectorCount += sign;
  }

  get entryCount(): number {
    return this.byId.size;
  }

  async load(): Promise<void> {
    await this.table.each((row) => this.upsert(row));
  }

  /** Brings the index in line with the rows now stored under `ids`. */
  async refresh(ids: readonly number[]): Promise<void> {
    if (!ids.length) return;
    const rows = await this.table.bulkGet(ids as number[]);
    rows.forEach((row, i) => (row ? this.upsert(row) : this.removeId(ids[i])));
    this.maybeCompact();
  }

  byKey(id: number): EntryRef | undefined {
    return this.byId.get(id);
  }

  /**
   * The lexical matches of `text`: by entry id, of the entry's own words and of its snapshot's.
   * Entries that match neither are absent.
   */
  lexical(text: string): {
    own: Map<number, LexicalMatch>;
    snapshot: Map<number, LexicalMatch>;
    query: LexicalQuery;
    /**
     * The lexical relevance of each heading as a whole (its entries' words), by heading; worked
     * out on the first call (a second pass over the query terms' postings).
     */
    headings: () => Map<string, number>;
  } {
    const query = this.ownWords.prepare(text);
    const snapQuery = this.snapshotWords.prepare(text);
    const own = new Map(this.ownWords.search(query).map((m) => [m.key, m]));
    const snapshot = new Map(this.snapshotWords.search(snapQuery).map((m) => [m.key, m]));
    let byHeading: Map<string, number> | undefined;
    const headings = () => {
      if (!byHeading) {
        byHeading = new Map();
        for (const [id, r] of this.ownWords.groupMatches(query))
          byHeading.set(this.headingPaths[id], r);
      }
      return byHeading;
    };
    return { own, snapshot, query, headings };
  }

  private headingId(path: string): number {
    let id = this.headingIds.get(path);
    if (id === undefined) {
      this.headingIds.set(path, (id = this.headingPaths.length));
      this.headingPaths.push(path);
    }
    return id;
  }

  entry(path: string): EntryRef | undefined {
    return this.nodes.get(path)?.entry;
  }

  /** True when `path` is an entry or a heading (has descendants). */
  exists(path: string): boolean {
    return this.nodes.has(path) && (path !== '' || this.byId.size > 0);
  }

  /** Direct children (entry or heading paths) of `path`, unordered. */
  children(path: string): string[] {
    return [...(this.nodes.get(path)?.children ?? [])];
  }

  /** Every entry strictly below `path`. */
  descendants(path: string): EntryRef[] {
    const out: EntryRef[] = [];
    const stack = this.children(path);
    while (stack.length) {
      const p = stack.pop()!;
      const node = this.nodes.get(p);
      if (!node) continue;
      if (node.entry) out.push(node.entry);
      for (const c of node.children) stack.push(c);
    }
    return out;
  }

  countDescendants(path: string): number {
    return this.descendants(path).length;
  }

  /** Every entry at or below `path`. */
  subtree(path: string): EntryRef[] {
    const self = path === '' ? undefined : this.entry(path);
    return self ? [self, ...this.descendants(path)] : this.descendants(path);
  }

  private upsert(row: MemoryEntry): void {
    if (row.id === undefined) return;
    const old = this.byId.get(row.id);
    if (old && old.version >= row.version && old.path === row.path) {
      // Re-embedding with the active model gives a row vectors without a new version.
      const gainsVectors =
        old.vectorRow < 0 && row.model === this.model && old.version === row.version;
      if (!gainsVectors) {
        // Already indexed (or a stale read); only `accessed` changes without a new version.
        if (old.version === row.version && old.accessed !== row.accessed.getTime()) {
          old.accessed = row.accessed.getTime();
          this.onChange(row.path);
        }
        return;
      }
    }
    const current = this.nodes.get(row.path)?.entry;
    if (current && current.id !== row.id) {
      if (current.id > row.id) return; // this row was replaced at the same path
      this.removeId(current.id);
    }
    if (old) this.removeId(row.id);
    const ref: EntryRef = {
      id: row.id,
      path: row.path,
      version: row.version,
      created: row.created.getTime(),
      modified: row.modified.getTime(),
      accessed: row.accessed.getTime(),
      size: JSON.stringify(row.content).length,
      chunks: row.contextChunks.length,
      vectorRow: -1,
      chunkRow: 0,
      chunkCount: 0,
    };
    if (
      this.entryVectors &&
      this.chunkVectors &&
      row.model === this.model &&
      row.embedding.length === this.dims
    ) {
      ref.vectorRow = this.entryVectors.append([row.embedding]);
      this.sumVector(row.embedding, 0, 1);
      const chunks = row.contextChunks.filter((c) => c.embedding.length === this.dims);
      ref.chunkRow = this.chunkVectors.append(chunks.map((c) => c.embedding));
      ref.chunkCount = chunks.length;
    }
    this.byId.set(row.id, ref);
    this.node(row.path).entry = ref;
    this.onChange(row.path);
    this.ownWords.add(
      row.id,
      entrySearchText(row.path, row.content),
      this.headingId(parentOf(row.path)),
    );
    if (row.contextChunks.length)
      this.snapshotWords.add(row.id, row.contextChunks.map((c) => c.text).join(' '));
  }

  private removeId(id: number): void {
    const ref = this.byId.get(id);
    if (!ref) return;
    this.byId.delete(id);
    this.ownWords.remove(id);
    this.snapshotWords.remove(id);
    if (ref.vectorRow >= 0 && this.entryVectors) {
      this.sumVector(this.entryVectors.buffer, ref.vectorRow * this.dims, -1);
      this.entryVectors.release(ref.vectorRow, 1);
      this.chunkVectors?.release(ref.chunkRow, ref.chunkCount);
    }
    this.onChange(ref.path);
    const node = this.nodes.get(ref.path);
    if (node?.entry?.id === id) {
      node.entry = undefined;
      this.prune(ref.path);
    }
  }

  /** The node of `path`, creating it and its ancestors. */
  private node(path: string): TreeNode {
    let node = this.nodes.get(path);
    if (node) return node;
    node = { children: new Set() };
    this.nodes.set(path, node);
    this.node(parentOf(path)).children.add(path);
    return node;
  }

  /** Removes empty nodes from `path` upwards. */
  private prune(path: string): void {
    while (path !== '') {
      const node = this.nodes.get(path);
      if (!node || node.entry || node.children.size) return;
      this.nodes.delete(path);
      const parent = parentOf(path);
      this.nodes.get(parent)?.children.delete(path);
      path = parent;
    }
  }

  private maybeCompact(): void {
    const ev = this.entryVectors;
    const cv = this.chunkVectors;
    if (!ev || !cv || !(ev.fragmented || cv.fragmented)) return;
    const refs = [...this.byId.values()].filter((r) => r.vectorRow >= 0);
    const entryStarts = ev.compact(refs.map((r) => ({ first: r.vectorRow, count: 1 })));
    const chunkStarts = cv.compact(refs.map((r) => ({ first: r.chunkRow, count: r.chunkCount })));
    refs.forEach((r, i) => {
      r.vectorRow = entryStarts[i];
      r.chunkRow = chunkStarts[i];
    });
  }
}
