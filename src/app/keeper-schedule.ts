// When the memory keeper runs, and on what, as pure decisions (docs/chat.md, "Memory keeper"):
// each conversation's ledger of exchanges in which the model saved nothing, what a turn and a run
// change in it, which conversation is due and when to look again, the exchanges a run reads from
// the stored messages, and the one line a bad run leaves in the status. The timers, the abort and
// the writes are memory-keeper.ts.
import {
  KEEPER_EVERY,
  KEEPER_IDLE_MS,
  KEEPER_MAX_EXCHANGES,
  KEEPER_QUIET_MS,
  keeperDue,
  type KeeperExchange,
  type KeeperOutcome,
} from '../chat/keeper';
import { withoutThinking } from '../llm/thinking';
import type { TurnResult } from '../chat/types';
import type { Message } from '../memory/types';

/** An exchange the keeper has not looked at: the person's message and the reply it got. */
export interface UnkeptExchange {
  userId: number;
  replyId: number;
}

/** What the keeper knows of one conversation. */
export interface KeeperLedger {
  /** Exchanges in which the model saved nothing, oldest first; one per user message. */
  unkept: UnkeptExchange[];
  /** Exchanges of any kind since the keeper last ran here (Infinity: never). */
  sinceRun: number;
}

export const NEW_LEDGER: Readonly<KeeperLedger> = { unkept: [], sinceRun: Infinity };

/**
 * The ledger after a turn. An answer to a user message (send, regenerate, resend) is an exchange;
 * one in which no memory tool wrote is unkept, and replaces whatever was noted for that user
 * message before (a regeneration or an edit answers it again). An answer that saved takes that
 * user message off the list. A continue, a stop or a failure is no new exchange.
 */
export function afterTurn(
  ledger: Readonly<KeeperLedger>,
  result: Pick<TurnResult, 'status' | 'wrote' | 'userId' | 'replyId'> | undefined,
): KeeperLedger {
  if (result?.status !== 'answered' || result.userId === undefined) return ledger;
  const { userId, replyId } = result;
  const others = ledger.unkept.filter((x) => x.userId !== userId);
  const unkept = !result.wrote && replyId !== undefined ? [...others, { userId, replyId }] : others;
  return { unkept, sinceRun: ledger.sinceRun + 1 };
}

/** The exchanges one run takes: the oldest KEEPER_MAX_EXCHANGES unkept (the rest wait). */
export function runBatch(ledger: Readonly<KeeperLedger>): UnkeptExchange[] {
  return ledger.unkept.slice(0, KEEPER_MAX_EXCHANGES);
}

/**
 * The ledger after a run on `batch`. Stopped (`aborted`): the same exchanges wait for the next
 * run, which, like any, waits for KEEPER_EVERY more exchanges or a quiet minute (a person who
 * reads a while and then answers would otherwise have a request sent and stopped after every
 * exchange, each costing the server its prompt). Otherwise they were looked at, whatever came of
 * it (a refused or failed answer is not asked again: it would cost the same generation for the
 * same answer).
 */
export function afterRun(
  ledger: Readonly<KeeperLedger>,
  batch: readonly UnkeptExchange[],
  status: KeeperOutcome['status'],
): KeeperLedger {
  if (status === 'aborted') return { unkept: ledger.unkept, sinceRun: 0 };
  const done = new Set(batch.map((x) => x.userId));
  return { unkept: ledger.unkept.filter((x) => !done.has(x.userId)), sinceRun: 0 };
}

/**
 * When the ledger's keeper becomes due, given the last activity (a reply ending, typing, opening
 * a chat): KEEPER_IDLE_MS after it once KEEPER_EVERY exchanges passed since the last run, else
 * KEEPER_QUIET_MS after it. Undefined when nothing is left to keep. Matches `keeperDue`.
 */
export function dueAt(ledger: Readonly<KeeperLedger>, lastActivity: number): number | undefined {
  if (!ledger.unkept.length) return undefined;
  return lastActivity + (ledger.sinceRun >= KEEPER_EVERY ? KEEPER_IDLE_MS : KEEPER_QUIET_MS);
}

/**
 * The conversation the keeper runs for now: the open one when it is due, else the due one that
 * has waited longest. `idleMs` is 0 while a turn runs or the composer holds text.
 */
export function dueConversation(
  ledgers: ReadonlyMap<number, Readonly<KeeperLedger>>,
  open: number | undefined,
  idleMs: number,
): number | undefined {
  const due = (l: Readonly<KeeperLedger>) =>
    keeperDue({ unkeptExchanges: l.unkept.length, exchangesSinceRun: l.sinceRun, idleMs });
  const opened = open === undefined ? undefined : ledgers.get(open);
  if (opened && due(opened)) return open;
  let best: number | undefined;
  let oldest = Infinity;
  for (const [id, ledger] of ledgers) {
    const first = ledger.unkept[0]?.userId ?? Infinity;
    if (due(ledger) && first < oldest) {
      best = id;
      oldest = first;
    }
  }
  return best;
}

