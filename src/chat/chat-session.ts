// The chat session, headless: what its turns share (settings, tools, the server and its tool
// mode) and its four kinds of turn. Send, regenerate (another alternative of the last reply) and
// edit-and-resend answer a user message (answer.ts: up to 8 rounds of memory tool calls);
// continue appends to the last reply (continue.ts); docs/chat.md has the controls.
// Tool calls go native (OpenAI `tools`) or prompted (`<tool_call>` text), chosen per server: one
// that refuses native tools is switched once and remembered.
// Aborting the turn's signal ends it at once from any step (detection, indexing, the stream, a
// tool call): what arrived is stored, marked stopped, and work already handed to the memory
// engine finishes there without the turn waiting for it.
import { koboldPasswordError, koboldPasswordMissing } from '../llm/connector';
import type { ServerInfo, ToolMode } from '../llm/types';
import { replyGroups } from '../memory/replies';
import { estimateTokens } from '../memory/text';
import { answer } from './answer';
import { continueTurn } from './continue';
import { EXTRA_TOOLS, MEMORY_TOOLS, toolSpecs } from './tools';
import { begin, refuse, type SessionContext } from './turn';
import type { ChatSession, ChatSessionOptions, ChatSettings, ToolModeMemory } from './types';

export { MAX_TOOL_ROUNDS } from './answer';
export { CONTINUE_INSTRUCTION } from './continue';
export { koboldPrompt, whyUnreadable } from './generate';
export { argumentsJson, toChatMessages } from './history';
export type {
  ChatSession,
  ChatSessionOptions,
  ChatSettings,
  SessionEvent,
  ToolModeMemory,
  TurnResult,
} from './types';
/** Kept exported from here for callers of the chat session; it lives with the connector. */
export { tokenFilter } from '../llm/token-filter';

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

export function createChatSession(options: ChatSessionOptions): ChatSession {
  const { memory, connector } = options;
  const settings: ChatSettings = { ...DEFAULT_CHAT_SETTINGS, ...options.settings };
  const wrap = options.wrapCallback ?? (<F>(fn: F) => fn);
  const countTokens = options.countTokens ?? estimateTokens;
  const remembered = new Map<string, ToolMode>();
  const toolModes: ToolModeMemory = options.toolModes ?? {
    get: (k) => remembered.get(k),
    set: (k, v) => void remembered.set(k, v),
  };
  const tools = settings.extraTools ? [...MEMORY_TOOLS, ...EXTRA_TOOLS] : MEMORY_TOOLS;
  const specs = toolSpecs(tools);
  let info: Promise<ServerInfo> | undefined;

  function server(signal?: AbortSignal): Promise<ServerInfo> {
    info ??= connector.detect(signal).then((i) => {
      // KoboldCPP answers detection without its password, then refuses every generation: said
      // now (the status line, and a send before any request), not after the first message fails.
      if (koboldPasswordMissing(i)) throw koboldPasswordError(i);
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

  async function learnPrompted(s: ServerInfo): Promise<void> {
    await toolModes.set(modeKey(s), 'prompted');
    learned.set(modeKey(s), Promise.resolve('prompted'));
  }

  const ctx: SessionContext = {
    memory,
    connector,
    settings,
    countTokens,
    tools,
    specs,
    validators: new Map(),
    nativeToolTokens: countTokens(JSON.stringify(specs)),
    emit: (e) => {
      // A server that went away may come back as another model (restarted with other weights,
      // another context size): the next turn, or the status, detects it afresh.
      if (e.type === 'unreachable') info = undefined;
      options.onEvent?.(e);
    },
    server,
    toolMode,
    learnPrompted,
  };

  return {
    server,
    toolMode,
    send: (conversationId, text, signal, onEvent) =>
      begin(ctx, conversationId, signal, onEvent, (turn) => answer(turn, { text })),

    regenerate: (conversationId, signal, onEvent) =>
      begin(ctx, conversationId, signal, onEvent, async (turn) => {
        const last = replyGroups(await memory.getMessages(conversationId)).at(-1);
        const user = last?.user;
        if (!last || !user) return refuse(turn, 'There is no message of yours to answer again.');
        if (last.alternatives.length) {
          turn.alt = Math.max(...last.alternatives) + 1;
          turn.emit({ type: 'alternative', userId: user.id!, alt: turn.alt });
        }
        return answer(turn, { text: user.text, userId: user.id });
      }),

    resend: (conversationId, messageId, text, signal, onEvent) =>
      begin(ctx, conversationId, signal, onEvent, async (turn) => {
        const words = typeof text === 'string' ? text.trim() : '';
        const r = await memory.editUserMessage(messageId, words);
        if (r.status !== 'SUCCESS') {
          return refuse(turn, `The message could not be changed: ${r.message}`);
        }
        turn.emit({ type: 'message', id: messageId, role: 'user' });
        return answer(turn, { text: words, userId: messageId, index: true });
      }),

    continueReply: (conversationId, messageId, signal, onEvent) =>
      begin(ctx, conversationId, signal, onEvent, (turn) => continueTurn(turn, messageId)),
  };
}
