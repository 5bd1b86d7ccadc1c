// Continuing the last reply: the model is asked to go on where the reply stopped (cut by the
// length limit or by Stop), and what it writes is appended to that message, whose index
// sentences are replaced by the new text's. No tools run; the reply so far is sent the way the
// server takes it (docs/chat.md, "Continue").
import { beforeToolCall } from '../llm/token-filter';
import { asLlmError } from '../llm/errors';
import { parseToolCalls, toPromptedMessages } from '../llm/prompted-tools';
import { splitThinking, THINK_CLOSE, THINK_OPEN, thinkingReader } from '../llm/thinking';
import { LlmError, type ChatMessage, type GenerationResult, type ServerInfo } from '../llm/types';
import { visibleMessages } from '../memory/replies';
import type { Message, OutlineNode } from '../memory/types';
import { assemblePrompt, oneUserInARow, type RecallItem } from './context';
import { CALL_MARKS, callOptions, koboldPrompt, koboldText } from './generate';
import { historyIds, injectedBefore, isAside, toChatMessages } from './history';
import { noteRecalled, recallRequest, withRecalled } from './recall';
import { indexTurn, isStop, refuse, type SessionContext, type Turn } from './turn';
import type { TurnResult } from './types';

/** Said to servers that cannot continue an assistant message from its text (docs/chat.md). */
export const CONTINUE_INSTRUCTION =
  'Continue your last reply exactly where it stopped. Do not repeat any of it and do not comment; write only what comes next.';

/**
 * Whether a reply can be continued (the chat panel offers Continue on the last reply by this):
 * words, no tool calls, and read by the model. A notice is not (the round limit's keeps the words
 * said before calls that were never run): the model would be asked to go on from what it never
 * sees in its history.
 */
export function canContinue(m: Message): boolean {
  return m.role === 'assistant' && !!m.text.trim() && !m.toolCalls?.length && !isAside(m);
}

/** The reply being continued, and what goes between its text and the new words. */
interface Draft {
  target: Message;
  joiner: string;
}

export async function continueTurn(turn: Turn, messageId: number): Promise<TurnResult> {
  const { ctx } = turn;
  let draft: Draft | undefined;
  try {
    const s = await turn.step(ctx.server(turn.signal));
    const { messages: stored, outline } = await turn.step(
      ctx.memory.prepareTurn({ conversationId: turn.conversationId, outlineDepth: 2 }),
    );
    const shown = visibleMessages(stored);
    const target = shown.at(-1);
    if (!target || target.id !== messageId || !canContinue(target)) {
      return refuse(
        turn,
        target?.id === messageId && target.meta?.notice === 'round-limit'
          ? 'A reply stopped at the round limit cannot be continued: regenerate it, or ask again.'
          : 'Only the last reply, with words in it, can be continued.',
      );
    }
    draft = { target, joiner: '' };
    // Auto-recall for the question the reply answers, as its turn had: a model that never calls
    // a tool goes on from the memories it was answering from.
    const question = shown.findLast((m) => m.role === 'user');
    const recall = question
      ? await turn.step(recallFor(ctx, turn.conversationId, question.text, question.id))
      : [];
    const messages = continuePrompt(turn, s, shown, outline, recall);
    turn.emit({ type: 'thinking', round: 1 });
    const result = await streamMore(turn, s, messages, draft);
    return await saveMore(turn, draft, result);
  } catch (e) {
    return endEarly(turn, draft, e);
  }
}

/** What auto-recall finds for the question a continued reply answers (none when it is off). */
async function recallFor(
  ctx: SessionContext,
  conversationId: number,
  text: string,
  userId: number | undefined,
): Promise<RecallItem[]> {
  const { recall } = recallRequest(ctx.settings, text, conversationId, userId);
  if (!recall) return [];
  const hits = await ctx.memory.recallMemory(recall.query, recall.limit, recall.options);
  return Array.isArray(hits) ? hits : [];
}

/**
 * The conversation with the reply so far as its last (assistant) message, within the budget, and
 * the question's auto-recall as its turn had it (what goes in is noted on the turn).
 */
function continuePrompt(
  turn: Turn,
  s: ServerInfo,
  shown: readonly Message[],
  outline: OutlineNode[],
  recall: RecallItem[],
): ChatMessage[] {
  const { settings, countTokens } = turn.ctx;
  const prompt = assemblePrompt({
    persona: settings.persona,
    outline,
    recall,
    injected: injectedBefore(shown, undefined),
    history: toChatMessages(shown),
    historyIds: historyIds(shown),
    budget: {
      contextSize: s.contextSize,
      maxOutput: settings.maxOutputTokens,
      reserve: settings.reserve + countTokens(CONTINUE_INSTRUCTION) + 8,
    },
    countTokens,
  });
  noteRecalled(turn.recalled, prompt);
  const messages = oneUserInARow(toPromptedMessages(prompt.messages));
  if (messages.at(-1)?.role !== 'assistant') {
    throw new LlmError(
      'CONTEXT_OVERFLOW',
      `The reply is too long to continue within the context size (${s.contextSize} tokens). Lower "Max output tokens" or raise the context size in Settings.`,
    );
  }
  return messages;
}

/**
 * Servers that continue a prompt from the reply's own text (KoboldCPP, llama.cpp) go on mid-word
 * if need be. Others are asked to, and their words start a new one.
 */
