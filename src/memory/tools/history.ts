// Deleting, moving and restoring entries; every replaced row goes to history first. A move takes
// the entry's history along and leaves a row at the old path saying where it went.
import type { StoreContext } from '../store';
import { boolArg, intArg, isToolError, toolError } from '../validate';
import { descendantRange, parsePath, placedAt } from '../paths';
import type {
  ContextChunk,
  DeleteResult,
  HistoryResult,
  HistoryRow,
  MemoryEntry,
  MoveResult,
  NotFoundResult,
  RestoreResult,
  ToolError,
} from '../types';
import {
  keptContext,
  movedVersion,
  repathed,
  revivedRow,
  snapshotsFor,
  versionAbove,
  withoutLineage,
} from './lineage';
import { keptResult } from './write';
import { trashTools } from './trash';

export function historyTools(ctx: StoreContext) {
  const { db, now, embed, guard, pathArg, entryText, notFound, historyRow, noteWrite } = ctx;

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
        const ids = await db.history.bulkAdd(
          rows.map((r) => ({ ...historyRow(r, 'delete', at), deleteRoot: path })),
          { allKeys: true },
        );
        await db.structured_memory.bulkDelete(rows.map((r) => r.id!));
        noteWrite(rows.map((r) => r.id));
        return { deleted: rows.length, trashId: ids.reduce((a, b) => Math.min(a, b)) };
      });
      if (outcome === 'missing') return notFound(path);
      if (outcome.hasChildren !== undefined) return hasChildren(path, outcome.hasChildren);
      return {
        status: 'SUCCESS' as const,
        path,
        deleted: outcome.deleted,
        trashId: outcome.trashId,
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
      const refused = moveRefusal(from, to);
      if (refused) return refused;
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
      const renamed = (p: string) => movedPath(from, to, p);
      // `to` names entries anew (docs/design.md, "Paths"), unless it is where they came from: a
      // move back (the Undo of a rename away from a path stored before such names were refused).
      const named = pathArg(toIn, false, 'to', true);
      if (isToolError(named) && !before.some((r) => r.movedFrom === renamed(r.path))) return named;
      const invalid = invalidMove(
        before.map((r) => r.path),
        renamed,
      );
      if (invalid) return invalid;
      const emb = await embed(before.map((r) => entryText(renamed(r.path), r.content)));
      if (isToolError(emb)) return emb;
      const snaps = await snapshotsFor(before, emb.info, embed);
      if (isToolError(snaps)) return snaps;
      const computed = new Map(
        before.map((r, i) => [
          r.id,
          { version: r.version, embedding: emb.vectors[i], contextChunks: snaps[i] },
        ]),
      );
      const at = new Date(now());
      const outcome = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const taken =
          (await db.structured_memory.where('path').equals(to).count()) +
          (await db.structured_memory.where('path').between(tlo, thi, true, false).count());
        if (taken) return 'exists' as const;
        const rows = await readRows();
        if (!rows.length) return 'missing' as const;
        // Rows saved below `from` meanwhile are checked too (one may be too deep once moved).
        const bad = invalidMove(
          rows.map((r) => r.path),
          renamed,
        );
        if (bad) return bad;
        // The history goes with the entries; the old paths keep one row saying where they went.
        const earlier = await db.history
          .where('path')
          .anyOf(rows.map((r) => r.path))
          .toArray();
        // What History will list at each new path: the history taken along, and any already there.
        const listed = new Map<string, number[]>();
        const list = (path: string, version: number) =>
          listed.set(path, [...(listed.get(path) ?? []), version]);
        for (const h of earlier) list(renamed(h.path), h.version);
        const waiting = await db.history
          .where('path')
          .anyOf(rows.map((r) => renamed(r.path)))
          .toArray();
        for (const h of waiting) list(h.path, h.version);
        const versions: number[] = [];
        for (const r of rows) {
          const to = renamed(r.path);
          const version = movedVersion(r.version, listed.get(to) ?? [], to);
          if (isToolError(version)) return version;
          versions.push(version);
        }
        if (earlier.length)
          await db.history.bulkPut(earlier.map((h) => repathed(h, renamed(h.path))));
        await db.history.bulkAdd(
          rows.map((r) => ({ ...historyRow(r, 'move', at), movedTo: renamed(r.path) })),
        );
        await db.structured_memory.bulkDelete(rows.map((r) => r.id!));
        const moved = rows.map((r, i) =>
          movedRow(r, renamed(r.path), computed.get(r.id), emb.info.id, at, versions[i]),
        );
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
      if (isToolError(outcome)) return outcome;
      return { status: 'SUCCESS' as const, from, to, moved: outcome };
    });
  }

  async function getHistory(pathIn: unknown): Promise<HistoryResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const rows = await db.history.where('path').equals(path).toArray();
      return { status: 'SUCCESS' as const, path, versions: historyVersions(rows) };
    });
  }

  async function restoreMemory(
    historyIdIn: unknown,
  ): Promise<RestoreResult | NotFoundResult | ToolError> {
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
      // The version goes back to the path it is listed under (getHistory's), whatever path its
      // entry names: a row from an older import could disagree, and writing the entry's path
      // would collide with another entry.
      const path = pathArg(hist.path);
      if (isToolError(path)) return path;
      const emb = await embed([entryText(path, hist.entry.content)]);
      if (isToolError(emb)) return emb;
      const snapshots = await snapshotsFor([hist.entry], emb.info, embed);
      if (isToolError(snapshots)) return snapshots;
      const at = new Date(now());
      const done = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const current = await db.structured_memory.where('path').equals(path).first();
        const older = await db.history.where('path').equals(path).toArray();
        const version = versionAbove(
          older.map((h) => h.version),
          path,
          current?.version,
        );
        if (isToolError(version)) return version;
        const previousId = current
          ? await db.history.add(historyRow(current, 'restore', at))
          : undefined;
        const restored = revivedRow(
          hist.entry,
          path,
          { contextChunks: snapshots[0], embedding: emb.vectors[0], model: emb.info.id, at },
          version,
          current,
        );
        if (current) restored.id = current.id;
        restored.id = await db.structured_memory.put(restored);
        return { row: restored, previousId };
      });
      if (isToolError(done)) return done;
      const { row, previousId } = done;
      noteWrite([row.id]);
      return {
        ...keptResult(row.path, row),
        ...(previousId !== undefined ? { previousId } : {}),
      };
    });
  }

  return { deleteMemory, moveMemory, getHistory, restoreMemory, ...trashTools(ctx) };
}

