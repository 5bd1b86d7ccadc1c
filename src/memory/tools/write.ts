// Writing entries: saveMemory (with its context snapshot), updateMemory (RFC 7396 merge patch) and
// editMemory (a hand edit that keeps the snapshot).
import type { StoreContext } from '../store';
import {
  intArg,
  isToolError,
  mergePatch,
  nextVersion,
  short,
  toolError,
  validateContent,
} from '../validate';

export { mergePatch };
import { headingOf, placedAt } from '../paths';
import type { JsonValue, MemoryEntry, NotFoundResult, SaveResult, ToolError } from '../types';
import { keptContext, snapshotsFor, versionAbove, type Vectors } from './lineage';

const QUERY_CONTENT_CHARS = 200;

export function writeTools(ctx: StoreContext) {
  const {
    db,
    now,
    embed,
    guard,
    pathArg,
    entryText,
    notFound,
    historyRow,
    noteWrite,
    snapshot,
    state,
  } = ctx;

  async function saveMemory(
    pathIn: unknown,
    contentIn: unknown,
    contextTokensIn?: unknown,
    optionsIn?: unknown,
  ): Promise<SaveResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const content = validateContent(contentIn);
      if (isToolError(content)) return content;
      const budget = intArg(contextTokensIn, 'contextTokens', 1000, 0, 4000);
      if (isToolError(budget)) return budget;
      const conversationId = saveConversation(optionsIn, state.lastConversationId);
      if (isToolError(conversationId)) return conversationId;
      const turnId = saveTurn(optionsIn);
      if (isToolError(turnId)) return turnId;
      const expected = expectedVersion(optionsIn);
      if (isToolError(expected)) return expected;

      // Content the entry holds already: nothing to write, and no model is needed to say so.
      const held = await db.structured_memory.where('path').equals(path).first();
      // A new entry's path may not hide or reorder characters; an entry stored with one before
      // they were refused may still be saved (docs/design.md, "Paths").
      if (!held) {
        const named = pathArg(pathIn, false, 'path', true);
        if (isToolError(named)) return named;
      }
      const asExpected = expected === undefined || expected === held?.version;
      if (held && asExpected && holdsContent(held, content.json))
        return unchangedResult(path, held);

      const queryText = saveQueryText(path, content.json);
      const emb = await embed([queryText, entryText(path, content.value)]);
      if (isToolError(emb)) return emb;
      const { chunks, used } = await snapshot(
        emb.info,
        conversationId,
        { text: queryText, vector: emb.vectors[0] },
        budget,
        turnId,
      );

      const at = new Date(now());
      const written = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const existing = await db.structured_memory.where('path').equals(path).first();
        if (expected !== undefined && (existing?.version ?? null) !== expected) {
          return toolError(
            'CHANGED',
            `"${path}" ${existing ? `is at version ${existing.version}` : 'is not saved'} now, not ${expected === null ? 'unsaved' : `at version ${expected}`} as when it was read; nothing was saved.`,
          );
        }
        // Saved meanwhile with this content (another tab, the memory keeper): no second version.
        if (existing && holdsContent(existing, content.json)) return { unchanged: existing };
        // A live row is above its history already; a new one goes on from what History lists.
        const listed = existing
          ? []
          : (await db.history.where('path').equals(path).toArray()).map((h) => h.version);
        const row = savedRow(existing, path, listed, {
          content: content.value,
          contextChunks: chunks,
          embedding: emb.vectors[1],
          model: emb.info.id,
          at,
        });
        if (isToolError(row)) return row;
        if (existing) {
          await db.history.add(historyRow(existing, 'update', at));
          await db.structured_memory.put(row);
        } else {
          row.id = await db.structured_memory.add(row);
        }
        return row;
      });
      if (isToolError(written)) return written;
      if ('unchanged' in written) return unchangedResult(path, written.unchanged);
      noteWrite([written.id]);
      return {
        status: 'SUCCESS' as const,
        path,
        version: written.version,
        contextTokens: used,
        chunksStored: chunks.length,
      };
    });
  }

  async function updateMemory(
    pathIn: unknown,
    patchIn: unknown,
  ): Promise<SaveResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const patch = validateContent(patchIn, 'patch');
      if (isToolError(patch)) return patch;
      if (!isObject(patch.value)) {
        return toolError(
          'INVALID_ARGUMENT',
          'patch must be a JSON object (an RFC 7396 merge patch; null removes a key)',
        );
      }
      const current = await db.structured_memory.where('path').equals(path).first();
      if (!current) return notFound(path);
      if (!isObject(current.content)) {
        return toolError(
          'INVALID_CONTENT',
          `"${path}" holds ${Array.isArray(current.content) ? 'an array' : typeof current.content}, not an object; use saveMemory to replace it`,
        );
      }
      const merged = validateContent(mergePatch(current.content, patch.value));
      if (isToolError(merged)) return merged;
      if (holdsContent(current, merged.json)) return unchangedResult(path, current);
      const emb = await embed([entryText(path, merged.value)]);
      if (isToolError(emb)) return emb;
      const snapshots = await snapshotsFor([current], emb.info, embed);
      if (isToolError(snapshots)) return snapshots;
      const at = new Date(now());
      const written = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const fresh = await db.structured_memory.where('path').equals(path).first();
        if (!fresh) return null;
        // Merge onto the row as it is now, so a concurrent write is not lost; checked as the
        // first merge was (it may hold no object now, or the merge may be too large).
        const same = fresh.version === current.version;
        let content = merged.value;
        if (!same) {
          if (!isObject(fresh.content)) {
            return toolError(
              'INVALID_CONTENT',
              `"${path}" was saved meanwhile and holds ${Array.isArray(fresh.content) ? 'an array' : typeof fresh.content}, not an object; nothing was changed`,
            );
          }
          const again = validateContent(mergePatch(fresh.content, patch.value));
          if (isToolError(again)) return again;
          if (holdsContent(fresh, again.json)) return { unchanged: fresh };
          content = again.value;
        }
        const row = rewrittenRow(fresh, current.version, {
          content,
          contextChunks: snapshots[0],
          embedding: emb.vectors[0],
          model: emb.info.id,
          at,
        });
        if (isToolError(row)) return row;
        await db.history.add(historyRow(fresh, 'update', at));
        await db.structured_memory.put(row);
        return row;
      });
      if (!written) return notFound(path);
      if (isToolError(written)) return written;
      if ('unchanged' in written) return unchangedResult(path, written.unchanged);
      noteWrite([written.id]);
      return keptResult(path, written);
    });
  }

  /**
   * A person's edit in the app: the content replaced whole, the context snapshot kept (a hand edit
   * has no conversation of its own; the snapshot still says why the entry exists).
   */
  async function editMemory(
    pathIn: unknown,
    contentIn: unknown,
  ): Promise<SaveResult | NotFoundResult | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn);
      if (isToolError(path)) return path;
      const content = validateContent(contentIn);
      if (isToolError(content)) return content;
      const emb = await embed([entryText(path, content.value)]);
      if (isToolError(emb)) return emb;
      const current = await db.structured_memory.where('path').equals(path).first();
      if (!current) return notFound(path);
      const snapshots = await snapshotsFor([current], emb.info, embed);
      if (isToolError(snapshots)) return snapshots;
      const at = new Date(now());
      const written = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const fresh = await db.structured_memory.where('path').equals(path).first();
        if (!fresh) return null;
        const row = rewrittenRow(fresh, current.version, {
          content: content.value,
          contextChunks: snapshots[0],
          embedding: emb.vectors[0],
          model: emb.info.id,
          at,
        });
        if (isToolError(row)) return row;
        await db.history.add(historyRow(fresh, 'update', at));
        await db.structured_memory.put(row);
        return row;
      });
      if (!written) return notFound(path);
      if (isToolError(written)) return written;
      noteWrite([written.id]);
      return keptResult(path, written);
    });
  }

  return { saveMemory, updateMemory, editMemory };
}

