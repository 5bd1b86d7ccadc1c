// Hostile model-server output against the connector's parsers (issue 10, "Connector parsers"):
// each case once at the size the issue found it and once far larger, so a parser whose work
// grows faster than its input cannot finish inside the suite's time limit. The assertions are
// on behaviour (the result, or the typed error past a size cap), never on a duration.
import { describe, expect, it } from 'vitest';
import { tokenFilter } from '../../src/chat/chat-session';
import { createConnector } from '../../src/llm/connector';
import { errorFromResponse, serverMessageOf } from '../../src/llm/errors';
import { parseToolCalls } from '../../src/llm/prompted-tools';
import { createSseParser, sseEvents } from '../../src/llm/sse';
import { koboldNativeReducer, openAiChunkReducer } from '../../src/llm/stream';
import { createToolCallAccumulator } from '../../src/llm/tool-calls';

const MB = 1 << 20;

/** `[` × n, a value, `]` × n: nested n levels deep. */
const nested = (n: number, inner = '1') => '['.repeat(n) + inner + ']'.repeat(n);

/** A body that arrives `size` bytes at a time. */
function slowBody(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) controller.close();
      else controller.enqueue(bytes.subarray(at, (at += size)));
    },
  });
}

/** A connector whose every request gets `respond()`'s answer. */
const connectorAnswering = (respond: () => Response) =>
  createConnector({
    endpoint: 'http://127.0.0.1:9',
    retry: { attempts: 1, baseDelayMs: 0 },
    fetch: () => Promise.resolve(respond()),
  });

const chatOnce = (respond: () => Response) =>
  connectorAnswering(respond).chat({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 8 });

const sse = (...payloads: string[]) =>
  new Response(payloads.map((p) => `data: ${p}\n\n`).join(''), {
    headers: { 'Content-Type': 'text/event-stream' },
  });

describe('parseToolCalls on hostile replies', () => {
  it.each([60_000, 500_000])('<tool_call> then %i "{" is one unreadable block', (n) => {
    const r = parseToolCalls('<tool_call>' + '{'.repeat(n));
    expect(r.calls).toEqual([]);
    expect(r.invalid).toEqual(['{'.repeat(n)]);
    expect(r.text).toBe('');
  });

  it.each([60_000, 500_000])('{"name": then %i "[" is text, not a call', (n) => {
    const text = '{"name":' + '['.repeat(n);
    const r = parseToolCalls(text);
    expect(r.calls).toEqual([]);
    expect(r.text).toBe(text);
  });

  it.each([60_000, 300_000])('a tool call, a code fence and %i spaces', (n) => {
    const call = '{"name":"saveMemory","arguments":{"path":"A","content":"b"}}';
    const spaces = ' '.repeat(n);
    for (const text of [
      `<tool_call>${call}</tool_call>\n\`\`\`${spaces}`,
      `<tool_call>\`\`\`json${spaces}${call}${spaces}`,
      `${call}\n\`\`\`${spaces}x`,
      `\`\`\`json\n${call}${spaces}`,
      `Saving.${spaces}\n<tool_call>${call}${spaces}\n${spaces}x`,
    ]) {
      const r = parseToolCalls(text);
      expect(r.calls.map((c) => [c.function.name, c.function.arguments])).toEqual([
        ['saveMemory', '{"path":"A","content":"b"}'],
      ]);
    }
  });

  it('many unclosed [TOOL_CALLS] argument objects, and many unclosed fences', () => {
    const mistral = '[TOOL_CALLS]a[ARGS]{'.repeat(50_000);
    expect(parseToolCalls(mistral).calls).toEqual([]);
    const fences = '```json\n{"name": 1,\n'.repeat(30_000);
    expect(parseToolCalls(fences).calls).toEqual([]);
    const opens = '{"name":"a","arguments":{} '.repeat(30_000);
    expect(parseToolCalls(opens).calls).toEqual([]);
  });

  it('many lines that start a Python-style call of a tool, unclosed, nested or not a call', () => {
    const names = new Set(['savememory']);
    for (const text of [
      'saveMemory(\n'.repeat(80_000),
      `${'saveMemory(\n'.repeat(40_000)}${')'.repeat(40_000)}`,
      'saveMemory(1)\n'.repeat(70_000),
      'saveMemory(path=[\n'.repeat(60_000),
      `[saveMemory(path="a", content="b"), ${'x'.repeat(900_000)}`,
      `${'a'.repeat(900_000)}(`,
      '```python\nsaveMemory(path="a", content="b")\n```\n'.repeat(20_000),
    ]) {
      expect(parseToolCalls(text, names).calls.length).toBeLessThanOrEqual(1);
    }
    const many = '[saveMemory(path="A/B", content="c")]\n'.repeat(20_000);
    expect(parseToolCalls(many, names).calls).toHaveLength(20_000);
  });

  it('deeply nested arguments are an unreadable call, never a RangeError', () => {
    for (const depth of [10_000, 200_000]) {
      const deep = nested(depth);
      for (const text of [
        `<tool_call>{"name":"a","arguments":${deep}}</tool_call>`,
        `<tool_call>{"name":"a","arguments":"${deep}"}</tool_call>`,
        `[TOOL_CALLS] [{"name":"a","arguments":${deep}}]`,
        `[TOOL_CALLS]a[ARGS]${deep.replace('[', '{"x":[').replace(/]$/, ']}')}`,
        `{"name":"a","arguments":${deep}}`,
      ]) {
        const r = parseToolCalls(text);
        expect(r.calls, text.slice(0, 40)).toEqual([]);
      }
      const tagged = parseToolCalls(`<tool_call>{"name":"a","arguments":${deep}}</tool_call>`);
      expect(tagged.invalid).toHaveLength(1);
    }
  });

  it('arguments nested as deep as a real tool ever needs still read', () => {
    const r = parseToolCalls(`<tool_call>{"name":"a","arguments":{"x":${nested(40)}}}</tool_call>`);
    expect(r.calls).toHaveLength(1);
    expect(JSON.parse(r.calls[0]!.function.arguments)).toEqual({ x: JSON.parse(nested(40)) });
  });

  it('past its size cap it returns the text and a typed error that says the fix', () => {
    const text = `<tool_call>{"name":"a","arguments":{}}</tool_call>${'x'.repeat(2 * MB)}`;
    const r = parseToolCalls(text);
    expect(r.calls).toEqual([]);
    expect(r.text).toBe(text);
    expect(r.error).toMatchObject({ name: 'LlmError', code: 'MALFORMED_STREAM' });
    expect(r.error?.message).toMatch(/1 MB.*maximum reply length in Settings/);
    expect(parseToolCalls('x'.repeat(MB - 1)).error).toBeUndefined();
  });
});

