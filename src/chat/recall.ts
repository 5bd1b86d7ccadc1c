// Auto-recall in a chat turn (docs/chat.md, "Auto-recall"): what the turn asks of the engine (the
// entries and past turns of every chat most relevant to the user's message, in one ranking,
// leaving out the message itself and what follows it), and what it keeps of what went into the
// prompt, so the reply's "Recalled:" note can link to each entry and turn.
import type { Message, TurnRequest } from '../memory/types';
import {
  formatDay,
  MAX_RECALL,
  saidExcerpt,
  type AssembledPrompt,
  type RecalledTurn,
} from './context';
import type { ChatSettings } from './types';

/** What auto-recall found for a turn and the prompt took, stored on the turn's replies. */
export interface Recalled {
  /** Entry paths. */
  paths: Set<string>;
  /** Past turns, by message id. */
  turns: Map<number, RecalledTurn>;
}

export const noneRecalled = (): Recalled => ({ paths: new Set(), turns: new Map() });

/**
 * The turn's recall request: the user's text against every entry and every chat's turns; the
 * chat's own turns from the message answered on are left out (the prompt holds them already;
 * the turns before it that the prompt holds are left out when it is assembled).
 */
export function recallRequest(
  settings: Pick<ChatSettings, 'autoRecall'>,
  text: string,
  conversationId: number,
  userId: number | undefined,
): Pick<TurnRequest, 'recall'> {
  if (!settings.autoRecall || !text.trim()) return {};
  return {
    recall: {
      query: text,
      limit: MAX_RECALL,
      ...(userId !== undefined
        ? { options: { exclude: { conversationId, fromTurnId: userId } } }
        : {}),
    },
  };
}

/** Adds what a round's prompt recalled. */
export function noteRecalled(
  recalled: Recalled,
  prompt: Pick<AssembledPrompt, 'recalled' | 'recalledTurns'>,
): void {
  for (const path of prompt.recalled) recalled.paths.add(path);
  for (const t of prompt.recalledTurns) recalled.turns.set(t.turnId, t);
}

/**
 * What a reply message stores of it: `recalled` (entry paths) and `recalledTurns` (chat, message
 * and date as ISO text, for the "Recalled:" note's links); nothing when nothing was recalled.
 */
export function recalledMeta(recalled: Recalled): Record<string, unknown> {
  return {
    ...(recalled.paths.size ? { recalled: [...recalled.paths] } : {}),
    ...(recalled.turns.size
      ? {
          recalledTurns: [...recalled.turns.values()].map((t) => ({
            conversationId: t.conversationId,
            turnId: t.turnId,
            chat: t.chat,
            time: t.time instanceof Date ? t.time.toISOString() : String(t.time),
            ...(t.said ? { said: t.said } : {}),
          })),
        }
      : {}),
  };
}

/** A recalled turn as a stored reply names it (`meta.recalledTurns`), or undefined if unreadable. */
export interface StoredRecalledTurn {
  conversationId: number;
  turnId: number;
  chat: string;
  time: string;
  /** The words recalled, cut short (replies stored before it was kept have none). */
  said?: string;
  /** Shown only: the chat is no longer here (deleted since), so there is nothing to open. */
  gone?: boolean;
}

/** The recalled turns a stored message names, the malformed left out (meta is data from storage). */
export function recalledTurnsOf(meta: Message['meta']): StoredRecalledTurn[] {
  const list = meta?.recalledTurns;
  if (!Array.isArray(list)) return [];
  return list.flatMap((t: unknown) => {
    if (!t || typeof t !== 'object') return [];
    const { conversationId, turnId, chat, time, said } = t as Record<string, unknown>;
    if (!Number.isInteger(conversationId) || !Number.isInteger(turnId)) return [];
    return [
      {
        conversationId: conversationId as number,
        turnId: turnId as number,
        chat: typeof chat === 'string' ? chat : '',
        time: typeof time === 'string' ? time : '',
        ...(typeof said === 'string' && said.trim() ? { said: saidExcerpt(said) } : {}),
      },
    ];
  });
}

/**
 * A reply's meta with what `recalled` adds to what it noted already (a continued reply keeps
 * what its turn recalled, and adds what the continuation's prompt recalled).
 */
export function withRecalled(
  meta: Record<string, unknown>,
  recalled: Recalled,
): Record<string, unknown> {
  if (!recalled.paths.size && !recalled.turns.size) return meta;
  const paths = new Set(
    Array.isArray(meta.recalled) ? meta.recalled.filter((p) => typeof p === 'string') : [],
  );
  const before = recalledTurnsOf(meta as Message['meta']);
  const seen = new Set(before.map((t) => t.turnId));
  const added = recalledMeta(recalled);
  for (const p of (added.recalled as string[] | undefined) ?? []) paths.add(p);
  const turns = [
    ...before,
    ...((added.recalledTurns as { turnId: number }[] | undefined) ?? []).filter(
      (t) => !seen.has(t.turnId),
    ),
  ];
  return {
    ...meta,
    ...(paths.size ? { recalled: [...paths] } : {}),
    ...(turns.length ? { recalledTurns: turns } : {}),
  };
}

/** Characters of a chat's title the note shows beside a recalled message's words. */
const CHAT_CHARS = 40;

/** Made once: the time of day of a recalled turn, where its day alone does not tell it apart. */
const TIME_OF_DAY = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit' });

/**
 * The recalled turns as the note names them: the words recalled, then where and when: "“We fly
 * on the 9th” (the chat “Plans”, 3 May 2026)"; a reply stored before the words were kept, "the
 * chat “Plans” (3 May 2026)"; "a deleted chat (…)" for one gone since, without its words or title.
 * Two that would read alike get their time of day, then a number, so each link says which
 * message it opens.
 */
export function turnLabels(turns: readonly StoredRecalledTurn[]): string[] {
  const day = (t: StoredRecalledTurn, withTime: boolean) => {
    const time = Date.parse(t.time);
    if (Number.isNaN(time)) return '';
    const d = new Date(time);
    return withTime ? `${formatDay(d)}, ${TIME_OF_DAY.format(d)}` : formatDay(d);
  };
  const label = (t: StoredRecalledTurn, withTime: boolean) => {
    const chat = t.chat.trim();
    const when = day(t, withTime);
    if (t.said && !t.gone) {
      // A chat named from its first message, and that message recalled: its title says nothing new.
      const bare = (s: string) => s.replace(/…$/, '').toLowerCase();
      const first =
        chat && (bare(t.said).startsWith(bare(chat)) || bare(chat).startsWith(bare(t.said)));
      const name = first
        ? 'first in its chat'
        : chat
          ? `the chat “${saidExcerpt(chat, CHAT_CHARS)}”`
          : 'a past chat';
      return `“${t.said}” (${name}${when ? `, ${when}` : ''})`;
    }
    const name = t.gone ? 'a deleted chat' : chat ? `the chat “${chat}”` : 'a past chat';
    return `${name}${when ? ` (${when})` : ''}`;
  };
  const plain = turns.map((t) => label(t, false));
  const timed = turns.map((t, i) =>
    plain.indexOf(plain[i]) !== plain.lastIndexOf(plain[i]) ? label(t, true) : plain[i],
  );
  const seen = new Map<string, number>();
  return timed.map((l) => {
    const n = (seen.get(l) ?? 0) + 1;
    seen.set(l, n);
    const twice = timed.indexOf(l) !== timed.lastIndexOf(l);
    return twice ? `${l} #${n}` : l;
  });
}
