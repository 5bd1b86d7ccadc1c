// Auto-recall with past turns (issue 22): a store of many chats (synthetic sentences as their
// turns, with messages, conversations, chunk rows and shards, as the engine writes them) and a
// few hundred saved entries; the user messages a chat turn starts from (words of the store and
// words it lacks); the turn start the chat makes (`prepareTurn`, then `assemblePrompt`) in three
// variants; and where the past turns' part of recall spends its time, step by step. Shared by
// the Node runner and the browser bench (page and worker).
import Dexie, { type Table } from 'dexie';
import { assemblePrompt, type AssembledPrompt, MAX_RECALL } from '../../src/chat/context';
import { historyIds, injectedBefore, toChatMessages } from '../../src/chat/history';
import { shardTables, type MemoryDB } from '../../src/memory/db';
import { CHAT_WEIGHT, SNAPSHOT_WEIGHT } from '../../src/memory/ranking';
import { visibleMessages } from '../../src/memory/replies';
import { searchChunkIndex, searchEntries } from '../../src/memory/search';
import { hiddenAlternatives } from '../../src/memory/tools/recall';
import type { SemanticIndex } from '../../src/memory/semantic-index';
import { SHARD_SPAN, packShard, putPiece } from '../../src/memory/shards';
import { estimateTokens } from '../../src/memory/text';
import { tokenize } from '../../src/memory/lexical/tokenize';
import type { EntryIndex } from '../../src/memory/entry-index';
import type {
  Chunk,
  Conversation,
  MemoryApi,
  Message,
  Role,
  TurnContext,
  TurnRequest,
} from '../../src/memory/types';
import { mulberry32, type SyntheticVectors } from '../synthetic';
import { summarise } from './report';
import { BENCH_MODEL, benchText, syntheticEmbedder } from './workloads';

/** Reads by key (`bulkGet`) of one table during one call: how many, of how many keys, how long. */
export type TableReads = Record<string, { calls: number; keys: number; ms: number }>;

/**
 * Times every read by keys (DBCore `getMany`: what `bulkGet` runs) of every Dexie database
 * opened after it starts, the engine's own included (a Dexie add-on: no engine code changed).
 * A chunk read of more than 20 keys is the chunk search's (`chunks`); the engine's own small
 * reads of the chunks just written are `chunks (refresh)`. `take()` returns and clears them.
 */
export function startReadTimer(): { take(): TableReads; stop(): void } {
  let reads: TableReads = {};
  const addon = (db: Dexie) =>
    db.use({
      stack: 'dbcore',
      name: 'bench-read-timer',
      create: (down) => ({
        ...down,
        table(name) {
          const table = down.table(name);
          return {
            ...table,
            async getMany(req) {
              const t0 = performance.now();
              const rows = await table.getMany(req);
              const key = name === 'chunks' && req.keys.length <= 20 ? 'chunks (refresh)' : name;
              const r = (reads[key] ??= { calls: 0, keys: 0, ms: 0 });
              r.calls++;
              r.keys += req.keys.length;
              r.ms += performance.now() - t0;
              return rows;
            },
          };
        },
      }),
    });
  Dexie.addons.push(addon);
  return {
    take() {
      const out = reads;
      reads = {};
      return out;
    },
    /** Databases opened from now on are not timed (those open keep it). */
    stop() {
      const at = Dexie.addons.indexOf(addon);
      if (at >= 0) Dexie.addons.splice(at, 1);
    },
  };
}

/** The store of the issue's target: 1,000 chats of 100 sentences (100k chunks), 300 entries. */
export const RECALL_STORE = { chats: 1000, sentencesPerChat: 100, entries: 300 } as const;
/** Queries per variant, after the warm-up ones. */
export const RECALL_QUERIES = 60;
export const RECALL_WARMUP = 6;

export type TurnVariant = 'turns' | 'entries' | 'none';
export const TURN_VARIANTS: readonly TurnVariant[] = ['turns', 'entries', 'none'];

/** The first day of the store's chats; a chat starts every six hours, a turn every 2 minutes. */
const FIRST_DAY = Date.UTC(2024, 0, 1);

/** One message of the store: its sentences are chunk ids `first .. first + count − 1`. */
interface StoredTurn {
  id: number;
  conversationId: number;
  role: Role;
  first: number;
  count: number;
  time: Date;
}

