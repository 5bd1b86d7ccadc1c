// Helpers every memory tool uses: the guard that turns anything thrown into a ToolError, path
// arguments, an entry's embedded text, the NOT_FOUND result, history rows and chunk views.
import { isQuotaError } from './db';
import type { Result } from './embedding-model';
import type { LiveIndexes } from './live-indexes';
import { parsePath } from './paths';
import { contentText, pathWords } from './text';
import type {
  ChunkView,
  ContextChunk,
  HistoryRow,
  JsonValue,
  MemoryEntry,
  NotFoundResult,
  ToolError,
} from './types';
import { errorText, toolError } from './validate';

/**
 * Runs a tool body, turning anything thrown into a ToolError (nothing reaches the caller);
 * refuses once the memory is closed.
 */
export async function guarded<T>(
  closed: () => boolean,
  body: () => Promise<T>,
): Promise<T | ToolError> {
  if (closed()) return toolError('INTERNAL_ERROR', 'This memory has been closed');
  try {
    return await body();
  } catch (e) {
    if (isQuotaError(e)) {
      return toolError(
        'STORAGE_FULL',
        'Browser storage is full; nothing was written. Delete or export old memories, or allow more storage.',
      );
    }
    return toolError(
      'INTERNAL_ERROR',
      `Memory storage failed; nothing was written: ${errorText(e)}`,
    );
  }
}

/**
 * A path argument, normalised, or INVALID_PATH naming the argument when it is not `path`.
 * `naming`: it names an entry anew (`parsePath`).
 */
export function pathArg(
  value: unknown,
  allowRoot = false,
  name = 'path',
  naming = false,
): Result<string> {
  const p = parsePath(value, { allowRoot, naming });
  return p.ok
    ? p.path
    : toolError('INVALID_PATH', name === 'path' ? p.message : `${name}: ${p.message}`);
}

/** The text an entry's own vector is made from: its path's words and its content's text. */
export function entryText(path: string, content: JsonValue): string {
  return `${pathWords(path)}. ${contentText(content)}`;
}

/** NOT_FOUND for `path`, saying when it is a heading and how to see what is below. */
export async function notFoundAt(
  entries: LiveIndexes['entries'],
  path: string,
): Promise<NotFoundResult> {
  const idx = await entries();
  const children = idx.children(path).length;
  if (children > 0) {
    return {
      status: 'NOT_FOUND',
      path,
      isHeading: true,
      children,
      message: `"${path}" is a heading with ${children} ${children === 1 ? 'child' : 'children'}, not an entry. Call queryMemoryHeading("${path}") to see them.`,
    };
  }
  return {
    status: 'NOT_FOUND',
    path,
    message: `Nothing is saved at "${path}". Call listMemory to see what exists.`,
  };
}

export function chunkView(c: ContextChunk): ChunkView {
  return { role: c.role, text: c.text, similarity: c.similarity };
}

function withoutId(row: MemoryEntry): Omit<MemoryEntry, 'id'> {
  const { id: _id, ...rest } = row;
  return rest;
}

/** The history row that keeps `row` as it was, replaced at `at` for `reason`. */
export function historyRow(row: MemoryEntry, reason: HistoryRow['reason'], at: Date): HistoryRow {
  return { path: row.path, version: row.version, reason, replaced: at, entry: withoutId(row) };
}
