// Recall (docs/search.md, "Recall"): saved entries and the past turns of every chat ranked
// together by the one ranking function (auto-recall's `recallMemory`), and the turns alone for
// the model's `searchConversations`.
import type { StoreContext } from '../store';
import { intArg, isToolError, numberArg, toolError } from '../validate';
import { MIN_RELEVANCE, TURN_MIN_RELEVANCE } from '../ranking';
import { SNAPSHOT_RECENT_TURNS } from '../snapshot';
import { rankChunks, searchEntries, type ChunkMatch, type EntryQuery } from '../search';
import { altOf, replyGroups } from '../replies';
import { entryRows } from './read';
import type { Table } from 'dexie';
import type {
  Chunk,
  ConversationSearchResult,
  EntryRecallHit,
  Message,
  RecallHit,
  RecallOptions,
  ToolError,
  TurnRecallHit,
} from '../types';

/** Turns asked beyond those wanted, for the replies of alternatives not shown, left out. */
const HIDDEN_SPARE = 4;
/** Turns passed over at most to find a question's answer (alternatives not shown, tool calls). */
const REPLY_WALK = 8;
/** Sentences asked of the chunk search per turn wanted: a turn may match by several. */
const SENTENCES_PER_TURN = 2;
/** searchConversations' default and largest number of turns. */
const SEARCH_DEFAULT = 5;
const SEARCH_MAX = 20;
/** Characters of a found message given whole to the model; a longer one gives its best sentence. */
const SEARCH_TEXT_CHARS = 600;

