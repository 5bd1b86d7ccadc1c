// The change feed's patches (docs/design.md, "Change notifications"): a tree patched from entry
// deltas equals the tree built from the patched list, and the list, conversation and detail
// patches say what a full load would.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Conversation, EntrySummary, MemoryChange } from '../../src/memory/types';
import {
  RELOAD,
  applyEntryDelta,
  entryPatchOf,
  mergeChanges,
  patchConversations,
  patchEntries,
} from '../../src/ui/memory-watch';
import { changeTouches } from '../../src/memory/change-feed';
import {
  applyTreeDelta,
  buildTree,
  type MemoryNode,
  type MemoryTree,
} from '../../src/ui/tree-model';

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 5, 1);

function e(path: string, modified = NOW, size = 10, chunks = 0): EntrySummary {
  return { path, version: 1, created: modified - DAY, modified, accessed: modified, size, chunks };
}

/** The tree as plain data: every node, its place and its totals, in child order. */
function shape(tree: MemoryTree) {
  const node = (n: MemoryNode): unknown => ({
    path: n.path,
    heading: n.heading,
    depth: n.depth,
    parent: n.parent?.path,
    entry: n.entry,
    descendants: n.descendants,
    newest: n.newest,
    size: n.size,
    chunks: n.chunks,
    children: n.children.map(node),
  });
  return {
    root: node(tree.root),
    paths: [...tree.byPath.keys()].sort(),
    entries: tree.entries,
    headings: tree.headings,
  };
}

const BASE = [
  e('User/Preferences/Coffee', NOW - DAY, 40, 2),
  e('User/Preferences', NOW - 3 * DAY, 20, 1),
  e('User/Name', NOW - 40 * DAY, 12),
  e('Projects/Alpha/Goals/Phase10', NOW - 2 * DAY, 30, 3),
  e('Projects/Alpha/Goals/Phase2', NOW - 5 * DAY, 30),
  e('Solo', NOW - 100 * DAY, 7),
];

describe('applyTreeDelta', () => {
  it('adds an entry under new headings at their sorted place, with totals', () => {
    const delta = { upserted: [e('Projects/Beta/Plan', NOW, 50, 4), e('Alpha', NOW)], removed: [] };
    const patched = applyTreeDelta(buildTree(BASE), delta);
    expect(shape(patched)).toEqual(shape(buildTree(applyEntryDelta(BASE, delta))));
    expect(patched.root.children.map((c) => c.heading)).toEqual([
      'Alpha',
      'Projects',
      'Solo',
      'User',
    ]);
  });

  it('removes an entry and the headings left empty, and updates the recency above', () => {
    const delta = { upserted: [], removed: ['User/Preferences/Coffee', 'User/Preferences'] };
    const patched = applyTreeDelta(buildTree(BASE), delta);
    expect(patched.byPath.has('User/Preferences')).toBe(false);
    expect(patched.byPath.get('User')!.newest).toBe(NOW - 40 * DAY);
    expect(shape(patched)).toEqual(shape(buildTree(applyEntryDelta(BASE, delta))));
  });

  it('keeps a heading that is no longer an entry while entries lie below', () => {
    const delta = { upserted: [], removed: ['User/Preferences'] };
    const patched = applyTreeDelta(buildTree(BASE), delta);
    expect(patched.byPath.get('User/Preferences')!.entry).toBeUndefined();
    expect(shape(patched)).toEqual(shape(buildTree(applyEntryDelta(BASE, delta))));
  });

  it('replaces an entry saved again (a move is a removal and an upsert)', () => {
    const delta = {
      upserted: [e('User/Name', NOW, 99, 5), e('Archive/Phase2', NOW - 5 * DAY, 30)],
      removed: ['Projects/Alpha/Goals/Phase2'],
    };
    const patched = applyTreeDelta(buildTree(BASE), delta);
    expect(shape(patched)).toEqual(shape(buildTree(applyEntryDelta(BASE, delta))));
    expect(patched.root.size).toBe(buildTree(applyEntryDelta(BASE, delta)).root.size);
  });

  it('returns a new tree object, so views memoised on it draw again', () => {
    const tree = buildTree(BASE);
    expect(applyTreeDelta(tree, { upserted: [e('New')], removed: [] })).not.toBe(tree);
  });

  it('matches buildTree after any sequence of saves and deletes', () => {
    const segment = fc.constantFrom('a', 'B', 'c2', 'c10', 'D');
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'));
    const step = fc.oneof(
      fc.record({
        save: path,
        modified: fc.integer({ min: 0, max: 1000 }),
        size: fc.integer({ min: 0, max: 500 }),
        chunks: fc.integer({ min: 0, max: 5 }),
      }),
      fc.record({ remove: path }),
    );
    fc.assert(
      fc.property(
        fc.array(path, { maxLength: 12 }),
        fc.array(fc.array(step, { maxLength: 6 }), { maxLength: 6 }),
        (start, batches) => {
          let list: readonly EntrySummary[] = [...new Set(start)].map((p) => e(p, NOW));
          let tree = buildTree(list);
          for (const batch of batches) {
            // One report: each path once, in its latest state (as the worker sends them).
            const last = new Map<string, EntrySummary | null>();
            for (const s of batch) {
              if ('save' in s) last.set(s.save, e(s.save, NOW + s.modified, s.size, s.chunks));
              else last.set(s.remove, null);
            }
            const delta = {
              upserted: [...last.values()].filter((v) => v !== null),
              removed: [...last].filter(([, v]) => v === null).map(([p]) => p),
            };
            list = applyEntryDelta(list, delta);
            tree = applyTreeDelta(tree, delta);
            expect(shape(tree)).toEqual(shape(buildTree(list)));
          }
        },
      ),
    );
  });
});

