// One chat turn, headless: store and index the user message, assemble the prompt within budget,
// stream from the model, run its memory tool calls (up to 8 rounds), store and index the answer.
// Tool calls go native (OpenAI `tools`) or prompted (`<tool_call>` text), chosen per server.
// Aborting the turn's signal ends it at once from any step (detection, indexing, the stream, a
// tool call): what arrived is stored, marked stopped, and work already handed to the memory
// engine finishes there without the turn waiting for it.
import type { Validator } from '@cfworker/json-schema';
import type { Connector } from '../llm/connector';
import { isAbort } from '../llm/connector';
import {
  describeTools,
  parseToolCalls,
  PROMPTED_STOP,
  toPromptedMessages,
} from '../llm/prompted-tools';
import { tokenFilter } from '../llm/token-filter';
import {
  LlmError,
  type ChatMessage,
  type GenerationResult,
  type ServerInfo,
  type ToolCall,
  type ToolMode,
} from '../llm/types';
import type { MemoryApi, Message, ToolCallRecord } from '../memory/types';
import { MAX_RECALL, assemblePrompt, type InjectedMemory, type RecallItem } from './context';
import { MEMORY_INSTRUCTIONS } from './instructions';
import {
  EXTRA_TOOLS,
  MEMORY_TOOLS,
  runToolCall,
  toolSpecs,
  type MemoryTool,
  type ToolOutcome,
} from './tools';

export const MAX_TOOL_ROUNDS = 8;

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

export const DEFAULT_CHAT_SETTINGS: ChatSettings = {
  toolMode: 'auto',
  temperature: 0.7,
  maxOutputTokens: 512,
  reserve: 256,
  autoRecall: true,
  persona: '',
  recencyBias: 0.3,
  contextTokens: 1000,
  extraTools: false,
};

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
  | { type: 'message'; id: number; role: Message['role'] };

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
}

export interface ChatSessionOptions {
  memory: MemoryApi;
  connector: Connector;
  settings?: Partial<ChatSettings>;
  toolModes?: ToolModeMemory;
  onEvent?: (event: SessionEvent) => void;
  /** Synchronous token estimate for the prompt budget (default: ~4 characters a token). */
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
}

const estimate = (text: string) => (text ? Math.ceil(text.length / 4) : 0);

/** One turn in progress: its signal, its listeners, and the text shown so far this round. */
interface Turn {
  conversationId: number;
  signal?: AbortSignal;
  emit(event: SessionEvent): void;
  /** The tokens shown in this round (what a stop keeps). */
  streamed: string;
}

