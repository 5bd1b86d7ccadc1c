// Markdown export and import (docs/design.md, "Markdown export and import"): import validates
// the whole file, then writes in one transaction.
import type { StoreContext } from '../store';
import { isToolError, nextVersion, short, toolError } from '../validate';
import { descendantRange, placedAt } from '../paths';
import { entriesToMarkdown, parseMarkdown } from '../markdown';
import type { HistoryRow, ImportResult, MemoryEntry, ToolError } from '../types';
import type { PortableEntry } from '../markdown';
import { MAX_OWN_FILE_BYTES, tooLargeOwnFile } from '../imports/limits';
import { holdsContent } from './write';

export function portableTools(ctx: StoreContext) {
  const { db, now, guard, pathArg, noteWrite } = ctx;

  async function exportMarkdown(rootIn?: unknown): Promise<string | ToolError> {
    return guard(async () => {
      const root = pathArg(rootIn ?? '', true, 'rootPath');
      if (isToolError(root)) return root;
      let rows: MemoryEntry[];
      if (root === '') rows = await db.structured_memory.orderBy('path').toArray();
      else {
        const [lo, hi] = descendantRange(root);
        const self = await db.structured_memory.where('path').equals(root).toArray();
        rows = [
          ...self,
          ...(await db.structured_memory.where('path').between(lo, hi, true, false).toArray()),
        ];
        if (!rows.length) return toolError('NOT_FOUND', `Nothing is saved at or below "${root}"`);
      }
      const portable = rows.map(toPortable);
      return entriesToMarkdown(portable, { exported: new Date(now()) });
    });
  }

  async function importMarkdown(textIn: unknown): Promise<ImportResult | ToolError> {
    return guard(async () => {
      if (typeof textIn !== 'string')
        return toolError(
          'INVALID_ARGUMENT',
          `the Markdown file must be text, got ${short(textIn)}`,
        );
      if (textIn.length > MAX_OWN_FILE_BYTES)
        return toolError('INVALID_CONTENT', tooLargeOwnFile('The Markdown file', textIn.length));
      const parsed = parseMarkdown(textIn);
      if (!parsed.ok) {
        const shown = parsed.errors.slice(0, 10).join('; ');
        const more = parsed.errors.length > 10 ? ` (and ${parsed.errors.length - 10} more)` : '';
        return toolError(
          'INVALID_CONTENT',
          `The file was not imported; nothing changed. ${shown}${more}`,
        );
      }
      const list = parsed.entries;
      if (!list.length) return { status: 'SUCCESS' as const, imported: 0, created: 0, updated: 0 };
      const rows = await materialise(ctx, list);
      if (isToolError(rows)) return rows;
      const when = new Date(now());
      const counts = await db.transaction('rw', db.structured_memory, db.history, async () => {
        const taken = await takeOver(ctx, rows, when);
        if (isToolError(taken)) return taken;
        const { history, write } = taken;
        if (history.length) await db.history.bulkAdd(history);
        if (write.length) noteWrite(await db.structured_memory.bulkPut(write, { allKeys: true }));
        return importCounts(rows.length, write.length, history.length);
      });
      if (isToolError(counts)) return counts;
      return { status: 'SUCCESS' as const, imported: rows.length, ...counts };
    });
  }

  return { exportMarkdown, importMarkdown };
}

/** An entry without ids or vectors: what the Markdown and JSON formats carry. */
export function toPortable(r: MemoryEntry): PortableEntry {
  return {
    path: r.path,
    content: r.content,
    contextChunks: r.contextChunks.map((c) => ({
      turn_id: c.turn_id,
      sentence_id: c.sentence_id,
      role: c.role,
      text: c.text,
      similarity: c.similarity,
      tokenCount: c.tokenCount,
    })),
    version: r.version,
    created: r.created,
    modified: r.modified,
    accessed: r.accessed,
  };
}

/** Portable entries back to rows: entry and chunk texts embedded with the active model. */
export async function materialise(
  ctx: StoreContext,
  list: readonly PortableEntry[],
): Promise<MemoryEntry[] | ToolError> {
  const texts = list.flatMap((e) => [
    ctx.entryText(e.path, e.content),
    ...e.contextChunks.map((c) => c.text),
  ]);
  const emb = await ctx.embed(texts);
  if (isToolError(emb)) return emb;
  let at = 0;
  return list.map((e) => {
    const embedding = emb.vectors[at++];
    return {
      ...placedAt(e.path),
      content: e.content,
      contextChunks: e.contextChunks.map((c) => ({ ...c, embedding: emb.vectors[at++] })),
      embedding,
      model: emb.info.id,
      created: e.created,
      modified: e.modified,
      accessed: e.accessed,
      version: e.version,
    };
  });
}

/**
 * Inside an import's transaction, before it writes: rows whose path already exists take over that
 * row's id and move past its version, and the replaced rows are returned as history; a row whose
 * path holds its content already (the same file imported again) is left out of `write` (the row
 * here is in `same`). An
 * existing row at MAX_VERSION gives an error instead (the import must then write nothing).
 */
export async function takeOver(
  ctx: StoreContext,
  rows: MemoryEntry[],
  when: Date,
): Promise<{ history: HistoryRow[]; write: MemoryEntry[]; same: MemoryEntry[] } | ToolError> {
  const existing = await ctx.db.structured_memory
    .where('path')
    .anyOf(rows.map((r) => r.path))
    .toArray();
  const byPath = new Map(existing.map((r) => [r.path, r]));
  const history: HistoryRow[] = [];
  const write: MemoryEntry[] = [];
  const same: MemoryEntry[] = [];
  for (const row of rows) {
    const old = byPath.get(row.path);
    if (old && holdsContent(old, JSON.stringify(row.content))) {
      same.push(old);
      continue;
    }
    write.push(row);
    if (!old) continue;
    const next = nextVersion(old.version, old.path);
    if (isToolError(next)) return next;
    history.push(ctx.historyRow(old, 'import', when));
    row.id = old.id;
    row.version = Math.max(row.version, next);
  }
  return { history, write, same };
}

/** An import's counts: `unchanged` only when some entry was here with its content already. */
export function importCounts(
  rows: number,
  written: number,
  updated: number,
): Pick<ImportResult, 'created' | 'updated' | 'unchanged'> {
  return {
    created: written - updated,
    updated,
    ...(rows > written ? { unchanged: rows - written } : {}),
  };
}
