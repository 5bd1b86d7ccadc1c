// JSON backup and restore: entries (with context chunks, no vectors), history, conversations and
// messages. A backup is validated against a JSON Schema and every path and content is checked
// before anything is written; the restore is one transaction. Vectors are recomputed.
import { shardTables } from '../db';
import { Validator, type Schema } from '@cfworker/json-schema';
import type { StoreContext } from '../store';
import type { PortableEntry } from '../markdown';
import { parsePath, placedAt } from '../paths';
import { addToShards } from '../shards';
import { indexedText, splitSentences } from '../text';
import type {
  Chunk,
  Conversation,
  HistoryRow,
  ImportResult,
  JsonValue,
  MemoryEntry,
  Message,
  Role,
  ToolError,
} from '../types';
import {
  ROLES,
  chunkProblems,
  clampDate,
  dateProblem,
  isToolError,
  short,
  toolError,
  validateContent,
  validateMessageParts,
  versionProblem,
  wholeNumberProblem,
} from '../validate';
import { MAX_OWN_FILE_BYTES, tooLargeOwnFile } from '../imports/limits';
import { versionAbove } from './lineage';
import { importCounts, materialise, takeOver, toPortable } from './portable';

/**
 * The settings row that says when memory was last replaced by a backup (Replace all): the sync
 * then starts its record of which row is which document afresh.
 */
export const REPLACED_KEY = 'memoryReplaced';

export const BACKUP_FORMAT = 'structured-memory-backup';
export const BACKUP_VERSION = 1;

// The schema checks the file's shape; the values (paths, content, versions, dates, chunks) are
// then checked by the rules in validate.ts that Markdown import and the tools use too.
const date: Schema = { type: 'string', format: 'date-time' };
const role: Schema = { enum: ROLES as Role[] };
const chunk: Schema = {
  type: 'object',
  required: ['turn_id', 'sentence_id', 'role', 'text', 'similarity', 'tokenCount'],
  properties: {
    turn_id: { type: 'integer' },
    sentence_id: { type: 'integer' },
    role,
    text: { type: 'string' },
    similarity: { type: 'number' },
    tokenCount: { type: 'integer' },
  },
};
const entry: Schema = {
  type: 'object',
  required: ['path', 'content', 'contextChunks', 'version', 'created', 'modified', 'accessed'],
  properties: {
    path: { type: 'string' },
    content: {},
    contextChunks: { type: 'array', items: chunk },
    version: { type: 'integer' },
    created: date,
    modified: date,
    accessed: date,
    movedFrom: { type: 'string' },
    contextVersion: { type: 'integer' },
  },
};

const BACKUP_SCHEMA: Schema = {
  type: 'object',
  required: ['format', 'version', 'entries'],
  properties: {
    format: { const: BACKUP_FORMAT },
    version: { type: 'integer', minimum: 1, maximum: BACKUP_VERSION },
    exported: date,
    entries: { type: 'array', items: entry },
    history: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'version', 'reason', 'replaced', 'entry'],
        properties: {
          path: { type: 'string' },
          version: { type: 'integer' },
          reason: { enum: ['update', 'delete', 'move', 'restore', 'import'] },
          replaced: date,
          entry,
          movedTo: { type: 'string' },
          deleteRoot: { type: 'string' },
          conflictFrom: { type: 'string' },
        },
      },
    },
    conversations: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'title', 'created', 'modified'],
        properties: {
          id: { type: 'integer' },
          title: { type: 'string' },
          created: date,
          modified: date,
          named: { type: 'boolean' },
          titled: date,
          source: { type: 'string' },
        },
      },
    },
    messages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'conversationId', 'role', 'text', 'time'],
        properties: {
          id: { type: 'integer' },
          conversationId: { type: 'integer' },
          role,
          text: { type: 'string' },
          time: date,
          toolCalls: { type: 'array', items: { type: 'object', required: ['id', 'name'] } },
          toolCallId: { type: 'string' },
          meta: { type: 'object' },
        },
      },
    },
  },
};

export interface SerialEntry extends Omit<PortableEntry, 'created' | 'modified' | 'accessed'> {
  created: string;
  modified: string;
  accessed: string;
  movedFrom?: string;
  contextVersion?: number;
}

