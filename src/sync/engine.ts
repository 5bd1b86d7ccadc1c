// Sync of the memory database with a CouchDB server (docs/sync.md). A local PouchDB database (the
// mirror) holds the synced documents; PouchDB's replication moves them to and from the server.
// Each cycle: pull → reconcile (local changes into the mirror, conflicts decided, the mirror's
// winners into Dexie) → push. Dexie stays the app's store; vectors never travel.
import Dexie, { type ObservabilitySet, type Table } from 'dexie';
import { DEFAULT_DB_NAME, MemoryDB, isQuotaError, shardTables } from '../memory/db';
import {
  CHAT_DELETES_KEY,
  chatDeletesOf,
  dropConversationChunks,
} from '../memory/tools/conversations';
import { REPLACED_KEY } from '../memory/tools/backup';
import type { HistoryRow, MemoryEntry } from '../memory/types';
import {
  APP_SETTINGS_KEY,
  KIND_ORDER,
  bodyHash,
  bodyProblems,
  changedAt,
  chunkRefs,
  convBody,
  entryBody,
  entryId,
  entryRow,
  historyBody,
  historyId,
  kindOf,
  localChunks,
  mapMetaIds,
  metaRefs,
  msgBody,
  settingBody,
  settingId,
  stableJson,
  type DocKind,
  type EntryBody,
  type SyncBody,
  type Unstamped,
} from './docs';
import {
  isEncryptionMeta,
  newEncryption,
  openEncryption,
  type EncryptionMeta,
  type SyncKey,
} from './crypto';
import { SyncError, classify, syncError, withRetryNote, type SyncErrorInfo } from './errors';
import type { PouchDatabase, PouchDoc, PouchFactory, Replication } from './pouch';

/** The server's record of how this database is encrypted (or that it is not). */
export const META_ID = 'structured-memory-sync';
const META_FORMAT = 1;
const PAGE = 500;
/**
 * Mirror changes applied to Dexie per round: each round is a few transactions, and each one makes
 * the app reload what it shows, so fewer, larger rounds load a big first sync faster.
 */
const APPLY_PAGE = 2000;
/** The sync's bookkeeping: mirror ids of messages that came before their chat. */
const WAITING_KEY = 'waitingMessages';
/** The sync's bookkeeping: logical ids of rows that name a message or chat not here yet. */
const UNNAMED_KEY = 'unnamedRows';
/** Rows kept waiting to be named; the oldest fall out (each costs a read every cycle). */
const MAX_UNNAMED = 2000;
const LIVE_DEBOUNCE_MS = 150;
const MAX_BACKOFF_MS = 60_000;
const KIND_TABLE: Record<DocKind, string> = {
  entry: 'structured_memory',
  history: 'history',
  conv: 'conversations',
  msg: 'messages',
  setting: 'settings',
};
const SYNCED_TABLES = Object.values(KIND_TABLE);

export interface SyncConfig {
  /** The CouchDB server, e.g. http://127.0.0.1:5984 */
  url: string;
  database: string;
  username: string;
  password: string;
  encrypt: boolean;
  passphrase: string;
  /** Keep in sync: live replication with retry. */
  live: boolean;
}

export type SyncState = 'off' | 'syncing' | 'idle' | 'live' | 'retrying' | 'error';

export interface SyncStatus {
  state: SyncState;
  /** When a sync last finished (ms), this session or earlier. */
  lastSync: number | null;
  /** Local changes not yet on the server. */
  waiting: number;
  error: SyncErrorInfo | null;
  /** Documents written here from the server, this session. */
  received: number;
  /** Documents from the server that failed the checks and were not written, this session. */
  skipped: number;
  /** Why the latest one was skipped. */
  skippedWhy?: string;
  /** Why each was skipped: one line per reason, with how many documents and one of their ids. */
  skippedReasons?: SkipReason[];
  /** Conflicts decided this session. */
  conflicts: number;
  /** What arrived being embedded in the background (search by meaning finds it when done). */
  embedding?: { done: number; total: number };
  /** How long the last Sync now took in each step, ms (for the benchmark). */
  timings?: { pull: number; reconcile: number; push: number };
}

export interface SkipReason {
  why: string;
  count: number;
  /** One of the documents (its id, cut to 80 characters). */
  example: string;
}

/** Most reasons the status lists; the rest are counted in `skipped`. */
const MAX_REASONS = 5;

export interface ArrivedMessage {
  conversationId: number;
  turnId: number;
  role: MemoryEntry['contextChunks'][number]['role'];
  text: string;
}

export interface SyncOptions {
  Pouch: PouchFactory;
  /** The memory database (default the app's). */
  memoryName?: string;
  /** Where the settings and the sync's own bookkeeping live (default `<memoryName>-sync`). */
  stateName?: string;
  now?: () => number;
  /** Names this device in conflict records ("Chrome on Linux"). */
  device?: string;
  /** Told after rows arrived: entries to embed, messages to index. */
  onArrived?: (
    arrived: { entries: number; messages: ArrivedMessage[] },
    progress: (p: { done: number; total: number }) => void,
  ) => void | Promise<void>;
  /**
   * For the CORS check: true when the URL answers a no-CORS request, false when nothing answers,
   * 'unknown' when the page cannot tell.
   */
  probe?: (url: string) => Promise<boolean | 'unknown'>;
  /** The page's origin, for the CORS sentence. */
  origin?: string;
  /** PBKDF2 rounds for a new encrypted database (tests lower it). */
  kdfIterations?: number;
  /** Mirror changes applied to Dexie per round (tests lower it). */
  applyPage?: number;
  /**
   * Runs `body` alone among every engine on this memory (the app: a Web Lock, so two tabs never
   * reconcile at once); default: alone in this engine.
   */
  exclusive?: (body: () => Promise<void>) => Promise<void>;
}

/** The sync's record of one document: what the mirror and Dexie agreed on last. */
interface DocState {
  /** Logical id (entry:/history:/conv:/msg:/setting:…). */
  id: string;
  /** The id in the mirror and on the server (the logical id, or its HMAC when encrypted). */
  mid: string;
  kind: DocKind;
  /** The Dexie key: an entry's path, a setting's key, else the row id. */
  local: string | number;
  rev: string;
  /** bodyHash of the synced body; '' when deleted. */
  hash: string;
  /**
   * A message gone here with its chat (its document left as it is on the server): the chat's
   * logical id, so that the chat coming back brings it back (docs/sync.md, "Messages").
   */
  conv?: string;
}

interface KeyValue {
  key: string;
  value: unknown;
}

/**
 * The logical id a chat or message had with the server database synced before (by `localKey`):
 * theirs are random, made by the device that wrote them first, so another database (or another
 * spelling of the server's address) must know them by the same ids, or every device would send
 * its chats again as new ones (docs/sync.md, "Another database").
 */
interface KnownName {
  key: string;
  id: string;
}

class SyncStateDB extends Dexie {
  config!: Table<KeyValue, string>;
  docs!: Table<DocState, string>;
  names!: Table<KnownName, string>;
  constructor(name: string) {
    super(name);
    this.version(1).stores({ config: '&key', docs: '&id, mid, [kind+local]' });
    this.version(2).stores({ names: '&key' });
  }
}

interface Connection {
  remote: PouchDatabase;
  mirror: PouchDatabase;
  key: SyncKey | null;
}

export interface Decoded {
  id: string;
  rev: string;
  deleted: boolean;
  u: number;
  body?: SyncBody;
  /** A resolution tombstone: not a change of its own. */
  resolution?: boolean;
}

/**
 * A row that named a message or chat not here when it was written: a message's meta, or an
 * entry's chunks (of a live entry, by path, or of a history row), with the ids the body gave.
 */
type Unnamed =
  | { kind: 'msg'; id: string; key: number; body: Extract<SyncBody, { t: 'msg' }> }
  | {
      kind: 'entry' | 'history';
      id: string;
      key: string | number;
      ids: number[];
      refs: Record<string, string>;
    };

/** A message body's meta with the rows it names (`refs`) by their ids here, where known. */
function localMeta(
  body: Extract<SyncBody, { t: 'msg' }>,
  stateOf: (id: string) => DocState | undefined,
): { meta: Record<string, unknown>; missing: number } {
  const refs = body.refs ?? {};
  // `missing`: the rows named that may still arrive (not known here at all).
  let missing = 0;
  const here = (ref: string | undefined) => {
    if (ref === undefined) return undefined;
    const local = rowHere(stateOf(ref));
    if (local === undefined) missing++;
    return local ?? undefined;
  };
  const { meta } = mapMetaIds(
    body.meta ?? {},
    (id) => here(refs[`m${id}`]),
    (id) => here(refs[`c${id}`]),
  );
  return { meta, missing };
}

