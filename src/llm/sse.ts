// Incremental server-sent-events parser (WHATWG EventSource rules) for streamed generations:
// chunks may split anywhere, including inside a `\r\n` pair or a UTF-8 sequence.

import type { SseEvent } from './types';

/** Feeds text in any pieces and gets back the events completed so far. */
export interface SseParser {
  /** Adds a chunk of decoded text; returns the events it completed. */
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
  let buffer = '';
  // A chunk ended on '\r': a '\n' starting the next chunk belongs to the same line end.
  let skipLeadingLf = false;
  let data: string[] = [];
  let eventType: string | undefined;
  let id: string | undefined;

  const dispatch = (out: SseEvent[]): void => {
    if (data.length > 0) {
      const event: SseEvent = { data: data.join('\n') };
      if (eventType !== undefined) event.event = eventType;
      if (id !== undefined) event.id = id;
      out.push(event);
    }
    data = [];
    eventType = undefined;
    id = undefined;
  };

  const line = (text: string, out: SseEvent[]): void => {
    if (text === '') {
      dispatch(out);
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        data.push(value);
        break;
      case 'event':
        eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) id = value;
        break;
      case 'error':
        eventType = 'error';
        data.push(value);
        break;
      default:
        break;
    }
  };

  return {
    push(chunk) {
      const out: SseEvent[] = [];
      let text = chunk;
      if (skipLeadingLf && text.startsWith('\n')) text = text.slice(1);
      if (chunk.length > 0) skipLeadingLf = false;
      // Only the new text can hold a line end: the buffer before it has none.
      const scan = buffer.length;
      buffer += text;
      let start = 0;
      for (;;) {
        let end = -1;
        for (let i = Math.max(start, scan); i < buffer.length; i++) {
          const c = buffer.charCodeAt(i);
          if (c === 10 || c === 13) {
            end = i;
            break;
          }
        }
        if (end === -1) break;
        line(buffer.slice(start, end), out);
        if (buffer.charCodeAt(end) === 13) {
          if (end + 1 === buffer.length) {
            skipLeadingLf = true;
            start = end + 1;
            break;
          }
          start = buffer.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
        } else {
          start = end + 1;
        }
      }
      buffer = buffer.slice(start);
      return out;
    },
    end() {
      const out: SseEvent[] = [];
      if (buffer !== '') line(buffer, out);
      buffer = '';
      skipLeadingLf = false;
      // Lenient: a server that closes without the final blank line still gets its last event.
      dispatch(out);
      return out;
    },
  };
}

/**
 * Reads a response body as SSE events, decoding UTF-8 across chunk boundaries. Aborting
 * `signal` cancels the body and rejects with the signal's reason (an `AbortError`), like
 * `fetch` does. Leaving the loop early cancels the body too.
 */
export async function* sseEvents(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<SseEvent, void, undefined> {
  signal?.throwIfAborted();
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = createSseParser();
  const onAbort = (): void => {
    reader.cancel(signal?.reason).catch(() => undefined);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    finished = true;
    const tail = decoder.decode();
    yield* parser.push(tail);
    yield* parser.end();
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
