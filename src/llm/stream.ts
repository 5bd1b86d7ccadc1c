// Pure reducers that turn parsed SSE events into streamed tokens and a final generation result:
// OpenAI chat-completion chunks (llama.cpp, Ollama, LM Studio, vLLM, KoboldCPP's /v1) and
// KoboldCPP's native `/api/extra/generate/stream` events (PROTOCOLS.md).

import { errorFromStreamPayload, malformedStreamError, tooLargeError } from './errors';
import { MAX_REPLY_CHARS, sizeInWords } from './limits';
import { THINK_CLOSE, THINK_OPEN } from './thinking';
import { createToolCallAccumulator } from './tool-calls';
import type { ServerKind, SseEvent, ToolCall } from './types';

/** What one event contributed: text to show now, and whether the stream has said it is over. */
export interface StreamStep {
  tokens: string[];
  done: boolean;
}

/** The generation as far as the stream has told it. */
export interface StreamOutcome {
  text: string;
  /** Decide whether the model called tools from these, never from `finishReason`. */
  toolCalls: ToolCall[];
  /** As the server said it (`stop`, `length`, `tool_calls`, …); null when it never said. */
  finishReason: string | null;
}

/**
 * Folds a stream's events. `push` throws an LlmError for an error the server reports in the
 * stream (code from the message: CONTEXT_OVERFLOW, SERVER_ERROR, …), and MALFORMED_STREAM for
 * a `data:` payload that is not JSON, tool-call arguments nested too deep, or a reply past
 * MAX_REPLY_CHARS (with the text so far as `partial`). Events after the end are ignored.
 */
export interface StreamReducer {
  push(event: SseEvent): StreamStep;
  result(): StreamOutcome;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const NOTHING: readonly string[] = Object.freeze([]);
const GOING_ON: StreamStep = Object.freeze({ tokens: NOTHING as string[], done: false });
const ENDED: StreamStep = Object.freeze({ tokens: NOTHING as string[], done: true });

/** One event's step; shared, frozen objects when it brought no text (most events but tokens). */
function step(tokens: string[], done: boolean): StreamStep {
  if (tokens.length === 0) return done ? ENDED : GOING_ON;
  return { tokens, done };
}

/** Throws once a reply passes MAX_REPLY_CHARS, keeping what came so far. */
function checkSize(chars: number, text: string, kind: ServerKind | undefined): void {
  if (chars > MAX_REPLY_CHARS) {
    throw tooLargeError(`a reply over ${sizeInWords(MAX_REPLY_CHARS)}`, kind, text);
  }
}

function parsePayload(data: string, kind: ServerKind | undefined): unknown {
  try {
    return JSON.parse(data);
  } catch {
    const sample = data.length > 80 ? `${data.slice(0, 80)}…` : data;
    throw malformedStreamError(`a data line is not JSON: ${sample}`, kind);
  }
}

/** `finish_reason` values that mean "not finished": null, missing, '' and old KoboldCPP's "null". */
function finishOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const reason = value.trim();
  return reason === '' || reason === 'null' ? null : reason;
}

/**
 * A reasoning model's thinking sent apart from its answer: `reasoning_content` (llama.cpp's
 * default reasoning format, vLLM, LM Studio) or `reasoning` (Ollama, newer vLLM).
 */
function reasoningOf(delta: Record<string, unknown>): string {
  for (const r of [delta.reasoning_content, delta.reasoning]) {
    if (typeof r === 'string' && r !== '') return r;
  }
  return '';
}

/**
 * Reducer for OpenAI chat-completion chunks. Ends at `data: [DONE]`; a usage chunk with
 * `choices: []` is skipped; `delta.content` pieces are the tokens; `delta.tool_calls` accumulate
 * by index. Thinking sent apart (`reasoning_content`, `reasoning`) before the answer becomes the
 * reply's `<think>…</think>` start, as a server that leaves it in the text sends it, so it is
 * shown folded, kept out of search and of the history alike (docs/chat.md, "Tool calls written
 * as text"); thinking that comes after the answer began is left out.
 */
