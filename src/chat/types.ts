// The chat session's public shapes: its settings, the events a turn emits, what a turn returns,
// and the session itself. The implementation is chat-session.ts and the turn modules beside it.
import type { Connector } from '../llm/connector';
import type { LlmError, ServerInfo, ToolMode } from '../llm/types';
import type { MemoryApi, Message } from '../memory/types';

export interface ChatSettings {
  toolMode: ToolMode;
  temperature: number;
  maxOutputTokens: number;
  /** Tokens kept free besides the output (template overhead, estimate error). */
  reserve: number;
  autoRecall: boolean;
  persona: string;
  recencyBias: number;
  contextTokens: number;
  /** Offer updateMemory and moveMemory too. */
  extraTools: boolean;
}

/** Remembers servers/models that turned out to need prompted tools. */
export interface ToolModeMemory {
  get(key: string): Promise<ToolMode | undefined> | ToolMode | undefined;
  set(key: string, mode: ToolMode): Promise<void> | void;
}

export type SessionEvent =
  | { type: 'token'; text: string }
  | { type: 'thinking'; round: number }
  | { type: 'tool-call'; round: number; id: string; name: string; args: unknown }
  | {
      type: 'tool-result';
      round: number;
      id: string;
      name: string;
      result: unknown;
      refused: boolean;
    }
  | { type: 'notice'; message: string }
  /** A message was stored (or, continuing a reply, updated). */
  | { type: 'message'; id: number; role: Message['role'] }
  /** A regeneration starts: its reply to `userId` is alternative `alt`. */
  | { type: 'alternative'; userId: number; alt: number }
  /**
   * The server could not be reached, or refused the password: the status line says so (with
   * `message`, the notice's sentence) until a reply comes again.
   */
  | { type: 'unreachable'; message: string };

export interface TurnResult {
  status: 'answered' | 'aborted' | 'round-limit' | 'error';
  /** The final (or partial) answer. */
  text: string;
  rounds: number;
  /**
   * Why the turn failed (`error`), or, with an answer, what went wrong on the way that the user
   * was told in a notice (e.g. a reply too long to search for tool calls).
   */
  error?: LlmError;
  /** The user message answered (send, regenerate, resend), when it is stored. */
  userId?: number;
  /** The turn's last stored assistant message (its answer, or what was kept of it), notices aside. */
  replyId?: number;
  /** Whether a tool call that writes memory (save, update, move, delete) succeeded this turn. */
  wrote?: boolean;
  /** The turn was refused before anything was sent to the model (`error` says why). */
  notSent?: boolean;
}

export interface ChatSessionOptions {
  memory: MemoryApi;
  connector: Connector;
  settings?: Partial<ChatSettings>;
  toolModes?: ToolModeMemory;
  onEvent?: (event: SessionEvent) => void;
  /** Synchronous token estimate for the prompt budget (default: the engine's `estimateTokens`). */
  countTokens?: (text: string) => number;
  /**
   * Wraps the token-count callback handed to `memory.setTokenCounter` (the page passes Comlink's
   * `proxy` when the memory lives in a worker). Default: as is.
   */
  wrapCallback?: <F extends (...args: never[]) => unknown>(fn: F) => F;
}

export interface ChatSession {
  /** Detects the server (cached after the first call). */
  server(signal?: AbortSignal): Promise<ServerInfo>;
  /** The tool mode the next turn will use. */
  toolMode(): Promise<'native' | 'prompted'>;
  /** One user message through to the answer; `onEvent` gets this turn's events (besides the session's). */
  send(
    conversationId: number,
    text: string,
    signal?: AbortSignal,
    onEvent?: (event: SessionEvent) => void,
  ): Promise<TurnResult>;
  /**
   * Answers the last user message again, as another alternative of its reply: the earlier ones
   * are kept, and this one is shown (and sent to the model) from its first stored message.
   */
  regenerate(
    conversationId: number,
    signal?: AbortSignal,
    onEvent?: (event: SessionEvent) => void,
  ): Promise<TurnResult>;
  /**
   * Edit and resend: gives a user message new text, deletes every message after it, and answers
   * it again.
   */
  resend(
    conversationId: number,
    messageId: number,
    text: string,
    signal?: AbortSignal,
    onEvent?: (event: SessionEvent) => void,
  ): Promise<TurnResult>;
  /**
   * Asks the model to go on with the last reply (cut by the length limit or by Stop) and appends
   * what it writes to that message. No tools run while continuing.
   */
  continueReply(
    conversationId: number,
    messageId: number,
    signal?: AbortSignal,
    onEvent?: (event: SessionEvent) => void,
  ): Promise<TurnResult>;
}
