// Reply alternatives and chat titles (docs/chat.md), pure: shared by the engine, the chat
// session and the chat panel. A conversation's messages are read in id order as groups: a user
// message and the messages after it up to the next user message (its reply). Regenerating adds
// another alternative of the last reply: its messages carry `meta.alt` (0, 1, 2…; none means 0)
// and the user message's `meta.alt` says which alternative is shown, and so goes to the model.
import type { Message } from './types';

/** The title a new conversation has until its first user message names it. */
export const DEFAULT_TITLE = 'New chat';

/** Longest title derived from a message (characters), before the ellipsis. */
export const TITLE_MAX = 48;

/** Which alternative a reply message belongs to (0 when it was never regenerated). */
export function altOf(m: Pick<Message, 'meta'>): number {
  const alt = m.meta?.alt;
  return typeof alt === 'number' && Number.isInteger(alt) && alt >= 0 ? alt : 0;
}

/**
 * A memory keeper's card (docs/chat.md, "Memory keeper"): stored with the conversation so that it
 * shows under the reply it kept, in every tab and after a reload, but nothing that was said. It
 * belongs to no group: it is never a reply, an alternative or part of what the model reads.
 */
export function isKeeperCard(m: Pick<Message, 'meta'>): boolean {
  const card = m.meta?.keeper;
  return typeof card === 'object' && card !== null && !Array.isArray(card);
}

/** A user message and its reply: every alternative of it, and the one shown. */
export interface ReplyGroup {
  /** Absent for the messages before the first user message. */
  user?: Message;
  /** Every message after `user` up to the next user message, all alternatives, in id order. */
  members: Message[];
  /** The alternatives that have messages, ascending. */
  alternatives: number[];
  /** The alternative shown (and sent to the model). */
  shown: number;
}

/**
 * The messages in groups. The shown alternative is the one the user message names; if that one
 * has no messages (its regeneration failed before storing any), the newest that has. `lastAlt`
 * forces the last group's (a regeneration in progress shows and sends its own reply only).
 * Memory keeper cards are left out (`isKeeperCard`).
 */
export function replyGroups(messages: readonly Message[], lastAlt?: number): ReplyGroup[] {
  const sorted = messages.filter((m) => !isKeeperCard(m)).sort((a, b) => (a.id ?? 0) - (b.id ?? 0));
  const groups: ReplyGroup[] = [];
  let current: ReplyGroup = { members: [], alternatives: [], shown: 0 };
  for (const m of sorted) {
    if (m.role === 'user') {
      groups.push(current);
      current = { user: m, members: [], alternatives: [], shown: 0 };
    } else current.members.push(m);
  }
  groups.push(current);
  if (!groups[0].members.length) groups.shift();
  groups.forEach((g, i) => {
    g.alternatives = [...new Set(g.members.map(altOf))].sort((a, b) => a - b);
    const wanted = g.user ? altOf(g.user) : 0;
    if (lastAlt !== undefined && i === groups.length - 1 && g.user) g.shown = lastAlt;
    else if (g.alternatives.includes(wanted) || !g.alternatives.length) g.shown = wanted;
    else g.shown = g.alternatives[g.alternatives.length - 1];
  });
  return groups;
}

/** The conversation as shown and as sent to the model: each reply's shown alternative only. */
export function visibleMessages(messages: readonly Message[], lastAlt?: number): Message[] {
  return replyGroups(messages, lastAlt).flatMap((g) => [
    ...(g.user ? [g.user] : []),
    ...g.members.filter((m) => altOf(m) === g.shown),
  ]);
}

/**
 * A chat's title from its first user message: the first line with words, spaces collapsed,
 * markdown marks dropped, cut at a word near TITLE_MAX characters. '' when there are no words.
 */
export function titleFromMessage(text: string): string {
  const line =
    String(text)
      .split('\n')
      .map((l) =>
        l
          .replace(/[`*_#>~[\]]+/g, ' ')
          .replace(/\s+/g, ' ')
          .trim(),
      )
      .find((l) => /[\p{L}\p{N}]/u.test(l)) ?? '';
  if (line.length <= TITLE_MAX) return line;
  const cut = line.slice(0, TITLE_MAX + 1);
  const space = cut.lastIndexOf(' ');
  const head = space >= TITLE_MAX / 2 ? cut.slice(0, space) : line.slice(0, TITLE_MAX);
  return `${head.replace(/[\s,.;:!?-]+$/, '')}…`;
}