export function createChatSession(options: ChatSessionOptions): ChatSession {
  const { memory, connector } = options;
  const settings: ChatSettings = { ...DEFAULT_CHAT_SETTINGS, ...options.settings };
  const sessionEmit = options.onEvent ?? (() => undefined);
  const wrap = options.wrapCallback ?? (<F>(fn: F) => fn);
  const countTokens = options.countTokens ?? estimate;
  const remembered = new Map<string, ToolMode>();
  const toolModes: ToolModeMemory = options.toolModes ?? {
    get: (k) => remembered.get(k),
    set: (k, v) => void remembered.set(k, v),
  };
  const tools: readonly MemoryTool[] = settings.extraTools
    ? [...MEMORY_TOOLS, ...EXTRA_TOOLS]
    : MEMORY_TOOLS;
  const specs = toolSpecs(tools);
  const nativeToolTokens = countTokens(JSON.stringify(specs));
  const validators = new Map<string, Validator>();
  let info: Promise<ServerInfo> | undefined;

  function server(signal?: AbortSignal): Promise<ServerInfo> {
    info ??= connector.detect(signal).then((i) => {
      memory.setTokenCounter(wrap((t: string) => connector.countTokens(t)));
      return i;
    });
    info.catch(() => (info = undefined));
    return info;
  }

  const modeKey = (s: ServerInfo) => `${s.kind}|${s.baseUrl}|${s.model}`;

  async function toolMode(): Promise<'native' | 'prompted'> {
    if (settings.toolMode !== 'auto') return settings.toolMode;
    const s = await server();
    return (await toolModes.get(modeKey(s))) === 'prompted' ? 'prompted' : 'native';
  }

  /**
   * Stores a message (always: a stop does not lose it) and, with `index`, waits for it to be
   * indexed, unless the turn is stopped: then the engine finishes indexing on its own.
   */
  async function store(
    turn: Turn,
    msg: Omit<Parameters<MemoryApi['addMessage']>[0], 'conversationId'>,
    index: boolean,
  ): Promise<number | undefined> {
    const r = await memory.addMessage({ conversationId: turn.conversationId, ...msg });
    if (r.status !== 'SUCCESS') {
      turn.emit({ type: 'notice', message: `Could not store a message: ${r.message}` });
      return undefined;
    }
    turn.emit({ type: 'message', id: r.id, role: msg.role });
    if (index && msg.text.trim()) {
      const indexed = memory.recordTurn({
        conversationId: turn.conversationId,
        role: msg.role,
        text: msg.text,
        turnId: r.id,
      });
      // A stop ends the wait, not the indexing; a failure still fails the turn.
      await unlessAborted(indexed, turn.signal).catch((e: unknown) => {
        if (!isAbort(e)) throw e;
      });
    }
    return r.id;
  }

  async function send(
    conversationId: number,
    text: string,
    signal?: AbortSignal,
    onEvent?: (event: SessionEvent) => void,
  ): Promise<TurnResult> {
    // This turn's listener hears this turn only, and nothing once send() has returned (work
    // left to finish after a stop may still report to the session's listener).
    let open = true;
    const turn: Turn = {
      conversationId,
      signal,
      streamed: '',
      emit(event) {
        sessionEmit(event);
        if (open) onEvent?.(event);
      },
    };
    try {
      return await runTurn(turn, text);
    } finally {
      open = false;
    }
  }

  async function runTurn(turn: Turn, text: string): Promise<TurnResult> {
    const { conversationId, signal } = turn;
    const emit = turn.emit;
    /** Waits for `p`, or throws an AbortError as soon as the turn is stopped. */
    const step = <T>(p: Promise<T> | T): Promise<T> => unlessAborted(Promise.resolve(p), signal);
    let rounds = 0;
    let storedPartial = false;
    try {
      const s = await step(server(signal));
      const userId = await store(turn, { role: 'user', text }, true);
      const recall = settings.autoRecall ? await step(recallFor(text)) : [];
      const outline = await step(memory.memoryOutline(2));

      for (;;) {
        turn.streamed = '';
        const mode = await step(toolMode());
        const history = await step(memory.getMessages(conversationId));
        // Tool descriptions cost context too: in prompted mode they join the instructions (and
        // are budgeted there); native tool schemas are added to the reserve.
        const prompt = assemblePrompt({
          persona: settings.persona,
          ...(mode === 'prompted'
            ? { instructions: `${MEMORY_INSTRUCTIONS}\n\n${describeTools(specs)}` }
            : {}),
          outline,
          recall,
          injected: injectedBefore(history, userId),
          history: toChatMessages(history),
          budget: {
            contextSize: s.contextSize,
            maxOutput: settings.maxOutputTokens,
            reserve: settings.reserve + (mode === 'native' ? nativeToolTokens : 0),
          },
          countTokens,
        });
        if (!prompt.messages.length) {
          throw new LlmError(
            'CONTEXT_OVERFLOW',
            `The context size (${s.contextSize} tokens) leaves no room for a prompt after ${settings.maxOutputTokens} output tokens. Lower "Max output tokens" or raise the context size in Settings.`,
          );
        }
        emit({ type: 'thinking', round: rounds + 1 });
        let result: GenerationResult;
        let calls: ToolCall[];
        let visible: string;
        let parseError: LlmError | undefined;
        try {
          ({ result, calls, visible, parseError } = await step(
            generate(turn, s, mode, prompt.messages),
          ));
        } catch (e) {
          if (
            e instanceof LlmError &&
            e.code === 'TOOLS_UNSUPPORTED' &&
            mode === 'native' &&
            settings.toolMode === 'auto'
          ) {
            await step(toolModes.set(modeKey(s), 'prompted'));
            emit({
              type: 'notice',
              message: `${s.model || 'This model'} on ${s.kind} does not take native tool calls, so memory tools are now described in the prompt instead (remembered for this server and model).`,
            });
            continue;
          }
          throw e;
        }

        if (result.aborted) {
          storedPartial = true;
          await store(turn, { role: 'assistant', text: visible, meta: { aborted: true } }, true);
          return { status: 'aborted', text: visible, rounds };
        }
        if (!calls.length) {
          await store(turn, { role: 'assistant', text: visible }, true);
          if (parseError) {
            // Not a silent drop: the answer stands, and the user is told what was not done.
            await store(
              turn,
              { role: 'assistant', text: '', meta: { notice: parseError.message } },
              false,
            );
            emit({ type: 'notice', message: parseError.message });
            return { status: 'answered', text: visible, rounds, error: parseError };
          }
          return { status: 'answered', text: visible, rounds };
        }
        if (rounds >= MAX_TOOL_ROUNDS) {
          const message = `The model kept calling memory tools (${MAX_TOOL_ROUNDS} rounds) without answering, so this turn was stopped. Ask again, or rephrase the request.`;
          await store(
            turn,
            { role: 'assistant', text: visible, meta: { notice: 'round-limit' } },
            false,
          );
          emit({ type: 'notice', message });
          return { status: 'round-limit', text: message, rounds };
        }
        rounds++;
        const outcomes: ToolOutcome[] = [];
        try {
          for (const call of calls) {
            emit({
              type: 'tool-call',
              round: rounds,
              id: call.id,
              name: call.function.name,
              args: safeParse(call.function.arguments),
            });
            const outcome = await step(runToolCall(call, tools, memory, settings, validators));
            outcomes.push(outcome);
            emit({
              type: 'tool-result',
              round: rounds,
              id: call.id,
              name: outcome.name,
              result: outcome.result,
              refused: outcome.refused,
            });
          }
        } catch (e) {
          if (!isAbort(e) && !signal?.aborted) throw e;
          // Stopped while a tool ran: keep the round with the calls that finished (a call still
          // running finishes in the engine, unrecorded here).
          storedPartial = true;
          if (visible.trim() || outcomes.length) {
            await storeRound(turn, visible, calls.slice(0, outcomes.length), outcomes, {
              mode,
              aborted: true,
            });
          }
          return { status: 'aborted', text: visible, rounds };
        }
        await storeRound(turn, visible, calls, outcomes, { mode });
      }
    } catch (e) {
      if (isAbort(e) || signal?.aborted) {
        // Stopped mid-step: what was shown of this round is kept, marked stopped.
        const partial = turn.streamed.trim();
        if (partial && !storedPartial) {
          await store(turn, { role: 'assistant', text: partial, meta: { aborted: true } }, true);
        }
        return { status: 'aborted', text: storedPartial ? '' : partial, rounds };
      }
      const error =
        e instanceof LlmError
          ? e
          : new LlmError(
              'SERVER_ERROR',
              `Something went wrong: ${e instanceof Error ? e.message : String(e)}`,
            );
      const partial = error.detail.partial ?? '';
      if (partial.trim()) {
        await store(turn, { role: 'assistant', text: partial, meta: { error: error.code } }, true);
      }
      emit({ type: 'notice', message: error.message });
      return { status: 'error', text: partial, rounds, error };
    }
  }

  /** A round with tool calls: the assistant message with its calls, then one message per result. */
  async function storeRound(
    turn: Turn,
    visible: string,
    calls: readonly ToolCall[],
    outcomes: readonly ToolOutcome[],
    meta: Record<string, unknown>,
  ): Promise<void> {
    const records: ToolCallRecord[] = calls.map((c, i) => ({
      id: c.id,
      name: c.function.name,
      arguments: outcomes[i].args,
      result: outcomes[i].result,
    }));
    await store(
      turn,
      { role: 'assistant', text: visible, toolCalls: records, meta },
      !!visible.trim(),
    );
    for (let i = 0; i < calls.length; i++) {
      await store(
        turn,
        {
          role: 'tool',
          text: JSON.stringify(outcomes[i].result),
          toolCallId: calls[i].id,
          meta: { name: calls[i].function.name },
        },
        false,
      );
    }
  }

  /**
   * One model call in the chosen mode; prompted calls are parsed out of the text. `parseError`:
   * the text could not be searched for calls (too long, say) and none was run.
   */
  async function generate(
    turn: Turn,
    s: ServerInfo,
    mode: 'native' | 'prompted',
    messages: ChatMessage[],
  ): Promise<{
    result: GenerationResult;
    calls: ToolCall[];
    visible: string;
    parseError?: LlmError;
  }> {
    const onToken = tokenFilter(mode, (t) => {
      turn.streamed += t;
      turn.emit({ type: 'token', text: t });
    });
    const common = {
      maxTokens: settings.maxOutputTokens,
      temperature: settings.temperature,
      signal: turn.signal,
      onToken,
    };
    let result: GenerationResult;
    if (mode === 'native') {
      result = await connector.chat({ ...common, messages, tools: specs });
    } else {
      const prompted = toPromptedMessages(messages);
      result =
        s.kind === 'koboldcpp'
          ? await connector.generate({
              ...common,
              prompt: koboldPrompt(prompted),
              stop: [...PROMPTED_STOP, '{{[INPUT]}}'],
            })
          : await connector.chat({ ...common, messages: prompted, stop: [...PROMPTED_STOP] });
    }
    if (result.aborted) return { result, calls: [], visible: result.text };
    // Either way, take calls in whichever form the model produced them: some models write
    // <tool_call> text even when native tools were offered, and some servers parse text calls
    // into native ones even when none were offered.
    // Only text with a call's marks is searched: a long plain answer costs no parse (and a reply
    // too long to search is reported only when it may have held a call).
    const parsed = CALL_MARKS.test(result.text)
      ? parseToolCalls(result.text)
      : { calls: [], text: result.text.trim(), error: undefined };
    const known = parsed.calls.filter((c) => tools.some((t) => t.name === c.function.name));
    const textCalls = mode === 'prompted' ? parsed.calls : known;
    if (result.toolCalls.length)
      return { result, calls: result.toolCalls, visible: result.text.trim() };
    if (textCalls.length) return { result, calls: textCalls, visible: parsed.text.trim() };
    // The text shows a call but was not searched (too long) or could not be read: say so.
    return {
      result,
      calls: [],
      visible: (mode === 'prompted' ? parsed.text : result.text).trim(),
      ...(parsed.error ? { parseError: parsed.error } : {}),
    };
  }

  async function recallFor(text: string): Promise<RecallItem[]> {
    const hits = await memory.recallMemory(text, MAX_RECALL);
    return Array.isArray(hits) ? hits : [];
  }

  return { server, toolMode, send };
}

