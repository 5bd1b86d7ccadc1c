// One chat turn, headless: store and index the user message, assemble the prompt within budget,
// stream from the model, run its memory tool calls (up to 8 rounds), store and index the answer.
// Tool calls go native (OpenAI `tools`) or prompted (`<tool_call>` text), chosen per server.
// A call the model wrote but that cannot be read gets an error result, so it can try again.
// Besides a new message: regenerate the last reply (another alternative of it), edit and resend
// a user message, continue the last reply (docs/chat.md).
// Aborting the turn's signal ends it at once from any step (detection, indexing, the stream, a
// tool call): what arrived is stored, marked stopped, and work already handed to the memory
// engine finishes there without the turn waiting for it.
import type { Validator } from '@cfworker/json-schema';
import type { Connector } from '../llm/connector';
import { asLlmError, isAbortError, isToolsUnsupported } from '../llm/errors';
import {
  describeTools,
  parseToolCalls,
  PROMPTED_STOP,
  toPromptedMessages,
} from '../llm/prompted-tools';
import { makeCallId } from '../llm/tool-calls';
import { tokenFilter } from '../llm/token-filter';
import {
  LlmError,
  type ChatMessage,
  type GenerationResult,
  type ServerInfo,
  type ToolCall,
  type ToolMode,
} from '../llm/types';
import { replyGroups, visibleMessages } from '../memory/replies';
import type { MemoryApi, Message, ToolCallRecord } from '../memory/types';
import { MAX_RECALL, assemblePrompt, type InjectedMemory } from './context';
import { MEMORY_INSTRUCTIONS } from './instructions';
import {
  EXTRA_TOOLS,
  MEMORY_TOOLS,
  runToolCall,
  toolSpecs,
  type MemoryTool,
  type ToolOutcome,
} from './tools';
import { estimateTokens } from '../memory/text';

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
  /** A message was stored (or, continuing a reply, updated). */
  | { type: 'message'; id: number; role: Message['role'] }
  /** A regeneration starts: its reply to `userId` is alternative `alt`. */
  | { type: 'alternative'; userId: number; alt: number };

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

/** Said to servers that cannot continue an assistant message from its text (docs/chat.md). */
export const CONTINUE_INSTRUCTION =
  'Continue your last reply exactly where it stopped. Do not repeat any of it and do not comment; write only what comes next.';

/** One turn in progress: its signal, its listeners, and the text shown so far this round. */
interface Turn {
  conversationId: number;
  signal?: AbortSignal;
  emit(event: SessionEvent): void;
  /** The tokens shown in this round (what a stop keeps). */
  streamed: string;
  /** A regeneration's alternative: every reply message it stores carries it. */
  alt?: number;
  /** Paths auto-recall put into this turn's prompts (stored with its assistant messages). */
  recalled: Set<string>;
}

type NewMessage = Omit<Parameters<MemoryApi['addMessage']>[0], 'conversationId'>;

