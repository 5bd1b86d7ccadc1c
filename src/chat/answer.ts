// Answering a user message, the path send, regenerate and resend share: the message stored (when
// new), the turn's start in one engine call (index it, read the conversation, the outline and
// auto-recall), then rounds: the prompt within budget, the model's reply, and either the answer
// stored or its tool calls run and sent back, up to MAX_TOOL_ROUNDS. A stop or a failure keeps
// what was shown (docs/design.md, "One chat turn").
import { asLlmError, isToolsUnsupported } from '../llm/errors';
import { describeTools } from '../llm/prompted-tools';
import { LlmError, type ChatMessage, type LlmErrorCode, type ServerInfo } from '../llm/types';
import { withoutThinking } from '../llm/thinking';
import { beforeToolCall } from '../llm/token-filter';
import { visibleMessages } from '../memory/replies';
import type { Message, TurnContext } from '../memory/types';
import { assemblePrompt } from './context';
import { generate, type Reply } from './generate';
import { historyIds, injectedBefore, toChatMessages } from './history';
import { MEMORY_INSTRUCTIONS } from './instructions';
import { noteRecalled, recallRequest } from './recall';
import { toolRound } from './tool-round';
import { isStop, store, type Turn } from './turn';
import type { TurnResult } from './types';

export const MAX_TOOL_ROUNDS = 8;

/** What a turn answers: new text (stored first), or a stored message (`index`: index it again). */
export interface TurnStart {
  text: string;
  userId?: number;
  index?: boolean;
}

/**
 * Answers `start`. The result also names the user message and the last reply stored, and says
 * whether memory was written: what a step after the exchange needs to know of it.
 */
export async function answer(turn: Turn, start: TurnStart): Promise<TurnResult> {
  const result = await runRounds(turn, start);
  return {
    ...result,
    ...(turn.userId !== undefined ? { userId: turn.userId } : {}),
    ...(turn.replyId !== undefined ? { replyId: turn.replyId } : {}),
    wrote: turn.wrote,
  };
}

async function runRounds(turn: Turn, start: TurnStart): Promise<TurnResult> {
  const { ctx } = turn;
  let rounds = 0;
  // An edited message (resend) is indexed while the server is asked for, not after: the edit
  // dropped its old sentences, and a server that does not answer must not leave it unfound.
  const early = start.userId !== undefined && start.index ? open(turn, start) : undefined;
  early?.catch(() => undefined); // awaited below, unless the server fails first
  try {
    const s = await turn.step(ctx.server(turn.signal));
    const ready = await (early ?? open(turn, start));
    let read: Message[] | undefined = ready.messages;
    for (;;) {
      turn.streamed = '';
      const mode = await turn.step(ctx.toolMode());
      // The first round's history came with the turn's start; later rounds read it again.
      const stored = read ?? (await turn.step(ctx.memory.getMessages(turn.conversationId)));
      read = undefined;
      const prompt = roundPrompt(turn, s, mode, stored, ready);
      turn.emit({ type: 'thinking', round: rounds + 1 });
      const reply = await generateOrSwitch(turn, s, mode, prompt);
      // Switched to prompted tools (the server refused native ones): the round goes again.
      if (!reply) continue;
      if (reply.result.aborted) return keepStopped(turn, reply.visible, rounds);
      if (!reply.calls.length) return storeAnswer(turn, reply, rounds);
      if (rounds >= MAX_TOOL_ROUNDS) return stopAtRoundLimit(turn, reply.visible, rounds);
      rounds++;
      if ((await toolRound(turn, reply, mode, rounds)) === 'stopped') {
        return { status: 'aborted', text: reply.visible, rounds };
      }
    }
  } catch (e) {
    // The edit's indexing is done before the turn ends, answered or not.
    await early?.catch(() => undefined);
    return endEarly(turn, e, rounds);
  }
}

/**
 * The turn's start: new text is stored on its own first, so it shows at once while it is
 * indexed; then one call for the rest. A stop ends the wait, not the indexing.
 */
async function open(turn: Turn, start: TurnStart): Promise<TurnContext> {
  const { text } = start;
  let index = start.index;
  turn.userId = start.userId;
  if (turn.userId === undefined) {
    turn.userId = await storeQuestion(turn, text);
    index = true;
  }
  return turn.step(
    turn.ctx.memory.prepareTurn({
      conversationId: turn.conversationId,
      ...(index && turn.userId !== undefined && text.trim()
        ? { index: { turnId: turn.userId, text } }
        : {}),
      ...recallRequest(turn.ctx.settings, text, turn.conversationId, turn.userId),
      outlineDepth: 2,
    }),
  );
}