export function recallTools(ctx: StoreContext) {
  const { db, now, embed, entries, chunksIndex, guard } = ctx;

  async function recallMemory(
    queryIn: unknown,
    limitIn: unknown = 3,
    optionsIn?: unknown,
  ): Promise<RecallHit[] | ToolError> {
    return guard(async () => {
      if (typeof queryIn !== 'string' || !queryIn.trim()) return [];
      const limit = intArg(limitIn, 'limit', 3, 1, 100);
      if (isToolError(limit)) return limit;
      const opts = recallOptions(optionsIn);
      if (isToolError(opts)) return opts;
      const q = await queryOf(queryIn.trim());
      const idx = await entries();
      const hits = searchEntries(idx, idx.subtree(''), q, now(), 0)
        .filter((h) => h.ownMatch >= opts.min)
        .slice(0, limit);
      const rows = await entryRows(
        db.structured_memory,
        hits.map((h) => h.ref.id),
      );
      const found: EntryRecallHit[] = hits.flatMap((h) => {
        const row = rows.get(h.ref.id);
        if (!row) return [];
        return [
          {
            kind: 'entry' as const,
            path: row.path,
            content: row.content,
            relevance: h.match,
            why: h.why,
            turnIds: savedFrom(row.contextChunks),
          },
        ];
      });
      const turns = opts.turns ? await turnHits(q, limit, opts.turnMin, opts.exclude) : [];
      return mergeRecall(found, turns, limit, opts.exclude);
    });
  }

  async function searchConversations(
    queryIn: unknown,
    limitIn: unknown = SEARCH_DEFAULT,
    optionsIn?: unknown,
  ): Promise<ConversationSearchResult | ToolError> {
    return guard(async () => {
      if (typeof queryIn !== 'string' || !queryIn.trim()) {
        return toolError(
          'INVALID_ARGUMENT',
          'query must be text: what to look for in past conversations (names, places, topics)',
        );
      }
      const limit = intArg(limitIn, 'limit', SEARCH_DEFAULT, 1, SEARCH_MAX);
      if (isToolError(limit)) return limit;
      const opts = recallOptions(optionsIn);
      if (isToolError(opts)) return opts;
      const query = queryIn.trim();
      // Past turns are searched in the active model's index: without a model, say why.
      const emb = await embed([query]);
      if (isToolError(emb)) return emb;
      const q = { text: query, vector: emb.vectors[0], info: emb.info };
      // At most `limit` in all: the model's answer is as long as it asked for.
      const turns = (await turnHits(q, limit, TURN_MIN_RELEVANCE, opts.exclude)).slice(0, limit);
      return {
        status: 'SUCCESS' as const,
        query,
        results: turns.map((t) => ({
          chat: t.chat,
          conversationId: t.conversationId,
          turnId: t.turnId,
          date: t.time.toISOString(),
          speaker: t.speaker ?? t.role,
          text: excerpt(t),
          relevance: Math.round(t.relevance * 1000) / 1000,
        })),
      };
    });
  }

  /** The query's words and, when the model loads, its vector. */
  async function queryOf(text: string): Promise<EntryQuery> {
    const emb = await embed([text]);
    if (isToolError(emb)) return { text, signals: 'lexical' };
    return { text, vector: emb.vectors[0], info: emb.info, signals: 'both' };
  }

  /** The best turns of every chat for `q`, one hit per turn, at or above `min`. */
  async function turnHits(
    q: EntryQuery,
    limit: number,
    min: number,
    exclude?: RecallOptions['exclude'],
  ): Promise<TurnRecallHit[]> {
    // The chunk index is the active model's: with no model there is none to search.
    if (!q.vector || !q.info) return [];
    const idx = await chunksIndex(q.info);
    // The excluded turns are the newest of one chat and may lead the search, and that chat's
    // earlier turns come on top of `limit` (`beyondLimit`): ask past them.
    const k = (exclude ? limit * 2 + 2 : limit) * SENTENCES_PER_TURN;
    // Ranked from the index alone: only the chosen turns' best sentences are read.
    const ranked = await rankChunks(idx, null, q, Math.max(64, k * 4), k * 2);
    const placed = ranked.flatMap((c) => {
      const turnId = idx.turnOf(c.id);
      const conversationId = idx.conversationOf(c.id);
      return turnId === undefined || conversationId === undefined
        ? []
        : [{ ...c, turnId, conversationId }];
    });
    // A few more than wanted: a reply the person regenerated and did not keep is left out below.
    const best = bestPerTurn(placed, { min, limit: limit + HIDDEN_SPARE, exclude });
    if (!best.length) return [];
    // The turn after each (its reply), from the index: a turn that asks is answered by the
    // next, and its reply is found as it is (`asks`: the reply's own words seldom name what it
    // answers). Only where the question is a relevant match by itself (an entry's floor, above
    // a turn's: a loosely matched question would bring a second loose turn).
    const after = (turnId: number, conversationId: number) => {
      const next = idx.nextTurn(turnId);
      const excluded =
        next &&
        exclude &&
        conversationId === exclude.conversationId &&
        next.turnId >= exclude.fromTurnId;
      return excluded ? undefined : next;
    };
    const nexts = best.map((h) =>
      h.ownMatch >= MIN_RELEVANCE ? after(h.turnId, h.conversationId) : undefined,
    );
    const convIds = [...new Set(best.map((h) => h.conversationId))];
    const [rows, replies, known, convs, hidden] = await db.transaction(
      'r',
      db.chunks,
      db.messages,
      db.conversations,
      async () => {
        // Each turn's message and the one before it (a reply's user message, most often), so
        // that telling a hidden alternative rarely needs a read of its own.
        const ids = best.map((h) => h.turnId);
        const keys = [...new Set([...ids, ...ids.map((id) => id - 1).filter((id) => id > 0)])];
        const read = await db.messages.bulkGet(keys);
        const known = new Map(keys.map((id, i) => [id, read[i]]));
        // The turns after those that ask, read with the turns' best sentences: their messages
        // and one sentence each (the index names it).
        const asking = nexts.map((n, i) =>
          n && asks(known.get(best[i].turnId)?.text ?? '') ? n : undefined,
        );
        const wanted = asking.flatMap((r) => (r ? [r] : []));
        const [chunks, answers, convs, hidden] = await Promise.all([
          db.chunks.bulkGet([...best.map((h) => h.id), ...wanted.map((r) => r.chunkId)]),
          db.messages.bulkGet(wanted.map((r) => r.turnId)),
          db.conversations.bulkGet(convIds),
          hiddenAlternatives(
            db.messages,
            ids.map((id) => known.get(id)),
            known,
          ),
        ]);
        wanted.forEach((r, j) => known.set(r.turnId, answers[j]));
        const replies = asking.map((r) => (r && known.get(r.turnId) ? r : undefined));
        // A reply is found with the question's message among those read: no read of its own.
        const replied = replies.flatMap((r) => (r ? [known.get(r.turnId)] : []));
        if (replied.length)
          for (const id of await hiddenAlternatives(db.messages, replied, known)) hidden.add(id);
        // Seldom: the turn after is a regenerated reply not shown, or the words before a tool
        // call; the answer the person saw comes further on, before the next user message.
        const checked = new Set([...ids, ...wanted.map((r) => r.turnId)]);
        for (const [i, r] of replies.entries()) {
          let next = r;
          for (let steps = 0; next; steps++) {
            const m = known.get(next.turnId);
            if (m && !hidden.has(next.turnId) && !m.toolCalls?.length) break;
            next = steps < REPLY_WALK ? after(next.turnId, best[i].conversationId) : undefined;
            if (!next) break;
            const n = known.get(next.turnId) ?? (await db.messages.get(next.turnId));
            if (!n || n.role === 'user') next = undefined;
            else if (!checked.has(next.turnId)) {
              known.set(next.turnId, n);
              checked.add(next.turnId);
              for (const id of await hiddenAlternatives(db.messages, [n], known)) hidden.add(id);
            }
          }
          replies[i] = next;
          if (next && next !== r) chunks.push(await db.chunks.get(next.chunkId));
        }
        return [chunks, replies, known, convs, hidden] as const;
      },
    );
    const titles = new Map(convIds.map((id, i) => [id, convs[i]?.title ?? '']));
    const replyRow = new Map(
      rows.slice(best.length).flatMap((r) => (r ? [[r.turnId, r] as const] : [])),
    );
    const hit = (h: Pick<ChunkMatch, 'match' | 'terms'> & { row: Chunk }) => {
      const m = known.get(h.row.turnId);
      const found = turnHit(h, m?.text, m?.time, titles);
      // Who said it, where the chat names them (an imported chat's characters).
      const speaker = m?.meta?.speaker;
      return typeof speaker === 'string' && speaker.trim() ? { ...found, speaker } : found;
    };
    const out: TurnRecallHit[] = [];
    const taken = new Set<number>();
    best.forEach((h, i) => {
      const row = rows[i];
      if (!row || hidden.has(h.turnId) || taken.has(h.turnId)) return;
      out.push(hit({ ...h, row }));
      taken.add(h.turnId);
      // Its reply right after it, unless it ranks higher already.
      const next = replies[i];
      const reply = next && replyRow.get(next.turnId);
      if (!next || !reply || taken.has(next.turnId) || hidden.has(next.turnId)) return;
      out.push({ ...hit({ match: h.match, terms: [], row: reply }), repliesTo: h.turnId });
      taken.add(next.turnId);
    });
    return out.filter(withinLimit(limit, exclude));
  }

  return { recallMemory, searchConversations };
}