export interface RecallLayout {
  chats: number;
  sentencesPerChat: number;
  turns: StoredTurn[];
  /** The turn of each chunk id (index id − 1). */
  turnOf: Int32Array;
}

/**
 * Chat c (1-based) holds chunk ids (c − 1) × perChat + 1 .. c × perChat (chunk id i says
 * `benchText().sentence(i − 1)`, as in every bench), in turns that alternate between the user
 * (1–3 sentences) and the assistant (3–12), ids in order.
 */
export function recallLayout(chats: number, sentencesPerChat: number): RecallLayout {
  const turns: StoredTurn[] = [];
  const turnOf = new Int32Array(chats * sentencesPerChat);
  for (let c = 1; c <= chats; c++) {
    const rand = mulberry32(0x7e11 + c);
    let at = (c - 1) * sentencesPerChat + 1;
    const end = c * sentencesPerChat + 1;
    for (let t = 0; at < end; t++) {
      const role: Role = t % 2 ? 'assistant' : 'user';
      const want = role === 'user' ? 1 + Math.floor(rand() * 3) : 3 + Math.floor(rand() * 10);
      const count = Math.min(want, end - at);
      const id = turns.length + 1;
      turns.push({
        id,
        conversationId: c,
        role,
        first: at,
        count,
        time: new Date(FIRST_DAY + (c - 1) * 6 * 3_600_000 + t * 120_000),
      });
      turnOf.fill(id, at - 1, at - 1 + count);
      at += count;
    }
  }
  return { chats, sentencesPerChat, turns, turnOf };
}

const sentenceOf = (id: number) => benchText().sentence(id - 1);

