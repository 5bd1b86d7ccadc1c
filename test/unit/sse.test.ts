import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSseParser, sseEvents } from '../../src/llm/sse';
import type { SseEvent } from '../../src/llm/types';

const parseAll = (chunks: string[]): SseEvent[] => {
  const parser = createSseParser();
  return [...chunks.flatMap((c) => parser.push(c)), ...parser.end()];
};

const bodyOf = (chunks: Uint8Array[]): ReadableStream<Uint8Array> =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });

const collect = async (body: ReadableStream<Uint8Array>, signal?: AbortSignal) => {
  const out: SseEvent[] = [];
  for await (const event of sseEvents(body, signal)) out.push(event);
  return out;
};

describe('createSseParser', () => {
  it('dispatches on a blank line with event, id and data fields', () => {
    expect(parseAll(['event: message\nid: 7\ndata: {"a":1}\n\n'])).toEqual([
      { event: 'message', id: '7', data: '{"a":1}' },
    ]);
  });

  it('joins several data lines with \\n and strips only one leading space', () => {
    expect(parseAll(['data:  two spaces\ndata:none\ndata\n\n'])).toEqual([
      { data: ' two spaces\nnone\n' },
    ]);
  });

  it('accepts \\n, \\r\\n and \\r line ends, also mixed', () => {
    const expected = [{ data: 'a' }, { data: 'b' }, { data: 'c' }];
    expect(parseAll(['data: a\n\ndata: b\r\n\r\ndata: c\r\r'])).toEqual(expected);
  });

  it('keeps a \\r\\n pair split across chunks as one line end', () => {
    expect(parseAll(['data: a\r', '\n\r', '\n'])).toEqual([{ data: 'a' }]);
    // A lone '\n' chunk after '\r' is that pair's second half; the next '\n' is a new line end.
    expect(parseAll(['data: a\r', '\n', '\n'])).toEqual([{ data: 'a' }]);
    expect(parseAll(['data: a\r', '', '\n', 'data: b\n\n'])).toEqual([{ data: 'a\nb' }]);
  });

  it('ignores comments, keep-alives, retry and unknown fields', () => {
    const text = ': keep-alive\n\n:ping\nretry: 3000\nfoo: bar\ndata: x\n\n';
    expect(parseAll([text])).toEqual([{ data: 'x' }]);
  });

  it('does not dispatch an event without data', () => {
    expect(parseAll(['event: message\n\nid: 3\n\n'])).toEqual([]);
  });

  it("turns llama.cpp's in-stream `error:` line into an 'error' event", () => {
    expect(parseAll(['data: {"x":1}\n\nerror: {"code":500,"message":"boom"}\n\n'])).toEqual([
      { data: '{"x":1}' },
      { event: 'error', data: '{"code":500,"message":"boom"}' },
    ]);
  });

  it('flushes a last event that lacks its blank line at end()', () => {
    const parser = createSseParser();
    expect(parser.push('data: [DONE]')).toEqual([]);
    expect(parser.end()).toEqual([{ data: '[DONE]' }]);
    expect(parser.end()).toEqual([]);
  });

  it('gives the same events however the text is split', () => {
    const line = fc.oneof(
      fc.string().map((s) => `data: ${s.replace(/[\r\n]/g, '')}`),
      fc.constantFrom('event: message', 'id: 1', ': keep-alive', 'error: {"code":500}', ''),
    );
    const ending = fc.constantFrom('\n', '\r\n', '\r');
    const text = fc
      .array(fc.tuple(line, ending), { maxLength: 30 })
      .map((parts) => parts.map(([l, e]) => l + e).join(''));
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 8 }), (t, cuts) => {
        const points = [...new Set(cuts.map((c) => c % (t.length + 1)))].sort((a, b) => a - b);
        const chunks: string[] = [];
        let at = 0;
        for (const p of points) {
          chunks.push(t.slice(at, p));
          at = p;
        }
        chunks.push(t.slice(at));
        expect(parseAll(chunks)).toEqual(parseAll([t]));
      }),
    );
  });
});

describe('sseEvents', () => {
  it('decodes UTF-8 split inside a character', async () => {
    const bytes = new TextEncoder().encode('data: café 🧠\n\n');
    const chunks = [...bytes].map((b) => Uint8Array.of(b));
    expect(await collect(bodyOf(chunks))).toEqual([{ data: 'café 🧠' }]);
  });

  it('rejects with AbortError when the signal aborts mid-stream, and cancels the body', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: one\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const controller = new AbortController();
    const seen: SseEvent[] = [];
    const run = (async () => {
      for await (const event of sseEvents(body, controller.signal)) {
        seen.push(event);
        controller.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual([{ data: 'one' }]);
    expect(cancelled).toBe(true);
  });

  it('rejects at once for an already aborted signal', async () => {
    await expect(collect(bodyOf([]), AbortSignal.abort())).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('cancels the body when the reader stops early', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: a\n\ndata: b\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of sseEvents(body)) {
      expect(event.data).toBe('a');
      break;
    }
    expect(cancelled).toBe(true);
  });

  it('lets other work run while one read carries thousands of events', async () => {
    // One read with 5,000 events, and a consumer that spends about 0.02 ms on each (100 ms in
    // all): a timer set before the stream starts must fire before the last event arrives, and
    // a Stop pressed then must end the stream there.
    const text = Array.from({ length: 5_000 }, (_, i) => `data: ${i}\n\n`).join('');
    const controller = new AbortController();
    let seenWhenTimerFired = -1;
    setTimeout(() => {
      seenWhenTimerFired = seen;
      controller.abort();
    }, 0);
    let seen = 0;
    const run = (async () => {
      for await (const _ of sseEvents(
        bodyOf([new TextEncoder().encode(text)]),
        controller.signal,
      )) {
        const until = performance.now() + 0.02;
        while (performance.now() < until);
        seen++;
      }
    })();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(seenWhenTimerFired).toBeGreaterThan(0);
    expect(seenWhenTimerFired).toBeLessThan(5_000);
    expect(seen).toBe(seenWhenTimerFired);
  });
});