/** A history row in a backup. */
export interface BackupHistoryRow {
  path: string;
  version: number;
  reason: HistoryRow['reason'];
  replaced: string;
  entry: SerialEntry;
  movedTo?: string;
  deleteRoot?: string;
  /** The device a version that lost a sync conflict came from (docs/sync.md). */
  conflictFrom?: string;
}

/** A message in a backup. */
export type BackupMessage = Omit<Message, 'time'> & { id: number; time: string };

/** The JSON backup (docs/design.md, "Markdown export and import"). */
export interface Backup {
  format: string;
  version: number;
  exported?: string;
  entries: SerialEntry[];
  history?: BackupHistoryRow[];
  conversations?: {
    id: number;
    title: string;
    created: string;
    modified: string;
    named?: boolean;
    /** When the person last renamed it (sync tells the newer name by it). */
    titled?: string;
    /** An imported chat's file fingerprint (docs/import-export.md). */
    source?: string;
  }[];
  messages?: BackupMessage[];
}

const serial = (e: PortableEntry): SerialEntry => ({
  ...e,
  created: e.created.toISOString(),
  modified: e.modified.toISOString(),
  accessed: e.accessed.toISOString(),
});

const revive = (e: SerialEntry): PortableEntry => ({
  ...e,
  created: new Date(e.created),
  modified: new Date(e.modified),
  accessed: new Date(e.accessed),
});

type Lineage = Pick<MemoryEntry, 'movedFrom' | 'contextVersion'>;

/** An entry's move and snapshot origin (docs/trash.md), as stored or as a backup has them. */
const lineage = (e: Lineage): Lineage => ({
  ...(e.movedFrom !== undefined ? { movedFrom: e.movedFrom } : {}),
  ...(e.contextVersion !== undefined ? { contextVersion: e.contextVersion } : {}),
});

/**
 * A history row's move target, delete root and sync conflict origin, as stored or as a backup
 * has them.
 */
const historyExtras = (h: Pick<HistoryRow, 'movedTo' | 'deleteRoot' | 'conflictFrom'>) => ({
  ...(h.movedTo !== undefined ? { movedTo: h.movedTo } : {}),
  ...(h.deleteRoot !== undefined ? { deleteRoot: h.deleteRoot } : {}),
  ...(h.conflictFrom !== undefined ? { conflictFrom: h.conflictFrom } : {}),
});

/** The validator of a backup's shape (built once per engine: compiling the schema costs). */
export function backupValidator(): Validator {
  return new Validator(BACKUP_SCHEMA, '2020-12', false);
}

/**
 * Every problem of a parsed backup, as sentences (at most 10); [] when it can be restored.
 * `validator` checks the file's shape against BACKUP_SCHEMA (`backupValidator()`).
 */
