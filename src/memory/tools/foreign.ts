// Imports of other tools' files (docs/import-export.md): the file is parsed by a pure importer
// (src/memory/imports), then its chats (messages indexed with their own dates) and entries are
// written in one transaction. A chat file imported before adds nothing; a path taken by other
// content gets a number, never an overwrite.
import { shardTables } from '../db';
import type { StoreContext } from '../store';
import { addToShards } from '../shards';
import {
  MAX_PATH_CHARS,
  MAX_SEGMENT_CHARS,
  descendantRange,
  headingOf,
  parentOf,
  parsePath,
} from '../paths';
import { indexedText, splitSentences } from '../text';
import { dateInRange, isToolError, short, toolError, validateContent } from '../validate';
import { parseImportFile } from '../imports/detect';
import { MAX_FOREIGN_FILE_BYTES, tooLargeForeignFile } from '../imports/limits';
import { toWorldInfo } from '../imports/lorebook-export';
import type { ImportedChat, PlannedEntry } from '../imports/types';
import { holdsContent } from './write';
import type { Chunk, FileImportResult, JsonValue, MemoryEntry, Message, ToolError } from '../types';
import { materialise } from './portable';
import { turnChunks } from './turns';

/** Numbers tried (`name 2`, `name 3`…) before an entry's name is given up. */
const MAX_NUMBER = 10_000;

/** Longest speaker name kept with an imported message. */
const MAX_SPEAKER_CHARS = 200;

/** A chat's messages as rows, and which of them (by index) are indexed for search and recall. */
export interface ChatRows {
  rows: Omit<Message, 'conversationId'>[];
  indexed: number[];
  /** Swipes that could not be kept as alternatives, by message. */
  dropped: { where: string; reason: string }[];
}

/**
 * An imported chat as message rows (docs/chat.md, "Alternatives"): a reply with several
 * alternatives (swipes) right after a user message keeps them all, the chosen one first as
 * alternative 0 (shown, with the messages after it in its group, such as a system note) and the
 * others after it; elsewhere (a greeting, a second reply in a row) only the chosen one is kept.
 * The shown text of every message is indexed.
 */
export function chatRows(chat: ImportedChat): ChatRows {
  const rows: Omit<Message, 'conversationId'>[] = [];
  const indexed: number[] = [];
  const dropped: ChatRows['dropped'] = [];
  const ms = chat.messages;
  // What a backup can hold (a date out of years 0000 to 9999, or a name of tens of KB, would make
  // every later backup refuse to restore): such a date becomes the one before it, a name is cut.
  let lastTime = dateInRange(chat.created) ? chat.created : new Date(0);
  ms.forEach((m, i) => {
    const speaker = m.speaker?.slice(0, MAX_SPEAKER_CHARS);
    const meta: Record<string, unknown> = speaker ? { speaker } : {};
    const row = (text: string, at: Date, extra: Record<string, unknown> = {}) => {
      const all = { ...meta, ...extra };
      const time = dateInRange(at) ? at : lastTime;
      lastTime = time;
      rows.push({ role: m.role, text, time, ...(Object.keys(all).length ? { meta: all } : {}) });
    };
    const alts = m.alternatives;
    // Alternatives belong to the whole reply (everything up to the person's next message): a
    // swiped reply followed by another reply before it (a group chat's next character) keeps its
    // chosen swipe, or choosing another would hide the replies after it.
    let wholeReply = true;
    for (let j = i + 1; j < ms.length && ms[j].role !== 'user'; j++) {
      if (ms[j].role === 'assistant') wholeReply = false;
    }
    if (alts && m.shown !== undefined && i > 0 && ms[i - 1].role === 'user' && wholeReply) {
      indexed.push(rows.length);
      row(m.text, m.time);
      let alt = 0;
      alts.forEach((a, k) => {
        if (k !== m.shown) row(a.text, a.time, { alt: ++alt });
      });
      return;
    }
    if (alts) {
      dropped.push({
        where: `message ${i + 1}`,
        reason: `only the chosen swipe was kept, ${alts.length - 1} other${alts.length > 2 ? 's were' : ' was'} left out (a reply keeps its swipes as alternatives when it answers a message of yours and no other reply follows it before your next message)`,
      });
    }
    if (m.text.trim()) indexed.push(rows.length);
    row(m.text, m.time);
  });
  return { rows, indexed, dropped };
}

/** Same content, as stored JSON. */

