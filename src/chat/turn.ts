// One chat turn in progress, and what every kind of turn does with it: open it (`begin`), wait on
// the engine unless stopped, store its messages (with the turn's alternative and recalled paths)
// and index them, or refuse to start. The kinds of turn are answer.ts (send, regenerate, resend)
// and continue.ts.
import type { Validator } from '@cfworker/json-schema';
import type { Connector } from '../llm/connector';
import { isAbortError } from '../llm/errors';
import { LlmError, type ServerInfo, type ToolSpec } from '../llm/types';
import type { MemoryApi, Message } from '../memory/types';
import { noneRecalled, recalledMeta, type Recalled } from './recall';
import type { MemoryTool } from './tools';
import type { ChatSettings, SessionEvent, TurnResult } from './types';

/** What every turn of one session shares: the engine, the server, the settings and the tools. */
export interface SessionContext {
  memory: MemoryApi;
  connector: Connector;
  settings: ChatSettings;
  countTokens: (text: string) => number;
  /** The tools offered, their schemas as sent, and one validator per tool, made once. */
  tools: readonly MemoryTool[];
  specs: ToolSpec[];
  validators: Map<string, Validator>;
  /** What the native tool schemas cost in tokens (they come off the prompt's budget). */
  nativeToolTokens: number;
  /** The session's listener: it hears every turn, and work that finishes after a stop. */
  emit(event: SessionEvent): void;
  /** Detects the server (cached after the first call). */
  server(signal?: AbortSignal): Promise<ServerInfo>;
  /** The tool mode the next round will use. */
  toolMode(): Promise<'native' | 'prompted'>;
  /** Remembers that `s` needs prompted tools, for this session and in `toolModes`. */
  learnPrompted(s: ServerInfo): Promise<void>;
}

/** One turn in progress: its signal, its listeners, and the text shown so far this round. */
export interface Turn {
  ctx: SessionContext;
  conversationId: number;
  signal?: AbortSignal;
  emit(event: SessionEvent): void;
  /** Waits for `p`, or throws an AbortError as soon as the turn is stopped. */
  step<T>(p: Promise<T> | T): Promise<T>;
  /** The tokens shown in this round (what a stop keeps). */
  streamed: string;
  /** What a stop keeps was stored already: the turn's end must not store it again. */
  keptPartial: boolean;
  /** The person was told that their message was cut to fit the context (once a turn). */
  toldCut?: boolean;
  /** A regeneration's alternative: every reply message it stores carries it. */
  alt?: number;
  /** What auto-recall put into this turn's prompts (stored with its assistant messages). */
  recalled: Recalled;
  /** The user message this turn answers, once stored. */
  userId?: number;
  /** The last assistant message this turn stored, notices aside. */
  replyId?: number;
  /** A tool call that writes memory succeeded in this turn. */
  wrote: boolean;
}

export type NewMessage = Omit<Parameters<MemoryApi['addMessage']>[0], 'conversationId'>;

/** Runs `body` as one turn: its listener hears this turn only, and nothing once it has returned. */
export async function begin(
  ctx: SessionContext,
  conversationId: number,
  signal: AbortSignal | undefined,
  onEvent: ((event: SessionEvent) => void) | undefined,
  body: (turn: Turn) => Promise<TurnResult>,
): Promise<TurnResult> {
  // Work left to finish after a stop may still report to the session's listener.
  let open = true;
  const turn: Turn = {
    ctx,
    conversationId,
    signal,
    streamed: '',
    keptPartial: false,
    recalled: noneRecalled(),
    wrote: false,
    emit(event) {
      ctx.emit(event);
      if (open) onEvent?.(event);
    },
    step: (p) => unlessAborted(Promise.resolve(p), signal),
  };
  try {
    // One turn at a time in a chat, across this browser's tabs: two would each send the other's
    // half-stored messages as their prompt, and number their replies alike (Web Locks; where
    // there are none, as in Node, the page's own one-at-a-time is all).
    const locks = globalThis.navigator?.locks;
    if (!locks) return await body(turn);
    const name = `${CHAT_LOCK}${conversationId}`;
    // A turn of this page still winding up (stopped, its last writes under way; or of the
    // session before new settings) is waited for, not taken for another tab's.
    if (heldHere.has(name)) return await locks.request(name, () => held(name, () => body(turn)));
    return await locks.request(name, { ifAvailable: true }, async (lock): Promise<TurnResult> =>
      lock ? held(name, () => body(turn)) : refuse(turn, ANSWERING_ELSEWHERE),
    );
  } finally {
    open = false;
  }
}