describe('server error pages', () => {
  it.each([60_000, 1_000_000])('a 502 page with %i "<" reads as a server error', (n) => {
    const body = '<html>' + '<'.repeat(n);
    const err = errorFromResponse(502, body);
    expect(err).toMatchObject({ name: 'LlmError', code: 'SERVER_ERROR' });
    expect(err.message).toMatch(/HTTP 502/);
    expect(err.message.length).toBeLessThan(600);
    for (const page of [
      '<html><title>Bad gateway</title>' + '<script'.repeat(n / 7),
      '<html><body>' + '<title'.repeat(n / 6),
      '<html><body>' + '<style>'.repeat(n / 7) + '</b>',
    ]) {
      expect(serverMessageOf(page).length).toBeLessThanOrEqual(300);
    }
  });

  it('keeps what the old regexes read from a page: the title, else the text without tags', () => {
    expect(serverMessageOf('<html><head><title>502 Bad Gateway</title></head></html>')).toBe(
      '502 Bad Gateway',
    );
    expect(
      serverMessageOf(
        '<html><style>p{}</style><SCRIPT>x()</script><p>Model &amp; server &lt;down&gt;</p></html>',
      ),
    ).toBe('Model & server <down>');
    expect(serverMessageOf('<p>x</p> y < z')).toBe('x y < z');
    expect(serverMessageOf('<p>a < b and c</p>')).toBe('a'); // `<[^>]*>` took "< b and c</p>"
    expect(serverMessageOf('<html><title>No end')).toBe('No end');
  });

  it('a connector reads at most a capped piece of an error body that never ends', async () => {
    const endless = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            controller.enqueue(new TextEncoder().encode('<'.repeat(4096)));
          },
        }),
        { status: 502 },
      );
    await expect(chatOnce(endless)).rejects.toMatchObject({
      name: 'LlmError',
      code: 'SERVER_ERROR',
    });
  });
});

describe('the prompted-mode token filter', () => {
  it.each([1, 2])('passes a %i MB reply through in 4-character tokens', (mb) => {
    const shown: string[] = [];
    const filter = tokenFilter('prompted', (t) => shown.push(t));
    const token = 'abc ';
    const n = (mb * MB) / token.length;
    for (let i = 0; i < n; i++) filter(token);
    filter('<tool');
    filter('_call>{"name":"a"}');
    filter(' more');
    const out = shown.join('');
    expect(out.length).toBe(mb * MB);
    expect(out.endsWith('abc abc ')).toBe(true);
  });
});