/** A chat's title as the app makes one: its first message, cut near 40 characters at a word. */
function titleOf(text: string): string {
  if (text.length <= 40) return text;
  const cut = text.slice(0, 40);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 20))}…`;
}

/**
 * Writes the layout's conversations, messages, chunk rows (vector of id i: `gen.row(i − 1)`)
 * and shards; chunk rows and shards in transactions of SHARD_SPAN ids as the cold load reads
 * them. Returns the milliseconds spent.
 */
export async function fillRecallStore(
  db: MemoryDB,
  gen: SyntheticVectors,
  layout: RecallLayout,
): Promise<number> {
  const t0 = performance.now();
  const messages: Message[] = layout.turns.map((t) => ({
    id: t.id,
    conversationId: t.conversationId,
    role: t.role,
    text: Array.from({ length: t.count }, (_, k) => sentenceOf(t.first + k)).join(' '),
    time: t.time,
  }));
  const conversations: Conversation[] = [];
  for (const t of layout.turns) {
    const c = conversations[t.conversationId - 1];
    if (c) c.modified = t.time;
    else
      conversations.push({
        id: t.conversationId,
        title: titleOf(messages[t.id - 1].text),
        created: t.time,
        modified: t.time,
      });
  }
  await db.transaction('rw', db.conversations, db.messages, async () => {
    await db.conversations.bulkAdd(conversations);
    await db.messages.bulkAdd(messages);
  });
  const n = layout.chats * layout.sentencesPerChat;
  const dims = gen.spec.dims;
  for (let first = 1; first <= n;) {
    const count = Math.min(n - first + 1, SHARD_SPAN - (first % SHARD_SPAN));
    const vectors = gen.rows(first - 1, count);
    const rows: Chunk[] = Array.from({ length: count }, (_, i) => {
      const id = first + i;
      const turn = layout.turns[layout.turnOf[id - 1] - 1];
      const text = sentenceOf(id);
      return {
        id,
        conversationId: turn.conversationId,
        turnId: turn.id,
        sentenceId: id - turn.first,
        role: turn.role,
        text,
        tokenCount: estimateTokens(text),
        embedding: vectors.slice(i * dims, (i + 1) * dims),
        model: BENCH_MODEL.id,
        time: turn.time,
      };
    });
    await db.transaction('rw', [db.chunks, ...shardTables(db)], async () => {
      await db.chunks.bulkAdd(rows);
      await putPiece(db, packShard(BENCH_MODEL.id, Math.floor(first / SHARD_SPAN), rows));
    });
    first += count;
  }
  return performance.now() - t0;
}

const capital = (w: string) => w[0].toUpperCase() + w.slice(1);

/**
 * `count` entries saved the way the model saves them (`saveMemory` with the chat as context:
 * each carries a snapshot of that chat's turns): 20 headings of 5 subheadings, a short note of
 * two or three sentences of the same vocabulary each. Returns the milliseconds spent.
 */
export async function saveRecallEntries(
  mem: Pick<MemoryApi, 'saveMemory'>,
  layout: RecallLayout,
  count: number,
): Promise<number> {
  const t0 = performance.now();
  const words = benchText().words;
  for (let i = 0; i < count; i++) {
    const rand = mulberry32(0x5e7 + i);
    const heading = capital(words[(i % 20) * 7 + 40]);
    const sub = capital(words[(Math.floor(i / 20) % 5) + 300 + (i % 20) * 11]);
    const path = `${heading}/${sub}/${capital(words[1000 + i * 13])}`;
    const sentence = (k: number) => benchText().sentence(5_000_000 + i * 4 + k);
    const content = {
      note: `${sentence(0)} ${sentence(1)}`,
      ...(rand() < 0.5 ? { detail: sentence(2) } : {}),
    };
    const chat = 1 + Math.floor(rand() * layout.chats);
    const r = await mem.saveMemory(path, content, undefined, { conversationId: chat });
    if (r.status !== 'SUCCESS') throw new Error(`save ${path}: ${JSON.stringify(r)}`);
  }
  return performance.now() - t0;
}

/** Everyday words, none a word of the synthetic vocabulary (checked by `recallQueries`). */
const ABSENT = (
  'plumber invoice tuesday dentist passport birthday kitchen umbrella laptop password ' +
  'parking insurance vaccine recipe airport hotel salary mortgage violin bicycle ' +
  'printer allergy garage teacher weekend museum concert ticket doctor vacation'
).split(' ');

export type QueryKind = 'store' | 'mixed' | 'absent';

/**
 * `count` user messages over a store of `n` sentences: half ask about a stored sentence (`store`:
 * two or three of its words and others of the vocabulary, `SyntheticText.query`), a quarter
 * mix two store words with everyday words the store lacks (`mixed`), a quarter hold only
 * words it lacks (`absent`: the word index finds nothing; recall rests on the vectors).
 */
export function recallQueries(count: number, n: number): { text: string; kind: QueryKind }[] {
  const texts = benchText();
  const known = new Set(tokenize([...texts.words, ...texts.names].join(' ')));
  const absent = ABSENT.filter((w) => tokenize(w).every((t) => !known.has(t)));
  return Array.from({ length: count }, (_, i) => {
    const rand = mulberry32(0xa5 + i);
    const pick = () => absent[Math.floor(rand() * absent.length)];
    const kind: QueryKind = i % 4 === 2 ? 'mixed' : i % 4 === 3 ? 'absent' : 'store';
    if (kind === 'store') return { text: texts.query(i, n), kind };
    const stored = texts.query(i, n).replace('?', '').split(' ').slice(-2);
    const words = Array.from({ length: 2 + Math.floor(rand() * 3) }, pick);
    return {
      text: `${rand() < 0.5 ? 'What about the' : 'Did I mention the'} ${[...(kind === 'mixed' ? stored : []), ...words].join(' ')}?`,
      kind,
    };
  });
}

/** What the chat asks of `prepareTurn` for a new user message (src/chat/answer.ts `open`). */
export function turnRequest(
  variant: TurnVariant,
  conversationId: number,
  turnId: number,
  text: string,
): TurnRequest {
  return {
    conversationId,
    index: { turnId, text },
    ...(variant === 'none'
      ? {}
      : {
          recall: {
            query: text,
            limit: MAX_RECALL,
            ...(variant === 'entries' ? { options: { turns: false } } : {}),
          },
        }),
    outlineDepth: 2,
  };
}

/** The first round's prompt, as the chat assembles it from the turn start (answer.ts `roundPrompt`). */
export function promptOf(ready: TurnContext, userId: number): AssembledPrompt {
  const history = visibleMessages(ready.messages);
  return assemblePrompt({
    persona: '',
    outline: ready.outline,
    recall: ready.recall,
    injected: injectedBefore(history, userId),
    history: toChatMessages(history),
    historyIds: historyIds(history),
    budget: { contextSize: 8192, maxOutput: 512, reserve: 256 },
    countTokens: estimateTokens,
  });
}

/** The engine calls a turn start makes: a Comlink remote of the worker, or the engine itself. */
export interface TurnStartApi {
  addMessage(m: {
    conversationId: number;
    role: Role;
    text: string;
  }): Promise<{ status: 'SUCCESS'; id: number } | { status: string }>;
  prepareTurn(request: TurnRequest): Promise<TurnContext>;
  deleteMessage(id: number): Promise<unknown>;
  /** The reads by key since the last call (`startReadTimer`), when timed. */
  takeReads?(): Promise<TableReads> | TableReads;
}

export interface TurnStartSample {
  variant: TurnVariant;
  kind: QueryKind;
  /** `prepareTurn` called → its answer here (the message indexed, recall, outline, messages). */
  prepareMs: number;
  /** `assemblePrompt` of that answer. */
  assembleMs: number;
  /** prepare + assemble: the time before the request would go out. */
  totalMs: number;
  /** Hits recalled, and of them past turns; the prompt's recalled entries and turns. */
  hits: number;
  turnHits: number;
  inPrompt: number;
  /** The engine's reads by key during `prepareTurn`, when timed. */
  reads?: TableReads;
}

/**
 * Turn starts for `queries`, each in every variant in a rotating order (so none always runs
 * first), each in a chat of its own: the user message is stored (`addMessage`, as the chat does
 * before the turn start; not timed), the turn start timed from the call to the assembled prompt,
 * then the message deleted again (not timed), so every start sees the same store and no query's
 * text is found again as a past turn. The first `warmup` queries are not kept.
 */
export async function turnStarts(
  api: TurnStartApi,
  queries: readonly { text: string; kind: QueryKind }[],
  chats: number,
  warmup: number,
  log?: (line: string) => void,
): Promise<TurnStartSample[]> {
  const out: TurnStartSample[] = [];
  for (let i = 0; i < queries.length; i++) {
    const { text, kind } = queries[i];
    for (let v = 0; v < TURN_VARIANTS.length; v++) {
      const variant = TURN_VARIANTS[(i + v) % TURN_VARIANTS.length];
      const conversationId = 1 + (((i * TURN_VARIANTS.length + v) * 337) % chats);
      const stored = await api.addMessage({ conversationId, role: 'user', text });
      if (stored.status !== 'SUCCESS' || !('id' in stored))
        throw new Error(`addMessage: ${JSON.stringify(stored)}`);
      await api.takeReads?.();
      const t0 = performance.now();
      const ready = await api.prepareTurn(turnRequest(variant, conversationId, stored.id, text));
      const t1 = performance.now();
      const prompt = promptOf(ready, stored.id);
      const t2 = performance.now();
      const reads = await api.takeReads?.();
      await api.deleteMessage(stored.id);
      if (ready.indexed?.status !== 'SUCCESS')
        throw new Error(`indexing failed: ${JSON.stringify(ready.indexed)}`);
      if (i < warmup) continue;
      out.push({
        variant,
        kind,
        prepareMs: t1 - t0,
        assembleMs: t2 - t1,
        totalMs: t2 - t0,
        hits: ready.recall.length,
        turnHits: ready.recall.filter((h) => h.kind === 'turn').length,
        inPrompt: prompt.recalled.length + prompt.recalledTurns.length,
        ...(reads ? { reads } : {}),
      });
    }
    if ((i + 1) % 20 === 0) log?.(`  ${i + 1} of ${queries.length} queries`);
  }
  return out;
}

/** recallMemory (the engine's own call, no worker) with turns vs entries alone, interleaved. */
export async function recallCalls(
  mem: Pick<MemoryApi, 'recallMemory'>,
  queries: readonly { text: string; kind: QueryKind }[],
  chats: number,
  nextTurnId: number,
  warmup: number,
): Promise<{ turns: number[]; entries: number[]; kinds: QueryKind[] }> {
  const out = { turns: [] as number[], entries: [] as number[], kinds: [] as QueryKind[] };
  for (let i = 0; i < queries.length; i++) {
    // As the chat asks: its own newest turns left out (which also widens the chunk search).
    const exclude = { conversationId: 1 + ((i * 337) % chats), fromTurnId: nextTurnId };
    const times: Record<'turns' | 'entries', number> = { turns: 0, entries: 0 };
    for (const variant of i % 2
      ? (['entries', 'turns'] as const)
      : (['turns', 'entries'] as const)) {
      const t0 = performance.now();
      const r = await mem.recallMemory(queries[i].text, MAX_RECALL, {
        exclude,
        ...(variant === 'entries' ? { turns: false } : {}),
      });
      times[variant] = performance.now() - t0;
      if (!Array.isArray(r)) throw new Error(`recallMemory: ${JSON.stringify(r)}`);
    }
    if (i < warmup) continue;
    out.turns.push(times.turns);
    out.entries.push(times.entries);
    out.kinds.push(queries[i].kind);
  }
  return out;
}

/** The steps of the past turns' part of recall (recall.ts `turnHits`), in milliseconds. */
export interface RecallSteps {
  /** The whole chunk search as recall asks it (k = 56 over every chat). */
  chunkSearch: number;
  /** Its vector candidates: `SemanticIndex.search` over every chunk, m = 224. */
  vectorCandidates: number;
  /** The same with m = 64 (what a search for 12 sentences asks). */
  vectorCandidates64: number;
  /** Its word candidates: prepare + `searchTop` with each chat's evidence (m = 224). */
  wordCandidates: number;
  /** The same `searchTop` without the chats' evidence (no `groupRelevance`). */
  wordCandidatesNoChats: number;
  /** `groupRelevance`'s pass over the query terms' postings alone (via `groupMatches`). */
  groupRelevance: number;
  /** Chunks the query's words match. */
  matches: number;
  /** Reading 2k = 112 chunk rows (the leaders the search reads and ranks exactly). */
  rowsRead: number;
  /** Reading 12 other chunk rows (one per turn recalled). */
  rowsRead12: number;
  /** Reading the best turns' messages (12) and their chats' titles. */
  messagesRead: number;
  /** Whether those messages are reply alternatives not shown (`hiddenAlternatives`), alone. */
  hiddenCheck: number;
  /** The same with the message before each read with them, as recall reads them. */
  messagesAndHiddenCheck: number;
  /**
   * Reading 112 messages (as many as the chunk rows read, none holding a vector): whether the
   * rows' count or their vectors cost the time.
   */
  messagesRead112: number;
  conversationsRead: number;
  /** The entry search over the entry index (what entries-only recall does besides reads). */
  entrySearch: number;
}

/**
 * `recallSteps` for `count` queries after 3 warm-ups, each step run on another query of the
 * same kind (kinds repeat every 4), over `n` stored sentences.
 */
export async function recallStepRuns(
  db: MemoryDB,
  idx: SemanticIndex,
  entries: EntryIndex | null,
  gen: SyntheticVectors,
  count: number,
): Promise<RecallSteps[]> {
  const offset = 4 * Math.ceil((count + 3) / 4);
  const queries = recallQueries(2 * offset, idx.size);
  const embed = syntheticEmbedder(gen);
  const out: RecallSteps[] = [];
  for (let i = 0; i < count + 3; i++) {
    const [q, other] = [queries[i], queries[offset + i]];
    const [v, w] = await embed.embed([q.text, other.text]);
    const r = await recallSteps(
      db,
      idx,
      entries,
      { text: q.text, vector: v },
      { text: other.text, vector: w },
    );
    if (i >= 3) out.push(r);
  }
  return out;
}

/**
 * Times each step of recall's chunk search and reads, over an index loaded from the store's
 * shards (the engine's own is out of reach): the whole search first, then its parts on
 * another query of the same kind, so that no part reads rows the search just cached.
 */
export async function recallSteps(
  db: MemoryDB,
  idx: SemanticIndex,
  entries: EntryIndex | null,
  q: { text: string; vector: Float32Array },
  other: { text: string; vector: Float32Array },
): Promise<RecallSteps> {
  const k = MAX_RECALL * 4 + 8;
  const m = Math.max(64, k * 4);
  const lap = (() => {
    let t = performance.now();
    return () => {
      const now = performance.now();
      const ms = now - t;
      t = now;
      return ms;
    };
  })();
  lap();
  const hits = await searchChunkIndex(
    db.chunks as Table<Chunk, number>,
    idx,
    null,
    { text: q.text, vector: q.vector, info: BENCH_MODEL },
    k,
    0,
    Date.now(),
  );
  const chunkSearch = lap();
  const vec = await idx.search(null, other.vector, m);
  const vectorCandidates = lap();
  await idx.search(null, other.vector, 64);
  const vectorCandidates64 = lap();
  const turnContext = { parent: 1, neighbours: SNAPSHOT_WEIGHT, after: true };
  const query = idx.words.prepare(other.text);
  const words = idx.words.searchTop(query, null, m, { ...turnContext, group: CHAT_WEIGHT }, [
    ...vec.map((h) => h.id),
  ]);
  const wordCandidates = lap();
  idx.words.searchTop(query, null, m, turnContext, [...vec.map((h) => h.id)]);
  const wordCandidatesNoChats = lap();
  idx.words.groupMatches(query);
  const groupRelevance = lap();
  const matches = idx.words.search(query, null).length;
  lap();
  const ids = [...new Set([...vec.map((h) => h.id), ...words.map((w) => w.key)])];
  await db.chunks.bulkGet(ids.slice(0, k * 2));
  const rowsRead = lap();
  await db.chunks.bulkGet(ids.slice(k * 2, k * 2 + MAX_RECALL));
  const rowsRead12 = lap();
  const turnIds = [...new Set(hits.map((h) => h.row.turnId))].slice(0, MAX_RECALL);
  const convIds = [...new Set(hits.map((h) => h.row.conversationId))].slice(0, MAX_RECALL);
  lap();
  const turnMessages = await db.messages.bulkGet(turnIds);
  const messagesRead = lap();
  await db.transaction('r', db.messages, async () => hiddenAlternatives(db.messages, turnMessages));
  const hiddenCheck = lap();
  // As recall does it: each message and the one before it read together, then the check.
  await db.transaction('r', db.messages, async () => {
    const keys = [...new Set([...turnIds, ...turnIds.map((id) => id - 1).filter((id) => id > 0)])];
    const read = await db.messages.bulkGet(keys);
    const known = new Map(keys.map((id, i) => [id, read[i]]));
    await hiddenAlternatives(
      db.messages,
      turnIds.map((id) => known.get(id)),
      known,
    );
  });
  const messagesAndHiddenCheck = lap();
  const spread = Math.max(1, Math.floor((await db.messages.count()) / (k * 2)));
  lap();
  await db.messages.bulkGet(
    Array.from({ length: k * 2 }, (_, i) => 1 + i * spread + (ids.length % spread)),
  );
  const messagesRead112 = lap();
  await db.conversations.bulkGet(convIds);
  const conversationsRead = lap();
  if (entries)
    searchEntries(entries, entries.subtree(''), { ...q, info: BENCH_MODEL }, Date.now(), 0);
  const entrySearch = entries ? lap() : NaN;
  return {
    chunkSearch,
    vectorCandidates,
    vectorCandidates64,
    wordCandidates,
    wordCandidatesNoChats,
    groupRelevance,
    matches,
    rowsRead,
    rowsRead12,
    messagesRead,
    hiddenCheck,
    messagesAndHiddenCheck,
    messagesRead112,
    conversationsRead,
    entrySearch,
  };
}

const medianOf = (xs: readonly number[]) => summarise(xs).median;

/** Per table, the median time a turn start spent reading it by keys, and the mean keys read. */
function readsOf(samples: readonly TurnStartSample[]) {
  const tables = [...new Set(samples.flatMap((s) => Object.keys(s.reads ?? {})))].sort();
  return Object.fromEntries(
    tables.map((t) => [
      t,
      {
        median_ms: medianOf(samples.map((s) => s.reads?.[t]?.ms ?? 0)),
        p95_ms: summarise(samples.map((s) => s.reads?.[t]?.ms ?? 0)).p95,
        mean_keys:
          samples.reduce((a, s) => a + (s.reads?.[t]?.keys ?? 0), 0) / (samples.length || 1),
      },
    ]),
  );
}

/** The turn starts summarised: each variant's times, the added p50 and p95, by query kind. */
export function turnStartReport(samples: readonly TurnStartSample[]) {
  const of = (v: TurnVariant) => samples.filter((s) => s.variant === v);
  const variant = (v: TurnVariant) => {
    const s = of(v);
    return {
      total_ms: summarise(s.map((x) => x.totalMs)),
      prepare_turn_ms: summarise(s.map((x) => x.prepareMs)),
      assemble_prompt_ms: summarise(s.map((x) => x.assembleMs)),
      mean_hits: s.reduce((a, x) => a + x.hits, 0) / (s.length || 1),
      mean_turn_hits: s.reduce((a, x) => a + x.turnHits, 0) / (s.length || 1),
      mean_in_prompt: s.reduce((a, x) => a + x.inPrompt, 0) / (s.length || 1),
      reads_ms: readsOf(s),
    };
  };
  const variants = { turns: variant('turns'), entries: variant('entries'), none: variant('none') };
  const kinds: QueryKind[] = ['store', 'mixed', 'absent'];
  return {
    variants,
    added_p50_ms: variants.turns.total_ms.median - variants.entries.total_ms.median,
    added_p95_ms: (variants.turns.total_ms.p95 ?? NaN) - (variants.entries.total_ms.p95 ?? NaN),
    recall_p50_ms: variants.entries.total_ms.median - variants.none.total_ms.median,
    by_kind_p50_ms: Object.fromEntries(
      kinds.map((k) => [
        k,
        Object.fromEntries(
          TURN_VARIANTS.map((v) => [
            v,
            medianOf(samples.filter((s) => s.variant === v && s.kind === k).map((s) => s.totalMs)),
          ]),
        ),
      ]),
    ),
  };
}

/** Each step's median (and p95) over the queries timed by `recallSteps`. */
export function stepsReport(steps: readonly RecallSteps[]) {
  const keys = Object.keys(steps[0] ?? {}) as (keyof RecallSteps)[];
  return Object.fromEntries(keys.map((k) => [k, summarise(steps.map((s) => s[k]))]));
}

/** A table of the turn starts for the console. */
export function turnStartLines(r: ReturnType<typeof turnStartReport>): string[] {
  const f = (x: number | undefined) => (x === undefined ? '–' : x.toFixed(1));
  const lines = [
    'variant   total p50 / p95 ms   prepareTurn p50 / p95   assemblePrompt p50 / p95   hits (turns)',
  ];
  for (const v of TURN_VARIANTS) {
    const s = r.variants[v];
    lines.push(
      `${v.padEnd(9)} ${`${f(s.total_ms.median)} / ${f(s.total_ms.p95)}`.padEnd(20)} ${`${f(s.prepare_turn_ms.median)} / ${f(s.prepare_turn_ms.p95)}`.padEnd(23)} ${`${f(s.assemble_prompt_ms.median)} / ${f(s.assemble_prompt_ms.p95)}`.padEnd(26)} ${s.mean_hits.toFixed(1)} (${s.mean_turn_hits.toFixed(1)})`,
    );
  }
  for (const v of TURN_VARIANTS) {
    const reads = Object.entries(r.variants[v].reads_ms);
    if (reads.length)
      lines.push(
        `${v} reads by key (median ms, mean keys): ${reads.map(([t, x]) => `${t} ${f(x.median_ms)} (${x.mean_keys.toFixed(0)})`).join(', ')}`,
      );
  }
  lines.push(
    `added by past turns: p50 ${f(r.added_p50_ms)} ms, p95 ${f(r.added_p95_ms)} ms (target p50 ≤ 15); entries-only recall over none: p50 ${f(r.recall_p50_ms)} ms`,
  );
  return lines;
}

/**
 * The chunk search that recall's past turns add, over a built index of any size (Node's 1M,
 * rows from an in-process array): k = 56 over every chat as `turnHits` asks, interleaved with
 * the k = 10 search of `query_fused_*` on the same queries. Milliseconds per query.
 */
export async function recallChunkSearch(
  built: { idx: SemanticIndex; rows: Pick<Table<Chunk, number>, 'bulkGet'> },
  n: number,
  gen: SyntheticVectors,
  queries: number,
  warmup = 3,
): Promise<{ recall: number[]; k10: number[] }> {
  const texts = recallQueries(warmup + queries, n);
  const out = { recall: [] as number[], k10: [] as number[] };
  for (let i = 0; i < warmup + queries; i++) {
    const q = { text: texts[i].text, vector: gen.query(20_000 + i), info: BENCH_MODEL };
    const times: number[] = [];
    for (const k of i % 2 ? [10, MAX_RECALL * 4 + 8] : [MAX_RECALL * 4 + 8, 10]) {
      const t0 = performance.now();
      await searchChunkIndex(
        built.rows as Table<Chunk, number>,
        built.idx,
        null,
        q,
        k,
        0,
        Date.now(),
      );
      times[k === 10 ? 1 : 0] = performance.now() - t0;
    }
    if (i < warmup) continue;
    out.recall.push(times[0]);
    out.k10.push(times[1]);
  }
  return out;
}