export function createChatSession(options: ChatSessionOptions): ChatSession {
  const { memory, connector } = options;
  const settings: ChatSettings = { ...DEFAULT_CHAT_SETTINGS, ...options.settings };
  const sessionEmit = options.onEvent ?? (() => undefined);
  const wrap = options.wrapCallback ?? (<F>(fn: F) => fn);
  const countTokens = options.countTokens ?? estimateTokens;
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
  // The learned mode per server and model, read once per session (the page keeps it in the
  // memory database's settings): a turn's rounds then ask the worker nothing for it.
  const learned = new Map<string, Promise<ToolMode | undefined>>();

  async function toolMode(): Promise<'native' | 'prompted'> {
    if (settings.toolMode !== 'auto') return settings.toolMode;
    const key = modeKey(await server());
    let mode = learned.get(key);
    if (!mode) {
      mode = Promise.resolve(toolModes.get(key));
      learned.set(key, mode);
      mode.catch(() => learned.delete(key));
    }
    return (await mode) === 'prompted' ? 'prompted' : 'native';
  }

  /** Remembers that `s` needs prompted tools, for this session and in `toolModes`. */
  async function learnPrompted(s: ServerInfo): Promise<void> {
    await toolModes.set(modeKey(s), 'prompted');
    learned.set(modeKey(s), Promise.resolve('prompted'));
  }

  /** A message as this turn stores it: with its alternative and what auto-recall added. */
  function withTurnMeta(turn: Turn, msg: NewMessage): NewMessage {
    if (msg.role === 'user') return msg;
    const meta: Record<string, unknown> = { ...msg.meta };
    if (turn.alt !== undefined) meta.alt = turn.alt;
    if (msg.role === 'assistant' && turn.recalled.size) meta.recalled = [...turn.recalled];
    return Object.keys(meta).length ? { ...msg, meta } : msg;
  }

  /**
   * Stores messages in one write, all or none (always: a stop does not lose them) and, with
   * `index`, waits for the first to be indexed, unless the turn is stopped: then the engine
   * finishes indexing on its own. Undefined when they could not be stored (the user is told).
   */
  async function storeAll(
    turn: Turn,
    msgs: NewMessage[],
    index: boolean,
  ): Promise<number[] | undefined> {
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
    ids.forEach((id, i) => turn.emit({ type: 'message', id, role: rows[i].role }));
    if (index && rows[0].text.trim()) await indexTurn(turn, rows[0].role, rows[0].text, ids[0]);
    return ids;
  }

  async function store(turn: Turn, msg: NewMessage, index: boolean): Promise<number | undefined> {
    return (await storeAll(turn, [msg], index))?.[0];
  }

  /** Indexes a stored message; a stop ends the wait, not the indexing; a failure fails the turn. */
  async function indexTurn(
    turn: Turn,
    role: Message['role'],
    text: string,
    turnId: number,
  ): Promise<void> {
    const indexed = memory.recordTurn({ conversationId: turn.conversationId, role, text, turnId });
    await unlessAborted(indexed, turn.signal).catch((e: unknown) => {
      if (!isAbortError(e)) throw e;
    });
  }

  /** Runs `body` as one turn: its listener hears this turn only, and nothing once it has returned. */
  async function begin(
    conversationId: number,
    signal: AbortSignal | undefined,
    onEvent: ((event: SessionEvent) => void) | undefined,
    body: (turn: Turn) => Promise<TurnResult>,
  ): Promise<TurnResult> {
    // Work left to finish after a stop may still report to the session's listener.
    let open = true;
    const turn: Turn = {
      conversationId,
      signal,
      streamed: '',
      recalled: new Set(),
      emit(event) {
        sessionEmit(event);
        if (open) onEvent?.(event);
      },
    };
    try {
      return await body(turn);
    } finally {
      open = false;
    }
  }

  function send(
    conversationId: number,
    text: string,
    signal?: AbortSignal,
    onEvent?: (event: SessionEvent) => void,
  ): Promise<TurnResult> {
    return begin(conversationId, signal, onEvent, (turn) => runTurn(turn, { text }));
  }

  function regenerate(
    conversationId: number,
    signal?: AbortSignal,
    onEvent?: (event: SessionEvent) => void,
  ): Promise<TurnResult> {
    return begin(conversationId, signal, onEvent, async (turn) => {
      const last = replyGroups(await memory.getMessages(conversationId)).at(-1);
      const user = last?.user;
      if (!last || !user) return refuse(turn, 'There is no message of yours to answer again.');
      if (last.alternatives.length) {
        turn.alt = Math.max(...last.alternatives) + 1;
        turn.emit({ type: 'alternative', userId: user.id!, alt: turn.alt });
      }
      return runTurn(turn, { text: user.text, userId: user.id });
    });
  }

  function resend(
    conversationId: number,
    messageId: number,
    text: string,
    signal?: AbortSignal,
    onEvent?: (event: SessionEvent) => void,
  ): Promise<TurnResult> {
    return begin(conversationId, signal, onEvent, async (turn) => {
      const words = typeof text === 'string' ? text.trim() : '';
      const r = await memory.editUserMessage(messageId, words);
      if (r.status !== 'SUCCESS')
        return refuse(turn, `The message could not be changed: ${r.message}`);
      turn.emit({ type: 'message', id: messageId, role: 'user' });
      return runTurn(turn, { text: words, userId: messageId, index: true });
    });
  }

  /** A turn that cannot start: said in a notice, nothing stored. */
  function refuse(turn: Turn, message: string): TurnResult {
    turn.emit({ type: 'notice', message });
    return { status: 'error', text: '', rounds: 0, error: new LlmError('BAD_REQUEST', message) };
  }

  /**
   * The turn loop. Without `userId` the user's `text` is stored first; with it, that stored
   * message is answered (indexed again first with `index`).
   */
  async function runTurn(
    turn: Turn,
    start: { text: string; userId?: number; index?: boolean },
  ): Promise<TurnResult> {
    const { conversationId, signal } = turn;
    const text = start.text;
    const emit = turn.emit;
    /** Waits for `p`, or throws an AbortError as soon as the turn is stopped. */
    const step = <T>(p: Promise<T> | T): Promise<T> => unlessAborted(Promise.resolve(p), signal);
    let rounds = 0;
    let storedPartial = false;
    try {
      const s = await step(server(signal));
      let userId = start.userId;
      let index = start.index;
      if (userId === undefined) {
        // Stored on its own first, so it shows at once while it is indexed.
        userId = await store(turn, { role: 'user', text }, false);
        index = true;
      }
      // One call for the rest: index the message, read the conversation, outline and recall.
      // A stop ends the wait, not the indexing.
      const ready = await step(
        memory.prepareTurn({
          conversationId,
          ...(index && userId !== undefined && text.trim()
            ? { index: { turnId: userId, text } }
            : {}),
          ...(settings.autoRecall ? { recall: { query: text, limit: MAX_RECALL } } : {}),
          outlineDepth: 2,
        }),
      );
      const { outline, recall } = ready;
      let read: Message[] | undefined = ready.messages;

      for (;;) {
        turn.streamed = '';
        const mode = await step(toolMode());
        // The first round's history came with the turn's start; later rounds read it again.
        const stored = read ?? (await step(memory.getMessages(conversationId)));
        read = undefined;
        const history = visibleMessages(stored, turn.alt);
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
        for (const path of prompt.recalled) turn.recalled.add(path);
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
        let unreadable: Map<string, string>;
        try {
          ({ result, calls, visible, parseError, unreadable } = await step(
            generate(turn, s, mode, prompt.messages),
          ));
        } catch (e) {
          if (isToolsUnsupported(e) && mode === 'native' && settings.toolMode === 'auto') {
            await step(learnPrompted(s));
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
          const cut = result.finishReason === 'length' ? { meta: { cut: 'length' } } : {};
          await store(turn, { role: 'assistant', text: visible, ...cut }, true);
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
            const why = unreadable.get(call.id);
            const outcome =
              why !== undefined
                ? unreadableOutcome(call, why, mode)
                : await step(runToolCall(call, tools, memory, settings, validators));
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
          if (!isAbortError(e) && !signal?.aborted) throw e;
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
      if (isAbortError(e) || signal?.aborted) {
        // Stopped mid-step: what was shown of this round is kept, marked stopped.
        const partial = turn.streamed.trim();
        if (partial && !storedPartial) {
          await store(turn, { role: 'assistant', text: partial, meta: { aborted: true } }, true);
        }
        return { status: 'aborted', text: storedPartial ? '' : partial, rounds };
      }
      const error = asLlmError(e);
      const partial = error.detail.partial ?? '';
      if (partial.trim()) {
        await store(turn, { role: 'assistant', text: partial, meta: { error: error.code } }, true);
      }
      emit({ type: 'notice', message: error.message });
      return { status: 'error', text: partial, rounds, error };
    }
  }

  /**
   * A round with tool calls: the assistant message with its calls and one message per result,
   * in one write, so a result is never stored without the call it answers.
   */
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
    await storeAll(
      turn,
      [
        { role: 'assistant', text: visible, toolCalls: records, meta },
        ...calls.map((call, i) => ({
          role: 'tool' as const,
          text: JSON.stringify(outcomes[i].result),
          toolCallId: call.id,
          meta: { name: call.function.name },
        })),
      ],
      !!visible.trim(),
    );
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
    /** Calls that could not be read (among `calls`), by id: why not. */
    unreadable: Map<string, string>;
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
    const unreadable = new Map<string, string>();
    if (result.aborted) return { result, calls: [], visible: result.text, unreadable };
    // Either way, take calls in whichever form the model produced them: some models write
    // <tool_call> text even when native tools were offered, and some servers parse text calls
    // into native ones even when none were offered.
    // Only text with a call's marks is searched: a long plain answer costs no parse (and a reply
    // too long to search is reported only when it may have held a call).
    const parsed = CALL_MARKS.test(result.text)
      ? parseToolCalls(result.text)
      : { calls: [], text: result.text.trim(), invalid: [], error: undefined };
    const known = parsed.calls.filter((c) => tools.some((t) => t.name === c.function.name));
    const textCalls = mode === 'prompted' ? parsed.calls : known;
    if (result.toolCalls.length)
      return { result, calls: result.toolCalls, visible: result.text.trim(), unreadable };
    // A block marked as a call (`<tool_call>`, `[TOOL_CALLS]`) that cannot be read goes back to
    // the model as a failed call, so it can write it again.
    const broken = parsed.invalid.map((body) => {
      const call: ToolCall = {
        id: makeCallId(),
        type: 'function',
        function: { name: calledName(body), arguments: body },
      };
      unreadable.set(call.id, whyUnreadable(body));
      return call;
    });
    if (textCalls.length || broken.length) {
      return { result, calls: [...textCalls, ...broken], visible: parsed.text.trim(), unreadable };
    }
    // The text shows a call but was not searched (too long): say so.
    return {
      result,
      calls: [],
      visible: (mode === 'prompted' ? parsed.text : result.text).trim(),
      unreadable,
      ...(parsed.error ? { parseError: parsed.error } : {}),
    };
  }

  function continueReply(
    conversationId: number,
    messageId: number,
    signal?: AbortSignal,
    onEvent?: (event: SessionEvent) => void,
  ): Promise<TurnResult> {
    return begin(conversationId, signal, onEvent, (turn) => runContinue(turn, messageId));
  }

  /** Continue: the reply so far as the assistant's start where the server takes one (docs/chat.md). */
  async function runContinue(turn: Turn, messageId: number): Promise<TurnResult> {
    const { conversationId, signal } = turn;
    const step = <T>(p: Promise<T> | T): Promise<T> => unlessAborted(Promise.resolve(p), signal);
    let base = '';
    let joiner = '';
    let target: Message | undefined;
    try {
      const s = await step(server(signal));
      const { messages: stored, outline } = await step(
        memory.prepareTurn({ conversationId, outlineDepth: 2 }),
      );
      const shown = visibleMessages(stored);
      target = shown.at(-1);
      if (
        !target ||
        target.id !== messageId ||
        target.role !== 'assistant' ||
        target.toolCalls?.length ||
        !target.text.trim()
      ) {
        return refuse(turn, 'Only the last reply, with words in it, can be continued.');
      }
      base = target.text;
      const prompt = assemblePrompt({
        persona: settings.persona,
        outline,
        recall: [],
        injected: injectedBefore(shown, undefined),
        history: toChatMessages(shown),
        budget: {
          contextSize: s.contextSize,
          maxOutput: settings.maxOutputTokens,
          reserve: settings.reserve + countTokens(CONTINUE_INSTRUCTION) + 8,
        },
        countTokens,
      });
      const messages = toPromptedMessages(prompt.messages);
      const last = messages.at(-1);
      if (last?.role !== 'assistant') {
        throw new LlmError(
          'CONTEXT_OVERFLOW',
          `The reply is too long to continue within the context size (${s.contextSize} tokens). Lower "Max output tokens" or raise the context size in Settings.`,
        );
      }
      // Servers that continue a prompt from the reply's own text: it goes on mid-word if need be.
      // Others are asked to, and their words start a new one.
      const prefix = s.kind === 'koboldcpp' || s.kind === 'llamacpp';
      const onToken = tokenFilter('prompted', (t) => {
        if (!turn.streamed && !prefix && !/\s$/.test(base) && /^[\p{L}\p{N}(]/u.test(t)) {
          joiner = ' ';
        }
        const piece = turn.streamed ? t : joiner + t;
        turn.streamed += t;
        turn.emit({ type: 'token', text: piece });
      });
      const common = {
        maxTokens: settings.maxOutputTokens,
        temperature: settings.temperature,
        signal,
        onToken,
      };
      turn.emit({ type: 'thinking', round: 1 });
      const result =
        s.kind === 'koboldcpp'
          ? await connector.generate({
              ...common,
              prompt: koboldPrompt(messages.slice(0, -1)) + base,
              stop: ['{{[INPUT]}}'],
            })
          : await connector.chat({
              ...common,
              messages:
                s.kind === 'llamacpp'
                  ? messages
                  : [...messages, { role: 'user', content: CONTINUE_INSTRUCTION }],
            });
      let more = result.text;
      if (!result.aborted && CALL_MARKS.test(more)) more = parseToolCalls(more).text;
      const meta: Record<string, unknown> = { ...target.meta };
      delete meta.aborted;
      delete meta.error;
      delete meta.cut;
      if (result.aborted) meta.aborted = true;
      else if (result.finishReason === 'length') meta.cut = 'length';
      const text = more.trim() ? (base + joiner + more).trimEnd() : base;
      await saveContinued(turn, target, text, meta);
      if (!result.aborted && !more.trim())
        turn.emit({ type: 'notice', message: 'The model had nothing to add.' });
      return { status: result.aborted ? 'aborted' : 'answered', text, rounds: 0 };
    } catch (e) {
      const partial = turn.streamed;
      if (isAbortError(e) || signal?.aborted) {
        if (target && partial.trim()) {
          const text = (base + joiner + partial).trimEnd();
          await saveContinued(turn, target, text, { ...target.meta, aborted: true });
          return { status: 'aborted', text, rounds: 0 };
        }
        return { status: 'aborted', text: base, rounds: 0 };
      }
      const error = asLlmError(e);
      const cutShort = error.detail.partial ?? partial;
      if (target && cutShort.trim()) {
        await saveContinued(turn, target, (base + joiner + cutShort).trimEnd(), {
          ...target.meta,
          error: error.code,
        });
      }
      turn.emit({ type: 'notice', message: error.message });
      return { status: 'error', text: cutShort, rounds: 0, error };
    }
  }

  /** The continued reply, stored over the old one, and its new text indexed. */
  async function saveContinued(
    turn: Turn,
    target: Message,
    text: string,
    meta: Record<string, unknown>,
  ): Promise<void> {
    const r = await memory.updateMessage(target.id, { text, meta });
    if (r.status !== 'SUCCESS') {
      turn.emit({ type: 'notice', message: `Could not store the continued reply: ${r.message}` });
      return;
    }
    turn.emit({ type: 'message', id: target.id!, role: 'assistant' });
    if (text !== target.text) await indexTurn(turn, 'assistant', text, target.id!);
  }

  return { server, toolMode, send, regenerate, resend, continueReply };
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
          function: { name: c.name, arguments: argumentsJson(c.arguments) },
        })),
      });
    } else {
      out.push({ role: m.role, content: m.text });
    }
  }
  return out;
}

