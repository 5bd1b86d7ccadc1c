// The app's read of one entry: everything but the vectors, without touching `accessed` (a
// person looking at the explorer is not the model using the memory).
import type { StoreContext } from '../store';
import type { EntryView, ToolError } from '../types';
import { isToolError, toolError } from '../validate';

export function entryTools(ctx: StoreContext) {
  const { db, guard, pathArg } = ctx;

  async function getEntry(pathIn: unknown): Promise<EntryView | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const row = await db.structured_memory.where('path').equals(path).first();
      if (!row) return toolError('NOT_FOUND', `Nothing is saved at "${path}"`);
      return {
        path: row.path,
        content: row.content,
        contextChunks: row.contextChunks.map(({ embedding: _e, ...c }) => c),
        model: row.model,
        created: row.created,
        modified: row.modified,
        accessed: row.accessed,
        version: row.version,
        ...(row.movedFrom !== undefined ? { movedFrom: row.movedFrom } : {}),
        ...(row.contextVersion !== undefined ? { contextVersion: row.contextVersion } : {}),
      };
    });
  }

  return { getEntry };
}