/** The person's message could not be stored: the turn ends before the model is asked. */
class NotStored extends LlmError {}

/**
 * New text stored as the user message. When it cannot be (storage full), the turn ends before
 * the model is asked, which would answer a history without it; the words are not lost: nothing
 * was stored, so the chat panel gives them back to the composer.
 */
async function storeQuestion(turn: Turn, text: string): Promise<number> {
  const r = await turn.ctx.memory.addMessage({
    conversationId: turn.conversationId,
    role: 'user',
    text,
  });
  if (r.status !== 'SUCCESS') {
    throw new NotStored(
      'BAD_REQUEST',
      `Your message could not be stored, so it was not sent to the model: ${r.message}`,
    );
  }
  turn.emit({ type: 'message', id: r.id, role: 'user' });
  return r.id;
}

/**
 * One round's prompt within the budget. Tool descriptions cost context too: in prompted mode they
 * join the instructions (and are budgeted there); native tool schemas are added to the reserve.
 */
function roundPrompt(
  turn: Turn,
  s: ServerInfo,
  mode: 'native' | 'prompted',
  stored: readonly Message[],
  ready: TurnContext,
): ChatMessage[] {
  const { settings, specs, nativeToolTokens, countTokens } = turn.ctx;
  const history = visibleMessages(stored, turn.alt);
  const prompt = assemblePrompt({
    persona: settings.persona,
    ...(mode === 'prompted'
      ? { instructions: `${MEMORY_INSTRUCTIONS}\n\n${describeTools(specs)}` }
      : {}),
    outline: ready.outline,
    recall: ready.recall,
    injected: injectedBefore(history, turn.userId),
    history: toChatMessages(history),
    historyIds: historyIds(history),
    budget: {
      contextSize: s.contextSize,
      maxOutput: settings.maxOutputTokens,
      reserve: settings.reserve + (mode === 'native' ? nativeToolTokens : 0),
    },
    countTokens,
  });
  noteRecalled(turn.recalled, prompt);
  if (prompt.truncated.includes('userMessage') && !turn.toldCut) {
    turn.toldCut = true;
    turn.emit({ type: 'notice', message: cutMessage(s.contextSize) });
  }
  if (!prompt.messages.length) {
    // Native tool schemas are sent beside the prompt and take their room too: named when they do.
    const tools =
      mode === 'native' && nativeToolTokens > 0
        ? ` and the memory tools' descriptions (about ${nativeToolTokens} tokens)`
        : '';
    throw new LlmError(
      'CONTEXT_OVERFLOW',
      `The context size (${s.contextSize} tokens) leaves no room for a prompt after ${settings.maxOutputTokens} output tokens${tools}. Lower "Max output tokens" or raise the context size in Settings.`,
    );
  }
  return prompt.messages;
}

/**
 * The round's model call. Undefined when the server refused native tools and the turn switched
 * to prompted ones for good (for this server and model): the round goes again.
 */
async function generateOrSwitch(
  turn: Turn,
  s: ServerInfo,
  mode: 'native' | 'prompted',
  messages: ChatMessage[],
): Promise<Reply | undefined> {
  try {
    return await turn.step(generate(turn, s, mode, messages));
  } catch (e) {
    if (!isToolsUnsupported(e) || mode !== 'native' || turn.ctx.settings.toolMode !== 'auto') {
      throw e;
    }
    await turn.step(turn.ctx.learnPrompted(s));
    turn.emit({
      type: 'notice',
      message: `${s.model || 'This model'} on ${s.kind} does not take native tool calls, so memory tools are now described in the prompt instead (remembered for this server and model).`,
    });
    return undefined;
  }
}

