// The explorer's tree model (building, filtering, flattening, recency cues) and the map layout.
import { describe, expect, it } from 'vitest';
import type { EntrySummary } from '../../src/memory/types';
import { cellAt, entryValue, fitLabel, layoutMap, type MapCell } from '../../src/ui/sm-memory-map';
import {
  ancestorsOf,
  buildTree,
  describeAge,
  expandedForFilter,
  filterTree,
  flattenVisible,
  formatAge,
  naturalCompare,
  recencyColor,
  recencyStrength,
  searchScope,
} from '../../src/ui/tree-model';

const NOW = Date.UTC(2025, 5, 1);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function e(path: string, modified: number, size = 10, chunks = 0): EntrySummary {
  return { path, version: 1, created: modified - DAY, modified, accessed: modified, size, chunks };
}

const ENTRIES: EntrySummary[] = [
  e('User/Preferences/Coffee', NOW - HOUR, 40, 2),
  e('User/Preferences', NOW - 3 * DAY, 20, 1),
  e('User/Name', NOW - 40 * DAY, 12),
  e('Projects/Alpha/Goals/Phase10', NOW - 2 * DAY, 30, 3),
  e('Projects/Alpha/Goals/Phase2', NOW - 5 * DAY, 30),
  e('Projects/alpha notes', NOW - 9 * DAY, 5),
  e('Solo', NOW - 100 * DAY, 7),
];

describe('buildTree', () => {
  const tree = buildTree(ENTRIES);

  it('makes a node for every entry and every implicit heading', () => {
    expect([...tree.byPath.keys()].sort()).toEqual(
      [
        '',
        'Projects',
        'Projects/Alpha',
        'Projects/Alpha/Goals',
        'Projects/Alpha/Goals/Phase10',
        'Projects/Alpha/Goals/Phase2',
        'Projects/alpha notes',
        'Solo',
        'User',
        'User/Name',
        'User/Preferences',
        'User/Preferences/Coffee',
      ].sort(),
    );
    expect(tree.entries).toBe(7);
    // Projects, Projects/Alpha, Projects/Alpha/Goals, User, User/Preferences.
    expect(tree.headings).toBe(5);
  });

  it('keeps an entry that is also a heading as one node with both', () => {
    const prefs = tree.byPath.get('User/Preferences')!;
    expect(prefs.entry?.path).toBe('User/Preferences');
    expect(prefs.children.map((c) => c.heading)).toEqual(['Coffee']);
    expect(prefs.heading).toBe('Preferences');
    expect(prefs.depth).toBe(2);
    expect(prefs.parent?.path).toBe('User');
  });

  it('counts entries below, the newest time below, and sizes and chunks at or below', () => {
    const user = tree.byPath.get('User')!;
    expect(user.entry).toBeUndefined();
    expect(user.descendants).toBe(3);
    expect(user.newest).toBe(NOW - HOUR);
    expect(user.size).toBe(40 + 20 + 12);
    expect(user.chunks).toBe(3);
    const prefs = tree.byPath.get('User/Preferences')!;
    expect(prefs.descendants).toBe(1);
    expect(prefs.newest).toBe(NOW - HOUR);
    expect(prefs.size).toBe(60);
    const root = tree.root;
    expect(root.descendants).toBe(7);
    expect(root.newest).toBe(NOW - HOUR);
    const leaf = tree.byPath.get('Solo')!;
    expect(leaf.descendants).toBe(0);
    expect(leaf.newest).toBe(NOW - 100 * DAY);
  });

  it('sorts children case-insensitively with numbers by value', () => {
    const goals = tree.byPath.get('Projects/Alpha/Goals')!;
    expect(goals.children.map((c) => c.heading)).toEqual(['Phase2', 'Phase10']);
    expect(tree.byPath.get('Projects')!.children.map((c) => c.heading)).toEqual([
      'Alpha',
      'alpha notes',
    ]);
    expect(tree.root.children.map((c) => c.heading)).toEqual(['Projects', 'Solo', 'User']);
  });

  it('ignores a duplicate path and handles an empty index', () => {
    const twice = buildTree([e('A/B', NOW, 5), e('A/B', NOW, 5)]);
    expect(twice.entries).toBe(1);
    expect(twice.byPath.get('A')!.descendants).toBe(1);
    const empty = buildTree([]);
    expect(empty.entries).toBe(0);
    expect(empty.root.children).toEqual([]);
    expect(flattenVisible(empty, new Set())).toEqual([]);
  });

  it('builds 5,000 entries quickly', () => {
    const many: EntrySummary[] = [];
    for (let i = 0; i < 5000; i++) {
      many.push(e(`T${i % 12}/H${i % 97}/S${i % 13}/Leaf ${i}`, NOW - i * HOUR));
    }
    const start = performance.now();
    const big = buildTree(many);
    const ms = performance.now() - start;
    expect(big.entries).toBe(5000);
    expect(big.root.descendants).toBe(5000);
    expect(ms).toBeLessThan(500);
  });
});