async function streamMore(
  turn: Turn,
  s: ServerInfo,
  messages: ChatMessage[],
  draft: Draft,
): Promise<GenerationResult> {
  const { connector } = turn.ctx;
  const base = draft.target.text;
  const prefix = s.kind === 'koboldcpp' || s.kind === 'llamacpp';
  const said = (t: string) => {
    if (!turn.streamed && !prefix && !/\s$/.test(base) && /^[\p{L}\p{N}(]/u.test(t)) {
      draft.joiner = ' ';
    }
    const piece = turn.streamed ? t : draft.joiner + t;
    turn.streamed += t;
    turn.emit({ type: 'token', text: piece });
  };
  // After an answer, thinking the continuation starts with is not shown (nor kept: saveMore).
  const reader = thoughtOpen(base) ? undefined : thinkingReader();
  let thought = false;
  const common = callOptions(turn, 'prompted', (t) => {
    if (!reader) {
      // The base's thinking is open: new thinking goes on with it, without a second `<think>`
      // (a server that sends thinking apart starts the continuation's with its own token).
      const lead = turn.streamed ? t : t.trimStart();
      const on = !turn.streamed && lead.startsWith(THINK_OPEN) ? lead.slice(THINK_OPEN.length) : t;
      if (on) said(on);
      return;
    }
    const part = reader.read(t);
    thought ||= part.thought !== '';
    let answer = part.answer;
    if (thought && !turn.streamed) {
      // The words after the thinking start as a new reply's do: trimmed, a space apart.
      const trimmed = answer.trimStart();
      if (trimmed !== answer && !/\s$/.test(base)) draft.joiner = ' ';
      answer = trimmed;
    }
    if (answer) said(answer);
  });
  if (s.kind === 'koboldcpp') {
    return connector.generate({
      ...common,
      prompt: koboldPrompt(messages.slice(0, -1)) + koboldText(base),
      stop: ['{{[INPUT]}}'],
    });
  }
  return connector.chat({
    ...common,
    messages:
      s.kind === 'llamacpp'
        ? messages
        : [...messages, { role: 'user', content: CONTINUE_INSTRUCTION }],
  });
}

/** Whether `text` starts with thinking that never closes (cut off while the model thought). */
function thoughtOpen(text: string): boolean {
  return /^\s*<think>/.test(text) && !text.includes(THINK_CLOSE);
}

/**
 * What a continuation adds to `base`, as to its thinking: a server that sends thinking apart
 * starts each reply with it (`<think>…</think>`). Where the base's thinking is still open, the
 * new thinking goes on with it (its `<think>` dropped, its `</think>` closing the base's); after
 * an answer it is left out, as it would be of a reply (docs/chat.md, "Continue").
 */
function continuationOf(base: string, more: string): string {
  if (!/^\s*<think>/.test(more)) return more;
  if (thoughtOpen(base)) return more.replace(/^\s*<think>/, '');
  return splitThinking(more)?.answer ?? more;
}

/** The new words appended (up to a tool call among them), and how the reply now ends. */
async function saveMore(turn: Turn, draft: Draft, result: GenerationResult): Promise<TurnResult> {
  const { target, joiner } = draft;
  let more = continuationOf(target.text, result.text);
  if (!result.aborted && CALL_MARKS.test(more)) more = parseToolCalls(more).text;
  else if (result.aborted) more = beforeToolCall(more);
  // Stopped before a word came (the server had not answered yet): the reply stays as it was,
  // cut by the length limit still, not marked stopped.
  if (result.aborted && !more.trim()) return { status: 'aborted', text: target.text, rounds: 0 };
  const meta: Record<string, unknown> = { ...target.meta };
  delete meta.aborted;
  delete meta.error;
  delete meta.cut;
  if (result.aborted) meta.aborted = true;
  else if (result.finishReason === 'length') meta.cut = 'length';
  const text = more.trim() ? (target.text + joiner + more).trimEnd() : target.text;
  await saveContinued(turn, target, text, meta);
  if (!result.aborted && !more.trim())
    turn.emit({ type: 'notice', message: 'The model had nothing to add.' });
  return { status: result.aborted ? 'aborted' : 'answered', text, rounds: 0 };
}

/** Stopped or failed mid-step: what was shown is appended, marked so. */
async function endEarly(turn: Turn, draft: Draft | undefined, e: unknown): Promise<TurnResult> {
  const partial = beforeToolCall(turn.streamed);
  const base = draft?.target.text ?? '';
  if (isStop(turn, e)) {
    if (draft && partial.trim()) {
      const text = (base + draft.joiner + partial).trimEnd();
      await saveContinued(turn, draft.target, text, { ...draft.target.meta, aborted: true });
      return { status: 'aborted', text, rounds: 0 };
    }
    return { status: 'aborted', text: base, rounds: 0 };
  }
  const error = asLlmError(e);
  const cutShort = beforeToolCall(error.detail.partial ?? partial);
  if (draft && cutShort.trim()) {
    await saveContinued(turn, draft.target, (base + draft.joiner + cutShort).trimEnd(), {
      ...draft.target.meta,
      error: error.code,
    });
  }
  turn.emit({ type: 'notice', message: error.message });
  return { status: 'error', text: cutShort, rounds: 0, error };
}

/** The continued reply, stored over the old one, and its new text indexed. */
async function saveContinued(
  turn: Turn,
  target: Message,
  text: string,
  meta: Record<string, unknown>,
): Promise<void> {
  const r = await turn.ctx.memory.updateMessage(target.id, {
    text,
    meta: withRecalled(meta, turn.recalled),
  });
  if (r.status !== 'SUCCESS') {
    turn.emit({ type: 'notice', message: `Could not store the continued reply: ${r.message}` });
    return;
  }
  turn.emit({ type: 'message', id: target.id!, role: 'assistant' });
  if (text !== target.text) await indexTurn(turn, 'assistant', text, target.id!);
}