/**
 * A stored call's arguments as the JSON text the wire wants. A call the model wrote as text that
 * is not JSON is kept as it was but sent wrapped in an object: llama-server parses the arguments
 * of every call in the history and refuses the whole request when one is not JSON
 * (docs/chat.md, "Unreadable tool calls and a round's write"), so one bad call would fail every later turn.
 */
export function argumentsJson(args: unknown): string {
  if (typeof args !== 'string') return JSON.stringify(args ?? {});
  try {
    JSON.parse(args);
    return args;
  } catch {
    return JSON.stringify({ unparsed_arguments: args });
  }
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

/** The tool an unreadable call names, if it names one; else a placeholder a server accepts. */
function calledName(body: string): string {
  const named =
    /"name"\s*:\s*"([A-Za-z_][\w.-]{0,63})"/.exec(body) ??
    /^\[TOOL_CALLS\]\s*([A-Za-z_][\w.-]{0,63})/.exec(body);
  return named?.[1] ?? 'unreadable_tool_call';
}

/** Why a block marked as a tool call could not be read, for the model. */
export function whyUnreadable(body: string): string {
  const inner = body
    .replace(/^\[TOOL_CALLS\]\s*/, '')
    .replace(/^[A-Za-z_][\w.-]*\s*(?:\[CALL_ID\]\s*[\w-]+\s*)?\[ARGS\]\s*/, '')
    .replace(/^```[\w-]*\s*|\s*```$/g, '')
    .trim();
  if (!inner) return 'it is empty';
  try {
    JSON.parse(inner);
    return 'it is not a tool name with arguments';
  } catch (e) {
    return `its JSON is not valid (${e instanceof Error ? e.message : String(e)})`;
  }
}

/** The failed result of a call that could not be read: nothing ran; the model is told why. */
function unreadableOutcome(call: ToolCall, why: string, mode: 'native' | 'prompted'): ToolOutcome {
  const how =
    mode === 'prompted'
      ? 'Write the call again as <tool_call>{"name": "<tool name>", "arguments": {…}}</tool_call> with valid JSON.'
      : 'Call the tool again with valid JSON arguments.';
  return {
    name: call.function.name,
    args: call.function.arguments,
    refused: true,
    result: {
      status: 'ERROR',
      code: 'INVALID_ARGUMENT',
      message: `Your tool call could not be read: ${why}. Nothing was run. ${how}`,
    },
  };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