/**
 * Where each planned entry goes: its path, or the first numbered one (`name 2`, `name 3`…) that is
 * free, the name cut so that the number fits a path segment; `null` when the path holds the same
 * content already (nothing to write), `undefined` when no name is free (left out, and said so).
 * `existing` maps the paths that hold entries now to their content.
 */
export function placeEntries(
  planned: readonly PlannedEntry[],
  existing: ReadonlyMap<string, JsonValue>,
): ({ path: string; content: JsonValue } | null | undefined)[] {
  const used = new Set<string>();
  return planned.map((p) => {
    const heading = 'path' in p ? parentOf(p.path) : p.heading;
    const name = 'path' in p ? headingOf(p.path) : p.name;
    for (let n = 1; n <= MAX_NUMBER; n++) {
      const suffix = n === 1 ? '' : ` ${n}`;
      const room = Math.min(MAX_SEGMENT_CHARS, MAX_PATH_CHARS - heading.length - 1) - suffix.length;
      const base =
        name.length > room
          ? name
              .slice(0, Math.max(0, room))
              .replace(/[\uD800-\uDBFF]$/, '')
              .trimEnd()
          : name;
      // A name made from the file's items is a new name; an entry of this app's own export
      // comes back at its own path (which may be one stored before hidden characters were refused).
      const parsed = parsePath(`${heading}/${base}${suffix}`, { naming: !('path' in p) });
      if (!parsed.ok) return undefined;
      const there = existing.get(parsed.path);
      const same =
        there !== undefined && holdsContent({ content: there }, JSON.stringify(p.content));
      if (same && !used.has(parsed.path)) {
        used.add(parsed.path);
        return null;
      }
      if (there !== undefined || used.has(parsed.path)) continue;
      used.add(parsed.path);
      return { path: parsed.path, content: p.content };
    }
    return undefined;
  });
}

