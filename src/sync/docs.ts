// What travels to the sync server (docs/sync.md, "Documents"): every synced Dexie row as a plain
// JSON body without vectors or device-only fields, its logical id, a hash of what matters for
// change detection, and the checks a body from the server must pass before it is written here.
// Pure: no Dexie, no network.
import { parsePath, placedAt } from '../memory/paths';
import type {
  Conversation,
  HistoryRow,
  JsonValue,
  MemoryEntry,
  Message,
  Role,
} from '../memory/types';
import {
  ROLES,
  chunkProblems,
  dateProblem,
  isToolError,
  short,
  validateContent,
  validateMessageParts,
  versionProblem,
} from '../memory/validate';

export type DocKind = 'entry' | 'history' | 'conv' | 'msg' | 'setting';

/** Application order: a message needs its conversation, so conversations come first. */
export const KIND_ORDER: readonly DocKind[] = ['conv', 'msg', 'entry', 'history', 'setting'];

/** A context chunk as it travels: no vector. */
export interface ChunkBody {
  turn_id: number;
  sentence_id: number;
  role: Role;
  text: string;
  similarity: number;
  tokenCount: number;
}

/** An entry as it travels. Dates are ms since epoch. */
export interface EntryBody {
  path: string;
  content: JsonValue;
  chunks: ChunkBody[];
  created: number;
  modified: number;
  version: number;
  movedFrom?: string;
  contextVersion?: number;
  /**
   * The messages its chunks name (`turn_id`, an id here) as their logical ids, `m<id>` →
   * `msg:…`: the receiving device names them by its own ids. Not hashed.
   */
  refs?: Record<string, string>;
}

export interface Stamp {
  /** When the change was made (ms): the later one wins a conflict. */
  u: number;
  /** The device that made it (a label for people). */
  d: string;
}

export type SyncBody = Stamp &
  (
    | ({ t: 'entry' } & EntryBody)
    | {
        t: 'history';
        path: string;
        version: number;
        reason: HistoryRow['reason'];
        replaced: number;
        entry: EntryBody;
        movedTo?: string;
        deleteRoot?: string;
        /** A version that lost a conflict: the device it came from. */
        conflictFrom?: string;
      }
    | {
        t: 'conv';
        title: string;
        created: number;
        modified: number;
        /** When the person last renamed it (absent: never, on a device that records it). */
        titled?: number;
      }
    | {
        t: 'msg';
        /** The conversation's logical id. */
        conv: string;
        role: Role;
        text: string;
        time: number;
        /**
         * Its place in its chat when it was last sent (0 first): a device that receives a chat
         * stores its messages in this order. Not part of the change hash (docs/sync.md).
         */
        n?: number;
        /**
         * The rows its meta names by their ids here (`m<id>`: a message, `c<id>`: a chat), as
         * their logical ids: the receiving device names them by its own ids. Not hashed.
         */
        refs?: Record<string, string>;
        toolCalls?: unknown[];
        toolCallId?: string;
        meta?: Record<string, unknown>;
      }
    | { t: 'setting'; key: string; value: JsonValue }
  );

/** A body before it is stamped. */
type DistOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type Unstamped = DistOmit<SyncBody, 'u' | 'd'>;

/**
 * Settings that follow the user to every device: the chat behaviour in the 'app' settings.
 * The model server, its key, the context size and the embedding model stay on each device.
 */
export const SHARED_APP_SETTINGS = [
  'persona',
  'temperature',
  'maxOutputTokens',
  'reserve',
  'autoRecall',
  'recencyBias',
  'contextTokens',
  'extraTools',
] as const;
export const APP_SETTINGS_KEY = 'app';

export function kindOf(id: string): DocKind | null {
  const k = id.slice(0, id.indexOf(':'));
  return (KIND_ORDER as readonly string[]).includes(k) ? (k as DocKind) : null;
}

export const entryId = (path: string) => `entry:${path}`;
export const settingId = (key: string) => `setting:${key}`;

/** A history row's id is derived from what it records, so two devices name one version alike. */
export function historyId(b: {
  path: string;
  version: number;
  reason: string;
  entry: { modified: number };
  movedTo?: string;
  deleteRoot?: string;
  conflictFrom?: string;
}): string {
  const key = [
    b.path,
    b.version,
    b.reason,
    b.entry.modified,
    b.movedTo ?? '',
    b.deleteRoot ?? '',
    b.conflictFrom ?? '',
  ].join('\u0000');
  return `history:${hash(key)}`;
}

// ---- rows to bodies ----------------------------------------------------------------------------

