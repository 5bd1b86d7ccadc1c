// One chat turn, headless: store and index the user message, assemble the prompt within budget,
// stream from the model, run its memory tool calls (up to 8 rounds), store and index the answer.
// Tool calls go native (OpenAI `tools`) or prompted (`<tool_call>` text), chosen per server.
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

export function createChatSession(options: ChatSessionOptions): ChatSession {
  const { memory, connector } = options;
  const settings: ChatSettings = { ...DEFAULT_CHAT_SETTINGS, ...options.settings };
  const sessionEmit = options.onEvent ?? (() => undefined);
  let turnEmit: ((event: SessionEvent) => void) | undefined;
  const emit = (event: SessionEvent) => {
    sessionEmit(event);
    turnEmit?.(event);
  };
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

  async function store(
    msg: Parameters<MemoryApi['addMessage']>[0],
    index: boolean,
  ): Promise<number | undefined> {
    const r = await memory.addMessage(msg);
    if (r.status !== 'SUCCESS') {
      emit({ type: 'notice', message: `Could not store a message: ${r.message}` });
      return undefined;
    }
    emit({ type: 'message', id: r.id, role: msg.role });
    if (index && msg.text.trim()) {
      await memory.recordTurn({
        conversationId: msg.conversationId,
        role: msg.role,
        text: msg.text,
        turnId: r.id,
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
    turnEmit = onEvent;
    try {
      return await runTurn(conversationId, text, signal);
    } finally {
      turnEmit = undefined;
    }
  }

  async function runTurn(
    conversationId: number,
    text: string,
    signal?: AbortSignal,
  ): Promise<TurnResult> {
    let rounds = 0;
    try {
      const s = await server(signal);
      const userId = await store({ conversationId, role: 'user', text }, true);
      const recall = settings.autoRecall ? await recallFor(text) : [];
      const outline = await memory.memoryOutline(2);

      for (;;) {
        const mode = await toolMode();
        const history = await memory.getMessages(conversationId);
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
        try {
          ({ result, calls, visible } = await generate(s, mode, prompt.messages, signal));
        } catch (e) {
          if (
            e instanceof LlmError &&
            e.code === 'TOOLS_UNSUPPORTED' &&
            mode === 'native' &&
            settings.toolMode === 'auto'
          ) {
            await toolModes.set(modeKey(s), 'prompted');
            emit({
              type: 'notice',
              message: `${s.model || 'This model'} on ${s.kind} does not take native tool calls, so memory tools are now described in the prompt instead (remembered for this server and model).`,
            });
            continue;
          }
          throw e;
        }

        if (result.aborted) {
          await store(
            { conversationId, role: 'assistant', text: visible, meta: { aborted: true } },
            true,
          );
          return { status: 'aborted', text: visible, rounds };
        }
        if (!calls.length) {
          await store({ conversationId, role: 'assistant', text: visible }, true);
          return { status: 'answered', text: visible, rounds };
        }
        if (rounds >= MAX_TOOL_ROUNDS) {
          const message = `The model kept calling memory tools (${MAX_TOOL_ROUNDS} rounds) without answering, so this turn was stopped. Ask again, or rephrase the request.`;
          await store(
            { conversationId, role: 'assistant', text: visible, meta: { notice: 'round-limit' } },
            false,
          );
          emit({ type: 'notice', message });
          return { status: 'round-limit', text: message, rounds };
        }
        rounds++;
        const outcomes: ToolOutcome[] = [];
        for (const call of calls) {
          emit({
            type: 'tool-call',
            round: rounds,
            id: call.id,
            name: call.function.name,
            args: safeParse(call.function.arguments),
          });
          const outcome = await runToolCall(call, tools, memory, settings, validators);
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
        const records: ToolCallRecord[] = calls.map((c, i) => ({
          id: c.id,
          name: c.function.name,
          arguments: outcomes[i].args,
          result: outcomes[i].result,
        }));
        await store(
          { conversationId, role: 'assistant', text: visible, toolCalls: records, meta: { mode } },
          !!visible.trim(),
        );
        for (let i = 0; i < calls.length; i++) {
          await store(
            {
              conversationId,
              role: 'tool',
              text: JSON.stringify(outcomes[i].result),
              toolCallId: calls[i].id,
              meta: { name: calls[i].function.name },
            },
            false,
          );
        }
      }
    } catch (e) {
      if (isAbort(e) || signal?.aborted) return { status: 'aborted', text: '', rounds };
      const error =
        e instanceof LlmError
          ? e
          : new LlmError(
              'SERVER_ERROR',
              `Something went wrong: ${e instanceof Error ? e.message : String(e)}`,
            );
      const partial = error.detail.partial ?? '';
      if (partial.trim()) {
        await store(
          { conversationId, role: 'assistant', text: partial, meta: { error: error.code } },
          true,
        );
      }
      emit({ type: 'notice', message: error.message });
      return { status: 'error', text: partial, rounds, error };
    }
  }

  /** One model call in the chosen mode; prompted calls are parsed out of the text. */
  async function generate(
    s: ServerInfo,
    mode: 'native' | 'prompted',
    messages: ChatMessage[],
    signal?: AbortSignal,
  ): Promise<{ result: GenerationResult; calls: ToolCall[]; visible: string }> {
    const onToken = tokenFilter(mode, (t) => emit({ type: 'token', text: t }));
    const common = {
      maxTokens: settings.maxOutputTokens,
      temperature: settings.temperature,
      signal,
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
    const parsed = parseToolCalls(result.text);
    const known = parsed.calls.filter((c) => tools.some((t) => t.name === c.function.name));
    const textCalls = mode === 'prompted' ? parsed.calls : known;
    if (result.toolCalls.length)
      return { result, calls: result.toolCalls, visible: result.text.trim() };
    if (textCalls.length) return { result, calls: textCalls, visible: parsed.text.trim() };
    return { result, calls: [], visible: (mode === 'prompted' ? parsed.text : result.text).trim() };
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

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