/** SHA-256 of the text, hex: an imported chat file's fingerprint. */
async function fingerprint(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export function foreignTools(ctx: StoreContext) {
  const { db, now, embed, guard, noteWrite, noteChunkWrite } = ctx;

  /** Whether a chat imported from the file with this fingerprint is stored. */
  const importedBefore = async (source: string) =>
    (await db.conversations.filter((c) => c.source === source).count()) > 0;

  async function importFile(file: {
    name: unknown;
    data: unknown;
  }): Promise<FileImportResult | ToolError> {
    return guard(async () => {
      const name = typeof file?.name === 'string' && file.name.trim() ? file.name : 'The file';
      const data = file?.data;
      if (typeof data !== 'string' && !(data instanceof Uint8Array))
        return toolError('INVALID_ARGUMENT', `the file must be text or bytes, got ${short(data)}`);
      const size = typeof data === 'string' ? data.length : data.byteLength;
      if (size > MAX_FOREIGN_FILE_BYTES)
        return toolError('INVALID_CONTENT', tooLargeForeignFile(name, size));
      const when = new Date(now());
      const parsed = parseImportFile(name, data, when);
      if (!parsed.ok)
        return toolError(
          'INVALID_CONTENT',
          `Nothing was imported; nothing changed. ${parsed.message}`,
        );
      const result: FileImportResult = {
        status: 'SUCCESS',
        kind: parsed.kind,
        chats: [],
        entries: [],
        unchanged: 0,
        skipped: [...parsed.skipped],
      };

      // Chats: one fingerprint per file; imported before, the file adds nothing at all.
      const source = parsed.chats.length
        ? await fingerprint(typeof data === 'string' ? data : new TextDecoder().decode(data))
        : undefined;
      if (source !== undefined && (await importedBefore(source)))
        return { ...result, duplicate: true, skipped: [] };
      const chats = parsed.chats.map((chat) => ({ chat, ...chatRows(chat) }));
      for (const c of chats) result.skipped.push(...c.dropped);
      const sentences = chats.map((c) =>
        c.indexed.map((i) => splitSentences(indexedText(c.rows[i].role, c.rows[i].text))),
      );
      const flat = sentences.flat(2);
      const vectors = flat.length ? await embed(flat) : undefined;
      if (isToolError(vectors)) return vectors;
      const counts = await ctx.tokensOfSentences(flat);

      // Entries: each checked as a save would (a text over the size limit is left out),
      // placed against what is stored now, embedded before the transaction.
      const planned = parsed.entries.filter((p) => {
        const checked = validateContent(p.content);
        if (!isToolError(checked)) return true;
        const where = 'path' in p ? p.path : `${p.heading}/${p.name}`;
        result.skipped.push({ where, reason: `left out (${checked.message})` });
        return false;
      });
      const headings = [
        ...new Set(planned.map((p) => ('path' in p ? parentOf(p.path) : p.heading))),
      ];
      const existing = new Map<string, JsonValue>();
      for (const h of headings) {
        for (const r of await db.structured_memory.where('parent_path').equals(h).toArray())
          existing.set(r.path, r.content);
      }
      const placed = placeEntries(planned, existing);
      const toWrite = placed.filter((p): p is { path: string; content: JsonValue } => !!p);
      result.unchanged = placed.filter((p) => p === null).length;
      placed.forEach((p, i) => {
        if (p !== undefined) return;
        const e = planned[i];
        result.skipped.push({
          where: 'path' in e ? e.path : `${e.heading}/${e.name}`,
          reason: 'left out (no free name for it under its heading)',
        });
      });
      const rows = await materialise(
        ctx,
        toWrite.map((p) => ({
          path: p.path,
          content: p.content,
          contextChunks: [],
          version: 1,
          created: when,
          modified: when,
          accessed: when,
        })),
      );
      if (isToolError(rows)) return rows;

      const written = await db.transaction(
        'rw',
        [db.structured_memory, db.conversations, db.messages, db.chunks, ...shardTables(db)],
        async () => {
          if (source !== undefined && (await importedBefore(source))) return 'duplicate' as const;
          if (rows.length) {
            const taken = await db.structured_memory
              .where('path')
              .anyOf(rows.map((r) => r.path))
              .count();
            if (taken)
              return toolError(
                'INVALID_ARGUMENT',
                'Memory changed while the file was being imported; nothing was imported. Import it again.',
              );
            noteWrite(await db.structured_memory.bulkAdd(rows as MemoryEntry[], { allKeys: true }));
          }
          let at = 0;
          const chunks: Chunk[] = [];
          const out: FileImportResult['chats'] = [];
          for (const [ci, c] of chats.entries()) {
            const created = dateInRange(c.chat.created)
              ? c.chat.created
              : (c.rows[0]?.time ?? when);
            const last = c.rows.reduce((t, r) => (r.time > t ? r.time : t), created);
            const conversationId = await db.conversations.add({
              title: c.chat.title,
              created,
              modified: last,
              source,
            });
            const ids = await db.messages.bulkAdd(
              c.rows.map((r) => ({ ...r, conversationId })),
              { allKeys: true },
            );
            c.indexed.forEach((rowIndex, k) => {
              const texts = sentences[ci][k];
              const row = c.rows[rowIndex];
              chunks.push(
                ...turnChunks(
                  { conversationId, turnId: ids[rowIndex], role: row.role, at: row.time },
                  texts,
                  counts.slice(at, at + texts.length),
                  vectors!.vectors.slice(at, at + texts.length),
                  vectors!.info.id,
                ),
              );
              at += texts.length;
            });
            out.push({ id: conversationId, title: c.chat.title, messages: c.chat.messages.length });
          }
          if (chunks.length) {
            const ids = await db.chunks.bulkAdd(chunks, { allKeys: true });
            chunks.forEach((c, i) => (c.id = ids[i]));
            await addToShards(db, chunks);
            noteChunkWrite(ids);
          }
          return out;
        },
      );
      if (written === 'duplicate') return { ...result, duplicate: true, skipped: [] };
      if (isToolError(written)) return written;
      return { ...result, chats: written, entries: rows.map((r) => r.path) };
    });
  }

  /** All memory, or the entries at and below `rootIn`, as a SillyTavern World Info file. */
  async function exportLorebook(rootIn?: unknown): Promise<string | ToolError> {
    return guard(async () => {
      const root = ctx.pathArg(rootIn ?? '', true, 'rootPath');
      if (isToolError(root)) return root;
      const table = db.structured_memory;
      const rows =
        root === ''
          ? await table.orderBy('path').toArray()
          : [
              ...(await table.where('path').equals(root).toArray()),
              ...(await table
                .where('path')
                .between(...descendantRange(root), true, false)
                .toArray()),
            ];
      if (!rows.length)
        return toolError(
          'NOT_FOUND',
          root ? `Nothing is saved at or below "${root}"` : 'Memory is empty',
        );
      return JSON.stringify(
        toWorldInfo(rows.map((r) => ({ path: r.path, content: r.content }))),
        null,
        2,
      );
    });
  }

  return { importFile, exportLorebook };
}
