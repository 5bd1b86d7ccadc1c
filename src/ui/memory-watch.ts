// The page's side of the change feed (docs/design.md, "Change notifications"): a reactive
// controller that keeps a view's data current as the memory database changes, in this tab or
// any other, and the pure patches the views apply. The memory worker says what each committed
// write changed (`followMemoryChanges`), and only once its engine has taken the write in: the
// page never watches the database itself, since its copy of Dexie's cross-tab broadcast can
// arrive before the worker's, and a read sent then is answered from the worker's indexes as they
// were before the write (another tab's save would then never show here). A view that can patch
// its data from the report does so on the next animation frame; otherwise, or where the report
// could not describe the rows (a bulk write, a restore), it loads again through the worker.
import { proxy } from 'comlink';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { Conversation, EntrySummary, MemoryChange } from '../memory/types';
import type { MemoryClient } from '../worker-client';
import { applyTreeDelta, buildTree, type MemoryTree } from './tree-model';

export type { MemoryChange };

export type MemoryTable =
  'structured_memory' | 'conversations' | 'messages' | 'chunks' | 'history' | 'settings';

/** What a patch returns when only a full load can bring the data up to date. */
export const RELOAD: unique symbol = Symbol('reload');

type ChangeListener = (change: MemoryChange) => void;

const listeners = new Set<ChangeListener>();
const followed = new WeakSet<MemoryClient>();

/** Tells every watcher what changed (the worker's report). */
export function reportMemoryChange(change: MemoryChange): void {
  for (const listener of listeners) listener(change);
}

/**
 * Tells every watcher that these tables changed, without saying which rows: views of them load
 * again (harnesses call it; so does a page restored from the back/forward cache).
 */
export function notifyMemoryChange(tables: Iterable<string>): void {
  reportMemoryChange({ tables: [...tables] });
}

/**
 * Follows the changes that the worker behind `memory` reports (once per client). Call it before
 * the first load through that client: the subscription reaches the worker first, so no write
 * falls between a load and the first report.
 */
export function followMemoryChanges(memory: MemoryClient): Promise<void> {
  if (followed.has(memory)) return Promise.resolve();
  followed.add(memory);
  return memory.onMemoryChange(proxy((change: MemoryChange) => reportMemoryChange(change)));
}

// A page restored from the back/forward cache may have missed reports while it was frozen.
globalThis.addEventListener?.('pageshow', (event) => {
  if (event.persisted) {
    notifyMemoryChange(['structured_memory', 'conversations', 'messages', 'chunks', 'history']);
  }
});

// ---- reports merged and patches (pure) ----------------------------------------------------

/**
 * One report saying what `changes` said, in order: a later state of a row wins. A table that
 * one of them names without describing it stays undescribed.
 */
export function mergeChanges(changes: readonly MemoryChange[]): MemoryChange {
  if (changes.length === 1) return changes[0];
  const tables = new Set<string>();
  const entries = new Map<string, EntrySummary | null>();
  const conversations = new Map<number, Conversation | null>();
  const messages = new Set<number>();
  const history = new Set<string>();
  const described = {
    structured_memory: true,
    conversations: true,
    messages: true,
    history: true,
  };
  for (const change of changes) {
    for (const t of change.tables) tables.add(t);
    const has = (t: string) => change.tables.includes(t);
    if (change.entries) {
      for (const path of change.entries.removed) entries.set(path, null);
      for (const e of change.entries.upserted) entries.set(e.path, e);
    } else if (has('structured_memory')) described.structured_memory = false;
    if (change.conversations) {
      for (const id of change.conversations.removed) conversations.set(id, null);
      for (const c of change.conversations.upserted) conversations.set(c.id!, c);
    } else if (has('conversations')) described.conversations = false;
    if (change.messages) for (const id of change.messages.ids) messages.add(id);
    else if (has('messages')) described.messages = false;
    if (change.history) for (const p of change.history.paths) history.add(p);
    else if (has('history')) described.history = false;
  }
  const out: MemoryChange = { tables: [...tables] };
  if (tables.has('structured_memory') && described.structured_memory) {
    out.entries = { upserted: [], removed: [] };
    for (const [path, e] of entries) {
      if (e) out.entries.upserted.push(e);
      else out.entries.removed.push(path);
    }
  }
  if (tables.has('conversations') && described.conversations) {
    out.conversations = { upserted: [], removed: [] };
    for (const [id, c] of conversations) {
      if (c) out.conversations.upserted.push(c);
      else out.conversations.removed.push(id);
    }
  }
  if (tables.has('messages') && described.messages) out.messages = { ids: [...messages] };
  if (tables.has('history') && described.history) out.history = { paths: [...history] };
  return out;
}

/** Entries upserted (by path) and removed (by path). */
export interface EntryDelta {
  upserted: readonly EntrySummary[];
  removed: readonly string[];
}

/** Each patched entry list, with the list it was patched from and how. */
const entryPatches = new WeakMap<
  readonly EntrySummary[],
  { base: readonly EntrySummary[] } & EntryDelta
>();

/**
 * The list `entries` was patched from and the delta, if it came from `applyEntryDelta`: a view
 * whose model was built from that base patches its model too (the tree, the map) instead of
 * building it again.
 */
export function entryPatchOf(
  entries: readonly EntrySummary[],
): ({ base: readonly EntrySummary[] } & EntryDelta) | undefined {
  return entryPatches.get(entries);
}

/**
 * `entries` with `delta` applied: a new list (remembered by `entryPatchOf`), or `entries`
 * itself when the delta changes nothing in it.
 */