export function backupProblems(data: unknown, validator: Validator): string[] {
  // A backup from a newer app: said in a sentence, before its shape is checked against this one's.
  const newer = (data as { format?: unknown; version?: unknown } | null) ?? {};
  if (
    newer.format === BACKUP_FORMAT &&
    typeof newer.version === 'number' &&
    newer.version > BACKUP_VERSION
  ) {
    return [
      `this backup was written by a newer version of the app (backup format ${newer.version}; this one reads up to ${BACKUP_VERSION}): update the app (reload it once online), then import it again`,
    ];
  }
  const check = validator.validate(data);
  if (!check.valid) {
    return [
      ...new Set(
        check.errors
          .filter((e) => !['properties', 'items', 'allOf', '$ref'].includes(e.keyword))
          .map((e) => `${e.instanceLocation.replace(/^#/, '') || 'the file'}: ${e.error}`),
      ),
    ].slice(0, 10);
  }
  const b = data as Backup;
  const out: string[] = [];
  const add = (where: string, problem: string | null) => {
    if (problem) out.push(`${where}: ${problem}`);
  };
  const checkDate = (where: string, field: string, value: string) =>
    add(where, dateProblem(new Date(value), `"${field}"`));
  const seen = new Set<string>();
  const checkPath = (where: string, field: string, value: string) => {
    const p = parsePath(value);
    if (!p.ok) add(where, `invalid ${field} ${short(value)}: ${p.message}`);
    else if (p.path !== value) add(where, `${field} ${short(value)} is not in normal form`);
  };
  const checkEntry = (e: SerialEntry, where: string) => {
    checkPath(where, 'path', e.path);
    if (e.movedFrom !== undefined) checkPath(where, 'movedFrom', e.movedFrom);
    if (e.contextVersion !== undefined) {
      add(where, versionProblem(e.contextVersion, 'contextVersion'));
      if (e.contextVersion > e.version)
        add(where, `contextVersion ${e.contextVersion} is after the version ${e.version}`);
    }
    const c = validateContent(e.content as unknown);
    if (isToolError(c)) add(where, c.message);
    add(where, versionProblem(e.version));
    for (const field of ['created', 'modified', 'accessed'] as const)
      checkDate(where, field, e[field]);
    e.contextChunks.forEach((c, j) => {
      for (const p of chunkProblems(c as unknown as Record<string, unknown>))
        add(`${where}.contextChunks[${j}]`, p);
    });
  };
  b.entries.forEach((e, i) => {
    checkEntry(e, `entries[${i}]`);
    if (seen.has(e.path)) out.push(`entries[${i}]: duplicate path "${e.path}"`);
    seen.add(e.path);
  });
  // A history row is listed (getHistory) and restored under its own path: it must be a valid
  // path, and the entry it holds must be that path's, at that version.
  b.history?.forEach((h, i) => {
    const where = `history[${i}]`;
    checkEntry(h.entry, `${where}.entry`);
    if (h.path !== h.entry.path)
      add(where, `path ${short(h.path)} differs from its entry's path ${short(h.entry.path)}`);
    if (h.version !== h.entry.version)
      add(where, `version ${h.version} differs from its entry's version ${h.entry.version}`);
    if (h.movedTo !== undefined) checkPath(where, 'movedTo', h.movedTo);
    if (h.deleteRoot !== undefined) checkPath(where, 'deleteRoot', h.deleteRoot);
    checkDate(where, 'replaced', h.replaced);
  });
  const convIds = new Set<number>();
  b.conversations?.forEach((c, i) => {
    const where = `conversations[${i}]`;
    add(where, wholeNumberProblem(c.id, 'id', 0));
    if (convIds.has(c.id)) add(where, `duplicate id ${c.id}`);
    convIds.add(c.id);
    checkDate(where, 'created', c.created);
    checkDate(where, 'modified', c.modified);
    if (c.titled !== undefined) checkDate(where, 'titled', c.titled);
  });
  const msgIds = new Set<number>();
  b.messages?.forEach((m, i) => {
    const where = `messages[${i}]`;
    add(where, wholeNumberProblem(m.id, 'id', 1));
    if (!convIds.has(m.conversationId))
      add(where, `conversation ${m.conversationId} is not in the file`);
    if (msgIds.has(m.id)) add(where, `duplicate id ${m.id}`);
    msgIds.add(m.id);
    checkDate(where, 'time', m.time);
    const parts = validateMessageParts(m);
    if (isToolError(parts)) add(where, parts.message);
  });
  return out.slice(0, 10);
}

