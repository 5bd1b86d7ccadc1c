// The memory keeper's card (docs/chat.md, "Memory keeper"): what one run kept, stored as a
// message of its conversation (role `assistant`, no text, `meta.keeper`) so that it shows under
// the reply it kept in every tab and after a reload, and its Undo. The model never reads it and
// it is never indexed (`isAside`, `isKeeperCard`). Reading it back is defensive: the row crossed
// storage, a backup or another device.
import { isKeeperCard } from '../memory/replies';
import type { MemoryApi, Message } from '../memory/types';
import { undoKept, type KeeperMemory, type KeptOp, type UndoOutcome } from './keeper';

/** What a card's Undo did: everything, or some (`message` says what was left and why). */
export interface KeeperUndone {
  status: UndoOutcome['status'];
  message?: string;
  /** Of the operations left, those another Undo may still reverse (the card offers it). */
  left?: KeptOp[];
  /** Not one of the card's operations was undone (each changed since, say). */
  nothing?: true;
}

/** `meta.keeper` of a card message. */
export interface KeeperCard {
  /** What the run saved, in order. */
  ops: KeptOp[];
  /** The reply of the newest exchange it kept: the card shows under it. */
  replyId: number;
  /** Set once Undo ran. */
  undone?: KeeperUndone;
}

/** The message that stores a run's card, for `addMessage`. */
export function keeperCardMessage(
  conversationId: number,
  ops: readonly KeptOp[],
  replyId: number,
): Parameters<MemoryApi['addMessage']>[0] {
  const card: KeeperCard = { ops: [...ops], replyId };
  return { conversationId, role: 'assistant', text: '', meta: { keeper: card } };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keptOp(v: unknown): KeptOp | undefined {
  if (!isRecord(v)) return undefined;
  const { op, path, content, version, previousVersion } = v;
  if ((op !== 'add' && op !== 'update') || typeof path !== 'string') return undefined;
  if (typeof version !== 'number') return undefined;
  return {
    op,
    path,
    content: typeof content === 'string' ? content : '',
    version,
    ...(typeof previousVersion === 'number' ? { previousVersion } : {}),
  };
}

/** A message's card, read defensively; undefined when it is not one (or not a readable one). */
export function readKeeperCard(m: Pick<Message, 'meta'>): KeeperCard | undefined {
  if (!isKeeperCard(m)) return undefined;
  const raw = m.meta!.keeper as Record<string, unknown>;
  const ops = Array.isArray(raw.ops) ? raw.ops.map(keptOp) : [];
  if (!ops.length || ops.some((o) => o === undefined)) return undefined;
  if (typeof raw.replyId !== 'number') return undefined;
  const u = raw.undone;
  const left = isRecord(u) && Array.isArray(u.left) ? u.left.map(keptOp) : [];
  const undone: KeeperUndone | undefined =
    isRecord(u) && (u.status === 'undone' || u.status === 'partial')
      ? {
          status: u.status,
          ...(typeof u.message === 'string' ? { message: u.message } : {}),
          ...(u.status === 'partial' && u.nothing === true ? { nothing: true as const } : {}),
          ...(u.status === 'partial' && left.length && left.every((o) => o !== undefined)
            ? { left: left as KeptOp[] }
            : {}),
        }
      : undefined;
  return { ops: ops as KeptOp[], replyId: raw.replyId, ...(undone ? { undone } : {}) };
}

/**
 * Undo on a card: reverses what it kept (`undoKept`: an add goes to the trash, an update gets the
 * version before it back; an entry changed since is left as it is) and marks the card undone, so
 * every tab shows it. A card partly undone with operations another try may reverse (`left`: a
 * write that failed, entries saved below since) takes those again; one undone otherwise is left
 * alone. What the card should now say.
 */
export async function undoKeeperCard(
  memory: KeeperMemory & Pick<MemoryApi, 'updateMessage' | 'getMessages'>,
  shown: Pick<Message, 'id' | 'meta' | 'conversationId'>,
): Promise<KeeperUndone> {
  // The card as stored now: another tab may have undone it since this one showed it.
  const message = (await memory.getMessages(shown.conversationId)).find((m) => m.id === shown.id);
  if (!message) return { status: 'partial', message: 'This card is no longer here.' };
  const card = readKeeperCard(message);
  if (!card)
    return { status: 'partial', message: 'This card cannot be read, so nothing was undone.' };
  if (card.undone && !card.undone.left?.length) return card.undone;
  const result = await undoKept(memory, { ops: card.undone?.left ?? card.ops });
  // Nothing undone, this time or before: the card must not say "partly".
  const none = !result.undone.length && (!card.undone || card.undone.nothing === true);
  const undone: KeeperUndone = {
    status: result.status,
    ...(result.message ? { message: result.message } : {}),
    ...(result.left.length ? { left: result.left } : {}),
    ...(result.status === 'partial' && none ? { nothing: true as const } : {}),
  };
  const noted = await memory.updateMessage(message.id, {
    meta: { ...message.meta, keeper: { ...card, undone } },
  });
  if (noted.status !== 'SUCCESS') {
    return {
      status: undone.status,
      message: [undone.message, `The card could not note it: ${noted.message}`]
        .filter(Boolean)
        .join(' '),
    };
  }
  return undone;
}