export function applyEntryDelta<L extends readonly EntrySummary[]>(
  entries: L,
  delta: EntryDelta,
): L | EntrySummary[] {
  const at = new Map<string, number>();
  entries.forEach((e, i) => at.set(e.path, i));
  const removed = delta.removed.filter((p) => at.has(p));
  if (!delta.upserted.length && !removed.length) return entries;
  const next = entries.slice();
  for (const e of delta.upserted) {
    const i = at.get(e.path);
    if (i === undefined) {
      at.set(e.path, next.length);
      next.push(e);
    } else next[i] = e;
  }
  const gone = new Set(removed);
  const out = gone.size ? next.filter((e) => !gone.has(e.path)) : next;
  // Only the latest step is kept: the list patched from `entries` no longer needs its own base.
  entryPatches.delete(entries);
  entryPatches.set(out, { base: entries, upserted: delta.upserted, removed });
  return out;
}

/**
 * The tree of `entries`: `tree` patched when `entries` was patched from `from` (the list `tree`
 * shows), else built anew. `tree` must not be used again.
 */
export function treeFor(
  entries: readonly EntrySummary[],
  tree: MemoryTree,
  from: readonly EntrySummary[] | undefined,
): MemoryTree {
  const patch = entryPatchOf(entries);
  return patch && from && patch.base === from ? applyTreeDelta(tree, patch) : buildTree(entries);
}

/** The entry list (`memoryIndex()`) patched from a report, or RELOAD when it cannot be. */
export function patchEntries(
  entries: readonly EntrySummary[],
  change: MemoryChange,
): readonly EntrySummary[] | typeof RELOAD {
  if (!change.tables.includes('structured_memory')) return entries;
  return change.entries ? applyEntryDelta(entries, change.entries) : RELOAD;
}

/** The conversation list (`listConversations()`: newest first) patched from a report. */
export function patchConversations(
  list: readonly Conversation[],
  change: MemoryChange,
): Conversation[] | typeof RELOAD {
  if (!change.tables.includes('conversations')) return list as Conversation[];
  if (!change.conversations) return RELOAD;
  const { upserted, removed } = change.conversations;
  if (!upserted.length && !removed.length) return list as Conversation[];
  const byId = new Map(list.map((c) => [c.id, c]));
  for (const id of removed) byId.delete(id);
  for (const c of upserted) byId.set(c.id, c);
  // The order listConversations gives: newest first, ties by id (its read order).
  return [...byId.values()].sort(
    (a, b) => b.modified.getTime() - a.modified.getTime() || (a.id ?? 0) - (b.id ?? 0),
  );
}

// ---- the controller ------------------------------------------------------------------------

export interface WatchOptions<T> {
  /** Tables whose writes concern the view. */
  tables: readonly MemoryTable[];
  /** Loads the data (usually through the worker proxy). */
  load: () => Promise<T>;
  /**
   * Brings loaded data up to date from a report, on the next animation frame: returns the same
   * value when the report does not concern it, a new one, or RELOAD. Without it, every report
   * on the tables loads again.
   */
  patch?: (value: T, change: MemoryChange) => T | typeof RELOAD;
  /**
   * Patch as the report arrives rather than on the next frame: for a patch that costs next to
   * nothing (the detail takes what the report carries), so the view changes in the task that
   * brought the report and is painted in the frame after it, without waiting for a frame first.
   */
  patchOnReport?: boolean;
  /** Coalesces bursts of writes before a load again (default 60 ms). */
  debounceMs?: number;
}

/** Runs `fn` before the next paint; a hidden page paints no frames, so there soon after. */
function nextFrame(fn: () => void): void {
  if (typeof requestAnimationFrame === 'function' && document.visibilityState !== 'hidden') {
    requestAnimationFrame(fn);
  } else setTimeout(fn, 0);
}

export class MemoryWatch<T> implements ReactiveController {
  /** The latest data; undefined until the first load finishes. */
  value: T | undefined;
  error: unknown;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private loading: Promise<void> | undefined;
  private again = false;
  /** Reports waiting for the next frame (or for the load under way to end). */
  private queued: MemoryChange[] = [];
  private frameAsked = false;

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly options: WatchOptions<T>,
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    listeners.add(this.onChange);
    void this.reload();
  }

  hostDisconnected(): void {
    listeners.delete(this.onChange);
    clearTimeout(this.timer);
    this.queued = [];
  }

  /** Fetches now (also used when the inputs of `load` change). */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        try {
          this.value = await this.options.load();
          this.error = undefined;
        } catch (e) {
          this.error = e;
        }
      } while (this.again);
      this.loading = undefined;
      // Reports that came during the load: patches state rows as they are now, so applying
      // one the load already saw changes nothing.
      this.applyQueued();
      this.host.requestUpdate();
    })();
    return this.loading;
  }

  private readonly onChange = (change: MemoryChange) => {
    if (!this.options.tables.some((t) => change.tables.includes(t))) return;
    if (!this.options.patch) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.reload(), this.options.debounceMs ?? 60);
      return;
    }
    this.queued.push(change);
    if (this.options.patchOnReport) {
      // A load under way applies the report when it ends.
      if (!this.loading && this.applyQueued()) this.host.requestUpdate();
      return;
    }
    if (this.frameAsked) return;
    this.frameAsked = true;
    nextFrame(() => {
      this.frameAsked = false;
      if (this.loading) return; // applied when the load ends
      if (this.applyQueued()) this.host.requestUpdate();
    });
  };

  /** Applies the queued reports; true when the value changed. */
  private applyQueued(): boolean {
    const queued = this.queued;
    const patch = this.options.patch;
    if (!queued.length || !patch) return false;
    this.queued = [];
    if (this.value === undefined || this.error !== undefined) {
      void this.reload();
      return false;
    }
    const next = patch(this.value, mergeChanges(queued));
    if (next === RELOAD) {
      void this.reload();
      return false;
    }
    if (next === this.value) return false;
    this.value = next;
    return true;
  }
}