export function entryBody(r: Omit<MemoryEntry, 'id'>): EntryBody {
  return {
    path: r.path,
    content: r.content,
    chunks: r.contextChunks.map((c) => ({
      turn_id: c.turn_id,
      sentence_id: c.sentence_id,
      role: c.role,
      text: c.text,
      similarity: c.similarity,
      tokenCount: c.tokenCount,
    })),
    created: r.created.getTime(),
    modified: r.modified.getTime(),
    version: r.version,
    ...(r.movedFrom !== undefined ? { movedFrom: r.movedFrom } : {}),
    ...(r.contextVersion !== undefined ? { contextVersion: r.contextVersion } : {}),
  };
}

export function historyBody(h: HistoryRow): Unstamped {
  return {
    t: 'history',
    path: h.path,
    version: h.version,
    reason: h.reason,
    replaced: h.replaced.getTime(),
    entry: entryBody(h.entry),
    ...(h.movedTo !== undefined ? { movedTo: h.movedTo } : {}),
    ...(h.deleteRoot !== undefined ? { deleteRoot: h.deleteRoot } : {}),
    ...(h.conflictFrom !== undefined ? { conflictFrom: h.conflictFrom } : {}),
  };
}

export function convBody(c: Conversation): Unstamped {
  return {
    t: 'conv',
    title: c.title,
    created: c.created.getTime(),
    modified: c.modified.getTime(),
    ...(c.titled instanceof Date ? { titled: c.titled.getTime() } : {}),
  };
}

/**
 * A message's body; `n` is its place in its chat, `refs` the logical ids of the rows its meta
 * names, when known.
 */
export function msgBody(
  m: Message,
  conv: string,
  n?: number,
  refs?: Record<string, string>,
): Unstamped {
  return {
    t: 'msg',
    conv,
    role: m.role,
    text: m.text,
    time: m.time.getTime(),
    ...(n !== undefined ? { n } : {}),
    ...(refs ? { refs } : {}),
    ...(m.toolCalls !== undefined ? { toolCalls: m.toolCalls as unknown[] } : {}),
    ...(m.toolCallId !== undefined ? { toolCallId: m.toolCallId } : {}),
    ...(m.meta !== undefined ? { meta: m.meta } : {}),
  };
}

/** The part of a setting row that syncs, or undefined when none of it does. */
export function settingBody(key: string, value: unknown): Unstamped | undefined {
  if (key !== APP_SETTINGS_KEY || !value || typeof value !== 'object') return undefined;
  const shared: Record<string, JsonValue> = {};
  for (const k of SHARED_APP_SETTINGS) {
    const v = (value as Record<string, unknown>)[k];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') shared[k] = v;
  }
  return { t: 'setting', key, value: shared };
}

/** When a body's change was made: what decides a conflict. */
export function changedAt(b: Unstamped, fallback: number): number {
  switch (b.t) {
    case 'entry':
      return b.modified;
    case 'history':
      return b.replaced;
    case 'conv':
      return b.modified;
    case 'msg':
      return b.time;
    default:
      return fallback;
  }
}

// ---- references between rows -----------------------------------------------------------------

/** A message's meta names rows by their local ids: the turns it recalled and a keeper card's reply. */
type IdMap = (id: number) => number | undefined;

/** The message and chat ids a message's meta names (meta is data: the malformed are skipped). */
export function metaIds(meta: unknown): { msgs: number[]; convs: number[] } {
  const msgs: number[] = [];
  const convs: number[] = [];
  if (!isObject(meta)) return { msgs, convs };
  if (Array.isArray(meta.recalledTurns))
    for (const t of meta.recalledTurns) {
      if (!isObject(t)) continue;
      if (Number.isSafeInteger(t.turnId)) msgs.push(t.turnId as number);
      if (Number.isSafeInteger(t.conversationId)) convs.push(t.conversationId as number);
    }
  if (isObject(meta.keeper) && Number.isSafeInteger(meta.keeper.replyId))
    msgs.push(meta.keeper.replyId as number);
  return { msgs, convs };
}

/**
 * `meta` with the ids it names passed through `msg` and `conv`: a recalled turn they cannot map
 * is left out, a keeper card's reply becomes 0 (no message: the card is not shown).
 * `missing` counts what could not be mapped.
 */
export function mapMetaIds(
  meta: Record<string, unknown>,
  msg: IdMap,
  conv: IdMap,
): { meta: Record<string, unknown>; missing: number } {
  let missing = 0;
  const out = { ...meta };
  if (Array.isArray(meta.recalledTurns))
    out.recalledTurns = meta.recalledTurns.flatMap((t: unknown) => {
      if (!isObject(t) || !Number.isSafeInteger(t.turnId)) return [t];
      const turnId = msg(t.turnId as number);
      const conversationId = Number.isSafeInteger(t.conversationId)
        ? conv(t.conversationId as number)
        : t.conversationId;
      if (turnId === undefined || conversationId === undefined) {
        missing++;
        return [];
      }
      return [{ ...t, turnId, conversationId }];
    });
  if (isObject(meta.keeper) && Number.isSafeInteger(meta.keeper.replyId)) {
    const replyId = msg(meta.keeper.replyId as number);
    if (replyId === undefined) missing++;
    out.keeper = { ...meta.keeper, replyId: replyId ?? 0 };
  }
  return { meta: out, missing };
}

