// The memory explorer's tree, as pure data: built from the entry index, filtered by a path
// substring, flattened into the rows a tree view renders, plus the recency cues it shows.
import type { EntrySummary } from '../memory/types';

/** A node of the explorer tree: an entry, an implicit heading (a proper prefix of entry paths), or both. */
export interface MemoryNode {
  /** Full path; `''` for the root. */
  path: string;
  /** Last path segment; `''` for the root. */
  heading: string;
  /** 0 for the root, 1 for top-level nodes. */
  depth: number;
  parent: MemoryNode | undefined;
  /** Sorted by heading (numeric-aware, case-insensitive). */
  children: MemoryNode[];
  /** Set when this path is itself an entry. */
  entry: EntrySummary | undefined;
  /** Entries strictly below this node. */
  descendants: number;
  /** Newest `modified` at or below this node (ms since epoch; 0 for an empty root). */
  newest: number;
  /** Content characters at or below this node. */
  size: number;
  /** Context chunks at or below this node. */
  chunks: number;
}

export interface MemoryTree {
  root: MemoryNode;
  /** Every node by path, the root under `''`. */
  byPath: Map<string, MemoryNode>;
  /** Number of entries. */
  entries: number;
  /** Number of nodes with children (the root excluded). */
  headings: number;
}

/** One visible row of the tree view, with what `aria-level`/`-setsize`/`-posinset` need. */
export interface TreeRow {
  node: MemoryNode;
  /** 1 for top-level nodes. */
  level: number;
  setSize: number;
  /** 1-based. */
  posInSet: number;
  /** Whether the node has (visible) children. */
  hasChildren: boolean;
  expanded: boolean;
}

function makeNode(path: string, heading: string, depth: number, parent?: MemoryNode): MemoryNode {
  return {
    path,
    heading,
    depth,
    parent,
    children: [],
    entry: undefined,
    descendants: 0,
    newest: 0,
    size: 0,
    chunks: 0,
  };
}

/** Builds the tree of every entry and every implicit heading, with totals. O(entries × depth). */
export function buildTree(entries: readonly EntrySummary[]): MemoryTree {
  const root = makeNode('', '', 0);
  const byPath = new Map<string, MemoryNode>([['', root]]);
  let count = 0;
  for (const entry of entries) {
    const segments = entry.path.split('/');
    let node = root;
    let path = '';
    for (let i = 0; i < segments.length; i++) {
      path = i === 0 ? segments[0] : `${path}/${segments[i]}`;
      let child = byPath.get(path);
      if (!child) {
        child = makeNode(path, segments[i], i + 1, node);
        node.children.push(child);
        byPath.set(path, child);
      }
      node = child;
    }
    // A duplicate path in the index would otherwise be counted twice.
    if (node.entry) continue;
    node.entry = entry;
    count++;
    // Totals are added on the way up: the entry itself, then each ancestor.
    for (let n: MemoryNode | undefined = node; n; n = n.parent) {
      if (n !== node) n.descendants++;
      if (entry.modified > n.newest) n.newest = entry.modified;
      n.size += entry.size;
      n.chunks += entry.chunks;
    }
  }
  let headings = 0;
  for (const node of byPath.values()) {
    if (node.children.length > 1) {
      node.children.sort((a, b) => naturalCompare(a.heading, b.heading));
    }
    if (node.children.length > 0 && node !== root) headings++;
  }
  return { root, byPath, entries: count, headings };
}

/**
 * Applies entries upserted and removed (by path) to `tree`, as `buildTree` would give for the
 * list with the same change: the nodes on their paths are patched in place (new nodes go in at
 * their sorted place, emptied headings go), the rest is shared. Returns a new `MemoryTree`
 * object, so views that memoise on the tree see the change; `tree` itself must not be used
 * again. O(changes × (depth + siblings)).
 */