export function backupTools(ctx: StoreContext) {
  const { db, now, embed, guard, noteWrite, noteChunkWrite } = ctx;
  let validator: Validator | undefined;

  /** The backup's chats already here (read inside a transaction), by the backup's chat id. */
  async function chatsHere(backup: Backup): Promise<Map<number, ChatHere>> {
    const created = new Set((backup.conversations ?? []).map((c) => Date.parse(c.created)));
    if (!created.size) return new Map();
    const local = await db.conversations.filter((c) => created.has(c.created.getTime())).toArray();
    const ids = local.map((c) => c.id!);
    const held = ids.length ? await db.messages.where('conversationId').anyOf(ids).toArray() : [];
    return chatsAlreadyHere(backup, local, held);
  }

  /** Inside a transaction: the keys (`historyKey`) of the versions here at the paths of `rows`. */
  async function historyHere(rows: readonly BackupHistoryRow[]): Promise<Set<string>> {
    const paths = [...new Set(rows.map((h) => h.path))];
    if (!paths.length) return new Set();
    return new Set((await db.history.where('path').anyOf(paths).toArray()).map(historyKey));
  }

  async function exportJson(): Promise<string | ToolError> {
    return guard(async () => {
      const [entries, history, conversations, messages] = await db.transaction(
        'r',
        db.structured_memory,
        db.history,
        db.conversations,
        db.messages,
        async () =>
          Promise.all([
            db.structured_memory.orderBy('path').toArray(),
            db.history.toArray(),
            db.conversations.toArray(),
            db.messages.toArray(),
          ]),
      );
      const backup = backupOf(new Date(now()), entries, history, conversations, messages);
      return JSON.stringify(backup, null, 1);
    });
  }

  async function importJson(
    textIn: unknown,
    modeIn: unknown = 'merge',
  ): Promise<ImportResult | ToolError> {
    return guard(async () => {
      const parsed = parseBackup(textIn, modeIn, (validator ??= backupValidator()));
      if (isToolError(parsed)) return parsed;
      const { backup, replace } = parsed;

      const rows = await materialise(ctx, backup.entries.map(revive));
      if (isToolError(rows)) return rows;
      rows.forEach((r, i) => Object.assign(r, lineage(backup.entries[i])));
      // Merged, a chat already here (this backup merged before) is not added again, so its
      // messages are not embedded; the transaction reads again what is here.
      const here = replace
        ? new Map<number, ChatHere>()
        : await db.transaction('r', db.conversations, db.messages, async () => chatsHere(backup));
      // Message sentences go back into the semantic index, embedded before the transaction.
      const messages = backup.messages ?? [];
      const indexed = messages.filter(
        (m) =>
          !here.has(m.conversationId) &&
          (m.role === 'user' || m.role === 'assistant') &&
          m.text.trim(),
      );
      const sentences = indexed.map((m) => splitSentences(indexedText(m.role, m.text)));
      const flat = sentences.flat();
      const vectors = flat.length ? await embed(flat) : { info: undefined, vectors: [] };
      if (isToolError(vectors)) return vectors;
      const countsOf = await ctx.tokensOfSentences(flat);
      const when = new Date(now());

      const result = await db.transaction(
        'rw',
        [
          db.structured_memory,
          db.history,
          db.conversations,
          db.messages,
          db.chunks,
          db.settings,
          ...shardTables(db),
        ],
        async () => {
          // Read before anything is written, so that an error here leaves the store as it was.
          const taken = replace
            ? { history: [], write: rows, same: [] }
            : await takeOver(ctx, rows, when);
          if (isToolError(taken)) return taken;
          const { history, write, same } = taken;
          const updated = history.length;
          const hereNow = replace ? new Map<number, ChatHere>() : await chatsHere(backup);
          // A chat thought here was deleted or changed meanwhile: its messages were not embedded.
          if ([...here.keys()].some((id) => !hereNow.has(id))) {
            return toolError(
              'CHANGED',
              'The backup was not imported; nothing changed. A chat in it was changed or deleted ' +
                'here while it was read: import it again.',
            );
          }
          if (replace) {
            const [entryIds, chunkIds] = await Promise.all([
              db.structured_memory.toCollection().primaryKeys(),
              db.chunks.toCollection().primaryKeys(),
            ]);
            await Promise.all([
              db.structured_memory.clear(),
              db.history.clear(),
              db.conversations.clear(),
              db.messages.clear(),
              db.chunks.clear(),
              db.shards.clear(),
              db.shardHeads.clear(),
              db.shardCodes.clear(),
            ]);
            noteWrite(entryIds);
            noteChunkWrite(chunkIds);
            // The rows' ids now name the backup's rows: sync must not take them for the rows it
            // synced under those ids (docs/sync.md, "Another database").
            await db.settings.put({ key: REPLACED_KEY, value: when.getTime() });
          }
          // Conversations and messages get fresh ids on merge; context chunks follow their turn.
          // A chat already here keeps its rows: the backup's ids lead to them.
          const convMap = new Map<number, number>();
          const withMessages = new Set(messages.map((m) => m.conversationId));
          let chatsAdded = 0;
          for (const c of backup.conversations ?? []) {
            const same = hereNow.get(c.id);
            if (same) {
              convMap.set(c.id, same.id);
              continue;
            }
            // Merged, an empty chat nobody named (the "New chat" a page opens) adds nothing.
            if (!replace && !withMessages.has(c.id) && !c.named) continue;
            chatsAdded++;
            const row: Conversation = {
              title: c.title,
              created: new Date(c.created),
              modified: new Date(c.modified),
              ...(c.named ? { named: true } : {}),
              ...(c.titled !== undefined ? { titled: new Date(c.titled) } : {}),
              ...(c.source !== undefined ? { source: c.source } : {}),
            };
            convMap.set(c.id, await db.conversations.add(replace ? { ...row, id: c.id } : row));
          }
          const msgMap = new Map<number, number>();
          const added = messages.filter((m) => !hereNow.has(m.conversationId));
          for (const m of messages) {
            const same = hereNow.get(m.conversationId);
            if (same) msgMap.set(m.id, same.messages.get(m.id)!);
          }
          for (const m of added) {
            const { id, time, ...rest } = m;
            const row: Message = {
              ...rest,
              conversationId: convMap.get(m.conversationId)!,
              time: new Date(time),
            };
            msgMap.set(id, await db.messages.add(replace ? { ...row, id } : row));
          }
          // Merged, messages and chats get new ids: the links messages hold to others (a reply's
          // recalled turns, a keeper card's reply) follow them, and a link to one not in the
          // backup goes (it would name whatever has that id here).
          if (!replace) {
            for (const m of added) {
              const meta = relinked(m.meta, convMap, msgMap);
              if (meta) await db.messages.update(msgMap.get(m.id)!, { meta });
            }
          }
          // A chat found here only now (merged meanwhile in another tab) keeps its own index.
          const kept = new Set([...hereNow.values()].map((c) => c.id));
          const chunks = importedChunks(
            indexed,
            sentences,
            convMap,
            msgMap,
            countsOf,
            vectors,
          ).filter((c) => !kept.has(c.conversationId));
          if (chunks.length) {
            const ids = await db.chunks.bulkAdd(chunks, { allKeys: true });
            chunks.forEach((c, i) => (c.id = ids[i]));
            await addToShards(db, chunks);
            noteChunkWrite(ids);
          }
          for (const row of rows) relinkChunks(row.contextChunks, msgMap);

          // Merged again, the versions the backup's history holds are here already.
          const known = replace ? new Set<string>() : await historyHere(backup.history ?? []);
          for (const h of backup.history ?? []) {
            const row = importedHistoryRow(h);
            if (known.has(historyKey(row))) continue;
            // Its snapshot names the messages by their ids here, as the entries' do.
            relinkChunks(row.entry.contextChunks, msgMap);
            history.push(row);
          }
          if (history.length) await db.history.bulkAdd(history);
          // An entry left as it is stays above every version its History now lists (the
          // backup's may be later ones: content changed there and changed back).
          const top = new Map<string, number>();
          for (const h of history) top.set(h.path, Math.max(top.get(h.path) ?? 0, h.version));
          for (const row of same) {
            const listed = top.get(row.path);
            if (listed === undefined || listed < row.version) continue;
            const version = versionAbove([listed], row.path, row.version);
            if (isToolError(version)) continue; // at 2^53-1 already: it stays where it is
            await db.structured_memory.update(row.id!, { version });
            noteWrite([row.id!]);
          }
          if (write.length) noteWrite(await db.structured_memory.bulkPut(write, { allKeys: true }));
          return {
            ...importCounts(rows.length, write.length, updated),
            chatsAlreadyHere: hereNow.size,
            chatsAdded,
            messagesAdded: added.length,
          };
        },
      );
      if (isToolError(result)) return result;
      return { status: 'SUCCESS' as const, imported: rows.length, ...result };
    });
  }

  /**
   * Checks a backup as `importJson` would, writing nothing: the app says what is wrong before it
   * asks Merge or Replace all.
   */
  async function checkBackup(textIn: unknown): Promise<{ status: 'SUCCESS' } | ToolError> {
    return guard(async () => {
      const parsed = parseBackup(textIn, 'merge', (validator ??= backupValidator()));
      return isToolError(parsed) ? parsed : { status: 'SUCCESS' as const };
    });
  }

  return { exportJson, importJson, checkBackup };
}