/**
 * Whether a turn asks something: a question mark after a word and not inside one (a link's
 * query, a file name), or after a space at a line's end (French spacing); a code ternary's
 * spaced `?` is no question. Its reply is then found with it (`turnHits`).
 */
export function asks(text: string): boolean {
  return /\S[?？](?![\p{L}\p{N}_/=&%])|[\s\u00a0\u202f][?？](?=[ \t]*$|["'”’»)\]])/mu.test(text);
}

/**
 * The messages among `messages` that belong to a reply alternative not shown (regenerated, and
 * another alternative chosen: docs/chat.md): not what was said as far as the person is concerned,
 * so recall leaves them out (they stay indexed: choosing them again brings them back). A reply's
 * group is read only when its alternative differs from the one its user message names.
 */
export async function hiddenAlternatives(
  table: Table<Message, number>,
  messages: readonly (Message | undefined)[],
  known: ReadonlyMap<number, Message | undefined> = new Map(),
): Promise<Set<number>> {
  const out = new Set<number>();
  /** The user message `m` answers: found among `known` when the ids before it are, else read. */
  const userBefore = (m: Message & { id: number }) => {
    for (let id = m.id - 1; known.has(id); id--) {
      const x = known.get(id);
      if (!x || x.conversationId !== m.conversationId) break;
      if (x.role === 'user') return x;
    }
    return table
      .where('id')
      .below(m.id)
      .reverse()
      .filter((x) => x.conversationId === m.conversationId && x.role === 'user')
      .first();
  };
  await Promise.all(
    messages.map(async (m) => {
      if (!m || m.id === undefined || m.role === 'user') return;
      const conv = m.conversationId;
      const user = await userBefore({ ...m, id: m.id });
      // Before the first user message there are no alternatives; the chosen one is shown.
      if (!user?.id || altOf(m) === altOf(user)) return;
      // The chosen alternative may have no messages (its regeneration failed): ask the group.
      const members = await table
        .where('id')
        .above(user.id)
        .until((x) => x.conversationId === conv && x.role === 'user')
        .filter((x) => x.conversationId === conv)
        .toArray();
      const group = replyGroups([user, ...members]).find((g) => g.user?.id === user.id);
      if (group && group.shown !== altOf(m)) out.add(m.id);
    }),
  );
  return out;
}

/**
 * The turns an entry was saved from: the exchange that led to the save, its snapshot's two
 * newest turns (a snapshot takes the turns just before the save first: snapshot.ts). Older
 * turns in a snapshot are context the entry does not hold, so recall may still bring them.
 */
export function savedFrom(chunks: readonly { turn_id: number }[]): number[] {
  return [...new Set(chunks.map((c) => c.turn_id))]
    .sort((a, b) => b - a)
    .slice(0, SNAPSHOT_RECENT_TURNS);
}

/**
 * A turn's text for the model's search: whole up to SEARCH_TEXT_CHARS, else its best sentence
 * between ellipses (twenty long replies would fill the model's context).
 */
export function excerpt(t: Pick<TurnRecallHit, 'text' | 'best'>): string {
  if (t.text.length <= SEARCH_TEXT_CHARS) return t.text;
  return `…${t.best.slice(0, SEARCH_TEXT_CHARS)}…`;
}

/**
 * recallMemory's options checked: the floor (an entry's and a turn's: each its own by default,
 * the one given for both), whether turns come too, the turns left out.
 */
export function recallOptions(
  optionsIn: unknown,
):
  { min: number; turnMin: number; turns: boolean; exclude?: RecallOptions['exclude'] } | ToolError {
  const o = (optionsIn && typeof optionsIn === 'object' ? optionsIn : {}) as Record<
    string,
    unknown
  >;
  const min = numberArg(o.minRelevance, 'minRelevance', MIN_RELEVANCE, 0, 1);
  if (isToolError(min)) return min;
  const turnMin = o.minRelevance === undefined ? TURN_MIN_RELEVANCE : min;
  if (o.turns !== undefined && typeof o.turns !== 'boolean')
    return toolError('INVALID_ARGUMENT', 'turns must be true or false');
  const ex = o.exclude as { conversationId?: unknown; fromTurnId?: unknown } | undefined | null;
  if (ex === undefined || ex === null) return { min, turnMin, turns: o.turns !== false };
  const conversationId = intArg(ex.conversationId, 'exclude.conversationId', -1, 0, 2 ** 53 - 1);
  if (isToolError(conversationId)) return conversationId;
  const fromTurnId = intArg(ex.fromTurnId, 'exclude.fromTurnId', -1, 0, 2 ** 53 - 1);
  if (isToolError(fromTurnId)) return fromTurnId;
  if (conversationId < 0 || fromTurnId < 0)
    return toolError('INVALID_ARGUMENT', 'exclude needs { conversationId, fromTurnId }');
  return { min, turnMin, turns: o.turns !== false, exclude: { conversationId, fromTurnId } };
}

/**
 * One hit per turn, its best sentence's, best first, at most `limit`; a sentence counts when
 * its own match (without its chat's evidence) is at or above `min`; turns of `exclude`'s chat
 * from its `fromTurnId` on are left out.
 */
export function bestPerTurn<
  H extends Pick<ChunkMatch, 'match' | 'ownMatch'> & { turnId: number; conversationId: number },
>(
  hits: readonly H[],
  { min, limit, exclude }: { min: number; limit: number; exclude?: RecallOptions['exclude'] },
): H[] {
  const best = new Map<number, H>();
  for (const h of hits) {
    if (!(h.ownMatch >= min)) continue;
    const { turnId, conversationId } = h;
    if (exclude && conversationId === exclude.conversationId && turnId >= exclude.fromTurnId)
      continue;
    const seen = best.get(turnId);
    // A turn's sentences often match alike (its words and meaning are theirs): the one whose
    // own match is higher (its own meaning nearer) stands for it.
    if (!seen || h.match > seen.match || (h.match === seen.match && h.ownMatch > seen.ownMatch)) {
      best.set(turnId, h);
    }
  }
  return [...best.values()]
    .sort((a, b) => b.match - a.match || b.turnId - a.turnId)
    .filter(withinLimit(limit, exclude));
}

/**
 * Whether a chat's turn is one of those before `exclude.fromTurnId`: turns the prompt of that
 * chat may hold already. They do not count against a recall's limit (at most as many again come
 * on top): where the chat dwells on the question's topic, they would fill every place and, once
 * the prompt's history took them, leave nothing recalled.
 */
export function beyondLimit(
  hit: { kind?: string; conversationId?: number; turnId?: number },
  exclude: RecallOptions['exclude'],
): boolean {
  return (
    exclude !== undefined &&
    hit.kind !== 'entry' &&
    hit.conversationId === exclude.conversationId &&
    hit.turnId !== undefined &&
    hit.turnId < exclude.fromTurnId
  );
}

/** A filter keeping the first `limit` hits, and beside them the first `limit` `beyondLimit`. */
function withinLimit(limit: number, exclude: RecallOptions['exclude']) {
  let counted = 0;
  let beyond = 0;
  return (hit: { kind?: string; conversationId?: number; turnId?: number }) =>
    beyondLimit(hit, exclude) ? beyond++ < limit : counted++ < limit;
}

/** A turn hit from its best sentence, its message (text and time) and its chat's title. */
export function turnHit(
  h: Pick<ChunkMatch, 'match' | 'terms'> & { row: Chunk },
  text: string | undefined,
  time: Date | undefined,
  chats: ReadonlyMap<number, string>,
): TurnRecallHit {
  return {
    kind: 'turn',
    conversationId: h.row.conversationId,
    turnId: h.row.turnId,
    role: h.row.role,
    text: text ?? h.row.text,
    best: h.row.text,
    time: time ?? h.row.time,
    chat: chats.get(h.row.conversationId) ?? '',
    relevance: h.match,
    terms: h.terms,
  };
}

/**
 * Entries and turns in one ranking by relevance (an entry first on a tie), at most `limit` (and
 * beside them at most `limit` turns of the chat `exclude` names, from before its excluded turns:
 * `beyondLimit`); a turn that an entry of the first `limit` carries in its snapshot is not
 * repeated (wherever the two rank: the entry holds what the turn said, and why it was saved).
 */
export function mergeRecall(
  entries: readonly EntryRecallHit[],
  turns: readonly TurnRecallHit[],
  limit: number,
  exclude?: RecallOptions['exclude'],
): RecallHit[] {
  const all: RecallHit[] = [...entries, ...turns].sort(
    (a, b) => b.relevance - a.relevance || (a.kind === b.kind ? 0 : a.kind === 'entry' ? -1 : 1),
  );
  const carried = new Set<number>();
  for (const hit of all.filter(withinLimit(limit, exclude)))
    if (hit.kind === 'entry') for (const id of hit.turnIds) carried.add(id);
  return all
    .filter((h) => h.kind === 'entry' || !carried.has(h.turnId))
    .filter(withinLimit(limit, exclude));
}