describe('SSE with a huge data line', () => {
  it('reads one 800 KB line arriving in 16-byte reads', async () => {
    const data = 'x'.repeat(800_000);
    const events = [];
    for await (const e of sseEvents(slowBody(`data: ${data}\n\n`, 16))) events.push(e);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.length).toBe(800_000);
  });

  it('reads one 4 MB line pushed 16 characters at a time', () => {
    const parser = createSseParser();
    // Joined into one flat string: V8 may copy a concatenation again on every slice of it.
    const line = ['data: ', 'y'.repeat(4 * MB), '\r\n\r\n'].join('');
    const events = [];
    for (let i = 0; i < line.length; i += 16) events.push(...parser.push(line.slice(i, i + 16)));
    events.push(...parser.end());
    expect(events.map((e) => e.data.length)).toEqual([4 * MB]);
  });

  it('past the cap on one event it throws a typed error that says the fix', () => {
    const parser = createSseParser();
    const piece = 'z'.repeat(MB);
    const push = () => {
      parser.push('data: ');
      for (let i = 0; i < 20; i++) parser.push(piece);
    };
    expect(push).toThrow(expect.objectContaining({ name: 'LlmError', code: 'MALFORMED_STREAM' }));
    try {
      createSseParser().push(`data: ${'z'.repeat(17 * MB)}\n`);
    } catch (e) {
      expect((e as Error).message).toMatch(/16 MB.*maximum reply length in Settings/);
      return;
    }
    expect.unreachable('a 17 MB line in one piece was read');
  });

  it('many data lines in one event are capped too', () => {
    const parser = createSseParser();
    const line = `data: ${'q'.repeat(MB)}\n`;
    expect(() => {
      for (let i = 0; i < 20; i++) parser.push(line);
    }).toThrow(expect.objectContaining({ code: 'MALFORMED_STREAM' }));
  });
});

describe('stream reducers and tool-call accumulation', () => {
  it('a reply past the size cap ends with a typed error that keeps the partial text', () => {
    for (const reducer of [openAiChunkReducer(), koboldNativeReducer()]) {
      const token = 'w'.repeat(MB);
      const data = JSON.stringify({
        token,
        choices: [{ delta: { content: token } }],
      });
      let thrown: unknown;
      try {
        for (let i = 0; i < 20; i++) reducer.push({ data });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toMatchObject({ name: 'LlmError', code: 'MALFORMED_STREAM' });
      expect((thrown as { detail: { partial: string } }).detail.partial.length).toBeGreaterThan(MB);
    }
  });

  it('many calls without an index are accumulated in one pass', () => {
    const acc = createToolCallAccumulator();
    for (let i = 0; i < 100_000; i++) {
      acc.add([{ id: `c${i}`, function: { name: 'a', arguments: '{}' } }]);
    }
    for (let i = 0; i < 100_000; i += 1000) acc.add([{ id: `c${i}`, function: { arguments: '' } }]);
    expect(acc.calls()).toHaveLength(100_000);
  });

  it('deeply nested arguments, as an object or streamed text, are a typed error', () => {
    const asObject = createToolCallAccumulator();
    expect(() =>
      asObject.add([{ index: 0, function: { name: 'a', arguments: JSON.parse(nested(100_000)) } }]),
    ).toThrow(expect.objectContaining({ name: 'LlmError', code: 'MALFORMED_STREAM' }));
    const asText = createToolCallAccumulator();
    expect(() => {
      asText.add([{ index: 0, function: { name: 'a', arguments: '{"x":' } }]);
      for (let i = 0; i < 1000; i++) asText.add([{ index: 0, function: { arguments: '[[' } }]);
    }).toThrow(expect.objectContaining({ code: 'MALFORMED_STREAM' }));
  });
});

describe('the connector on hostile streams', () => {
  it('deeply nested tool arguments are reported as unreadable, not as a disconnect', async () => {
    const deep = nested(100_000);
    for (const args of [deep, JSON.stringify(deep)]) {
      const chunk = `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"saveMemory","arguments":${args}}}]}}]}`;
      const rejected = chatOnce(() => sse(chunk, '[DONE]'));
      await expect(rejected).rejects.toMatchObject({ name: 'LlmError', code: 'MALFORMED_STREAM' });
      await expect(rejected).rejects.toThrow(/nested deeper than 64 levels/);
    }
  });

  it('an 800 KB content delta in 16-byte reads streams through', async () => {
    const content = 'v'.repeat(800_000);
    const body = `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\ndata: [DONE]\n\n`;
    const result = await chatOnce(
      () => new Response(slowBody(body, 16), { headers: { 'Content-Type': 'text/event-stream' } }),
    );
    expect(result.text.length).toBe(800_000);
  });
});