/** The chat locks this page holds, by name, with how many of its turns hold or await each. */
const heldHere = new Map<string, number>();

/** Runs `fn` noting that this page holds the lock `name` meanwhile. */
async function held<T>(name: string, fn: () => Promise<T>): Promise<T> {
  heldHere.set(name, (heldHere.get(name) ?? 0) + 1);
  try {
    return await fn();
  } finally {
    const n = (heldHere.get(name) ?? 1) - 1;
    if (n) heldHere.set(name, n);
    else heldHere.delete(name);
  }
}

/** The Web Lock a chat's turn holds (its conversation id follows). */
export const CHAT_LOCK = 'structured-memory-chat-';

/** Said when the chat is answering in another tab. */
export const ANSWERING_ELSEWHERE =
  'This chat is answering in another tab of this app: wait for that reply, or open another chat here.';

/** A turn that cannot start: said in a notice, nothing stored. */
export function refuse(turn: Turn, message: string): TurnResult {
  turn.emit({ type: 'notice', message });
  return {
    status: 'error',
    text: '',
    rounds: 0,
    error: new LlmError('BAD_REQUEST', message),
    notSent: true,
  };
}

/** A message as this turn stores it: with its alternative and what auto-recall added. */
function withTurnMeta(turn: Turn, msg: NewMessage): NewMessage {
  if (msg.role === 'user') return msg;
  const meta: Record<string, unknown> = { ...msg.meta };
  if (turn.alt !== undefined) meta.alt = turn.alt;
  if (msg.role === 'assistant') Object.assign(meta, recalledMeta(turn.recalled));
  return Object.keys(meta).length ? { ...msg, meta } : msg;
}

/**
 * Stores messages in one write, all or none (always: a stop does not lose them) and, with
 * `index`, waits for the first to be indexed, unless the turn is stopped: then the engine
 * finishes indexing on its own. Undefined when they could not be stored (the user is told).
 */
export async function storeAll(
  turn: Turn,
  msgs: NewMessage[],
  index: boolean,
): Promise<number[] | undefined> {
  const { memory } = turn.ctx;
  const rows = msgs.map((m) => ({
    conversationId: turn.conversationId,
    ...withTurnMeta(turn, m),
  }));
  const r = rows.length === 1 ? await memory.addMessage(rows[0]) : await memory.addMessages(rows);
  if (r.status !== 'SUCCESS') {
    turn.emit({ type: 'notice', message: `Could not store a message: ${r.message}` });
    return undefined;
  }
  const ids = 'ids' in r ? r.ids : [r.id];
  ids.forEach((id, i) => {
    if (rows[i].role === 'assistant' && !rows[i].meta?.notice) turn.replyId = id;
    turn.emit({ type: 'message', id, role: rows[i].role });
  });
  if (index && rows[0].text.trim()) await indexTurn(turn, rows[0].role, rows[0].text, ids[0]);
  return ids;
}

export async function store(
  turn: Turn,
  msg: NewMessage,
  index: boolean,
): Promise<number | undefined> {
  return (await storeAll(turn, [msg], index))?.[0];
}

/** Indexes a stored message; a stop ends the wait, not the indexing; a failure fails the turn. */
export async function indexTurn(
  turn: Turn,
  role: Message['role'],
  text: string,
  turnId: number,
): Promise<void> {
  const indexed = turn.ctx.memory.recordTurn({
    conversationId: turn.conversationId,
    role,
    text,
    turnId,
  });
  await turn.step(indexed).catch((e: unknown) => {
    if (!isAbortError(e)) throw e;
  });
}

/** Whether `e` ends the turn as a stop (an abort, or any failure once the turn was stopped). */
export function isStop(turn: Turn, e: unknown): boolean {
  return isAbortError(e) || !!turn.signal?.aborted;
}

function abortError(): DOMException {
  return new DOMException('The turn was stopped.', 'AbortError');
}

/** Settles like `p`, or rejects with an AbortError once `signal` aborts (`p` goes on unheard). */
function unlessAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(abortError());
  }
  return new Promise<T>((resolve, reject) => {
    const stop = () => {
      p.catch(() => undefined);
      reject(abortError());
    };
    signal.addEventListener('abort', stop, { once: true });
    p.then(
      (value) => {
        signal.removeEventListener('abort', stop);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', stop);
        reject(error);
      },
    );
  });
}
