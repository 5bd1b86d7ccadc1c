// The trash (docs/trash.md): entries deleted and not live again, read from the history rows of
// their deletes, where a recursive delete is one item; restoring an item brings it back whole, and
// emptying the trash removes every stored version of its paths. Also `resolvePath`, which follows
// an old path's moves to where its entry is now.
import type { StoreContext } from '../store';
import type { MemoryDB } from '../db';
import { descendantRange } from '../paths';
import type {
  EmptyTrashResult,
  HistoryRow,
  MemoryEntry,
  NotFoundResult,
  ResolveResult,
  RestoreDeletedResult,
  ToolError,
  TrashItem,
  TrashResult,
} from '../types';
import { intArg, isToolError, nextVersion, toolError } from '../validate';
import { revivedRow, snapshotsFor } from './lineage';

/** Most paths an item lists (its `entries` counts them all). */
export const TRASH_PATHS_LISTED = 50;

/** Most moves `resolvePath` follows (a chain longer than this is cut there). */
export const MAX_MOVES = 64;

/** The rows of one delete whose paths are still deleted. */
export interface Group {
  root: string;
  deleted: Date;
  rows: HistoryRow[];
}

/** `a` left the live table after `b` (ids break ties: rows of one write share a time). */
export function newer(a: HistoryRow, b: HistoryRow): boolean {
  const d = a.replaced.getTime() - b.replaced.getTime();
  return d > 0 || (d === 0 && a.id! > b.id!);
}

/** The rows of the same delete as `row`: same time and same root (rows from before roots: time). */
function sameDelete(row: HistoryRow) {
  return (h: HistoryRow) => h.reason === 'delete' && h.deleteRoot === row.deleteRoot;
}

/** The deepest path above or at every path (rows written before `deleteRoot` existed). */
export function commonRoot(paths: readonly string[]): string {
  let segs = paths[0].split('/');
  for (const p of paths) {
    const s = p.split('/');
    let i = 0;
    while (i < segs.length && i < s.length && segs[i] === s[i]) i++;
    segs = segs.slice(0, i);
  }
  return segs.join('/');
}

/** One delete's rows as an item: sorted by path, under the path the delete named. */
export function groupOf(rows: HistoryRow[]): Group {
  rows.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    root: rows[0].deleteRoot ?? commonRoot(rows.map((r) => r.path)),
    deleted: rows[0].replaced,
    rows,
  };
}

/**
 * The newest history row of each path, of the paths given that are not live. Read inside the
 * caller's transaction.
 */
async function newestDead(db: MemoryDB, paths: string[]): Promise<Map<string, HistoryRow>> {
  const live = new Set<unknown>(await db.structured_memory.where('path').anyOf(paths).keys());
  const dead = paths.filter((p) => !live.has(p));
  const newest = new Map<string, HistoryRow>();
  if (!dead.length) return newest;
  for (const r of await db.history.where('path').anyOf(dead).toArray()) {
    const n = newest.get(r.path);
    if (!n || newer(r, n)) newest.set(r.path, r);
  }
  return newest;
}

/** Every item of the trash, newest first (inside the caller's transaction). */
async function readTrash(db: MemoryDB): Promise<Group[]> {
  const paths = (await db.history.orderBy('path').uniqueKeys()) as string[];
  if (!paths.length) return [];
  const newest = await newestDead(db, paths);
  const byDelete = new Map<string, HistoryRow[]>();
  for (const r of newest.values()) {
    if (r.reason !== 'delete') continue; // moved away, or an older kind of row: not deleted
    const key = `${r.replaced.getTime()}\u0000${r.deleteRoot ?? '\u0000'}`;
    const list = byDelete.get(key);
    if (list) list.push(r);
    else byDelete.set(key, [r]);
  }
  return [...byDelete.values()]
    .map(groupOf)
    .sort((a, b) => b.deleted.getTime() - a.deleted.getTime() || trashItemId(b) - trashItemId(a));
}

/** An item's id: its smallest history row id (any of its rows names it to restoreDeleted). */
export function trashItemId(group: Group): number {
  return group.rows.reduce((m, r) => Math.min(m, r.id!), Number.MAX_SAFE_INTEGER);
}

/** The rows of `row`'s delete still in the trash (inside the caller's transaction). */
async function membersOf(db: MemoryDB, row: HistoryRow): Promise<HistoryRow[]> {
  const siblings = (await db.history.where('replaced').equals(row.replaced).toArray()).filter(
    sameDelete(row),
  );
  const newest = await newestDead(
    db,
    siblings.map((s) => s.path),
  );
  // A path deleted again later belongs to the later item; one live again is out of the trash.
  return siblings.filter((s) => newest.get(s.path)?.id === s.id);
}