export function openAiChunkReducer(kind?: ServerKind): StreamReducer {
  const calls = createToolCallAccumulator();
  let text = '';
  let finishReason: string | null = null;
  let done = false;
  /** Where the reply's thinking stands: none came, it is open, or the answer began. */
  let thinking: 'none' | 'open' | 'closed' = 'none';

  return {
    push(event) {
      if (done) return step([], true);
      if (event.event === 'error') throw errorFromStreamPayload(event.data, kind);
      const data = event.data.trim();
      if (data === '') return step([], false);
      if (data === '[DONE]') {
        done = true;
        return step([], true);
      }
      const chunk = parsePayload(data, kind);
      if (!isRecord(chunk)) throw malformedStreamError(`unexpected data: ${data}`, kind);
      if (chunk.error !== undefined && chunk.error !== null) {
        throw errorFromStreamPayload(data, kind);
      }
      const choices = chunk.choices;
      const choice = Array.isArray(choices) ? (choices[0] as unknown) : undefined;
      if (!isRecord(choice)) return step([], false); // usage-only chunk, or other metadata
      const tokens: string[] = [];
      // Some servers put the whole message in a final chunk's `message` instead of `delta`.
      const delta = isRecord(choice.delta)
        ? choice.delta
        : isRecord(choice.message)
          ? choice.message
          : undefined;
      const reason = finishOf(choice.finish_reason);
      if (delta) {
        const reasoning = reasoningOf(delta);
        if (reasoning !== '' && thinking === 'none' && !/\S/.test(text) && calls.size() === 0) {
          thinking = 'open';
          tokens.push(THINK_OPEN);
        }
        if (reasoning !== '' && thinking === 'open') tokens.push(reasoning);
        const content = typeof delta.content === 'string' ? delta.content : '';
        const hasCalls = delta.tool_calls !== undefined && delta.tool_calls !== null;
        // The answer (or a call) begins, or the reply ends other than cut off: thinking is over.
        // Cut off for length, it stays open, as a reply cut off in the text would.
        if (
          thinking === 'open' &&
          (content !== '' || hasCalls || (reason && reason !== 'length'))
        ) {
          thinking = 'closed';
          tokens.push(THINK_CLOSE);
        }
        if (content !== '') tokens.push(content);
        if (hasCalls) calls.add(delta.tool_calls);
      } else if (typeof choice.text === 'string' && choice.text !== '') {
        tokens.push(choice.text); // `/v1/completions` chunks
      }
      if (reason !== null) finishReason = reason;
      for (const t of tokens) text += t;
      checkSize(text.length + calls.size(), text, kind);
      return step(tokens, false);
    },
    result() {
      return { text, toolCalls: calls.calls(), finishReason };
    },
  };
}

/**
 * Reducer for KoboldCPP's native stream: `event: message` with `data: {"token","finish_reason"}`.
 * There is no `[DONE]`: the first non-null `finish_reason` (the string "null" counts as null)
 * ends it. Native generation has no tool calls; prompted-tool text is parsed by the caller.
 */
export function koboldNativeReducer(kind: ServerKind = 'koboldcpp'): StreamReducer {
  let text = '';
  let finishReason: string | null = null;
  let done = false;

  return {
    push(event) {
      if (done) return step([], true);
      if (event.event === 'error') throw errorFromStreamPayload(event.data, kind);
      if (event.event !== undefined && event.event !== 'message') return step([], false);
      const data = event.data.trim();
      if (data === '') return step([], false);
      const payload = parsePayload(data, kind);
      if (!isRecord(payload)) throw malformedStreamError(`unexpected data: ${data}`, kind);
      if (payload.token === undefined && (payload.error ?? payload.detail) !== undefined) {
        throw errorFromStreamPayload(data, kind);
      }
      const tokens: string[] = [];
      if (typeof payload.token === 'string' && payload.token !== '') {
        tokens.push(payload.token);
        text += payload.token;
        checkSize(text.length, text, kind);
      }
      const reason = finishOf(payload.finish_reason);
      if (reason !== null) {
        finishReason = reason;
        done = true;
      }
      return step(tokens, done);
    },
    result() {
      return { text, toolCalls: [], finishReason };
    },
  };
}