/** deleteMemory's refusal of a path with entries below it, when `recursive` was not given. */
export function hasChildren(path: string, n: number): ToolError {
  return toolError(
    'HAS_CHILDREN',
    `"${path}" has ${n} ${n === 1 ? 'entry' : 'entries'} below it; nothing was deleted. Call deleteMemory("${path}", true) to delete them all.`,
  );
}

/** Why `from` cannot move to `to` before anything is read: the same path, or its own subtree. */
export function moveRefusal(from: string, to: string): ToolError | undefined {
  if (from === to) {
    return toolError(
      'INVALID_ARGUMENT',
      `"${from}" is already at that path; nothing moved. Give the new path to move it to.`,
    );
  }
  if (to.startsWith(from + '/')) {
    return toolError(
      'INVALID_ARGUMENT',
      `"${from}" cannot move below itself ("${to}" is inside it); nothing moved. Give a path outside it.`,
    );
  }
  return undefined;
}

/** Where `path` (`from` or a path below it) goes when `from` moves to `to`. */
export function movedPath(from: string, to: string, path: string): string {
  return to + path.slice(from.length);
}

/** The refusal of a move that would give one of `paths` an invalid or too long path. */
export function invalidMove(
  paths: readonly string[],
  renamed: (path: string) => string,
): ToolError | undefined {
  for (const p of paths) {
    const next = renamed(p);
    const parsed = parsePath(next);
    if (next.length > 512 || !parsed.ok) {
      return toolError(
        'INVALID_PATH',
        `moving would make an invalid path: ${parsed.ok ? 'too long' : next}`,
      );
    }
  }
  return undefined;
}

/** The vectors a move computed for a row before its transaction, at the version it read. */
export interface MoveVectors {
  version: number;
  embedding: Float32Array;
  contextChunks: ContextChunk[];
}

/**
 * Row `r` at its new path `to`, at `version` (its own unless History there lists it: see
 * movedVersion). It takes the vectors computed for it (model `model`); the new context snapshot only
 * if `r` is still the version they were computed from; without any (a row that came in after
 * they were computed) it keeps its own. Moved back where it came from (an undo), it is no longer
 * "moved from" anywhere.
 */
export function movedRow(
  r: MemoryEntry,
  to: string,
  computed: MoveVectors | undefined,
  model: string,
  at: Date,
  version = r.version,
): MemoryEntry {
  const { id: _id, ...rest } = withoutLineage(r);
  // The snapshot is still the one version `contextVersion` took; at the same version, it is its own.
  const kept = keptContext(r);
  return {
    ...rest,
    ...(computed?.version === r.version ? { contextChunks: computed.contextChunks } : {}),
    ...placedAt(to),
    embedding: computed?.embedding ?? r.embedding,
    model: computed ? model : r.model,
    modified: at,
    version,
    ...(r.movedFrom === to ? {} : { movedFrom: r.path }),
    ...(kept.contextVersion !== undefined && kept.contextVersion !== version ? kept : {}),
  };
}

/** getHistory's list: newest version first (then the latest replaced, then the latest row). */
export function historyVersions(rows: readonly HistoryRow[]): HistoryResult['versions'] {
  return [...rows]
    .sort(
      (a, b) =>
        b.version - a.version || b.replaced.getTime() - a.replaced.getTime() || b.id! - a.id!,
    )
    .map((r) => ({
      id: r.id!,
      version: r.version,
      reason: r.reason,
      replaced: r.replaced,
      content: r.entry.content,
      modified: r.entry.modified,
      ...(r.movedTo !== undefined ? { movedTo: r.movedTo } : {}),
      ...(r.conflictFrom !== undefined ? { conflictFrom: r.conflictFrom } : {}),
    }));
}