/**
 * The conversation whose turns feed saveMemory's context snapshot: `options.conversationId` when
 * given, else `fallback` (the conversation of the latest turn).
 */
export function saveConversation(
  optionsIn: unknown,
  fallback: number | undefined,
): number | undefined | ToolError {
  if (optionsIn === undefined || optionsIn === null) return fallback;
  if (typeof optionsIn !== 'object') {
    return toolError(
      'INVALID_ARGUMENT',
      `options must be an object like { conversationId: 3 }, got ${short(optionsIn)}`,
    );
  }
  const cid = (optionsIn as { conversationId?: unknown }).conversationId;
  if (cid === undefined) return fallback;
  return intArg(cid, 'conversationId', 0, 0, Number.MAX_SAFE_INTEGER);
}

/**
 * The version a save expects at its path (`options.expectedVersion`: a version, or null for
 * none); undefined when not given.
 */
export function expectedVersion(optionsIn: unknown): number | null | undefined | ToolError {
  if (optionsIn === null || typeof optionsIn !== 'object') return undefined;
  const v = (optionsIn as { expectedVersion?: unknown }).expectedVersion;
  if (v === undefined || v === null) return v;
  return intArg(v, 'expectedVersion', 1, 1, Number.MAX_SAFE_INTEGER);
}