describe('naturalCompare', () => {
  it('orders digit runs by value and letters case-insensitively, and is total', () => {
    const list = ['b', 'A10', 'a2', 'a02', 'A2', 'a', 'B1', 'a10b', 'a10a'];
    list.sort(naturalCompare);
    expect(list).toEqual(['a', 'A2', 'a02', 'a2', 'A10', 'a10a', 'a10b', 'b', 'B1']);
    expect(naturalCompare('x', 'x')).toBe(0);
    expect(Math.sign(naturalCompare('Phase 9', 'Phase 10'))).toBe(-1);
  });
});

describe('flattenVisible', () => {
  const tree = buildTree(ENTRIES);

  it('shows top-level nodes only when nothing is expanded', () => {
    const rows = flattenVisible(tree, new Set());
    expect(rows.map((r) => r.node.path)).toEqual(['Projects', 'Solo', 'User']);
    expect(rows.map((r) => [r.level, r.setSize, r.posInSet])).toEqual([
      [1, 3, 1],
      [1, 3, 2],
      [1, 3, 3],
    ]);
    expect(rows.map((r) => r.hasChildren)).toEqual([true, false, true]);
    expect(rows.every((r) => !r.expanded)).toBe(true);
  });

  it('shows the children of expanded nodes in document order', () => {
    const rows = flattenVisible(tree, new Set(['User', 'User/Preferences', 'Projects/Alpha']));
    // Projects/Alpha is expanded but hidden under a collapsed Projects.
    expect(rows.map((r) => r.node.path)).toEqual([
      'Projects',
      'Solo',
      'User',
      'User/Name',
      'User/Preferences',
      'User/Preferences/Coffee',
    ]);
    const prefs = rows[4];
    expect(prefs).toMatchObject({ level: 2, setSize: 2, posInSet: 2, expanded: true });
    expect(rows[5]).toMatchObject({ level: 3, setSize: 1, posInSet: 1, hasChildren: false });
  });

  it('ignores an expanded leaf', () => {
    const rows = flattenVisible(tree, new Set(['Solo']));
    expect(rows.find((r) => r.node.path === 'Solo')?.expanded).toBe(false);
  });
});

describe('filterTree', () => {
  const tree = buildTree(ENTRIES);

  it('keeps nothing special for a blank filter', () => {
    expect(filterTree(tree, '')).toBeUndefined();
    expect(filterTree(tree, '   ')).toBeUndefined();
  });

  it('keeps matches (case-insensitive) and their ancestors', () => {
    const keep = filterTree(tree, 'coffee')!;
    expect([...keep].sort()).toEqual(['', 'User', 'User/Preferences', 'User/Preferences/Coffee']);
  });

  it('matches on the whole path, so a matching heading keeps everything under it', () => {
    const keep = filterTree(tree, 'ALPHA')!;
    expect([...keep].sort()).toEqual([
      '',
      'Projects',
      'Projects/Alpha',
      'Projects/Alpha/Goals',
      'Projects/Alpha/Goals/Phase10',
      'Projects/Alpha/Goals/Phase2',
      'Projects/alpha notes',
    ]);
  });

  it('flattens to only kept nodes, with set sizes among kept siblings, revealing matches', () => {
    const keep = filterTree(tree, 'phase1')!;
    const expanded = expandedForFilter(tree, keep);
    expect([...expanded].sort()).toEqual(['Projects', 'Projects/Alpha', 'Projects/Alpha/Goals']);
    const rows = flattenVisible(tree, expanded, keep);
    expect(rows.map((r) => r.node.path)).toEqual([
      'Projects',
      'Projects/Alpha',
      'Projects/Alpha/Goals',
      'Projects/Alpha/Goals/Phase10',
    ]);
    expect(rows[0]).toMatchObject({ setSize: 1, posInSet: 1 });
    expect(rows[2]).toMatchObject({ setSize: 1, hasChildren: true, expanded: true });
    expect(rows[3]).toMatchObject({ setSize: 1, hasChildren: false });
  });

  it('keeps nothing when nothing matches', () => {
    const keep = filterTree(tree, 'zzz')!;
    expect(keep.size).toBe(0);
    expect(flattenVisible(tree, new Set(), keep)).toEqual([]);
  });
});