/** The earliest time any ledger becomes due; undefined when none has anything to keep. */
export function nextDue(
  ledgers: ReadonlyMap<number, Readonly<KeeperLedger>>,
  lastActivity: number,
): number | undefined {
  let next: number | undefined;
  for (const ledger of ledgers.values()) {
    const at = dueAt(ledger, lastActivity);
    if (at !== undefined && (next === undefined || at < next)) next = at;
  }
  return next;
}

/**
 * The exchanges of `batch` as the keeper reads them, from the conversation's stored messages
 * (visible text, as it is now: a continued reply with its continuation), and the reply the card
 * goes under (the newest found). An exchange whose messages are gone (deleted, edited away) or
 * have no words is left out.
 */
export function batchExchanges(
  messages: readonly Message[],
  batch: readonly UnkeptExchange[],
): { exchanges: KeeperExchange[]; replyId: number | undefined } {
  const byId = new Map(messages.map((m) => [m.id, m]));
  const exchanges: KeeperExchange[] = [];
  let replyId: number | undefined;
  for (const x of batch) {
    const user = byId.get(x.userId);
    const reply = byId.get(x.replyId);
    if (user?.role !== 'user' || reply?.role !== 'assistant') continue;
    const answer = withoutThinking(reply.text).trim();
    if (!user.text.trim() || !answer) continue;
    exchanges.push({ user: user.text, assistant: answer, replyId: x.replyId });
    replyId = x.replyId;
  }
  return { exchanges, replyId };
}

/**
 * The one line a run leaves in the status: a refused answer's sentence (it says nothing was
 * saved), or what stopped the run. Nothing for a run that kept, found nothing or was stopped.
 */
export function keeperStatusLine(
  outcome: Pick<KeeperOutcome, 'status' | 'message' | 'retry'>,
): string | undefined {
  if (outcome.status !== 'refused' && outcome.status !== 'error') return undefined;
  if (outcome.retry) {
    return 'The memory keeper could not reach the server (busy, not running, or the connection dropped); it will try again later.';
  }
  const said = outcome.message?.trim();
  if (!said) return 'The memory keeper’s answer was not used, so nothing was saved.';
  // The keeper's own sentences name it; a server's or the memory's do not.
  return /^The memory keeper/.test(said) ? said : `The memory keeper could not run: ${said}`;
}

/** The most exchanges a handover carries per conversation (the oldest beyond it are dropped). */
export const HANDOVER_MAX_EXCHANGES = 50;

/**
 * The unkept exchanges of `ledgers` as text a later page can take over (a page that goes before
 * the keeper ran leaves them), merged into what an earlier page left (`before`, which may be
 * unreadable); undefined when there is nothing to hand over.
 */
export function encodeHandover(
  ledgers: ReadonlyMap<number, Readonly<KeeperLedger>>,
  before: string | null,
): string | undefined {
  const all = decodeHandover(before);
  for (const [id, ledger] of ledgers) {
    if (!ledger.unkept.length) continue;
    all.set(id, mergeLedgers(all.get(id), ledger));
  }
  if (!all.size) return undefined;
  const out: Record<string, [number, number][]> = {};
  for (const [id, ledger] of all) out[id] = ledger.unkept.map((x) => [x.userId, x.replyId]);
  return JSON.stringify(out);
}

/**
 * The ledgers a handover carries (`encodeHandover`): each conversation's unkept exchanges, due
 * as where the keeper never ran (once the person is idle: they have waited already). Text from
 * storage is data: anything that is not a list of id pairs is left out.
 */
export function decodeHandover(raw: string | null): Map<number, KeeperLedger> {
  const out = new Map<number, KeeperLedger>();
  if (!raw) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return out;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return out;
  const id = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
  for (const [key, pairs] of Object.entries(parsed)) {
    const conversationId = Number(key);
    if (!id(conversationId) || !Array.isArray(pairs)) continue;
    const unkept = pairs
      .filter((p): p is [number, number] => Array.isArray(p) && id(p[0]) && id(p[1]))
      .map(([userId, replyId]) => ({ userId, replyId }));
    if (unkept.length) out.set(conversationId, { unkept, sinceRun: Infinity });
  }
  return out;
}

/** Two ledgers of one conversation as one: each user message once (`b`'s reply wins), oldest first. */
export function mergeLedgers(
  a: Readonly<KeeperLedger> | undefined,
  b: Readonly<KeeperLedger>,
): KeeperLedger {
  const byUser = new Map<number, UnkeptExchange>();
  for (const x of [...(a?.unkept ?? []), ...b.unkept]) byUser.set(x.userId, x);
  const unkept = [...byUser.values()]
    .sort((x, y) => x.userId - y.userId)
    .slice(-HANDOVER_MAX_EXCHANGES);
  const sinceRun = Math.max(a?.sinceRun ?? 0, b.sinceRun);
  return { unkept, sinceRun };
}