/** A row here by its state: its id, null when it was deleted here, undefined when unknown. */
function rowHere(s: DocState | undefined): number | null | undefined {
  return s ? (s.hash !== '' ? (s.local as number) : null) : undefined;
}

const localKey = (kind: DocKind, local: string | number) => `${kind}\u0000${String(local)}`;
const baseId = (id: string) => id.split(':').slice(0, 2).join(':');
const randomRev = () =>
  [...crypto.getRandomValues(new Uint8Array(16))]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
const revGen = (rev: string) => Number.parseInt(rev, 10);
const revHash = (rev: string) => rev.slice(rev.indexOf('-') + 1);

export type SyncEngine = ReturnType<typeof createSync>;

export function createSync(options: SyncOptions) {
  const memoryName = options.memoryName ?? DEFAULT_DB_NAME;
  const now = options.now ?? Date.now;
  const device = options.device ?? 'another device';
  const applyPage = options.applyPage ?? APPLY_PAGE;
  const mdb = new MemoryDB(memoryName);
  const sdb = new SyncStateDB(options.stateName ?? `${memoryName}-sync`);

  const status: SyncStatus = {
    state: 'off',
    lastSync: null,
    waiting: 0,
    error: null,
    received: 0,
    skipped: 0,
    conflicts: 0,
  };
  const listeners = new Set<(s: SyncStatus) => void>();
  const emit = () => {
    const copy = { ...status };
    for (const l of listeners) {
      Promise.resolve()
        .then(() => l(copy))
        .catch(() => listeners.delete(l));
    }
  };
  const setStatus = (patch: Partial<SyncStatus>) => {
    Object.assign(status, patch);
    emit();
  };

  // Server documents skipped this session, by id, with why (a later good revision clears one).
  const skippedDocs = new Map<string, string>();
  // The skips changed since the status was last sent (a reconcile sends it when it ends: live
  // sync sends nothing else after a round that wrote nothing).
  let skipsToShow = false;
  let conn: Connection | null = null;
  let connFor = '';
  let live: { pull: Replication; push: Replication; stop: () => void } | null = null;
  let closed = false;
  // One reconcile at a time; a request while one runs queues one more.
  let running: Promise<void> = Promise.resolve();
  // Arrivals are embedded and indexed in the background, one batch after another: the sync
  // does not wait (the words find them meanwhile).
  let arrivals: Promise<void> = Promise.resolve();
  const background = (arrived: { entries: number; messages: ArrivedMessage[] }) => {
    const run = async () => {
      if (closed) return;
      try {
        await options.onArrived?.(arrived, (p) =>
          setStatus({ embedding: p.done < p.total ? { ...p } : undefined }),
        );
      } finally {
        if (status.embedding) setStatus({ embedding: undefined });
      }
    };
    arrivals = arrivals.then(run, run).catch(() => undefined);
  };

  async function getConfig(): Promise<SyncConfig | undefined> {
    return (await sdb.config.get('config'))?.value as SyncConfig | undefined;
  }

  /** Saves the settings (on this device only) and starts or stops live sync to match. */
  async function configure(config: SyncConfig): Promise<SyncStatus> {
    const clean: SyncConfig = {
      url: String(config.url ?? '')
        .trim()
        .replace(/\/+$/, ''),
      database: String(config.database ?? '').trim(),
      username: String(config.username ?? ''),
      password: String(config.password ?? ''),
      encrypt: !!config.encrypt,
      passphrase: String(config.passphrase ?? ''),
      live: !!config.live,
    };
    const before = await getConfig();
    await sdb.config.put({ key: 'config', value: clean });
    // Another server or database: its last sync is not this one's.
    if (
      before &&
      (before.url !== clean.url ||
        before.database !== clean.database ||
        before.username !== clean.username ||
        before.encrypt !== clean.encrypt)
    ) {
      await sdb.config.delete('lastSync');
      status.lastSync = null;
    }
    stopLive();
    conn = null;
    connFor = '';
    if (clean.live) return startLive();
    setStatus({ state: 'off', error: null });
    return { ...status };
  }

  // ---- connecting ------------------------------------------------------------------------------

  function checkConfig(c: SyncConfig | undefined): SyncConfig {
    if (!c || !c.url || !c.database)
      throw syncError('NOT_CONFIGURED', 'Sync is not set up on this device.');
    let url: URL;
    try {
      url = new URL(c.url);
    } catch {
      throw syncError('INVALID_URL', `"${c.url}" is not a web address.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw syncError('INVALID_URL', `"${c.url}" is not an http or https address.`);
    if (!/^[a-z][a-z0-9_$()+/-]*$/.test(c.database))
      throw syncError(
        'INVALID_URL',
        `"${c.database}" is not a CouchDB database name.`,
        'Use lower-case letters, digits and _$()+-/, starting with a letter (e.g. memory).',
      );
    if (c.encrypt && !c.passphrase)
      throw syncError(
        'NEEDS_PASSPHRASE',
        'Encryption is on but there is no passphrase.',
        'Enter the passphrase, or turn encryption off.',
      );
    return c;
  }

  async function fail(e: unknown, url: string): Promise<SyncError> {
    let cors: boolean | 'unknown' = false;
    const first = classify(e, options.origin ?? '');
    if (first.code === 'UNREACHABLE' && options.probe) {
      cors = await options.probe(url).catch(() => false);
    }
    const err = cors ? classify(e, options.origin ?? '', cors) : first;
    if (isQuotaError(e))
      return syncError('STORAGE_FULL', 'Browser storage is full; the sync stopped.');
    return err;
  }

  /** A failure for the status line: its fix says whether anything tries again by itself. */
  async function shown(e: SyncError): Promise<SyncErrorInfo> {
    return withRetryNote(e.info(), !!(await getConfig())?.live);
  }

  async function connect(): Promise<Connection> {
    const config = checkConfig(await getConfig());
    const remoteUrl = `${config.url}/${encodeURIComponent(config.database)}`;
    const who = `${remoteUrl}\u0000${config.username}\u0000${config.encrypt}\u0000${config.passphrase}`;
    if (conn && connFor === who) return conn;
    const remote = quietInfo(
      options.Pouch(remoteUrl, {
        ...(config.username
          ? { auth: { username: config.username, password: config.password } }
          : {}),
      }),
    );
    let meta: PouchDoc | null;
    try {
      meta = await remote.get(META_ID).catch((e: { status?: number }) => {
        if (e?.status === 404) return null;
        throw e;
      });
    } catch (e) {
      throw await fail(e, config.url);
    }
    let key: SyncKey | null = null;
    let salt = 'plain';
    const encryption = meta?.encryption;
    if (meta && encryption !== null && encryption !== undefined) {
      if (!isEncryptionMeta(encryption))
        throw syncError(
          'SERVER_ERROR',
          'The database’s encryption record is damaged.',
          'Use a new database name; this one cannot be read.',
        );
      if (!config.encrypt) throw syncError('NEEDS_PASSPHRASE', 'This database is encrypted.');
      key = await openEncryption(config.passphrase, encryption);
      if (!key) throw syncError('WRONG_PASSPHRASE', 'The passphrase does not open this database.');
      salt = encryption.salt;
    } else if (meta) {
      if (config.encrypt) throw syncError('NOT_ENCRYPTED', 'This database is not encrypted.');
    } else {
      // A database that has never been synced by this app.
      let count = 0;
      try {
        const all = await remote.allDocs({ limit: 2 });
        count = all.rows.filter((r) => !r.key.startsWith('_design/')).length;
      } catch (e) {
        throw await fail(e, config.url);
      }
      if (count && config.encrypt)
        throw syncError('NOT_ENCRYPTED', 'This database already holds unencrypted documents.');
      let record: EncryptionMeta | null = null;
      if (config.encrypt) {
        const made = await newEncryption(config.passphrase, options.kdfIterations);
        key = made.key;
        record = made.meta;
        salt = record.salt;
      }
      try {
        await remote.put({ _id: META_ID, format: META_FORMAT, encryption: record });
      } catch (e) {
        // Another device made it at the same moment: start over with theirs.
        if ((e as { status?: number })?.status === 409) return connect();
        throw await fail(e, config.url);
      }
    }
    // The mirror belongs to one server database (and one encryption): another one starts afresh.
    const mirrorName = `${memoryName}-mirror-${hashName(`${remoteUrl}\u0000${config.username}\u0000${salt}`)}`;
    const previous = (await sdb.config.get('mirror'))?.value;
    if (previous !== mirrorName) {
      if (typeof previous === 'string')
        await options
          .Pouch(previous)
          .destroy()
          .catch(() => undefined);
      await sdb.transaction('rw', sdb.config, sdb.docs, sdb.names, async () => {
        // The chats' and messages' ids go on (a Replace all since clears them: `afterReplace`).
        const named = await sdb.docs
          .filter((d) => (d.kind === 'conv' || d.kind === 'msg') && d.hash !== '')
          .toArray();
        await sdb.names.bulkPut(named.map((d) => ({ key: localKey(d.kind, d.local), id: d.id })));
        await sdb.docs.clear();
        await sdb.config.put({ key: 'mirror', value: mirrorName });
        await sdb.config.put({ key: 'seq', value: 0 });
      });
    }
    conn = { remote, mirror: options.Pouch(mirrorName), key };
    connFor = who;
    return conn;
  }

  // ---- encoding --------------------------------------------------------------------------------

  async function mirrorId(c: Connection, id: string): Promise<string> {
    return c.key ? c.key.docId(id) : id;
  }

  async function encode(
    c: Connection,
    id: string,
    body: SyncBody,
  ): Promise<Record<string, unknown>> {
    return c.key ? { e: await c.key.seal({ id, ...body }) } : { ...body };
  }

  async function encodeDelete(
    c: Connection,
    id: string,
    u: number,
  ): Promise<Record<string, unknown>> {
    return c.key ? { e: await c.key.seal({ id, u, d: device, deleted: true }) } : { u, d: device };
  }

  /** A mirror document as the engine sees it; null when it cannot be read (counted as skipped). */
  async function decode(c: Connection, doc: PouchDoc, knownId?: string): Promise<Decoded | null> {
    const rev = doc._rev ?? '';
    const deleted = doc._deleted === true;
    if (deleted && doc.r) return { id: knownId ?? '', rev, deleted, u: 0, resolution: true };
    let plain: Record<string, unknown>;
    let id: string;
    if (c.key) {
      if (typeof doc.e !== 'string') return skip(doc._id, 'it is not encrypted');
      try {
        plain = (await c.key.open(doc.e)) as Record<string, unknown>;
      } catch {
        return skip(doc._id, 'it does not open with this passphrase');
      }
      if (!plain || typeof plain !== 'object' || typeof plain.id !== 'string')
        return skip(doc._id, 'it names no document');
      id = plain.id;
      if ((await c.key.docId(id)) !== doc._id) return skip(doc._id, 'its id does not match');
      delete plain.id;
    } else {
      const { _id, _rev, _deleted, _revisions, _conflicts, ...rest } = doc;
      plain = rest;
      id = _id;
    }
    const u = typeof plain.u === 'number' && Number.isFinite(plain.u) ? plain.u : 0;
    if (deleted || plain.deleted === true) return { id, rev, deleted: true, u };
    const problems = bodyProblems(id, plain);
    if (problems.length) return skip(id, problems.slice(0, 3).join('; '));
    if (skippedDocs.delete(doc._id) || skippedDocs.delete(id)) {
      skipsToShow = true;
      status.skipped = skippedDocs.size;
      status.skippedReasons = skipReasons(skippedDocs);
    }
    return { id, rev, deleted: false, u, body: plain as unknown as SyncBody };
  }

  function skip(id: string, why: string): null {
    // One document is read more than once in a round (its winner, its leaves): count it once.
    skippedDocs.set(id, why);
    skipsToShow = true;
    status.skipped = skippedDocs.size;
    status.skippedWhy = `The server document ${id.slice(0, 80)} was not written here: ${why}.`;
    status.skippedReasons = skipReasons(skippedDocs);
    return null;
  }

  // ---- scanning Dexie --------------------------------------------------------------------------

  interface Scanned {
    id: string;
    kind: DocKind;
    local: string | number;
    body: Unstamped;
    hash: string;
  }

  /**
   * Reads the synced tables (only those in `only`, when given: live sync knows which tables a
   * write touched) as bodies with their logical ids.
   */
  async function scanLocal(
    byLocal: Map<string, DocState>,
    only?: ReadonlySet<string>,
  ): Promise<{ docs: Map<string, Scanned>; deletedAt: Map<string, number> }> {
    const read = <T, K>(table: Table<T, K>) =>
      !only || only.has(table.name) ? table.toArray() : Promise.resolve([] as T[]);
    const [entries, history, convs, msgs, settings] = await mdb.transaction(
      'r',
      [mdb.structured_memory, mdb.history, mdb.conversations, mdb.messages, mdb.settings],
      async () =>
        Promise.all([
          read(mdb.structured_memory),
          read(mdb.history),
          read(mdb.conversations),
          read(mdb.messages),
          read(mdb.settings),
        ]),
    );
    const out = new Map<string, Scanned>();
    // When each path's entry left it (deleted or moved away): the stamp of its delete.
    const deletedAt = new Map<string, number>();
    for (const h of history) {
      if (h.reason !== 'delete' && h.reason !== 'move') continue;
      const t = h.replaced.getTime();
      if (t > (deletedAt.get(h.path) ?? -Infinity)) deletedAt.set(h.path, t);
    }
    const add = (id: string, kind: DocKind, local: string | number, body: Unstamped) =>
      out.set(id, { id, kind, local, body, hash: bodyHash(body) });
    // Ids first: rows name messages (an entry's chunks, a reply's meta), new ones too.
    // Conversations not read this time are known by their records.
    const convIds = new Map<number, string>();
    for (const st of byLocal.values())
      if (st.kind === 'conv' && st.hash !== '') convIds.set(st.local as number, st.id);
    // Chats and messages this database has no record of yet: by the ids they had with the one
    // before, if any, else new ones.
    const unknown = [
      ...convs
        .filter((c) => !byLocal.has(localKey('conv', c.id!)))
        .map((c) => localKey('conv', c.id!)),
      ...msgs
        .filter((m) => !byLocal.has(localKey('msg', m.id!)))
        .map((m) => localKey('msg', m.id!)),
    ];
    const known = new Map<string, string>();
    if (unknown.length && (await sdb.names.count()))
      (await sdb.names.bulkGet(unknown)).forEach((n) => n && known.set(n.key, n.id));
    const idOf = (kind: 'conv' | 'msg', local: number) =>
      byLocal.get(localKey(kind, local))?.id ??
      known.get(localKey(kind, local)) ??
      `${kind}:${randomRev()}`;
    for (const c of convs) convIds.set(c.id!, idOf('conv', c.id!));
    const msgIds = new Map<number, string>();
    for (const m of msgs) if (convIds.has(m.conversationId)) msgIds.set(m.id!, idOf('msg', m.id!));
    const msgIdOf = (local: number) => msgIds.get(local) ?? byLocal.get(localKey('msg', local))?.id;
    // Refs go with every snapshot, if only empty: the receiver names no message of its own by
    // this device's ids.
    const withRefs = (e: EntryBody): EntryBody =>
      e.chunks.length ? { ...e, refs: chunkRefs(e.chunks, msgIdOf) ?? {} } : e;
    for (const e of entries)
      add(entryId(e.path), 'entry', e.path, { t: 'entry', ...withRefs(entryBody(e)) });
    for (const h of history) {
      const body = historyBody(h);
      const computed = historyId(body as Parameters<typeof historyId>[0]);
      const known = byLocal.get(localKey('history', h.id!));
      let id = known && baseId(known.id) === computed ? known.id : computed;
      if (out.has(id) && out.get(id)!.local !== h.id) id = `${computed}:${h.id}`;
      add(
        id,
        'history',
        h.id!,
        body.t === 'history' ? { ...body, entry: withRefs(body.entry) } : body,
      );
    }
    for (const c of convs) add(convIds.get(c.id!)!, 'conv', c.id!, convBody(c));
    // Rows come in id order, which is their order in each chat: each one's place travels with it.
    const places = new Map<number, number>();
    for (const m of msgs) {
      const conv = convIds.get(m.conversationId);
      if (!conv) continue; // a message of a deleted conversation: it goes with it
      const n = places.get(m.conversationId) ?? 0;
      places.set(m.conversationId, n + 1);
      const refs = metaRefs(m.meta, msgIdOf, (x) => convIds.get(x));
      add(msgIds.get(m.id!)!, 'msg', m.id!, msgBody(m, conv, n, refs));
    }
    for (const s of settings) {
      const body = settingBody(s.key, s.value);
      if (body) add(settingId(s.key), 'setting', s.key, body);
    }
    return { docs: out, deletedAt };
  }

  // ---- reconcile -------------------------------------------------------------------------------

  /**
   * Memory was replaced by a backup (Replace all) since the last cycle: the rows' ids now name
   * the backup's rows, not those synced under them, so the record of which row is which document
   * starts afresh. Every row here is then new to the sync (new ids for chats and messages), and
   * every document of the mirror comes in as new: what the server holds is merged back, nothing
   * on it is overwritten or deleted (docs/sync.md, "Another database").
   */
  async function afterReplace(): Promise<void> {
    const replaced = (await mdb.settings.get(REPLACED_KEY))?.value;
    if (replaced === undefined || replaced === (await sdb.config.get('replaced'))?.value) return;
    await sdb.transaction('rw', sdb.config, sdb.docs, sdb.names, async () => {
      await sdb.docs.clear();
      await sdb.names.clear();
      await sdb.config.bulkPut([
        { key: 'seq', value: 0 },
        { key: WAITING_KEY, value: [] },
        { key: UNNAMED_KEY, value: [] },
        { key: 'replaced', value: replaced },
      ]);
    });
  }

  async function reconcile(
    c: Connection,
    only?: ReadonlySet<string>,
  ): Promise<{ written: number; again: boolean }> {
    await afterReplace();
    const states = await sdb.docs.toArray();
    const byId = new Map(states.map((s) => [s.id, s]));
    const byMid = new Map(states.map((s) => [s.mid, s]));
    const byLocal = new Map(states.map((s) => [localKey(s.kind, s.local), s]));
    const remember = (s: DocState) => {
      const old = byId.get(s.id);
      if (old) byLocal.delete(localKey(old.kind, old.local));
      byId.set(s.id, s);
      byMid.set(s.mid, s);
      byLocal.set(localKey(s.kind, s.local), s);
    };

    // 1. Local changes go into the mirror, each on the revision Dexie last agreed with: when the
    // server changed it meanwhile, that makes a conflict there, decided in step 2.
    const { docs: scanned, deletedAt } = await scanLocal(byLocal, only);
    const scannedKinds = new Set(
      (Object.entries(KIND_TABLE) as [DocKind, string][])
        .filter(([, table]) => !only || only.has(table))
        .map(([kind]) => kind),
    );
    const changed: { id: string; scan?: Scanned; st?: DocState }[] = [];
    for (const s of scanned.values()) {
      const st = byId.get(s.id);
      if (!st || st.hash !== s.hash) changed.push({ id: s.id, scan: s, st });
    }
    for (const st of byId.values())
      if (st.hash !== '' && scannedKinds.has(st.kind) && !scanned.has(st.id))
        changed.push({ id: st.id, st });
    // A chat deleted here while another device went on with it: a delete older than the server's
    // change of the chat, not yet here, gives way, and the chat comes back whole (docs/sync.md).
    const chatDeletes = chatDeletesOf((await mdb.settings.get(CHAT_DELETES_KEY))?.value);
    const yielding = new Set<string>();
    const convDeletes = changed.filter((p) => !p.scan && p.st!.kind === 'conv');
    if (convDeletes.length) {
      const got = await c.mirror.allDocs({
        keys: convDeletes.map((p) => p.st!.mid),
        include_docs: true,
      });
      for (const [j, p] of convDeletes.entries()) {
        const row = got.rows[j];
        const at = chatDeletes.get(p.st!.local as number);
        if (!row?.value || row.value.deleted || row.value.rev === p.st!.rev || !row.doc) continue;
        const w = await decode(c, row.doc, p.id);
        if (w && !w.deleted && at !== undefined && w.u > at) yielding.add(p.id);
      }
    }
    const restore: string[] = [];
    const goneChats = new Set(convDeletes.filter((p) => !yielding.has(p.id)).map((p) => p.id));
    let written = 0;
    for (let i = 0; i < changed.length; i += PAGE) {
      const page = changed.slice(i, i + PAGE);
      const mids = await Promise.all(page.map((p) => p.st?.mid ?? mirrorId(c, p.id)));
      const current = await c.mirror.allDocs({ keys: mids, include_docs: true });
      const docs: PouchDoc[] = [];
      const states: DocState[] = [];
      for (const [j, p] of page.entries()) {
        const row = current.rows[j];
        const mid = mids[j];
        const winner =
          row?.value && !row.value.deleted && row.doc ? await decode(c, row.doc, p.id) : null;
        const hash = p.scan?.hash ?? '';
        const kind = p.scan?.kind ?? p.st!.kind;
        const local = p.scan?.local ?? p.st!.local;
        if (
          !p.scan &&
          (yielding.has(p.id) || (winner?.body?.t === 'msg' && yielding.has(winner.body.conv)))
        ) {
          // Given way: the chat comes back in step 2 as the server has it, each message too.
          const back = kind === 'msg';
          states.push({ id: p.id, mid, kind, local, rev: back ? '' : p.st!.rev, hash: '' });
          if (back) restore.push(mid);
          continue;
        }
        // A message gone with its chat: only the chat's delete travels (every device deletes its
        // messages with it), so the chat coming back, if its delete loses, comes back whole.
        const chatOf = winner?.body?.t === 'msg' ? winner.body.conv : undefined;
        if (!p.scan && chatOf && (goneChats.has(chatOf) || byId.get(chatOf)?.hash === '')) {
          states.push({ id: p.id, mid, kind, local, rev: p.st!.rev, hash: '', conv: chatOf });
          continue;
        }
        // The mirror already holds this very change (it came from the server): adopt it.
        const same = p.scan
          ? winner?.body && bodyHash(winner.body) === hash
          : !row?.value || row.value.deleted;
        if (same && row?.value) {
          states.push({ id: p.id, mid, kind, local, rev: row.value.rev, hash });
          continue;
        }
        if (!p.scan && !row?.value) {
          states.push({ id: p.id, mid, kind, local, rev: p.st!.rev, hash: '' });
          continue;
        }
        const parent = p.st?.rev;
        const gen = parent ? revGen(parent) + 1 : 1;
        const r = randomRev();
        const rev = `${gen}-${r}`;
        const stamped = p.scan
          ? ({ ...p.scan.body, u: changedAt(p.scan.body, now()), d: device } as SyncBody)
          : undefined;
        docs.push({
          _id: mid,
          _rev: rev,
          _revisions: { start: gen, ids: parent ? [r, revHash(parent)] : [r] },
          ...(stamped
            ? await encode(c, p.id, stamped)
            : await encodeDelete(
                c,
                p.id,
                (kind === 'entry'
                  ? deletedAt.get(String(local))
                  : kind === 'conv'
                    ? chatDeletes.get(local as number)
                    : undefined) ?? now(),
              )),
          ...(stamped ? {} : { _deleted: true }),
        });
        states.push({ id: p.id, mid, kind, local, rev, hash });
      }
      if (docs.length) {
        const results = await c.mirror.bulkDocs(docs, { new_edits: false });
        const failed = results.find((x) => x.error);
        if (failed)
          throw syncError(
            'INTERNAL',
            `The local sync copy refused a write: ${failed.message ?? failed.error}`,
          );
        written += docs.length;
      }
      // A message given way to is fetched in step 2 with those waiting for their chat: named
      // there in the same write as its state, so a stop between the steps loses none.
      await alsoWaiting(restore.splice(0), states);
      states.forEach(remember);
    }

    // 2. What changed in the mirror (from the server, or our step 1): conflicts are decided, then
    // each document's winner is written to Dexie where it differs. New and changed messages wait
    // to the end: a chat's every change moves it on in the feed, after messages it already had,
    // and a chat's messages are stored in the chat's order (docs/sync.md, "Messages").
    let since = ((await sdb.config.get('seq'))?.value as number | string | undefined) ?? 0;
    let arrivedEntries = 0;
    let again = false;
    const arrivedMessages: ArrivedMessage[] = [];
    const earlier = ((await sdb.config.get(WAITING_KEY))?.value as string[] | undefined) ?? [];
    const waiting = new Map<string, Decoded>();
    // Rows written while a message or chat they name had not arrived: named at the end.
    const unnamed: Unnamed[] = [];
    const revived = new Set<string>();
    const take = (applied: Awaited<ReturnType<typeof apply>>) => {
      unnamed.push(...applied.unnamed);
      for (const id of applied.revived) revived.add(id);
      for (const s of applied.states) remember(s);
      arrivedEntries += applied.entries;
      arrivedMessages.push(...applied.messages);
      again ||= applied.again;
      return sdb.docs.bulkPut(applied.states);
    };
    for (;;) {
      const feed = await c.mirror.changes({
        since,
        limit: applyPage,
        style: 'all_docs',
        return_docs: true,
      });
      if (!feed.results.length) break;
      // A resolution writes to the mirror (tombstones, a history version): read on after it.
      let resolved = false;
      for (const ch of feed.results) {
        if (ch.id === META_ID || ch.id.startsWith('_design/')) continue;
        if (ch.changes.length > 1)
          resolved = (await resolve(c, ch.id, byMid.get(ch.id)?.id)) || resolved;
      }
      // Winners after resolving (a resolution may have changed them).
      const ids = [...new Set(feed.results.map((ch) => ch.id))].filter(
        (id) => id !== META_ID && !id.startsWith('_design/'),
      );
      const incoming: Decoded[] = [];
      for (const [mid, d] of await winners(c, ids, byMid)) {
        waiting.delete(mid);
        if (d?.body?.t === 'msg') waiting.set(mid, d);
        else if (d) incoming.push(d);
      }
      await take(await apply(c, incoming, byId, byLocal));
      since = feed.last_seq;
      // The waiting messages are named with the feed's place: a stop here loses none of them.
      await sdb.config.bulkPut([
        { key: 'seq', value: since },
        { key: WAITING_KEY, value: [...new Set([...earlier, ...waiting.keys()])] },
      ]);
      if (feed.results.length < applyPage && !resolved) break;
    }
    // A chat back here brings the messages that went with its delete: read again from the
    // mirror with those waiting (named with them, so a stop loses none).
    const back = revived.size
      ? [...byId.values()]
          .filter((s) => s.kind === 'msg' && s.hash === '' && s.conv && revived.has(s.conv))
          .map((s) => ({ ...s, rev: '' }))
      : [];
    if (back.length) {
      await alsoWaiting(
        back.map((s) => s.mid),
        back,
      );
      back.forEach(remember);
      earlier.push(...back.map((s) => s.mid));
    }
    // Messages an earlier cycle kept for their chat, then all of them in their chats' order.
    const kept = earlier.filter((mid) => !waiting.has(mid));
    for (let i = 0; i < kept.length; i += applyPage)
      for (const [mid, d] of await winners(c, kept.slice(i, i + applyPage), byMid))
        if (d?.body?.t === 'msg') waiting.set(mid, d);
    const ordered = inChatOrder([...waiting.values()]);
    const orphans: string[] = [];
    for (let i = 0; i < ordered.length; i += applyPage) {
      const applied = await apply(c, ordered.slice(i, i + applyPage), byId, byLocal);
      await take(applied);
      for (const id of applied.orphans) orphans.push(byId.get(id)?.mid ?? (await mirrorId(c, id)));
    }
    if (earlier.length || waiting.size) await sdb.config.put({ key: WAITING_KEY, value: orphans });
    // Named now, with those an earlier cycle left; those still waiting are kept (the newest).
    const before = await unnamedBefore(c, byId);
    if (unnamed.length || before.length) {
      const seen = new Set(unnamed.map((u) => u.id));
      const all = [...before.filter((u) => !seen.has(u.id)), ...unnamed];
      const { states: named, still } = await nameLater(all, byId, byLocal);
      named.forEach(remember);
      await sdb.transaction('rw', sdb.docs, sdb.config, async () => {
        await sdb.docs.bulkPut(named);
        const ids = [...new Set(still.map((u) => u.id))].slice(-MAX_UNNAMED);
        await sdb.config.put({ key: UNNAMED_KEY, value: ids });
      });
    }
    if (arrivedEntries || arrivedMessages.length)
      background({ entries: arrivedEntries, messages: arrivedMessages });
    if (skipsToShow) {
      skipsToShow = false;
      emit();
    }
    return { written, again };
  }

  /**
   * Writes `states` with `mids` added to the messages waiting for step 2 (`WAITING_KEY`), in one
   * transaction: a stop between the two loses none of them.
   */
  async function alsoWaiting(mids: readonly string[], states: readonly DocState[]) {
    await sdb.transaction('rw', sdb.docs, sdb.config, async () => {
      if (mids.length) {
        const was = ((await sdb.config.get(WAITING_KEY))?.value as string[] | undefined) ?? [];
        await sdb.config.put({ key: WAITING_KEY, value: [...new Set([...was, ...mids])] });
      }
      await sdb.docs.bulkPut(states);
    });
  }

  /**
   * Rows written while a message or chat they name had not arrived: named again now that the
   * cycle brought what it could. A row changed here since is left alone. Their new states, and
   * those still waiting for a row that may yet arrive (`UNNAMED_KEY`: tried again next cycle).
   */
  async function nameLater(
    list: readonly Unnamed[],
    byId: ReadonlyMap<string, DocState>,
    byLocal: ReadonlyMap<string, DocState>,
  ): Promise<{ states: DocState[]; still: Unnamed[] }> {
    const states: DocState[] = [];
    const still: Unnamed[] = [];
    const here = (id: string) => rowHere(byId.get(id));
    const sameIds = (a: readonly { turn_id: number }[], b: readonly { turn_id: number }[]) =>
      a.every((c, i) => c.turn_id === b[i].turn_id);
    await mdb.transaction('rw', [mdb.messages, mdb.structured_memory, mdb.history], async () => {
      for (const u of list) {
        const st = byId.get(u.id);
        if (!st || st.local !== u.key) continue;
        if (u.kind === 'msg') {
          const row = await mdb.messages.get(u.key);
          const conv = row && byLocal.get(localKey('conv', row.conversationId))?.id;
          if (!row || !conv || bodyHash(msgBody(row, conv)) !== st.hash) continue;
          const { meta, missing } = localMeta(u.body, (id) => byId.get(id));
          if (missing) still.push(u);
          if (stableJson(meta) === stableJson(row.meta)) continue;
          const next = { ...row, meta };
          await mdb.messages.put(next);
          states.push({ ...st, hash: bodyHash(msgBody(next, conv)) });
        } else if (u.kind === 'entry') {
          const row = await mdb.structured_memory.where('path').equals(String(u.key)).first();
          if (!row || bodyHash({ t: 'entry', ...entryBody(row) }) !== st.hash) continue;
          if (u.ids.length !== row.contextChunks.length) continue;
          const { chunks, missing } = localChunks(row.contextChunks, u.ids, u.refs, here);
          if (missing) still.push(u);
          if (sameIds(chunks, row.contextChunks)) continue;
          const next = { ...row, contextChunks: chunks };
          await mdb.structured_memory.put(next);
          states.push({ ...st, hash: bodyHash({ t: 'entry', ...entryBody(next) }) });
        } else {
          const row = await mdb.history.get(Number(u.key));
          if (!row || bodyHash(historyBody(row)) !== st.hash) continue;
          if (u.ids.length !== row.entry.contextChunks.length) continue;
          const { chunks, missing } = localChunks(row.entry.contextChunks, u.ids, u.refs, here);
          if (missing) still.push(u);
          if (sameIds(chunks, row.entry.contextChunks)) continue;
          const next = { ...row, entry: { ...row.entry, contextChunks: chunks } };
          await mdb.history.put(next);
          states.push({ ...st, hash: bodyHash(historyBody(next)) });
        }
      }
    });
    return { states, still };
  }

  /** Rows an earlier cycle left waiting to be named, read again from the mirror as Dexie has them. */
  async function unnamedBefore(
    c: Connection,
    byId: ReadonlyMap<string, DocState>,
  ): Promise<Unnamed[]> {
    const ids = ((await sdb.config.get(UNNAMED_KEY))?.value as string[] | undefined) ?? [];
    const known = ids.flatMap((id) => {
      const st = byId.get(id);
      return st && st.hash !== '' ? [st] : [];
    });
    if (!known.length) return [];
    const docs = await c.mirror.allDocs({ keys: known.map((s) => s.mid), include_docs: true });
    const out: Unnamed[] = [];
    for (const [i, row] of docs.rows.entries()) {
      const st = known[i];
      if (row.value?.rev !== st.rev || !row.doc) continue;
      const body = (await decode(c, row.doc, st.id))?.body;
      if (body?.t === 'msg' && body.refs)
        out.push({ kind: 'msg', id: st.id, key: st.local as number, body });
      else if (body?.t === 'entry' && body.refs)
        out.push({
          kind: 'entry',
          id: st.id,
          key: st.local,
          ids: body.chunks.map((x) => x.turn_id),
          refs: body.refs,
        });
      else if (body?.t === 'history' && body.entry.refs)
        out.push({
          kind: 'history',
          id: st.id,
          key: st.local,
          ids: body.entry.chunks.map((x) => x.turn_id),
          refs: body.entry.refs,
        });
    }
    return out;
  }

  /**
   * The mirror's current winners of these documents, by mirror id: null where Dexie already has
   * it, or it cannot be read (skipped), or it is a delete of something never here.
   */
  async function winners(
    c: Connection,
    mids: string[],
    byMid: Map<string, DocState>,
  ): Promise<[string, Decoded | null][]> {
    const docs = await c.mirror.allDocs({ keys: mids, include_docs: true });
    const out: [string, Decoded | null][] = [];
    for (const row of docs.rows) {
      if (!row.value) continue;
      const st = byMid.get(row.key);
      if (st?.rev === row.value.rev) {
        out.push([row.key, null]); // Dexie already has it
      } else if (row.value.deleted) {
        const gone = st && st.hash !== '';
        out.push([row.key, gone ? { id: st.id, rev: row.value.rev, deleted: true, u: 0 } : null]);
      } else out.push([row.key, row.doc ? await decode(c, row.doc, st?.id) : null]);
    }
    return out;
  }

  /**
   * Decides a document with several leaves: the later change wins (its stamp `u`), ties go to
   * the higher revision, so every device decides alike. Losing leaves are closed with a
   * resolution tombstone; a losing entry version goes to the entry's history, marked.
   */
  async function resolve(c: Connection, mid: string, knownId?: string): Promise<boolean> {
    const leaves = await c.mirror.get(mid, { open_revs: 'all' });
    const decoded: Decoded[] = [];
    for (const leaf of leaves) {
      if (!leaf.ok) continue;
      const d = await decode(c, leaf.ok, knownId);
      if (d && !d.resolution) decoded.push(d);
    }
    if (decoded.length < 2) return false;
    decoded.sort((a, b) => b.u - a.u || (a.rev < b.rev ? 1 : a.rev > b.rev ? -1 : 0));
    const [winner, ...losers] = decoded;
    // A chat: the later change wins, but the title is the one the person gave last (a message
    // on one device moves the chat's time on past a rename made on another).
    const w = winner.body;
    if (w?.t === 'conv' && !winner.deleted) {
      let title: { title: string; titled: number } | undefined;
      for (const l of losers)
        if (l.body?.t === 'conv' && (l.body.titled ?? 0) > (title?.titled ?? w.titled ?? 0))
          title = { title: l.body.title, titled: l.body.titled! };
      if (title && title.title !== w.title) {
        const merged: SyncBody = { ...w, ...title };
        // The merged winner first: a change that came meanwhile (live sync) makes it fail, and
        // the leaves are then left as they are for the next cycle's decision, the later title
        // in them (nothing resolved now: no loop on a write that keeps failing).
        const [put] = await c.mirror.bulkDocs([
          { _id: mid, _rev: winner.rev, ...(await encode(c, winner.id, merged)) },
        ]);
        if (!put || ('error' in put && put.error)) return false;
        await c.mirror.bulkDocs(
          losers.map((l) => ({ _id: mid, _rev: l.rev, _deleted: true, r: 1 })),
        );
        return true;
      }
    }
    const tombstones: PouchDoc[] = losers.map((l) => ({
      _id: mid,
      _rev: l.rev,
      _deleted: true,
      r: 1,
    }));
    for (const l of losers) {
      if (!l.body || l.body.t !== 'entry') continue;
      const w = winner.body;
      if (
        w &&
        w.t === 'entry' &&
        stableJson(w.content) === stableJson(l.body.content) &&
        w.path === l.body.path
      )
        continue; // the same content: nothing to keep
      const { t: _t, u: _u, d, ...entry } = l.body;
      const body: SyncBody = {
        t: 'history',
        path: entry.path,
        version: entry.version,
        reason: winner.deleted ? 'delete' : 'update',
        replaced: Math.max(winner.u, l.u),
        entry: entry as EntryBody,
        ...(winner.deleted ? { deleteRoot: entry.path } : {}),
        conflictFrom: d,
        u: Math.max(winner.u, l.u),
        d,
      };
      status.conflicts++;
      const hid = historyId(body);
      const hmid = await mirrorId(c, hid);
      const exists = await c.mirror.get(hmid).then(
        () => true,
        () => false,
      );
      if (!exists)
        await c.mirror.put({ _id: hmid, ...(await encode(c, hid, body)) }).catch(() => undefined);
    }
    await c.mirror.bulkDocs(tombstones);
    return true;
  }

  /** Writes the mirror's winners into Dexie, kind by kind, one transaction per kind. */
  async function apply(
    c: Connection,
    incoming: Decoded[],
    byId: Map<string, DocState>,
    byLocal: Map<string, DocState>,
  ): Promise<{
    states: DocState[];
    entries: number;
    messages: ArrivedMessage[];
    again: boolean;
    /** Messages whose chat has not arrived yet (logical ids): kept for the next cycle. */
    orphans: string[];
    /** Messages whose meta names a row not here yet: `nameLater` tries again. */
    unnamed: Unnamed[];
    /** Chats new here, or back: their messages that went with their delete come back. */
    revived: string[];
  }> {
    const states: DocState[] = [];
    const fresh = new Map<string, DocState>();
    const messages: ArrivedMessage[] = [];
    const orphans: string[] = [];
    const unnamed: Unnamed[] = [];
    const revived: string[] = [];
    let entries = 0;
    let again = false;
    const stateOf = (id: string) => byId.get(id) ?? fresh.get(id);
    /** A message's id here, by its logical id; undefined when it is not here. */
    const msgHere = (id: string) => rowHere(stateOf(id));
    /** The chat's row here; null when it was deleted, undefined when it has not arrived. */
    const convLocal = (conv: string) => rowHere(stateOf(conv));
    const convIdOf = (local: number) => byLocal.get(localKey('conv', local))?.id;
    for (const kind of KIND_ORDER) {
      const batch = incoming.filter((d) => kindOf(d.id) === kind);
      if (!batch.length) continue;
      // A chat deleted elsewhere takes its search sentences and their shard pieces here too.
      const tables = [
        mdb.structured_memory,
        mdb.history,
        mdb.conversations,
        mdb.messages,
        mdb.settings,
        mdb.chunks,
        ...shardTables(mdb),
      ];
      // Ids first: WebCrypto inside the transaction would let IndexedDB commit it early.
      const mids = await Promise.all(batch.map((d) => byId.get(d.id)?.mid ?? mirrorId(c, d.id)));
      // Chats deleted on the server that this device never had: their messages go with them.
      const deadChats = new Set<string>();
      const unknown = [
        ...new Set(
          batch.flatMap((d) =>
            d.body?.t === 'msg' && convLocal(d.body.conv) === undefined ? [d.body.conv] : [],
          ),
        ),
      ];
      if (unknown.length) {
        const keys = await Promise.all(unknown.map((id) => byId.get(id)?.mid ?? mirrorId(c, id)));
        const got = await c.mirror.allDocs({ keys });
        got.rows.forEach((r, i) => {
          if (r.value?.deleted) deadChats.add(unknown[i]);
        });
      }
      await mdb.transaction('rw', tables, async () => {
        // Entries: read the batch's rows at once and write them at once (a first sync brings
        // thousands); a path appears once per batch.
        const existing =
          kind === 'entry'
            ? new Map(
                (
                  await mdb.structured_memory
                    .where('path')
                    .anyOf(batch.map((d) => d.id.slice('entry:'.length)))
                    .toArray()
                ).map((r) => [r.path, r]),
              )
            : new Map<string, MemoryEntry>();
        const puts: MemoryEntry[] = [];
        const deletes: number[] = [];
        for (const [i, d] of batch.entries()) {
          const st = byId.get(d.id);
          const mid = mids[i];
          const expected = st?.hash ?? '';
          const done = (local: string | number, hash: string, conv?: string) => {
            const state = {
              id: d.id,
              mid,
              kind,
              local,
              rev: d.rev,
              hash,
              ...(conv ? { conv } : {}),
            };
            states.push(state);
            fresh.set(d.id, state);
          };
          const body = d.body;
          switch (kind) {
            case 'entry': {
              const path = d.id.slice('entry:'.length);
              const row = existing.get(path);
              // Changed here since the scan: the next cycle takes it to the mirror first.
              if ((row ? bodyHash({ t: 'entry', ...entryBody(row) }) : '') !== expected) {
                again = true;
                break;
              }
              if (d.deleted || !body || body.t !== 'entry') {
                if (row) deletes.push(row.id!);
                done(path, '');
                break;
              }
              const next: MemoryEntry = entryRow(body, row?.accessed);
              if (row) {
                next.id = row.id;
                // Same words: the vectors still hold.
                if (
                  row.model &&
                  stableJson(row.content) === stableJson(body.content) &&
                  stableJson(row.contextChunks.map((x) => x.text)) ===
                    stableJson(body.chunks.map((x) => x.text))
                ) {
                  next.embedding = row.embedding;
                  next.model = row.model;
                  next.contextChunks = next.contextChunks.map((x, i) => ({
                    ...x,
                    embedding: row.contextChunks[i].embedding,
                  }));
                }
              }
              if (body.refs) {
                const ids = body.chunks.map((x) => x.turn_id);
                const named = localChunks(next.contextChunks, ids, body.refs, msgHere);
                next.contextChunks = named.chunks;
                if (named.missing)
                  unnamed.push({ kind: 'entry', id: d.id, key: path, ids, refs: body.refs });
              }
              puts.push(next);
              if (!next.model) entries++;
              done(path, bodyHash({ t: 'entry', ...entryBody(next) }));
              break;
            }
            case 'history': {
              const id = st && st.hash !== '' ? (st.local as number) : undefined;
              const row = id !== undefined ? await mdb.history.get(id) : undefined;
              if ((row ? bodyHash(historyBody(row)) : '') !== expected) {
                again = true;
                break;
              }
              if (d.deleted || !body || body.t !== 'history') {
                if (row) await mdb.history.delete(row.id!);
                done(st?.local ?? 0, '');
                break;
              }
              const next: HistoryRow = {
                path: body.path,
                version: body.version,
                reason: body.reason,
                replaced: new Date(body.replaced),
                entry: entryRow(body.entry),
                ...(body.movedTo !== undefined ? { movedTo: body.movedTo } : {}),
                ...(body.deleteRoot !== undefined ? { deleteRoot: body.deleteRoot } : {}),
                ...(body.conflictFrom !== undefined ? { conflictFrom: body.conflictFrom } : {}),
              };
              const refs = body.entry.refs;
              const ids = body.entry.chunks.map((x) => x.turn_id);
              const named = refs && localChunks(next.entry.contextChunks, ids, refs, msgHere);
              if (named) next.entry.contextChunks = named.chunks;
              if (row) next.id = row.id;
              const key = await mdb.history.put(next);
              if (refs && named?.missing)
                unnamed.push({ kind: 'history', id: d.id, key, ids, refs });
              done(key, bodyHash(historyBody(next)));
              break;
            }
            case 'conv': {
              const id = st && st.hash !== '' ? (st.local as number) : undefined;
              const row = id !== undefined ? await mdb.conversations.get(id) : undefined;
              if ((row ? bodyHash(convBody(row)) : '') !== expected) {
                again = true;
                break;
              }
              if (d.deleted || !body || body.t !== 'conv') {
                if (row) {
                  await mdb.messages.where('conversationId').equals(row.id!).delete();
                  await dropConversationChunks(mdb, row.id!);
                  await mdb.conversations.delete(row.id!);
                }
                done(st?.local ?? 0, '');
                break;
              }
              // What this device alone knows of the chat stays: that its title was given by the
              // person (not made from its first message), and the file it was imported from.
              const next = {
                ...(row ? { id: row.id } : {}),
                title: body.title,
                created: new Date(body.created),
                modified: new Date(body.modified),
                ...(body.titled !== undefined ? { titled: new Date(body.titled) } : {}),
                ...(row?.named || body.titled !== undefined ? { named: true } : {}),
                ...(row?.source !== undefined ? { source: row.source } : {}),
              };
              const key = await mdb.conversations.put(next);
              // New here (or back after its delete lost): its messages gone with it come back.
              if (!row) revived.push(d.id);
              done(key, bodyHash(convBody(next)));
              break;
            }
            case 'msg': {
              const id = st && st.hash !== '' ? (st.local as number) : undefined;
              const row = id !== undefined ? await mdb.messages.get(id) : undefined;
              const rowConv = row ? convIdOf(row.conversationId) : undefined;
              if ((row && rowConv ? bodyHash(msgBody(row, rowConv)) : '') !== expected) {
                again = true;
                break;
              }
              if (d.deleted || !body || body.t !== 'msg') {
                if (row) await mdb.messages.delete(row.id!);
                done(st?.local ?? 0, '');
                break;
              }
              const conversationId = convLocal(body.conv);
              if (
                conversationId === null ||
                (conversationId === undefined && deadChats.has(body.conv))
              ) {
                // Its chat was deleted: it goes with the chat, and comes back if the chat does.
                done(st?.local ?? 0, '', body.conv);
                break;
              }
              if (conversationId === undefined) {
                skip(d.id, 'its conversation is not here yet');
                orphans.push(d.id);
                break;
              }
              // The rows its meta names, by their ids here.
              const named = body.meta && body.refs ? localMeta(body, stateOf) : undefined;
              const meta = named?.meta ?? body.meta;
              const next = {
                ...(row ? { id: row.id } : {}),
                conversationId,
                role: body.role,
                text: body.text,
                time: new Date(body.time),
                ...(body.toolCalls !== undefined ? { toolCalls: body.toolCalls as never } : {}),
                ...(body.toolCallId !== undefined ? { toolCallId: body.toolCallId } : {}),
                ...(meta !== undefined ? { meta } : {}),
              };
              const key = await mdb.messages.put(next);
              if (named?.missing) unnamed.push({ kind: 'msg', id: d.id, key, body });
              if (!row && (body.role === 'user' || body.role === 'assistant') && body.text.trim())
                messages.push({ conversationId, turnId: key, role: body.role, text: body.text });
              done(key, bodyHash(msgBody({ ...next, id: key }, body.conv)));
              break;
            }
            case 'setting': {
              const row = await mdb.settings.get(APP_SETTINGS_KEY);
              const mine = row ? settingBody(row.key, row.value) : undefined;
              if ((mine ? bodyHash(mine) : '') !== expected) {
                again = true;
                break;
              }
              if (d.deleted || !body || body.t !== 'setting') {
                done(APP_SETTINGS_KEY, expected);
                break;
              }
              const base = row?.value && typeof row.value === 'object' ? row.value : {};
              const value = { ...(base as Record<string, unknown>), ...(body.value as object) };
              await mdb.settings.put({ key: APP_SETTINGS_KEY, value });
              done(APP_SETTINGS_KEY, bodyHash(settingBody(APP_SETTINGS_KEY, value)!));
              break;
            }
          }
        }
        if (deletes.length) await mdb.structured_memory.bulkDelete(deletes);
        if (puts.length) await mdb.structured_memory.bulkPut(puts);
      });
    }
    status.received += states.length;
    return { states, entries, messages, again, orphans, unnamed, revived };
  }

  // ---- one cycle, and live sync ----------------------------------------------------------------

  function serial(inner: () => Promise<void>): Promise<void> {
    const body = options.exclusive ? () => options.exclusive!(inner) : inner;
    const next = running.then(body, body);
    running = next.catch(() => undefined);
    return next;
  }

  /** Pull, reconcile, push, once. Resolves with the status (its error, if it failed). */
  async function syncNow(): Promise<SyncStatus> {
    if (closed) return { ...status };
    if (!live) setStatus({ state: 'syncing' });
    try {
      await serial(async () => {
        const c = await connect();
        try {
          const t0 = performance.now();
          await c.mirror.replicate.from(c.remote, { batch_size: PAGE, batches_limit: 4 });
          const t1 = performance.now();
          // A row changed here while it was being written from the server goes to the mirror
          // (and its conflict is decided) in the next round.
          for (let round = 0; round < 3; round++) {
            const { written, again } = await reconcile(c);
            status.waiting += written;
            emit();
            if (!again) break;
          }
          const t2 = performance.now();
          await c.mirror.replicate.to(c.remote, { batch_size: PAGE, batches_limit: 4 });
          status.timings = {
            pull: Math.round(t1 - t0),
            reconcile: Math.round(t2 - t1),
            push: Math.round(performance.now() - t2),
          };
        } catch (e) {
          throw await fail(e, (await getConfig())?.url ?? '');
        }
      });
      const lastSync = now();
      await sdb.config.put({ key: 'lastSync', value: lastSync });
      setStatus({ state: live ? 'live' : 'idle', lastSync, waiting: 0, error: null });
    } catch (e) {
      const err = e instanceof SyncError ? e : classify(e, options.origin ?? '');
      setStatus({ state: live ? 'retrying' : 'error', error: await shown(err) });
    }
    return { ...status };
  }

  // Tables written since the last live reconcile: only those are read again.
  let dirtyTables = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let dirty = false;
  function schedule(): void {
    if (!live || closed) return;
    dirty = true;
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (!dirty || !live) return;
      dirty = false;
      void serial(async () => {
        if (!conn || !live) return;
        try {
          const tables = dirtyTables;
          dirtyTables = new Set();
          try {
            const { written, again } = await reconcile(conn, tables);
            if (written) setStatus({ waiting: status.waiting + written });
            if (again) {
              for (const t of SYNCED_TABLES) dirtyTables.add(t);
              schedule();
            }
          } catch (e) {
            for (const t of tables) dirtyTables.add(t); // read them again next time
            throw e;
          }
        } catch (e) {
          const err = await fail(e, (await getConfig())?.url ?? '');
          setStatus({ state: 'retrying', error: await shown(err) });
        }
      });
    }, LIVE_DEBOUNCE_MS);
  }

  const prefix = `idb://${memoryName}/`;
  const onMutated = (parts: ObservabilitySet) => {
    let touched = false;
    for (const part of Object.keys(parts)) {
      if (!part.startsWith(prefix)) continue;
      const table = part.slice(prefix.length).split('/')[0];
      if (!SYNCED_TABLES.includes(table)) continue;
      dirtyTables.add(table);
      touched = true;
    }
    if (touched) schedule();
  };

  async function startLive(): Promise<SyncStatus> {
    stopLive();
    const first = await syncNow();
    if (
      first.error &&
      [
        'NOT_CONFIGURED',
        'INVALID_URL',
        'WRONG_PASSPHRASE',
        'NEEDS_PASSPHRASE',
        'NOT_ENCRYPTED',
        'WRONG_CREDENTIALS',
        'FORBIDDEN',
      ].includes(first.error.code)
    )
      return first; // retrying cannot fix these: the settings must change
    let c: Connection;
    try {
      c = await connect();
    } catch {
      // Unreachable at start: connect again on the next try (the status says it tries again).
      retryLater();
      if (status.state === 'error') setStatus({ state: 'retrying' });
      return { ...status };
    }
    const backOff = (delay: number) => Math.min(MAX_BACKOFF_MS, delay ? delay * 2 : 1000);
    const opts = { live: true, retry: true, batch_size: PAGE, back_off_function: backOff };
    const pull = c.mirror.replicate.from(c.remote, opts);
    const push = c.mirror.replicate.to(c.remote, opts);
    let pushIdle = true;
    const onPaused = (which: 'pull' | 'push') => async (err?: unknown) => {
      if (which === 'push') pushIdle = !err;
      if (err) {
        const e = await fail(err, (await getConfig())?.url ?? '');
        setStatus({ state: 'retrying', error: await shown(e) });
        return;
      }
      if (which === 'pull') schedule();
      const lastSync = now();
      void sdb.config.put({ key: 'lastSync', value: lastSync });
      setStatus({
        state: 'live',
        error: null,
        lastSync,
        ...(which === 'push' || pushIdle ? { waiting: 0 } : {}),
      });
    };
    pull.on('change', () => schedule());
    pull.on('paused', onPaused('pull'));
    push.on('paused', onPaused('push'));
    push.on('change', (info) =>
      setStatus({ waiting: Math.max(0, status.waiting - (info.docs_written ?? 0)) }),
    );
    const fatal = async (err: unknown) => {
      const e = await fail(err, (await getConfig())?.url ?? '');
      // The live replication ended: nothing tries again until Sync now or Keep in sync is pressed.
      setStatus({ state: 'error', error: withRetryNote(e.info(), false) });
    };
    pull.on('error', fatal);
    push.on('error', fatal);
    pull.on('denied', fatal);
    push.on('denied', fatal);
    pull.catch(() => undefined);
    push.catch(() => undefined);
    Dexie.on('storagemutated', onMutated);
    live = {
      pull,
      push,
      stop() {
        pull.cancel();
        push.cancel();
        Dexie.on('storagemutated').unsubscribe(onMutated);
      },
    };
    setStatus({ state: status.error ? 'retrying' : 'live' });
    schedule();
    return { ...status };
  }

  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let retryDelay = 0;
  function retryLater(): void {
    retryDelay = Math.min(MAX_BACKOFF_MS, retryDelay ? retryDelay * 2 : 1000);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(async () => {
      const config = await getConfig();
      if (closed || !config?.live || live) return;
      const s = await startLive();
      if (s.state !== 'live') {
        if (!live) retryLater();
      } else retryDelay = 0;
    }, retryDelay);
  }

  function stopLive(): void {
    clearTimeout(retryTimer);
    clearTimeout(timer);
    timer = undefined;
    live?.stop();
    live = null;
  }

  /** Starts live sync when the saved settings ask for it (the worker calls this at start). */
  async function start(): Promise<SyncStatus> {
    const last = (await sdb.config.get('lastSync'))?.value;
    if (typeof last === 'number') status.lastSync = last;
    const config = await getConfig();
    if (config?.live) return startLive();
    return { ...status };
  }

  return {
    getConfig,
    configure,
    syncNow,
    start,
    status: () => ({ ...status }),
    onStatus(listener: (s: SyncStatus) => void): void {
      listeners.add(listener);
      listener({ ...status });
    },
    /** Waits for the reconcile under way and the embedding of what arrived (tests). */
    async idle(): Promise<void> {
      await running;
      await arrivals;
    },
    async close(): Promise<void> {
      closed = true;
      stopLive();
      await running;
      await arrivals;
      await conn?.mirror.close().catch(() => undefined);
      mdb.close();
      sdb.close();
    },
  };
}

/**
 * `remote` with an `info()` that does not fail. PouchDB 9's replication asks the source for its
 * info after each batch only to count progress, and leaves that promise's failure unhandled: a
 * server that goes away mid-sync raised "TypeError: Failed to fetch" as an uncaught error in the
 * page. The sync needs none of it; a failing request that matters fails in the replication's own
 * next request, which is handled.
 */
export function quietInfo(remote: PouchDatabase): PouchDatabase {
  const info = remote.info.bind(remote);
  remote.info = () =>
    info().catch(() => ({ doc_count: 0, update_seq: 0 }) as Awaited<ReturnType<typeof info>>);
  return remote;
}

/**
 * The skipped documents grouped by reason, the commonest first (at most MAX_REASONS). Reasons
 * that differ only in the values they quote (an id, a version) are one reason, worded as the
 * first document's.
 */
export function skipReasons(skipped: ReadonlyMap<string, string>): SkipReason[] {
  const by = new Map<string, SkipReason>();
  for (const [id, why] of skipped) {
    const key = why.replace(/"(?:[^"\\]|\\.)*"/g, '"…"').replace(/-?\d+(?:\.\d+)?/g, '#');
    const r = by.get(key);
    if (r) r.count++;
    else by.set(key, { why, count: 1, example: id.slice(0, 80) });
  }
  return [...by.values()].sort((a, b) => b.count - a.count).slice(0, MAX_REASONS);
}

function hashName(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}

/**
 * Messages in the order their chats hold them: by time (a chat only grows at its end; an edit
 * that sets a new time drops the messages after it), then by each one's place in its chat where
 * both say it (messages stored together, an import's, share a time; a place can be stale, since
 * deleting a message does not resend the ones after it, but stays in order with its neighbours);
 * ties keep the order they came in.
 */
export function inChatOrder(messages: readonly Decoded[]): Decoded[] {
  const byChat = new Map<string, Decoded[]>();
  for (const d of messages) {
    const conv = d.body?.t === 'msg' ? d.body.conv : '';
    const list = byChat.get(conv);
    if (list) list.push(d);
    else byChat.set(conv, [d]);
  }
  const msg = (d: Decoded) => d.body as Extract<SyncBody, { t: 'msg' }>;
  const place = (a: Decoded, b: Decoded) => {
    const [x, y] = [msg(a).n, msg(b).n];
    return x !== undefined && y !== undefined ? x - y : 0;
  };
  return [...byChat.values()].flatMap((list) =>
    list.sort((a, b) => msg(a).time - msg(b).time || place(a, b)),
  );
}