/**
 * The logical ids of the rows a message's meta names, by `m<id>` and `c<id>`: undefined when it
 * names none; else given, if only empty, so that no receiver names its own rows by these ids.
 */
export function metaRefs(
  meta: unknown,
  msgIdOf: (local: number) => string | undefined,
  convIdOf: (local: number) => string | undefined,
): Record<string, string> | undefined {
  const named = metaIds(meta);
  if (!named.msgs.length && !named.convs.length) return undefined;
  const refs: Record<string, string> = {};
  for (const [prefix, ids, idOf] of [
    ['m', named.msgs, msgIdOf],
    ['c', named.convs, convIdOf],
  ] as const)
    for (const x of ids) {
      const id = idOf(x);
      if (id) refs[`${prefix}${x}`] = id;
    }
  return refs;
}

/** The logical ids of the messages `chunks` name, by `m<turn_id>`; undefined when none is known. */
export function chunkRefs(
  chunks: readonly { turn_id: number }[],
  msgIdOf: (local: number) => string | undefined,
): Record<string, string> | undefined {
  const refs: Record<string, string> = {};
  for (const c of chunks) {
    const id = msgIdOf(c.turn_id);
    if (id) refs[`m${c.turn_id}`] = id;
  }
  return Object.keys(refs).length ? refs : undefined;
}

/**
 * `chunks` naming their messages by ids here: `ids` are the ids they had where they were sent
 * (the body's), mapped through `refs` and `msg` (undefined: not here yet; null: gone); a message
 * not here makes `turn_id` 0 (none). `missing` counts those that may still arrive.
 */
export function localChunks<T extends { turn_id: number }>(
  chunks: readonly T[],
  ids: readonly number[],
  refs: Record<string, string>,
  msg: (logical: string) => number | null | undefined,
): { chunks: T[]; missing: number } {
  let missing = 0;
  const out = chunks.map((c, i) => {
    const ref = refs[`m${ids[i]}`];
    const here = ref === undefined ? null : msg(ref);
    if (here === undefined) missing++;
    return { ...c, turn_id: here ?? 0 };
  });
  return { chunks: out, missing };
}

function validRefs(v: unknown): v is Record<string, string> {
  return (
    isObject(v) &&
    Object.entries(v).every(
      ([k, id]) =>
        /^[mc]\d{1,16}$/.test(k) &&
        typeof id === 'string' &&
        kindOf(id) === (k[0] === 'm' ? 'msg' : 'conv') &&
        id.length <= 200,
    )
  );
}

// ---- bodies back to rows -----------------------------------------------------------------------

const EMPTY = new Float32Array(0);

/**
 * An entry row from its body, without vectors (model ''): the engine re-embeds it in the
 * background like a row of another model; until then the words find it.
 */
export function entryRow(b: EntryBody, accessed?: Date): Omit<MemoryEntry, 'id'> {
  return {
    ...placedAt(b.path),
    content: b.content,
    contextChunks: b.chunks.map((c) => ({ ...c, embedding: EMPTY })),
    embedding: EMPTY,
    model: '',
    created: new Date(b.created),
    modified: new Date(b.modified),
    accessed: accessed ?? new Date(b.modified),
    version: b.version,
    ...(b.movedFrom !== undefined ? { movedFrom: b.movedFrom } : {}),
    ...(b.contextVersion !== undefined ? { contextVersion: b.contextVersion } : {}),
  };
}

// ---- checks of what the server sends -----------------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function timeProblem(v: unknown, name: string): string | null {
  if (typeof v !== 'number') return `${name} must be a time in ms, got ${short(v)}`;
  return dateProblem(new Date(v), name);
}

function pathProblem(v: unknown, name: string): string | null {
  const p = parsePath(v);
  if (!p.ok) return `${name} ${short(v)}: ${p.message}`;
  return p.path === v ? null : `${name} ${short(v)} is not in normal form`;
}

function entryProblems(e: unknown, where: string): string[] {
  if (!isObject(e)) return [`${where} is not an object`];
  const out: (string | null)[] = [
    pathProblem(e.path, `${where} path`),
    versionProblem(e.version, `${where} version`),
    timeProblem(e.created, `${where} created`),
    timeProblem(e.modified, `${where} modified`),
  ];
  const c = validateContent(e.content);
  if (isToolError(c)) out.push(`${where}: ${c.message}`);
  else e.content = c.value; // prototype-safe copy
  if (e.refs !== undefined && !validRefs(e.refs)) delete e.refs;
  if (!Array.isArray(e.chunks)) out.push(`${where} chunks must be a list`);
  else
    for (const chunk of e.chunks) {
      if (!isObject(chunk)) out.push(`${where} chunk is not an object`);
      else out.push(...chunkProblems(chunk));
    }
  if (e.movedFrom !== undefined) out.push(pathProblem(e.movedFrom, `${where} movedFrom`));
  if (e.contextVersion !== undefined)
    out.push(versionProblem(e.contextVersion, `${where} contextVersion`));
  return out.filter((p): p is string => p !== null);
}