export function applyTreeDelta(
  tree: MemoryTree,
  delta: { upserted: readonly EntrySummary[]; removed: readonly string[] },
): MemoryTree {
  const { root, byPath } = tree;
  let { entries, headings } = tree;
  /** Takes the entry at `node` out of the totals of the node and its ancestors. */
  const detach = (node: MemoryNode) => {
    const old = node.entry!;
    node.entry = undefined;
    entries--;
    for (let n: MemoryNode | undefined = node; n; n = n.parent) {
      if (n !== node) n.descendants--;
      n.size -= old.size;
      n.chunks -= old.chunks;
    }
  };
  /** Recomputes `newest` from `node` up to the root. */
  const renew = (node: MemoryNode | undefined) => {
    for (let n = node; n; n = n.parent) {
      let newest = n.entry?.modified ?? 0;
      for (const c of n.children) if (c.newest > newest) newest = c.newest;
      n.newest = newest;
    }
  };
  for (const path of delta.removed) {
    let node = byPath.get(path);
    if (!node?.entry) continue;
    detach(node);
    // Headings left without entries below go, from the node up.
    while (node !== root && !node.entry && node.children.length === 0) {
      const parent: MemoryNode = node.parent!;
      parent.children.splice(parent.children.indexOf(node), 1);
      byPath.delete(node.path);
      if (parent !== root && parent.children.length === 0) headings--;
      node = parent;
    }
    renew(node);
  }
  for (const entry of delta.upserted) {
    const segments = entry.path.split('/');
    let node = root;
    let path = '';
    for (let i = 0; i < segments.length; i++) {
      path = i === 0 ? segments[0] : `${path}/${segments[i]}`;
      let child = byPath.get(path);
      if (!child) {
        child = makeNode(path, segments[i], i + 1, node);
        insertSorted(node.children, child);
        if (node !== root && node.children.length === 1) headings++;
        byPath.set(path, child);
      }
      node = child;
    }
    if (node.entry) detach(node);
    node.entry = entry;
    entries++;
    for (let n: MemoryNode | undefined = node; n; n = n.parent) {
      if (n !== node) n.descendants++;
      n.size += entry.size;
      n.chunks += entry.chunks;
    }
    renew(node);
  }
  return { root, byPath, entries, headings };
}

/** Puts `node` among its sorted siblings, at its place by `naturalCompare`. */
function insertSorted(children: MemoryNode[], node: MemoryNode): void {
  let lo = 0;
  let hi = children.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (naturalCompare(children[mid].heading, node.heading) < 0) lo = mid + 1;
    else hi = mid;
  }
  children.splice(lo, 0, node);
}

/**
 * Orders headings as people expect: case-insensitively, digit runs by value (`Phase 2` before
 * `Phase 10`), ties broken by code units so the order is total. Allocation-free, so sorting
 * thousands of nodes stays fast (`Intl.Collator` or `toLowerCase` per comparison are not);
 * locale-specific letter order is not needed for paths.
 */
export function naturalCompare(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const c = a.charCodeAt(i);
    const d = b.charCodeAt(j);
    if (isDigit(c) && isDigit(d)) {
      // Compare digit runs by value: skip leading zeros, then the longer run is larger, then
      // the first differing digit decides.
      while (i < a.length - 1 && a.charCodeAt(i) === 48 && isDigit(a.charCodeAt(i + 1))) i++;
      while (j < b.length - 1 && b.charCodeAt(j) === 48 && isDigit(b.charCodeAt(j + 1))) j++;
      let i2 = i;
      let j2 = j;
      while (i2 < a.length && isDigit(a.charCodeAt(i2))) i2++;
      while (j2 < b.length && isDigit(b.charCodeAt(j2))) j2++;
      if (i2 - i !== j2 - j) return i2 - i - (j2 - j);
      for (; i < i2; i++, j++) {
        const diff = a.charCodeAt(i) - b.charCodeAt(j);
        if (diff !== 0) return diff;
      }
      continue;
    }
    const diff = fold(c) - fold(d);
    if (diff !== 0) return diff;
    i++;
    j++;
  }
  if (a.length - i !== b.length - j) return a.length - i - (b.length - j);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A code unit in lower case (ASCII fast path). */