/**
 * The message a save is about (`options.turnId`): its snapshot's latest turns end with it, not
 * with the conversation's last. Undefined when not given.
 */
export function saveTurn(optionsIn: unknown): number | undefined | ToolError {
  if (optionsIn === null || typeof optionsIn !== 'object') return undefined;
  const turnId = (optionsIn as { turnId?: unknown }).turnId;
  if (turnId === undefined || turnId === null) return undefined;
  return intArg(turnId, 'turnId', 0, 0, Number.MAX_SAFE_INTEGER);
}

/**
 * The text a save's context snapshot is ranked against: the entry's heading and the start of its
 * content (as JSON), so the turns that speak of what is saved come first.
 */
export function saveQueryText(path: string, contentJson: string): string {
  return `${headingOf(path)} ${contentJson.slice(0, QUERY_CONTENT_CHARS)}`;
}

/** What a write puts in a row: the content, its vectors and the time. */
export interface Written extends Vectors {
  content: JsonValue;
}

/**
 * The row a save writes at `path`: a new entry one above the versions History lists there
 * (`listed`; version 1 at a path with no history), or the next version of `existing` with its
 * creation and access times and the path it was moved from.
 */
export function savedRow(
  existing: MemoryEntry | undefined,
  path: string,
  listed: readonly number[],
  w: Written,
): MemoryEntry | ToolError {
  const version = versionAbove(listed, path, existing?.version);
  if (isToolError(version)) return version;
  return {
    ...(existing?.id !== undefined ? { id: existing.id } : {}),
    ...placedAt(path),
    content: w.content,
    contextChunks: w.contextChunks,
    embedding: w.embedding,
    model: w.model,
    created: existing?.created ?? w.at,
    modified: w.at,
    accessed: existing?.accessed ?? w.at,
    version,
    // A new snapshot, but the same entry: where it was moved from still holds.
    ...(existing?.movedFrom !== undefined ? { movedFrom: existing.movedFrom } : {}),
  };
}

/**
 * The next version of `fresh` (the row as the write's transaction reads it) with new content and
 * vectors, keeping its context snapshot: the snapshot re-embedded for the write (`w.contextChunks`)
 * when `fresh` is still the version `readVersion` it was computed from, else `fresh`'s own chunks
 * (another write came between). Either way the version that took them is kept.
 */
export function rewrittenRow(
  fresh: MemoryEntry,
  readVersion: number,
  w: Written,
): MemoryEntry | ToolError {
  const version = nextVersion(fresh.version, fresh.path);
  if (isToolError(version)) return version;
  return {
    ...fresh,
    ...keptContext(fresh),
    ...(fresh.version === readVersion ? { contextChunks: w.contextChunks } : {}),
    content: w.content,
    embedding: w.embedding,
    model: w.model,
    modified: w.at,
    version,
  };
}
function isObject(v: JsonValue): v is { [k: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Whether `row` holds the content whose JSON is `json` already: a save of it would only add a
 * version that changes nothing (the memory keeper and small models re-save what they know).
 * Key order counts, as it shows.
 */
export function holdsContent(row: Pick<MemoryEntry, 'content'>, json: string): boolean {
  return JSON.stringify(row.content) === json;
}

/**
 * The answer to a save that found its content there already and wrote nothing: the entry's
 * version and the context snapshot it keeps (that of the save that wrote the content).
 */
export function unchangedResult(path: string, row: MemoryEntry): SaveResult {
  return { ...keptResult(path, row), unchanged: true };
}

/** The answer to a write that kept the row's context chunks: what they hold now. */
export function keptResult(path: string, row: MemoryEntry): SaveResult {
  return {
    status: 'SUCCESS',
    path,
    version: row.version,
    contextTokens: row.contextChunks.reduce((s, c) => s + c.tokenCount, 0),
    chunksStored: row.contextChunks.length,
  };
}