/**
 * The backup of these rows, exported at `exported` (the format: docs/design.md, "Markdown export
 * and import").
 */
export function backupOf(
  exported: Date,
  entries: readonly MemoryEntry[],
  history: readonly HistoryRow[],
  conversations: readonly Conversation[],
  messages: readonly Message[],
): Backup {
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    exported: exported.toISOString(),
    entries: entries.map((r) => ({ ...serial(toPortable(r)), ...lineage(r) })),
    history: history.map((h) => ({
      path: h.path,
      version: h.version,
      reason: h.reason,
      replaced: h.replaced.toISOString(),
      entry: { ...serial(toPortable({ ...h.entry })), ...lineage(h.entry) },
      ...historyExtras(h),
    })),
    // Dates out of the backup's range (a row another tool's file gave an odd date, before imports
    // checked it) are clamped into it: one such row must not make the whole backup unrestorable.
    conversations: conversations.map((c) => ({
      id: c.id!,
      title: c.title,
      created: clampDate(c.created, exported).toISOString(),
      modified: clampDate(c.modified, exported).toISOString(),
      ...(c.named ? { named: true } : {}),
      ...(c.titled instanceof Date ? { titled: clampDate(c.titled, exported).toISOString() } : {}),
      ...(c.source !== undefined ? { source: c.source } : {}),
    })),
    messages: messages.map((m) => ({
      ...m,
      id: m.id!,
      time: clampDate(m.time, exported).toISOString(),
    })),
  };
}