/** Stored messages → OpenAI-form history (notices left out). */
export function toChatMessages(messages: readonly Message[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.meta?.notice) continue;
    if (m.role === 'tool') {
      out.push({
        role: 'tool',
        content: m.text,
        tool_call_id: m.toolCallId ?? '',
        name: String(m.meta?.name ?? ''),
      });
    } else if (m.role === 'assistant' && m.toolCalls?.length) {
      out.push({
        role: 'assistant',
        content: m.text || null,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: {
            name: c.name,
            arguments:
              typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
          },
        })),
      });
    } else {
      out.push({ role: m.role, content: m.text });
    }
  }
  return out;
}

/** queryMemory results from earlier turns (newest last, at most 2): they ride along in the prompt. */
function injectedBefore(
  messages: readonly Message[],
  currentUserId: number | undefined,
): InjectedMemory[] {
  const found: InjectedMemory[] = [];
  for (const m of messages) {
    if (currentUserId !== undefined && m.id! >= currentUserId) break;
    for (const c of m.toolCalls ?? []) {
      const r = c.result as
        | { status?: unknown; path?: unknown; content?: unknown; contextChunks?: unknown }
        | undefined;
      if (c.name === 'queryMemory' && r?.status === 'SUCCESS' && typeof r.path === 'string') {
        found.push({
          path: r.path,
          content: (r.content ?? null) as InjectedMemory['content'],
          chunks: Array.isArray(r.contextChunks)
            ? (r.contextChunks as InjectedMemory['chunks'])
            : [],
        });
      }
    }
  }
  return found.slice(-2);
}

/** KoboldCPP native prompt with its instruct placeholders (replaced by the model's chat tags). */
export function koboldPrompt(messages: readonly ChatMessage[]): string {
  const tag = {
    system: '{{[SYSTEM]}}',
    user: '{{[INPUT]}}',
    assistant: '{{[OUTPUT]}}',
    tool: '{{[INPUT]}}',
  } as const;
  return messages.map((m) => `${tag[m.role]}${m.content ?? ''}`).join('') + '{{[OUTPUT]}}';
}

/** Kept exported from here for callers of the chat session; it lives with the connector. */
export { tokenFilter };

/**
 * Text that may hold a tool call in a form parseToolCalls reads: a `<tool_call>` tag, Mistral's
 * `[TOOL_CALLS]`, or JSON with an `arguments` / `parameters` key. Text without one has none.
 */
const CALL_MARKS = /<tool_call>|\[TOOL_CALLS\]|"(?:arguments|parameters)"\s*:/;

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

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