describe('paths', () => {
  it('lists proper ancestors outermost first', () => {
    expect(ancestorsOf('a/b/c')).toEqual(['a', 'a/b']);
    expect(ancestorsOf('a')).toEqual([]);
    expect(ancestorsOf('')).toEqual([]);
  });

  it('scopes a search to the selected heading, or the parent of an entry', () => {
    expect(searchScope(ENTRIES, undefined)).toBe('');
    expect(searchScope(ENTRIES, '')).toBe('');
    expect(searchScope(ENTRIES, 'User')).toBe('User');
    expect(searchScope(ENTRIES, 'User/Preferences')).toBe('User/Preferences');
    expect(searchScope(ENTRIES, 'User/Name')).toBe('User');
    expect(searchScope(ENTRIES, 'Solo')).toBe('');
    // `Projects/alpha notes` is not below `Projects/alpha`: segments, not prefixes.
    expect(searchScope(ENTRIES, 'Projects/alpha')).toBe('Projects');
  });
});

describe('recency', () => {
  it('formats ages compactly', () => {
    expect(formatAge(NOW - 10_000, NOW)).toBe('now');
    expect(formatAge(NOW - 5 * 60_000, NOW)).toBe('5 min');
    expect(formatAge(NOW - 2 * HOUR, NOW)).toBe('2 h');
    expect(formatAge(NOW - 3 * DAY, NOW)).toBe('3 d');
    expect(formatAge(NOW - 90 * DAY, NOW)).toBe('2 mo');
    expect(formatAge(NOW - 800 * DAY, NOW)).toBe('2 y');
    // A clock a little behind the data is not "in the future".
    expect(formatAge(NOW + 5_000, NOW)).toBe('now');
  });

  it('describes ages in words', () => {
    expect(describeAge(NOW, NOW)).toBe('just now');
    expect(describeAge(NOW - HOUR, NOW)).toBe('1 hour ago');
    expect(describeAge(NOW - 3 * DAY, NOW)).toBe('3 days ago');
    expect(describeAge(NOW - 5 * 60_000, NOW)).toBe('5 minutes ago');
  });

  it('scores newer as stronger, from 1 to 0 over a year', () => {
    const s = [0, HOUR, DAY, 7 * DAY, 30 * DAY, 365 * DAY, 900 * DAY].map((age) =>
      recencyStrength(NOW - age, NOW),
    );
    expect(s[0]).toBe(1);
    for (let i = 1; i < s.length; i++) expect(s[i]).toBeLessThanOrEqual(s[i - 1]);
    expect(s[5]).toBe(0);
    expect(s[6]).toBe(0);
    expect(s[2]).toBeGreaterThan(0.8);
  });

  it('maps strength to a sequential colour, darker when newer', () => {
    const lum = (c: string) => {
      const [r, g, b] = c.match(/\d+/g)!.map(Number);
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    expect(recencyColor(0)).toBe('rgb(228, 232, 238)');
    expect(recencyColor(1)).toBe('rgb(42, 71, 180)');
    const steps = [0, 0.2, 0.4, 0.6, 0.8, 1].map((t) => lum(recencyColor(t)));
    for (let i = 1; i < steps.length; i++) expect(steps[i]).toBeLessThan(steps[i - 1]);
    expect(recencyColor(-1)).toBe(recencyColor(0));
    expect(recencyColor(2)).toBe(recencyColor(1));
  });
});

describe('map layout', () => {
  const tree = buildTree(ENTRIES);
  const inside = (a: MapCell, b: { x: number; y: number; w: number; h: number }) =>
    a.x >= b.x - 1e-6 &&
    a.y >= b.y - 1e-6 &&
    a.x + a.w <= b.x + b.w + 1e-6 &&
    a.y + a.h <= b.y + b.h + 1e-6;

  it('weighs entries by content and context, never zero', () => {
    expect(entryValue(e('a', NOW, 0, 0))).toBe(1);
    expect(entryValue(e('a', NOW, 400, 3))).toBe(6);
  });

  it('fits labels to the width or leaves them out', () => {
    expect(fitLabel('Coffee', 200)).toBe('Coffee');
    expect(fitLabel('A rather long heading', 60)).toMatch(/^A rath.*…$/);
    expect(fitLabel('Coffee', 20)).toBe('');
  });

  it('draws every entry of a small memory inside the area and inside its heading', () => {
    const layout = layoutMap(tree, 480, 360, NOW);
    const entries = layout.cells.filter((c) => c.kind === 'entry');
    // An entry with children is drawn twice: its own block, and the frame of its children.
    expect(new Set(entries.map((c) => c.path)).size).toBe(ENTRIES.length);
    expect(layout.hidden).toBe(0);
    for (const c of layout.cells) {
      expect(inside(c, { x: 0, y: 0, w: 480, h: 360 })).toBe(true);
      const parent = tree.byPath.get(c.path)?.parent;
      const frame = parent && layout.rects.get(parent.path);
      if (frame && parent.path !== '') expect(inside(c, frame)).toBe(true);
    }
    // Newer is darker.
    const coffee = entries.find((c) => c.path === 'User/Preferences/Coffee')!;
    const solo = entries.find((c) => c.path === 'Solo')!;
    expect(coffee.fill).not.toBe(solo.fill);
    expect(coffee.light).toBe(true);
    expect(solo.light).toBe(false);
  });

  it('draws few paths, in paint order, one subpath per cell', () => {
    const layout = layoutMap(tree, 480, 360, NOW);
    const subpaths = layout.layers.reduce((n, l) => n + (l.d.match(/M/g)?.length ?? 0), 0);
    expect(subpaths).toBe(layout.cells.length);
    const order = layout.layers.map((l) => l.kind);
    expect(order.indexOf('entry')).toBeGreaterThan(order.lastIndexOf('heading'));
  });

  it('finds the deepest cell under a point', () => {
    const layout = layoutMap(tree, 480, 360, NOW);
    for (const path of ['User/Preferences/Coffee', 'Projects/Alpha/Goals/Phase2', 'Solo']) {
      const r = layout.rects.get(path)!;
      const i = cellAt(layout.cells, r.x + r.w / 2, r.y + r.h / 2);
      expect(layout.cells[i].path).toBe(path);
    }
    expect(cellAt(layout.cells, -5, -5)).toBe(-1);
  });

  it('accounts for every entry of a large memory, drawn or too small', () => {
    const many: EntrySummary[] = [];
    for (let i = 0; i < 5000; i++) {
      many.push(e(`T${i % 12}/H${i % 97}/S${i % 13}/Leaf ${i}`, NOW - i * HOUR, i % 300, i % 5));
    }
    const big = buildTree(many);
    const layout = layoutMap(big, 456, 520, NOW);
    const drawn = layout.cells.filter((c) => c.kind === 'entry').length;
    expect(drawn + layout.hidden).toBe(5000);
    expect(drawn).toBeGreaterThan(2500);
    expect(layout.layers.length).toBeLessThan(120);
  });

  it('names every heading with room for a word: along its top, or down its side when narrow', () => {
    // A big heading beside a small one: squarified, the small one is a tall narrow column.
    const narrow = buildTree([
      e('Notes/Packing', NOW, 6000, 0),
      e('Notes/Shopping', NOW, 3000, 0),
      e('Health/Allergies', NOW, 760, 0),
    ]);
    const layout = layoutMap(narrow, 400, 300, NOW);
    const health = layout.cells.find((c) => c.path === 'Health')!;
    expect(health.w).toBeLessThan(44);
    expect(health.labelSide).toBe('side');
    expect(health.label).toMatch(/^Heal/);
    // Its entry lies right of the label's strip.
    const allergies = layout.rects.get('Health/Allergies')!;
    expect(allergies.x).toBeGreaterThanOrEqual(health.x + 18);
    const notes = layout.cells.find((c) => c.path === 'Notes')!;
    expect([notes.labelSide, notes.label]).toEqual(['top', 'Notes']);
    // Every heading of the small memory has a label.
    for (const c of layoutMap(tree, 480, 360, NOW).cells.filter((c) => c.kind === 'heading')) {
      expect(c.label, c.path).not.toBe('');
    }
  });

  it('lays out nothing without entries or room', () => {
    expect(layoutMap(buildTree([]), 480, 360, NOW).cells).toEqual([]);
    expect(layoutMap(tree, 0, 0, NOW).cells).toEqual([]);
  });
});