export function trashTools(ctx: StoreContext) {
  const { db, now, embed, guard, pathArg, entryText, noteWrite } = ctx;

  async function listTrash(): Promise<TrashResult | ToolError> {
    return guard(async () => {
      const groups = await db.transaction('r', db.structured_memory, db.history, async () =>
        readTrash(db),
      );
      return { status: 'SUCCESS' as const, items: groups.map(trashItem) };
    });
  }

  async function restoreDeleted(
    trashIdIn: unknown,
  ): Promise<RestoreDeletedResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const trashId = intArg(trashIdIn, 'trashId', -1, 1, Number.MAX_SAFE_INTEGER);
      if (isToolError(trashId)) return trashId;
      if (trashId < 0)
        return toolError('INVALID_ARGUMENT', 'trashId is required (an item id from listTrash)');
      const missing = (message: string): NotFoundResult => ({
        status: 'NOT_FOUND' as const,
        path: '',
        message,
      });
      const plan = await db.transaction('r', db.structured_memory, db.history, async () => {
        const row = await db.history.get(trashId);
        if (!row) return undefined;
        return { row, members: row.reason === 'delete' ? await membersOf(db, row) : [] };
      });
      if (!plan) return missing(`Nothing in the trash has id ${trashId}; listTrash gives the ids.`);
      if (plan.row.reason !== 'delete') {
        return toolError(
          'INVALID_ARGUMENT',
          `history row ${trashId} is not a deletion (it is a version replaced by "${plan.row.reason}"); restore it with restoreMemory`,
        );
      }
      if (!plan.members.length) {
        return missing(
          `"${plan.row.deleteRoot ?? plan.row.path}" is no longer in the trash: it was restored, or saved again.`,
        );
      }
      const root = groupOf([...plan.members]).root;
      const emb = await embed(plan.members.map((m) => entryText(m.path, m.entry.content)));
      if (isToolError(emb)) return emb;
      const vectors = new Map(plan.members.map((m, i) => [m.id!, emb.vectors[i]]));
      const snaps = await snapshotsFor(
        plan.members.map((m) => m.entry),
        emb.info,
        embed,
      );
      if (isToolError(snaps)) return snaps;
      const snapshots = new Map(plan.members.map((m, i) => [m.id!, snaps[i]]));
      const at = new Date(now());

      const done = await db.transaction('rw', db.structured_memory, db.history, async () => {
        // Read again: another tab may have restored or saved some of these paths meanwhile.
        const members = (await membersOf(db, plan.row)).filter((m) => vectors.has(m.id!));
        if (!members.length) return undefined;
        const older = await db.history
          .where('path')
          .anyOf(members.map((m) => m.path))
          .toArray();
        const top = highestVersions(older);
        const rows: MemoryEntry[] = [];
        for (const m of members) {
          const version = nextVersion(top.get(m.path) ?? m.version, m.path);
          if (isToolError(version)) return version;
          const v = {
            contextChunks: snapshots.get(m.id!)!,
            embedding: vectors.get(m.id!)!,
            model: emb.info.id,
            at,
          };
          rows.push(revivedRow(m.entry, m.path, v, version));
        }
        const ids = await db.structured_memory.bulkAdd(rows, { allKeys: true });
        noteWrite(ids);
        return rows.map((r) => r.path).sort();
      });
      if (done === undefined) {
        return missing(`"${root}" is no longer in the trash: it was restored, or saved again.`);
      }
      if (isToolError(done)) return done;
      return { status: 'SUCCESS' as const, path: root, restored: done.length, paths: done };
    });
  }

  async function emptyTrash(): Promise<EmptyTrashResult | ToolError> {
    return guard(() =>
      db.transaction('rw', db.structured_memory, db.history, async () => {
        const groups = await readTrash(db);
        const paths = groups.flatMap((g) => g.rows.map((r) => r.path));
        const keys = paths.length ? await db.history.where('path').anyOf(paths).primaryKeys() : [];
        if (keys.length) await db.history.bulkDelete(keys);
        return {
          status: 'SUCCESS' as const,
          items: groups.length,
          entries: paths.length,
          versions: keys.length,
        };
      }),
    );
  }

  async function resolvePath(pathIn: unknown): Promise<ResolveResult | ToolError> {
    return guard(async () => {
      const start = pathArg(pathIn);
      if (isToolError(start)) return start;
      return db.transaction('r', db.structured_memory, db.history, async () => {
        const moves: string[] = [];
        let path = start;
        for (;;) {
          const [lo, hi] = descendantRange(path);
          const live =
            (await db.structured_memory.where('path').equals(path).count()) > 0 ||
            (await db.structured_memory.where('path').between(lo, hi, true, false).count()) > 0;
          if (live) return { status: 'SUCCESS' as const, path, live, moves };
          const to = nextMove(await db.history.where('path').equals(path).toArray(), start, moves);
          if (to === undefined) return { status: 'SUCCESS' as const, path, live: false, moves };
          moves.push(to);
          path = to;
        }
      });
    });
  }

  return { listTrash, restoreDeleted, emptyTrash, resolvePath };
}

/** How listTrash shows an item: its root, when, its paths (the first few) and what they held. */
export function trashItem(g: Group): TrashItem {
  const head = g.rows.find((r) => r.path === g.root) ?? g.rows[0];
  return {
    id: trashItemId(g),
    path: g.root,
    deleted: g.deleted,
    entries: g.rows.length,
    paths: g.rows.slice(0, TRASH_PATHS_LISTED).map((r) => r.path),
    content: head.entry.content,
    chunks: g.rows.reduce((n, r) => n + r.entry.contextChunks.length, 0),
  };
}

/** The highest version each path's history holds (an undelete goes on from there). */
export function highestVersions(rows: readonly HistoryRow[]): Map<string, number> {
  const top = new Map<string, number>();
  for (const h of rows) top.set(h.path, Math.max(top.get(h.path) ?? 0, h.version));
  return top;
}

/**
 * Where resolvePath goes next from a path that is not live, given that path's history rows: the
 * path its latest row moved it to; none when its latest row is not a move, or the move leads back
 * to `start` or to a path already in `moves` (a cycle), or `moves` is at its limit.
 */
export function nextMove(
  history: readonly HistoryRow[],
  start: string,
  moves: readonly string[],
): string | undefined {
  let last: HistoryRow | undefined;
  for (const r of history) if (!last || newer(r, last)) last = r;
  const to = last?.reason === 'move' ? last.movedTo : undefined;
  if (to === undefined || to === start || moves.includes(to) || moves.length >= MAX_MOVES)
    return undefined;
  return to;
}