describe('entry list patches', () => {
  it('patches the list and remembers what it was patched from', () => {
    const change: MemoryChange = {
      tables: ['structured_memory', 'history'],
      entries: { upserted: [e('Solo', NOW, 1)], removed: ['User/Name'] },
    };
    const next = patchEntries(BASE, change);
    expect(next).not.toBe(RELOAD);
    const list = next as EntrySummary[];
    expect(list.map((x) => x.path)).not.toContain('User/Name');
    expect(list.find((x) => x.path === 'Solo')!.size).toBe(1);
    expect(list).toHaveLength(BASE.length - 1);
    expect(entryPatchOf(list)).toMatchObject({ base: BASE, removed: ['User/Name'] });
  });

  it('leaves the list as it is for other tables, and reloads when the rows are not told', () => {
    expect(patchEntries(BASE, { tables: ['messages'] })).toBe(BASE);
    expect(patchEntries(BASE, { tables: ['structured_memory'] })).toBe(RELOAD);
    expect(
      patchEntries(BASE, {
        tables: ['structured_memory'],
        entries: { upserted: [], removed: ['Nope'] },
      }),
    ).toBe(BASE);
  });
});

describe('conversation list patches', () => {
  const c = (id: number, title: string, modified: number): Conversation => ({
    id,
    title,
    created: new Date(0),
    modified: new Date(modified),
  });
  const list = [c(3, 'Three', 300), c(1, 'One', 200), c(2, 'Two', 200)];

  it('renames in place, adds and removes, newest first with ties by id', () => {
    const next = patchConversations(list, {
      tables: ['conversations'],
      conversations: { upserted: [c(2, 'Renamed', 200), c(4, 'Four', 250)], removed: [3] },
    });
    expect(next).not.toBe(RELOAD);
    expect((next as Conversation[]).map((x) => [x.id, x.title])).toEqual([
      [4, 'Four'],
      [1, 'One'],
      [2, 'Renamed'],
    ]);
  });

  it('moves a conversation written to the top', () => {
    const next = patchConversations(list, {
      tables: ['conversations', 'messages'],
      conversations: { upserted: [c(2, 'Two', 400)], removed: [] },
      messages: { ids: [9] },
    }) as Conversation[];
    expect(next.map((x) => x.id)).toEqual([2, 3, 1]);
  });

  it('reloads when the rows are not told, and ignores other tables', () => {
    expect(patchConversations(list, { tables: ['conversations'] })).toBe(RELOAD);
    expect(patchConversations(list, { tables: ['messages'], messages: { ids: [1] } })).toBe(list);
  });
});

describe('mergeChanges', () => {
  it('keeps the latest state of each row', () => {
    const merged = mergeChanges([
      { tables: ['structured_memory'], entries: { upserted: [e('A', 1)], removed: ['B'] } },
      {
        tables: ['structured_memory', 'history'],
        entries: { upserted: [e('B', 2)], removed: ['A'] },
        history: { paths: ['A'] },
      },
    ]);
    expect(merged.tables.sort()).toEqual(['history', 'structured_memory']);
    expect(merged.entries).toEqual({ upserted: [e('B', 2)], removed: ['A'] });
    expect(merged.history).toEqual({ paths: ['A'] });
  });

  it('leaves a table undescribed when one report could not describe it', () => {
    const merged = mergeChanges([
      { tables: ['structured_memory'], entries: { upserted: [e('A')], removed: [] } },
      { tables: ['structured_memory'] },
    ]);
    expect(merged.entries).toBeUndefined();
  });
});

describe('changeTouches (the entry detail)', () => {
  const saved = (path: string): MemoryChange => ({
    tables: ['structured_memory'],
    entries: { upserted: [e(path)], removed: [] },
  });

  it('is true for the path itself and what lies below it, false for the rest', () => {
    expect(changeTouches(saved('User/Name'), 'User/Name')).toBe(true);
    expect(changeTouches(saved('User/Name/First'), 'User/Name')).toBe(true);
    expect(changeTouches(saved('User/Names'), 'User/Name')).toBe(false);
    expect(changeTouches(saved('Solo'), 'User/Name')).toBe(false);
    expect(changeTouches(saved('Solo'), '')).toBe(true);
  });

  it('is true for a history row of the path, and whenever the report cannot say', () => {
    expect(
      changeTouches({ tables: ['history'], history: { paths: ['User/Name'] } }, 'User/Name'),
    ).toBe(true);
    expect(changeTouches({ tables: ['history'], history: { paths: ['Solo'] } }, 'User/Name')).toBe(
      false,
    );
    expect(changeTouches({ tables: ['history'] }, 'User/Name')).toBe(true);
    expect(changeTouches({ tables: ['structured_memory'] }, 'User/Name')).toBe(true);
    expect(changeTouches({ tables: ['conversations'] }, 'User/Name')).toBe(false);
  });
});