/** A chat here that holds a chat of a backup: its id, and its message ids by the backup's. */
export interface ChatHere {
  id: number;
  messages: Map<number, number>;
}

/**
 * Which chats of a backup are here already (a backup merged before, or this store's own): a chat
 * created at the same moment that holds each of the backup chat's messages (same role, time and
 * text). Its title may differ (renamed since) and it may hold more (continued since); one that
 * lost or changed a message is not the same, nor is one the backup holds more of (continued
 * elsewhere): merged, those come in as chats of their own, so nothing of the backup is lost.
 * By the backup's chat id; `local` and `localMessages` are the candidates read from the store.
 */
export function chatsAlreadyHere(
  backup: Pick<Backup, 'conversations' | 'messages'>,
  local: readonly Conversation[],
  localMessages: readonly Message[],
): Map<number, ChatHere> {
  const key = (role: string, time: number, text: string) => `${role} ${time} ${text}`;
  // Each key's messages in id order: two alike (a KoboldAI import's "Go on." twice, at one time)
  // must each be matched.
  const held = new Map<number, Map<string, number[]>>();
  for (const m of [...localMessages].sort((a, b) => a.id! - b.id!)) {
    let keys = held.get(m.conversationId);
    if (!keys) held.set(m.conversationId, (keys = new Map()));
    const k = key(m.role, m.time.getTime(), m.text);
    keys.set(k, [...(keys.get(k) ?? []), m.id!]);
  }
  const theirs = new Map<number, BackupMessage[]>();
  for (const m of backup.messages ?? []) {
    const list = theirs.get(m.conversationId);
    if (list) list.push(m);
    else theirs.set(m.conversationId, [m]);
  }
  const out = new Map<number, ChatHere>();
  for (const c of backup.conversations ?? []) {
    const created = Date.parse(c.created);
    for (const l of local) {
      if (l.created.getTime() !== created) continue;
      const keys = held.get(l.id!) ?? new Map<string, number[]>();
      const taken = new Map<string, number>();
      const messages = new Map<number, number>();
      for (const m of (theirs.get(c.id) ?? []).slice().sort((a, b) => a.id - b.id)) {
        const k = key(m.role, Date.parse(m.time), m.text);
        const n = taken.get(k) ?? 0;
        const id = keys.get(k)?.[n];
        if (id === undefined) break;
        taken.set(k, n + 1);
        messages.set(m.id, id);
      }
      if (messages.size === (theirs.get(c.id)?.length ?? 0)) {
        out.set(c.id, { id: l.id!, messages });
        break;
      }
    }
  }
  return out;
}

/**
 * A message's meta with its links to other messages and chats (`recalledTurns`, `keeper.replyId`)
 * moved to their ids after a merge (`convs`, `msgs`: old id → new); a recalled turn that is not in
 * the backup is left out, a card's reply that is not becomes none (0: the card shows in its own
 * place). Undefined when there is nothing to change.
 */