/**
 * Problems of a body from the server under logical id `id`, as sentences; [] when it can be
 * written here. Strings are data: nothing here ever becomes markup.
 */
export function bodyProblems(id: string, b: unknown): string[] {
  if (!isObject(b)) return ['the document is not an object'];
  const out: (string | null)[] = [
    timeProblem(b.u, 'u'),
    typeof b.d === 'string' ? null : 'd must be text',
  ];
  const kind = kindOf(id);
  if (kind === null || b.t !== kind) return [`unknown document ${short(id)}`];
  switch (b.t) {
    case 'entry':
      out.push(...entryProblems(b, 'entry'));
      if (id !== entryId(String(b.path))) out.push(`entry id ${short(id)} does not name its path`);
      break;
    case 'history':
      out.push(
        pathProblem(b.path, 'path'),
        versionProblem(b.version, 'version'),
        timeProblem(b.replaced, 'replaced'),
        ['update', 'delete', 'move', 'restore', 'import'].includes(String(b.reason))
          ? null
          : `reason ${short(b.reason)} is unknown`,
        ...entryProblems(b.entry, 'entry'),
      );
      if (isObject(b.entry) && b.entry.path !== b.path) out.push('path differs from its entry');
      if (b.movedTo !== undefined) out.push(pathProblem(b.movedTo, 'movedTo'));
      if (b.deleteRoot !== undefined) out.push(pathProblem(b.deleteRoot, 'deleteRoot'));
      if (b.conflictFrom !== undefined && typeof b.conflictFrom !== 'string')
        out.push('conflictFrom must be text');
      break;
    case 'conv':
      out.push(
        typeof b.title === 'string' ? null : 'title must be text',
        timeProblem(b.created, 'created'),
        timeProblem(b.modified, 'modified'),
        b.titled === undefined ? null : timeProblem(b.titled, 'titled'),
      );
      break;
    case 'msg': {
      out.push(
        typeof b.conv === 'string' && kindOf(b.conv) === 'conv'
          ? null
          : 'conv is not a conversation',
        (ROLES as readonly unknown[]).includes(b.role) ? null : `role ${short(b.role)} is unknown`,
        typeof b.text === 'string' ? null : 'text must be text',
        timeProblem(b.time, 'time'),
      );
      if (b.refs !== undefined && !validRefs(b.refs)) delete b.refs;
      // Only an order hint: a bad one is dropped, the message stays.
      if (b.n !== undefined && !(Number.isSafeInteger(b.n) && (b.n as number) >= 0)) delete b.n;
      const parts = validateMessageParts(b);
      if (isToolError(parts)) out.push(parts.message);
      else Object.assign(b, parts);
      break;
    }
    case 'setting': {
      if (b.key !== APP_SETTINGS_KEY || id !== settingId(APP_SETTINGS_KEY))
        out.push(`setting ${short(b.key)} does not sync`);
      else if (!isObject(b.value)) out.push('setting value must be an object');
      else {
        const v = settingBody(APP_SETTINGS_KEY, b.value);
        b.value = v && v.t === 'setting' ? v.value : {};
      }
      break;
    }
  }
  return out.filter((p): p is string => p !== null);
}

// ---- hashing -----------------------------------------------------------------------------------

/** JSON with object keys sorted, so equal values give equal text. */
export function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys
    .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/** A 64-bit FNV-1a hash as 16 hex digits (change detection and ids; not for secrets). */
export function hash(text: string): string {
  let h1 = 0x811c9dc5 | 0;
  let h2 = 0x01000193 | 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h1 >>> 15);
  }
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}

/** What change detection compares: the body without its stamp. */
export function bodyHash(b: Unstamped | SyncBody): string {
  const { u: _u, d: _d, ...rest } = b as SyncBody;
  // A message's place in its chat changes when an earlier one is deleted; that alone is no change.
  // Its references are this device's ids: the same message names them by others elsewhere.
  if (rest.t === 'msg' || rest.t === 'entry') delete rest.refs;
  if (rest.t === 'msg') delete rest.n;
  if (rest.t === 'history' && rest.entry?.refs) {
    const { refs: _refs, ...entry } = rest.entry;
    rest.entry = entry;
  }
  return hash(stableJson(rest));
}
