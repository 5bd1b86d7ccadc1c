// Housekeeping for the app: the entry summary the explorer draws, counts, settings, and
// re-embedding rows of another model after the user switches embedding model.
import { shardTables } from '../db';
import type { StoreContext } from '../store';
import { entrySummary } from '../entry-index';
import { addToShards, removeFromShards } from '../shards';
import type { EntrySummary, MemoryEntry, MemoryStats, ReembedProgress, ToolError } from '../types';
import { isToolError, toolError } from '../validate';

const REEMBED_BATCH = 128;

export function adminTools(ctx: StoreContext) {
  const { db, model, embed, entries, guard, entryText, noteWrite, noteChunkWrite } = ctx;

  async function memoryIndex(): Promise<EntrySummary[]> {
    const idx = await entries({ waitForModel: false });
    // The summary alone: the index's ids and vector rows stay in the worker.
    return idx.subtree('').map(entrySummary);
  }

  async function stats(): Promise<MemoryStats> {
    // Counts do not wait for a model still downloading; `stale` is 0 until it is ready.
    const idx = await entries({ waitForModel: false });
    const active = idx.model ?? '';
    const [chunks, staleChunks, conversations, messages] = await Promise.all([
      db.chunks.count(),
      active ? db.chunks.where('model').notEqual(active).count() : 0,
      db.conversations.count(),
      db.messages.count(),
    ]);
    const staleEntries = active ? idx.subtree('').filter((r) => r.vectorRow < 0).length : 0;
    return {
      entries: idx.entryCount,
      chunks,
      conversations,
      messages,
      stale: staleEntries + staleChunks,
    };
  }

  async function getSetting(key: string): Promise<unknown> {
    return (await db.settings.get(String(key)))?.value;
  }

  async function setSetting(key: string, value: unknown): Promise<void> {
    await db.settings.put({ key: String(key), value: structuredClone(value) });
  }

  /**
   * Re-embeds, batch by batch (one transaction each), every entry and chunk whose vectors came
   * from another model. Stopping half way is safe: the next run picks up what is left.
   */
  async function reembed(
    onProgress?: (p: ReembedProgress) => void,
    signal?: AbortSignal,
  ): Promise<ReembedProgress | ToolError> {
    return guard(async () => {
      const info = await model();
      if (isToolError(info)) return info;
      const staleEntryIds = (await entries())
        .subtree('')
        .filter((r) => r.vectorRow < 0)
        .map((r) => r.id);
      const staleChunkIds = await db.chunks.where('model').notEqual(info.id).primaryKeys();
      const progress = { done: 0, total: staleEntryIds.length + staleChunkIds.length };
      onProgress?.({ ...progress });

      for (let i = 0; i < staleEntryIds.length; i += REEMBED_BATCH) {
        if (signal?.aborted) return { ...progress };
        const rows = (
          await db.structured_memory.bulkGet(staleEntryIds.slice(i, i + REEMBED_BATCH))
        ).filter((r) => r !== undefined && r.model !== info.id);
        const texts = rows.flatMap((r) => [
          entryText(r!.path, r!.content),
          ...r!.contextChunks.map((c) => c.text),
        ]);
        const emb = await embed(texts);
        if (isToolError(emb)) return emb;
        let at = 0;
        const updated = rows.map((r) => ({
          ...r!,
          embedding: emb.vectors[at++],
          contextChunks: r!.contextChunks.map((c) => ({ ...c, embedding: emb.vectors[at++] })),
          model: info.id,
        }));
        // Vectors only: no new version, no history (the content did not change). Only onto the
        // row as it was read: a sync can put another row of the same version there meanwhile
        // (two devices' edits of one version), and writing the old one back would lose it.
        await db.transaction('rw', db.structured_memory, async () => {
          for (const row of updated) {
            const fresh = await db.structured_memory.get(row.id!);
            if (fresh && sameRowText(fresh, row)) await db.structured_memory.put(row);
          }
        });
        noteWrite(updated.map((r) => r.id));
        progress.done += Math.min(REEMBED_BATCH, staleEntryIds.length - i);
        onProgress?.({ ...progress });
      }

      for (let i = 0; i < staleChunkIds.length; i += REEMBED_BATCH) {
        if (signal?.aborted) return { ...progress };
        const ids = staleChunkIds.slice(i, i + REEMBED_BATCH);
        const rows = (await db.chunks.bulkGet(ids)).filter((r) => r !== undefined);
        const emb = await embed(rows.map((r) => r!.text));
        if (isToolError(emb)) return emb;
        const fresh = rows.map((r, k) => ({ ...r!, embedding: emb.vectors[k], model: info.id }));
        // Rows and shards move to the new model together.
        await db.transaction('rw', [db.chunks, ...shardTables(db)], async () => {
          const still = await db.chunks.bulkGet(fresh.map((r) => r.id!));
          const kept = fresh.filter((_r, k) => still[k] && still[k].model !== info.id);
          await db.chunks.bulkPut(kept);
          await removeFromShards(
            db,
            kept.map((r) => r.id!),
          );
          await addToShards(db, kept);
        });
        noteChunkWrite(ids);
        progress.done += ids.length;
        onProgress?.({ ...progress });
      }
      return progress.total
        ? { ...progress }
        : toolError('NOT_FOUND', 'Every vector is already from the active model');
    });
  }

  return { memoryIndex, stats, getSetting, setSetting, reembed };
}

/** Whether two rows of an entry hold the same version, text and context (the vectors aside). */
function sameRowText(a: MemoryEntry, b: MemoryEntry): boolean {
  return (
    a.version === b.version &&
    a.path === b.path &&
    a.modified.getTime() === b.modified.getTime() &&
    JSON.stringify(a.content) === JSON.stringify(b.content) &&
    a.contextChunks.length === b.contextChunks.length &&
    a.contextChunks.every((c, i) => c.text === b.contextChunks[i].text)
  );
}