export function relinked(
  meta: Record<string, unknown> | undefined,
  convs: ReadonlyMap<number, number>,
  msgs: ReadonlyMap<number, number>,
): Record<string, unknown> | undefined {
  if (!meta) return undefined;
  const out: Record<string, unknown> = { ...meta };
  let changed = false;
  if (Array.isArray(meta.recalledTurns)) {
    out.recalledTurns = meta.recalledTurns.flatMap((t: unknown) => {
      const r = t as { conversationId?: unknown; turnId?: unknown };
      const c = typeof r?.conversationId === 'number' ? convs.get(r.conversationId) : undefined;
      const m = typeof r?.turnId === 'number' ? msgs.get(r.turnId) : undefined;
      return c !== undefined && m !== undefined ? [{ ...r, conversationId: c, turnId: m }] : [];
    });
    changed = true;
  }
  const keeper = meta.keeper as { replyId?: unknown } | undefined;
  if (keeper && typeof keeper === 'object' && typeof keeper.replyId === 'number') {
    out.keeper = { ...keeper, replyId: msgs.get(keeper.replyId) ?? 0 };
    changed = true;
  }
  return changed ? out : undefined;
}

/**
 * importJson's arguments read: the backup, checked against the format's rules, and whether it
 * replaces memory. Anything wrong is an error that says nothing changed, and why.
 */
export function parseBackup(
  textIn: unknown,
  modeIn: unknown,
  validator: Validator,
): { backup: Backup; replace: boolean } | ToolError {
  if (typeof textIn !== 'string')
    return toolError('INVALID_ARGUMENT', `the backup must be text, got ${short(textIn)}`);
  if (modeIn !== 'merge' && modeIn !== 'replace') {
    return toolError('INVALID_ARGUMENT', `mode must be "merge" or "replace", got ${short(modeIn)}`);
  }
  if (textIn.length > MAX_OWN_FILE_BYTES)
    return toolError('INVALID_CONTENT', tooLargeOwnFile('The backup', textIn.length));
  let data: unknown;
  try {
    data = JSON.parse(textIn);
  } catch (e) {
    return toolError(
      'INVALID_CONTENT',
      `The file was not imported; nothing changed. It is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const found = backupProblems(data, validator);
  if (found.length) {
    return toolError(
      'INVALID_CONTENT',
      `The file was not imported; nothing changed. ${found.join('; ')}`,
    );
  }
  return { backup: data as Backup, replace: modeIn === 'replace' };
}

/**
 * The semantic index rows of imported messages: `indexed[i]`'s sentences are `sentences[i]`, with
 * their token counts and vectors in one flat run; conversation and message ids are the new ones.
 */
export function importedChunks(
  indexed: readonly BackupMessage[],
  sentences: readonly string[][],
  convMap: ReadonlyMap<number, number>,
  msgMap: ReadonlyMap<number, number>,
  counts: readonly number[],
  vectors: { info?: { id: string }; vectors: readonly Float32Array[] },
): Chunk[] {
  const chunks: Chunk[] = [];
  let at = 0;
  indexed.forEach((m, i) =>
    sentences[i].forEach((text, s) => {
      chunks.push({
        conversationId: convMap.get(m.conversationId)!,
        turnId: msgMap.get(m.id)!,
        sentenceId: s,
        role: m.role,
        text,
        tokenCount: counts[at],
        embedding: vectors.vectors[at++],
        model: vectors.info!.id,
        time: new Date(m.time),
      });
    }),
  );
  return chunks;
}

/**
 * A backup's history row as stored: no vectors (a restore embeds it again) and its heading and
 * parent taken from its entry's path.
 */
/** Context chunks moved to their messages' ids here (`msgs`: the backup's id → here), in place. */
function relinkChunks(chunks: readonly { turn_id: number }[], msgs: ReadonlyMap<number, number>) {
  for (const c of chunks) c.turn_id = msgs.get(c.turn_id) ?? c.turn_id;
}

/** What makes two history rows one version: its path, number, reason, time and content. */
export function historyKey(h: HistoryRow): string {
  return [h.path, h.version, h.reason, h.replaced.getTime(), JSON.stringify(h.entry.content)].join(
    '\u0000',
  );
}

export function importedHistoryRow(h: BackupHistoryRow): HistoryRow {
  const e = revive(h.entry);
  return {
    path: h.path,
    version: h.version,
    reason: h.reason,
    replaced: new Date(h.replaced),
    ...historyExtras(h),
    entry: {
      ...e,
      ...placedAt(e.path),
      contextChunks: e.contextChunks.map((c) => ({
        ...c,
        embedding: new Float32Array(0),
      })),
      embedding: new Float32Array(0),
      model: '',
      content: e.content as JsonValue,
    },
  };
}
