// Incremental server-sent-events parser (WHATWG EventSource rules) for streamed generations:
// chunks may split anywhere, including inside a `\r\n` pair or a UTF-8 sequence.

import { tooLargeError } from './errors';
import { MAX_SSE_EVENT_CHARS, sizeInWords } from './limits';
import type { SseEvent } from './types';

/** Feeds text in any pieces and gets back the events completed so far. */
export interface SseParser {
  /**
   * Adds a chunk of decoded text; returns the events it completed. Throws an LlmError
   * (MALFORMED_STREAM) once a line or an event's data passes MAX_SSE_EVENT_CHARS.
   */
  push(chunk: string): SseEvent[];
  /** The stream ended: flushes a last line and dispatches an event left without its blank line. */
  end(): SseEvent[];
}

/**
 * Creates a parser. Fields: `data` (several lines joined with `\n`), `event`, `id`; `retry`,
 * comments (`:` keep-alives) and unknown fields are ignored. llama.cpp reports an error inside
 * a stream as an `error: {…}` line: that becomes an event with `event: 'error'` and the line's
 * value as `data`, so readers see it in order with the other events.
 */
export function createSseParser(): SseParser {
  // The unfinished line, as the pieces it arrived in: joined once when its end arrives, so a
  // long line in small reads costs time in proportion to its length (appending to one string
  // and scanning it again on every read does not).
  let pieces: string[] = [];
  let pending = 0;
  // A chunk ended on '\r': a '\n' starting the next chunk belongs to the same line end.
  let skipLeadingLf = false;
  // Reused from event to event (a stream is one event per token: no new array for each).
  const data: string[] = [];
  let dataChars = 0;
  let eventType: string | undefined;
  let id: string | undefined;

  const tooLarge = (): Error => {
    pieces = [];
    pending = 0;
    data.length = 0;
    dataChars = 0;
    return tooLargeError(`one stream event over ${sizeInWords(MAX_SSE_EVENT_CHARS)}`);
  };

  const dispatch = (out: SseEvent[]): void => {
    if (data.length > 0) {
      const event: SseEvent = { data: data.length === 1 ? data[0] : data.join('\n') };
      if (eventType !== undefined) event.event = eventType;
      if (id !== undefined) event.id = id;
      out.push(event);
    }
    data.length = 0;
    dataChars = 0;
    eventType = undefined;
    id = undefined;
  };

  const addData = (value: string): void => {
    dataChars += value.length + 1;
    if (dataChars > MAX_SSE_EVENT_CHARS) throw tooLarge();
    data.push(value);
  };

  const line = (text: string, out: SseEvent[]): void => {
    if (text === '') {
      dispatch(out);
      return;
    }
    if (text.startsWith(':')) return;
    // Nearly every line: `data: …`, read without cutting out its field name.
    if (text.startsWith('data:')) {
      addData(text.slice(text.charCodeAt(5) === 32 ? 6 : 5));
      return;
    }
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        addData(value);
        break;
      case 'event':
        eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) id = value;
        break;
      case 'error':
        eventType = 'error';
        addData(value);
        break;
      default:
        break;
    }
  };

  /** The unfinished line completed by `tail`. */
  const takeLine = (tail: string): string => {
    if (pieces.length === 0) return tail;
    pieces.push(tail);
    const whole = pieces.join('');
    pieces = [];
    pending = 0;
    return whole;
  };

  return {
    push(chunk) {
      const out: SseEvent[] = [];
      let text = chunk;
      if (skipLeadingLf && text.startsWith('\n')) text = text.slice(1);
      if (chunk.length > 0) skipLeadingLf = false;
      let start = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        if (pending + (i - start) > MAX_SSE_EVENT_CHARS) throw tooLarge();
        line(takeLine(text.slice(start, i)), out);
        if (c === 13) {
          if (i + 1 === text.length) skipLeadingLf = true;
          else if (text.charCodeAt(i + 1) === 10) i++;
        }
        start = i + 1;
      }
      if (start < text.length) {
        pending += text.length - start;
        if (pending > MAX_SSE_EVENT_CHARS) throw tooLarge();
        pieces.push(text.slice(start));
      }
      return out;
    },
    end() {
      const out: SseEvent[] = [];
      if (pieces.length > 0) line(takeLine(''), out);
      skipLeadingLf = false;
      // Lenient: a server that closes without the final blank line still gets its last event.
      dispatch(out);
      return out;
    },
  };
}

/**
 * How long the stream's reader, with the work its consumer does per event, may hold the thread
 * before it lets the page draw and take input. A fast server delivers thousands of events in
 * one read; handing them all over in one go made a 1 MB reply one task of several hundred
 * milliseconds (docs/design.md, "Streaming").
 */
export const STREAM_SLICE_MS = 8;

/** Characters of one read parsed at a time (the parser takes text split anywhere). */
const PARSE_PIECE_CHARS = 16 * 1024;

interface YieldingScheduler {
  yield(): Promise<void>;
}

/** Gives the event loop a turn: `scheduler.yield()` where the browser has it, else a timer. */
export function yieldToEventLoop(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: Partial<YieldingScheduler> }).scheduler;
  if (typeof scheduler?.yield === 'function') return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Events handed over at a time by sseEventBatches: one async step per batch rather than per
 * event (each step of an async generator costs promises and result objects: at one event per
 * token, a 1 MB reply made a million of them).
 */
const BATCH_EVENTS = 64;

/**
 * Reads a response body as SSE events, decoding UTF-8 across chunk boundaries, in batches of at
 * most BATCH_EVENTS. Aborting `signal` cancels the body and rejects with the signal's reason
 * (an `AbortError`), like `fetch` does. Leaving the loop early cancels the body too. Every
 * STREAM_SLICE_MS of work (its own and its consumer's between batches) it yields to the event
 * loop once.
 */
export async function* sseEventBatches(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent[], void, undefined> {
  signal?.throwIfAborted();
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = createSseParser();
  const onAbort = (): void => {
    reader.cancel(signal?.reason).catch(() => undefined);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  let finished = false;
  let sliceStart = performance.now();
  /** Hands over events, pausing for the event loop whenever the slice is spent. */
  async function* handOver(events: SseEvent[]): AsyncGenerator<SseEvent[], void, undefined> {
    for (let at = 0; at < events.length; at += BATCH_EVENTS) {
      yield at === 0 && events.length <= BATCH_EVENTS
        ? events
        : events.slice(at, at + BATCH_EVENTS);
      if (performance.now() - sliceStart >= STREAM_SLICE_MS) {
        await yieldToEventLoop();
        signal?.throwIfAborted();
        sliceStart = performance.now();
      }
    }
  }
  try {
    for (;;) {
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) break;
      // A read can hold a megabyte of events: parse it in pieces, so the slices stay short.
      const text = decoder.decode(value, { stream: true });
      for (let at = 0; at < text.length; at += PARSE_PIECE_CHARS)
        yield* handOver(parser.push(text.slice(at, at + PARSE_PIECE_CHARS)));
    }
    finished = true;
    const tail = decoder.decode();
    yield* handOver(parser.push(tail));
    yield* handOver(parser.end());
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * sseEventBatches one event at a time. Once `signal` aborts (say, the consumer stopped it), no
 * further event of the batch is handed over.
 */
export async function* sseEvents(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent, void, undefined> {
  for await (const events of sseEventBatches(body, signal)) {
    for (const event of events) {
      signal?.throwIfAborted();
      yield event;
    }
  }
}