/** A reply without calls ends the turn. */
async function storeAnswer(turn: Turn, reply: Reply, rounds: number): Promise<TurnResult> {
  const { result, visible, parseError } = reply;
  const cutShort = result.finishReason === 'length';
  // Thinking that ended with no answer after it is no reply either (cut short, it is kept below).
  const thoughtOnly = !cutShort && !withoutThinking(visible).trim();
  if ((!visible.trim() || thoughtOnly) && !parseError) {
    // No words at all: said where the reply would be, and the question stays open to be answered
    // again, instead of an empty reply nobody sees. A model that spent every output token before
    // writing any (a reasoning model's thinking is not the answer) needs more of them instead.
    const said = cutShort ? noRoomToAnswer(turn.ctx.settings.maxOutputTokens) : EMPTY_REPLY;
    await store(turn, { role: 'assistant', text: '', meta: { notice: said } }, false);
    turn.emit({ type: 'notice', message: said });
    return { status: 'answered', text: '', rounds };
  }
  const cut = cutShort ? { meta: { cut: 'length' } } : {};
  await store(turn, { role: 'assistant', text: visible, ...cut }, true);
  if (!parseError && cut.meta && !withoutThinking(visible).trim()) {
    // Thinking alone, out of tokens: kept (shown, marked cut), and no answer yet, said so.
    const said = noRoomToAnswer(turn.ctx.settings.maxOutputTokens);
    await store(turn, { role: 'assistant', text: '', meta: { notice: said } }, false);
    turn.emit({ type: 'notice', message: said });
    return { status: 'answered', text: visible, rounds };
  }
  if (!parseError) return { status: 'answered', text: visible, rounds };
  // Not a silent drop: the answer stands, and the user is told what was not done.
  await store(turn, { role: 'assistant', text: '', meta: { notice: parseError.message } }, false);
  turn.emit({ type: 'notice', message: parseError.message });
  return { status: 'answered', text: visible, rounds, error: parseError };
}

/** Failures that mean the server is out of reach (or locked), not that this turn went wrong. */
const UNREACHABLE: ReadonlySet<LlmErrorCode> = new Set(['SERVER_DOWN', 'CORS', 'UNAUTHORIZED']);

/** Said when the person's message did not fit the context whole (its middle left out). */
export function cutMessage(contextSize: number): string {
  return `Your message is longer than the model's context (${contextSize} tokens) leaves room for, so its middle was left out of what the model read. Raise the context size (in the server and in Settings), or send the message in parts.`;
}

/** What a reply without words says in the chat. */
export const EMPTY_REPLY =
  'The model answered with nothing. Try again (Answer again, or Regenerate), or rephrase your message.';

/** Said when the model used every output token before writing a word of its answer. */
export function noRoomToAnswer(maxOutputTokens: number): string {
  return `The model used all ${maxOutputTokens} output tokens before writing any answer (a reasoning model thinks first): raise "Max output tokens" in Settings, then try again.`;
}

/** The stream was stopped: what it brought is kept, marked stopped. */
async function keepStopped(turn: Turn, said: string, rounds: number): Promise<TurnResult> {
  const visible = beforeToolCall(said).trimEnd();
  turn.keptPartial = true;
  await store(turn, { role: 'assistant', text: visible, meta: { aborted: true } }, true);
  return { status: 'aborted', text: visible, rounds };
}

async function stopAtRoundLimit(turn: Turn, visible: string, rounds: number): Promise<TurnResult> {
  const message = `The model kept calling memory tools (${MAX_TOOL_ROUNDS} rounds) without answering, so this turn was stopped. Ask again, or rephrase the request.`;
  await store(turn, { role: 'assistant', text: visible, meta: { notice: 'round-limit' } }, false);
  turn.emit({ type: 'notice', message });
  return { status: 'round-limit', text: message, rounds };
}

/** Stopped or failed mid-step: what was shown of this round is kept, marked so. */
async function endEarly(turn: Turn, e: unknown, rounds: number): Promise<TurnResult> {
  if (isStop(turn, e)) {
    const partial = beforeToolCall(turn.streamed).trim();
    if (partial && !turn.keptPartial) {
      await store(turn, { role: 'assistant', text: partial, meta: { aborted: true } }, true);
    }
    return { status: 'aborted', text: turn.keptPartial ? '' : partial, rounds };
  }
  const error = asLlmError(e);
  const partial = beforeToolCall(error.detail.partial ?? '').trimEnd();
  if (partial.trim()) {
    await store(turn, { role: 'assistant', text: partial, meta: { error: error.code } }, true);
  }
  turn.emit({ type: 'notice', message: error.message });
  if (UNREACHABLE.has(error.code)) turn.emit({ type: 'unreachable', message: error.message });
  // Not the model's failure: it was never asked (the chat says "Not sent.").
  if (e instanceof NotStored) return { status: 'error', text: '', rounds, error, notSent: true };
  return { status: 'error', text: partial, rounds, error };
}