function fold(c: number): number {
  if (c < 128) return c >= 65 && c <= 90 ? c + 32 : c;
  return String.fromCharCode(c).toLowerCase().charCodeAt(0);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * Paths kept by a filter: every node whose path contains `filter` (case-insensitive), and
 * their ancestors (the root included). `undefined` when the filter is blank: keep everything.
 */
export function filterTree(tree: MemoryTree, filter: string): Set<string> | undefined {
  const needle = filter.trim().toLowerCase();
  if (needle === '') return undefined;
  const keep = new Set<string>();
  for (const node of tree.byPath.values()) {
    if (node === tree.root || !node.path.toLowerCase().includes(needle)) continue;
    for (let n: MemoryNode | undefined = node; n && !keep.has(n.path); n = n.parent) {
      keep.add(n.path);
    }
  }
  return keep;
}

/** Paths of the nodes that have kept children: expanding them reveals every match. */
export function expandedForFilter(tree: MemoryTree, keep: ReadonlySet<string>): Set<string> {
  const expanded = new Set<string>();
  for (const path of keep) {
    const parent = tree.byPath.get(path)?.parent;
    if (parent && parent !== tree.root) expanded.add(parent.path);
  }
  return expanded;
}

/**
 * The rows a tree view shows: top-level nodes, and the children of every expanded node, in
 * document order. With `keep`, only kept nodes (see `filterTree`) appear. O(visible rows).
 */
export function flattenVisible(
  tree: MemoryTree,
  expanded: ReadonlySet<string>,
  keep?: ReadonlySet<string>,
): TreeRow[] {
  const rows: TreeRow[] = [];
  const visit = (parent: MemoryNode) => {
    const kids = keep ? parent.children.filter((c) => keep.has(c.path)) : parent.children;
    kids.forEach((node, i) => {
      const hasChildren = keep
        ? node.children.some((c) => keep.has(c.path))
        : node.children.length > 0;
      const open = hasChildren && expanded.has(node.path);
      rows.push({
        node,
        level: node.depth,
        setSize: kids.length,
        posInSet: i + 1,
        hasChildren,
        expanded: open,
      });
      if (open) visit(node);
    });
  };
  visit(tree.root);
  return rows;
}

/** Proper ancestors of a path, outermost first, the root excluded: `a/b/c` → `a`, `a/b`. */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  let i = path.indexOf('/');
  while (i >= 0) {
    out.push(path.slice(0, i));
    i = path.indexOf('/', i + 1);
  }
  return out;
}

/**
 * The heading a search from `selected` runs on: the path itself when entries lie below it, else
 * its parent (`''`, the root, when nothing is selected or the path is top-level).
 */
export function searchScope(
  entries: readonly EntrySummary[],
  selected: string | undefined,
): string {
  if (!selected) return '';
  const prefix = `${selected}/`;
  if (entries.some((e) => e.path.startsWith(prefix))) return selected;
  const i = selected.lastIndexOf('/');
  return i < 0 ? '' : selected.slice(0, i);
}

/**
 * A local date and time as `2025-06-01 14:05`: unambiguous, compact, and fast enough to make
 * thousands of tooltips (Intl.DateTimeFormat is several times slower per call).
 */
export function formatStamp(time: number): string {
  const d = new Date(time);
  const p = (n: number) => (n < 10 ? `0${n}` : String(n));
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A compact age: `now`, `5 min`, `3 h`, `2 d`, `4 mo`, `2 y`. */
export function formatAge(time: number, now: number): string {
  const age = Math.max(0, now - time);
  if (age < MINUTE) return 'now';
  if (age < HOUR) return `${Math.floor(age / MINUTE)} min`;
  if (age < DAY) return `${Math.floor(age / HOUR)} h`;
  if (age < 60 * DAY) return `${Math.floor(age / DAY)} d`;
  if (age < 730 * DAY) return `${Math.floor(age / (30.44 * DAY))} mo`;
  return `${Math.floor(age / (365.25 * DAY))} y`;
}

/** The same age in words, for screen readers and tooltips: `3 hours ago`. */
export function describeAge(time: number, now: number): string {
  const short = formatAge(time, now);
  if (short === 'now') return 'just now';
  const [n, unit] = short.split(' ');
  const words: Record<string, string> = {
    min: 'minute',
    h: 'hour',
    d: 'day',
    mo: 'month',
    y: 'year',
  };
  return `${n} ${words[unit]}${n === '1' ? '' : 's'} ago`;
}

/**
 * How fresh a time is, 1 (just now) to 0 (a year or older), on a log scale of days so that
 * hours, days and weeks stay distinguishable.
 */
export function recencyStrength(time: number, now: number): number {
  const days = Math.max(0, now - time) / DAY;
  return Math.max(0, Math.min(1, 1 - Math.log1p(days) / Math.log1p(365)));
}

// Sequential scale, old → new: pale grey-blue to the app's saturated accent.
const STOPS: readonly (readonly [number, number, number])[] = [
  [0xe4, 0xe8, 0xee],
  [0xc3, 0xcf, 0xee],
  [0x8a, 0xa2, 0xe6],
  [0x4f, 0x70, 0xd8],
  [0x2a, 0x47, 0xb4],
];

/** The colour of a recency strength (0 old … 1 new) as `rgb(…)`. */
export function recencyColor(strength: number): string {
  const t = Math.max(0, Math.min(1, strength)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(t));
  const f = t - i;
  const [a, b] = [STOPS[i], STOPS[i + 1]];
  const c = a.map((v, k) => Math.round(v + (b[k] - v) * f));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** Whether text on `recencyColor(strength)` should be light for contrast. */
export function needsLightText(strength: number): boolean {
  return strength >= 0.7;
}
