// Deleting, moving and restoring entries; every replaced row goes to history first. A move takes
// the entry's history along and leaves a row at the old path saying where it went.
import type { StoreContext } from '../store';
import { boolArg, intArg, isToolError, nextVersion, toolError } from '../validate';
import { descendantRange, headingOf, parentOf, parsePath } from '../paths';
import type {
  DeleteResult,
  HistoryResult,
  MemoryEntry,
  MoveResult,
  NotFoundResult,
  RestoreResult,
  ToolError,
} from '../types';
import { keptContext, repathed, snapshotsFor, withoutLineage } from './lineage';
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
      if ('hasChildren' in outcome) {
        const n = outcome.hasChildren;
        return toolError(
          'HAS_CHILDREN',
          `"${path}" has ${n} ${n === 1 ? 'entry' : 'entries'} below it; nothing was deleted. Call deleteMemory("${path}", true) to delete them all.`,
        );
      }
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
      const snaps = await snapshotsFor(before, emb.info, embed);
      if (isToolError(snaps)) return snaps;
      const snapshots = new Map(
        before.map((r, i) => [r.id, { version: r.version, chunks: snaps[i] }]),
      );
      const at = new Date(now());
      const outcome = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const taken =
          (await db.structured_memory.where('path').equals(to).count()) +
          (await db.structured_memory.where('path').between(tlo, thi, true, false).count());
        if (taken) return 'exists' as const;
        const rows = await readRows();
        if (!rows.length) return 'missing' as const;
        for (const r of rows) {
          const next = nextVersion(r.version, r.path);
          if (isToolError(next)) return next;
        }
        // The history goes with the entries; the old paths keep one row saying where they went.
        const earlier = await db.history
          .where('path')
          .anyOf(rows.map((r) => r.path))
          .toArray();
        if (earlier.length)
          await db.history.bulkPut(earlier.map((h) => repathed(h, renamed(h.path))));
        await db.history.bulkAdd(
          rows.map((r) => ({ ...historyRow(r, 'move', at), movedTo: renamed(r.path) })),
        );
        await db.structured_memory.bulkDelete(rows.map((r) => r.id!));
        const moved: MemoryEntry[] = rows.map((r) => {
          const p = renamed(r.path);
          const { id: _id, ...rest } = withoutLineage(r);
          const vector = vectors.get(r.id);
          const snap = snapshots.get(r.id);
          return {
            ...rest,
            ...(vector && snap?.version === r.version ? { contextChunks: snap.chunks } : {}),
            path: p,
            heading: headingOf(p),
            parent_path: parentOf(p),
            embedding: vector ?? r.embedding,
            model: vector ? emb.info.id : r.model,
            modified: at,
            version: r.version + 1, // below MAX_VERSION: checked above
            // Moved back where it came from (an undo): no longer "moved from" anywhere.
            ...(r.movedFrom === p ? {} : { movedFrom: r.path }),
            ...keptContext(r),
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
      if (isToolError(outcome)) return outcome;
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
          ...(r.movedTo !== undefined ? { movedTo: r.movedTo } : {}),
          ...(r.conflictFrom !== undefined ? { conflictFrom: r.conflictFrom } : {}),
        })),
      };
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
        const top = Math.max(current?.version ?? 0, ...older.map((h) => h.version));
        const version = nextVersion(top, path);
        if (isToolError(version)) return version;
        const previousId = current
          ? await db.history.add(historyRow(current, 'restore', at))
          : undefined;
        const { movedFrom } = hist.entry;
        const restored: MemoryEntry = {
          ...withoutLineage(hist.entry),
          ...(movedFrom !== undefined && movedFrom !== path ? { movedFrom } : {}),
          ...keptContext(hist.entry),
          contextChunks: snapshots[0],
          path,
          heading: headingOf(path),
          parent_path: parentOf(path),
          embedding: emb.vectors[0],
          model: emb.info.id,
          created: current?.created ?? hist.entry.created,
          modified: at,
          accessed: current?.accessed ?? hist.entry.accessed,
          version,
        };
        if (current) restored.id = current.id;
        restored.id = await db.structured_memory.put(restored);
        return { row: restored, previousId };
      });
      if (isToolError(done)) return done;
      const { row, previousId } = done;
      noteWrite([row.id]);
      return {
        status: 'SUCCESS' as const,
        path: row.path,
        version: row.version,
        contextTokens: row.contextChunks.reduce((s, c) => s + c.tokenCount, 0),
        chunksStored: row.contextChunks.length,
        ...(previousId !== undefined ? { previousId } : {}),
      };
    });
  }

  return { deleteMemory, moveMemory, getHistory, restoreMemory, ...trashTools(ctx) };
}
