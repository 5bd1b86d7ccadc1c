// The fake LLM servers behave as PROTOCOLS.md says the real ones do (checked over real HTTP).
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';
import type { FakeKind, FakeServerOptions } from '../fixtures/fake-llm';

const servers: FakeServer[] = [];

async function start(kind: FakeKind, options: FakeServerOptions = {}): Promise<FakeServer> {
  const s = await startFakeServer(kind, { firstEventDelayMs: 10, toolDelayMs: 20, ...options });
  servers.push(s);
  return s;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

/** The `data:` payloads of an SSE body, in order. */
function dataLines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
}

interface Chunk {
  choices: {
    delta: {
      role?: string;
      content?: string | null;
      tool_calls?: {
        index: number;
        id?: string;
        type?: string;
        function: { name?: string; arguments?: string };
      }[];
    };
    finish_reason: string | null;
  }[];
}

function chunks(text: string): Chunk[] {
  return dataLines(text)
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as Chunk);
}

const SAVE_TOOL = {
  type: 'function',
  function: {
    name: 'saveMemory',
    description: 'Save something',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: ['string', 'object'] } },
      required: ['path', 'content'],
    },
  },
};

const MESSAGES = [{ role: 'user', content: 'Remember that my cat is called Tom.' }];

describe('koboldcpp', () => {
  it('answers detection in its own shapes (Python-style JSON, CORS on everything)', async () => {
    const s = await start('koboldcpp', { model: 'qwen.gguf', contextSize: 8192 });
    const v = await fetch(`${s.url}/api/extra/version`);
    expect(v.headers.get('access-control-allow-origin')).toBe('*');
    const raw = await v.text();
    expect(raw).toContain('"result": "KoboldCpp"');
    expect(JSON.parse(raw)).toMatchObject({ result: 'KoboldCpp', version: '1.102' });
    expect(await (await fetch(`${s.url}/api/extra/true_max_context_length`)).json()).toEqual({
      value: 8192,
    });
    expect(await (await fetch(`${s.url}/api/v1/model`)).json()).toEqual({
      result: 'koboldcpp/qwen.gguf',
    });
    expect(await (await fetch(`${s.url}/api/v1/info/version`)).json()).toEqual({ result: '1.2.5' });
    const models = (await (await fetch(`${s.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data[0].id).toBe('koboldcpp/qwen.gguf');
    const count = (await (
      await post(`${s.url}/api/extra/tokencount`, { prompt: 'Hello, world' })
    ).json()) as { value: number; ids: number[] };
    expect(count.value).toBe(4); // BOS + Hello , world
    expect(count.ids).toHaveLength(4);
    const again = (await (
      await post(`${s.url}/api/extra/tokencount`, { prompt: 'Hello, world' })
    ).json()) as { ids: number[] };
    expect(again.ids).toEqual(count.ids);
    const missing = await fetch(`${s.url}/props`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('text/html');
    const pre = await fetch(`${s.url}/v1/chat/completions`, { method: 'OPTIONS' });
    expect(pre.status).toBe(200);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(s.generations()).toHaveLength(0);
    expect(s.requests.map((r) => r.path)).toContain('/api/extra/tokencount');
  });

  it('streams native SSE: event: message, no [DONE], first event after ~350 ms by default', async () => {
    const s = await startFakeServer('koboldcpp', { replies: [{ text: 'Hello there friend.' }] });
    servers.push(s);
    const t0 = Date.now();
    const res = await post(`${s.url}/api/extra/generate/stream`, { prompt: 'Hi', genkey: 'K1' });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    let text = new TextDecoder().decode(first.value);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(
      text.startsWith('event: message\ndata: {"token": "Hello", "finish_reason": null}\n\n'),
    ).toBe(true);
    expect(text).not.toContain('[DONE]');
    const events = dataLines(text).map(
      (d) => JSON.parse(d) as { token: string; finish_reason: string | null },
    );
    expect(events.map((e) => e.token).join('')).toBe('Hello there friend.');
    expect(events.at(-1)).toEqual({ token: '', finish_reason: 'stop' });
    expect(events.slice(0, -1).every((e) => e.finish_reason === null)).toBe(true);
    expect(text.split('event: message').length - 1).toBe(events.length);
  });

  it('honours stop_sequence on the native path (a prompted tool call is cut at </tool_call>)', async () => {
    const s = await start('koboldcpp', {
      replies: [
        { toolCalls: [{ name: 'saveMemory', arguments: { path: 'Pets/Cat', content: 'Tom' } }] },
        { text: 'one two three four five six' },
      ],
    });
    const res = await post(`${s.url}/api/extra/generate/stream`, {
      prompt: '{{[INPUT]}}Remember my cat{{[OUTPUT]}}',
      stop_sequence: ['</tool_call>'],
      trim_stop: true,
    });
    const events = dataLines(await res.text()).map(
      (d) => JSON.parse(d) as { token: string; finish_reason: string | null },
    );
    const out = events.map((e) => e.token).join('');
    expect(out).toBe(
      '<tool_call>\n{"name": "saveMemory", "arguments": {"path":"Pets/Cat","content":"Tom"}}\n',
    );
    // A stop sequence is KoboldCPP's CUSTOM_STOPPER: it reports "length", not "stop".
    expect(events.at(-1)!.finish_reason).toBe('length');

    const plain = await post(`${s.url}/api/v1/generate`, { prompt: 'x', max_length: 3 });
    const body = (await plain.json()) as { results: { text: string; finish_reason: string }[] };
    expect(body.results[0]).toMatchObject({ text: 'one two three', finish_reason: 'length' });
  });

  it('sends the tool path as a fake stream after a silent wait, one call at most', async () => {
    const s = await start('koboldcpp', {
      toolDelayMs: 100,
      replies: [
        {
          toolCalls: [
            { name: 'saveMemory', arguments: { path: 'Pets/Cat', content: 'Tom' } },
            { name: 'listMemory', arguments: {} },
          ],
          text: 'dropped',
        },
      ],
    });
    const t0 = Date.now();
    const res = await post(`${s.url}/v1/chat/completions`, {
      messages: MESSAGES,
      tools: [SAVE_TOOL],
      tool_choice: 'auto',
      stream: true,
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90); // nothing (not even headers) before the end
    const text = await res.text();
    expect(dataLines(text).at(-1)).toBe('[DONE]');
    const cs = chunks(text);
    expect(cs).toHaveLength(4);
    expect(cs[0].choices[0].delta).toEqual({ role: 'assistant' });
    const meta = cs[1].choices[0].delta.tool_calls![0];
    expect(meta).toMatchObject({
      index: 0,
      type: 'function',
      function: { name: 'saveMemory', arguments: '' },
    });
    expect(meta.id).toMatch(/^call_\d{5}$/);
    const args = cs[2].choices[0].delta.tool_calls![0].function.arguments!;
    expect(args).toBe('{"path": "Pets/Cat", "content": "Tom"}');
    expect(cs[3].choices[0]).toEqual({ index: 0, finish_reason: 'tool_calls', delta: {} });
  });

  it('says finish_reason tool_calls in the fake stream even for plain text (quirk)', async () => {
    const s = await start('koboldcpp', { replies: [{ text: 'No tool needed.' }] });
    const res = await post(`${s.url}/v1/chat/completions`, {
      messages: MESSAGES,
      tools: [SAVE_TOOL],
      stream: true,
    });
    const cs = chunks(await res.text());
    expect(cs.map((c) => c.choices[0].delta)).toEqual([
      { role: 'assistant' },
      { content: 'No tool needed.' },
      {},
    ]);
    expect(cs[2].choices[0].finish_reason).toBe('tool_calls');
  });

  it('streams chat without tools token by token, with [DONE]', async () => {
    const s = await start('koboldcpp', { replies: [{ text: 'Hi you' }] });
    const text = await (
      await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES, stream: true })
    ).text();
    const cs = chunks(text);
    expect(cs.map((c) => c.choices[0].delta.content)).toEqual(['Hi', ' you', '']);
    expect(cs.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(dataLines(text).at(-1)).toBe('[DONE]');
  });

  it('dies without a response when a tool lacks a description, and keeps the reply', async () => {
    const s = await start('koboldcpp', { replies: [{ text: 'kept' }] });
    const bad = {
      type: 'function',
      function: { name: 'x', parameters: { type: 'object', properties: {} } },
    };
    await expect(
      post(`${s.url}/v1/chat/completions`, { messages: MESSAGES, tools: [bad], stream: true }),
    ).rejects.toThrow();
    const noType = {
      type: 'function',
      function: {
        name: 'x',
        description: 'd',
        parameters: { type: 'object', properties: { a: {} } },
      },
    };
    await expect(
      post(`${s.url}/v1/chat/completions`, { messages: MESSAGES, tools: [noType] }),
    ).rejects.toThrow();
    const ok = (await (
      await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES })
    ).json()) as { choices: { message: { content: string } }[] };
    expect(ok.choices[0].message.content).toBe('kept');
    expect(s.generations()).toHaveLength(3);
  });

  it('stops a hanging stream on abort by genkey; the abort answers with string fields', async () => {
    const s = await start('koboldcpp', { replies: [{ hang: true, text: 'la' }] });
    const t0 = Date.now();
    const res = await post(`${s.url}/api/extra/generate/stream`, { prompt: 'x', genkey: 'KCPP42' });
    const reader = res.body!.getReader();
    await reader.read(); // the first token
    const wrong = await (await post(`${s.url}/api/extra/abort`, { genkey: 'other' })).json();
    expect(wrong).toEqual({ success: 'false', done: 'false' });
    const abort = await post(`${s.url}/api/extra/abort`, { genkey: 'KCPP42' });
    expect(await abort.text()).toBe('{"success": "true", "done": "true"}');
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(Date.now() - t0).toBeLessThan(3000);
    const last = JSON.parse(dataLines(rest).at(-1)!) as { finish_reason: string };
    expect(last.finish_reason).not.toBeNull();
    expect(s.requests.filter((r) => r.path === '/api/extra/abort')).toHaveLength(2);
  });

  it('keeps generating on the tool path when the client only closes the connection', async () => {
    const s = await start('koboldcpp', { replies: [{ hang: true }, { text: 'next' }] });
    const ac = new AbortController();
    const first = post(
      `${s.url}/v1/chat/completions`,
      { messages: MESSAGES, tools: [SAVE_TOOL], stream: true, genkey: 'G1' },
      {},
      ac.signal,
    );
    await new Promise((r) => setTimeout(r, 100));
    ac.abort();
    await expect(first).rejects.toThrow();
    const t0 = Date.now();
    const second = post(`${s.url}/v1/chat/completions`, { messages: MESSAGES, genkey: 'G2' });
    await new Promise((r) => setTimeout(r, 300));
    const abort = await (await post(`${s.url}/api/extra/abort`, { genkey: 'G1' })).json();
    expect(abort).toEqual({ success: 'true', done: 'true' });
    const body = (await (await second).json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0].message.content).toBe('next');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300); // it waited for the stuck generation
    expect(s.generations()[0].clientClosed).toBe(true);
  });

  it('answers a non-streamed tool call with content null and one call', async () => {
    const s = await start('koboldcpp', {
      replies: [
        { toolCalls: [{ name: 'listMemory', arguments: { rootPath: 'Ä' }, id: 'call_1' }] },
      ],
    });
    const raw = await (
      await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES, tools: [SAVE_TOOL] })
    ).text();
    expect(raw).toContain('"arguments": "{\\"rootPath\\": \\"\\\\u00c4\\"}"');
    const body = JSON.parse(raw) as {
      choices: { message: { content: unknown; tool_calls: unknown[] }; finish_reason: string }[];
    };
    expect(body.choices[0].message.content).toBeNull();
    expect(body.choices[0].message.tool_calls).toEqual([
      {
        id: 'call_1',
        type: 'function',
        function: { name: 'listMemory', arguments: '{"rootPath": "\\u00c4"}' },
      },
    ]);
    expect(body.choices[0].finish_reason).toBe('tool_calls');
  });

  it('answers 401 and 503 in its own shapes', async () => {
    const s = await start('koboldcpp', { password: 'pw', busy: 1 });
    const busy = await post(`${s.url}/api/v1/generate`, { prompt: 'x' });
    expect(busy.status).toBe(503);
    expect(await busy.json()).toEqual({
      detail: { msg: 'Server is busy; please try again later.', type: 'service_unavailable' },
    });
    const denied = await post(`${s.url}/api/v1/generate`, { prompt: 'x' });
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({
      detail: { error: 'Unauthorized', type: 'unauthorized' },
    });
    expect(await (await fetch(`${s.url}/api/v1/model`)).json()).toEqual({
      result: 'koboldcpp/protected-model',
    });
    const ok = await post(
      `${s.url}/api/v1/generate`,
      { prompt: 'x' },
      { authorization: 'Bearer pw' },
    );
    expect(ok.status).toBe(200);
    expect(s.generations().map((r) => r.headers.authorization)).toEqual([
      undefined,
      undefined,
      'Bearer pw',
    ]);
  });
});

describe('llamacpp', () => {
  it('answers /props, /health, /tokenize and /v1/models', async () => {
    const s = await start('llamacpp', { contextSize: 16384, model: 'qwen3-8b' });
    const props = (await (await fetch(`${s.url}/props`)).json()) as {
      default_generation_settings: { n_ctx: number };
      model_path: string;
    };
    expect(props.default_generation_settings.n_ctx).toBe(16384);
    expect(props.model_path).toContain('qwen3-8b');
    expect(await (await fetch(`${s.url}/health`)).json()).toEqual({ status: 'ok' });
    const tok = (await (await post(`${s.url}/tokenize`, { content: 'a b c' })).json()) as {
      tokens: number[];
    };
    expect(tok.tokens).toHaveLength(3);
    const models = (await (await fetch(`${s.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data[0].id).toBe('qwen3-8b');
    const missing = await fetch(`${s.url}/api/extra/version`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 404, type: 'not_found_error' } });
  });

  it('streams tool calls as incremental deltas, parallel calls by index, keep-alive comments', async () => {
    const args = { path: 'Pets/Cat', content: 'Tom the cat, black and white' };
    const s = await start('llamacpp', {
      replies: [
        {
          text: 'Saving.',
          toolCalls: [
            { name: 'saveMemory', arguments: args },
            { name: 'listMemory', arguments: {} },
          ],
        },
      ],
    });
    const text = await (
      await post(`${s.url}/v1/chat/completions`, {
        messages: MESSAGES,
        tools: [SAVE_TOOL],
        stream: true,
      })
    ).text();
    expect(text).toContain('\n: ping\n');
    expect(dataLines(text).at(-1)).toBe('[DONE]');
    const cs = chunks(text);
    expect(cs[0].choices[0].delta).toEqual({ role: 'assistant', content: null });
    const content = cs.map((c) => c.choices[0].delta.content ?? '').join('');
    expect(content).toBe('Saving.');
    const calls = cs.flatMap((c) => c.choices[0].delta.tool_calls ?? []);
    const first0 = calls.find((c) => c.index === 0)!;
    expect(first0).toMatchObject({
      type: 'function',
      function: { name: 'saveMemory', arguments: '' },
    });
    expect(first0.id).toMatch(/^[A-Za-z0-9]{32}$/);
    const pieces0 = calls.filter((c) => c.index === 0 && c.id === undefined);
    expect(pieces0.length).toBeGreaterThan(1);
    expect(JSON.parse(pieces0.map((c) => c.function.arguments).join(''))).toEqual(args);
    expect(calls.find((c) => c.index === 1)!.function.name).toBe('listMemory');
    expect(cs.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
  });

  it('refuses tools without --jinja, and can send empty tool-call ids', async () => {
    const s = await start('llamacpp', { jinja: false });
    const res = await post(`${s.url}/v1/chat/completions`, {
      messages: MESSAGES,
      tools: [SAVE_TOOL],
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        code: 400,
        message: 'tools param requires --jinja flag',
        type: 'invalid_request_error',
      },
    });
    const e = await start('llamacpp', {
      emptyIds: true,
      replies: [{ toolCalls: [{ name: 'listMemory', arguments: {} }] }],
    });
    const cs = chunks(
      await (
        await post(`${e.url}/v1/chat/completions`, {
          messages: MESSAGES,
          tools: [SAVE_TOOL],
          stream: true,
        })
      ).text(),
    );
    const call = cs.flatMap((c) => c.choices[0].delta.tool_calls ?? [])[0];
    expect(call.id).toBe('');
  });

  it('sends an in-stream error as an error: line, and 401/503 OpenAI-shaped', async () => {
    const s = await start('llamacpp', {
      password: 'k',
      busy: 1,
      replies: [
        {
          streamError: { message: 'context full', code: 400, type: 'exceed_context_size_error' },
          afterTokens: 1,
          text: 'a b',
        },
      ],
    });
    expect((await fetch(`${s.url}/health`)).status).toBe(200); // public
    const denied = await fetch(`${s.url}/props`);
    expect(denied.status).toBe(401);
    expect(await denied.json()).toEqual({
      error: { code: 401, message: 'Invalid API Key', type: 'authentication_error' },
    });
    const auth = { authorization: 'Bearer k' };
    const busy = await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES }, auth);
    expect(busy.status).toBe(503);
    expect(await busy.json()).toMatchObject({ error: { code: 503, type: 'unavailable_error' } });
    const text = await (
      await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES, stream: true }, auth)
    ).text();
    expect(text).toContain(
      'error: {"code":400,"message":"context full","type":"exceed_context_size_error"}\n\n',
    );
  });
});

describe('ollama', () => {
  it('answers its detection endpoints and has no /props or tokenizer', async () => {
    const s = await start('ollama', { model: 'qwen3' });
    expect(await (await fetch(`${s.url}/api/version`)).json()).toEqual({ version: '0.12.0' });
    const tags = (await (await fetch(`${s.url}/api/tags`)).json()) as {
      models: { name: string }[];
    };
    expect(tags.models[0].name).toBe('qwen3:latest');
    const models = (await (await fetch(`${s.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data[0].id).toBe('qwen3:latest');
    expect((await fetch(`${s.url}/props`)).status).toBe(404);
    expect((await post(`${s.url}/tokenize`, { content: 'x' })).status).toBe(404);
  });

  it('sends each tool call whole in one delta', async () => {
    const s = await start('ollama', {
      replies: [
        {
          toolCalls: [
            { name: 'saveMemory', arguments: { path: 'A/B', content: '<b>' } },
            { name: 'listMemory', arguments: {} },
          ],
        },
      ],
    });
    const text = await (
      await post(`${s.url}/v1/chat/completions`, {
        model: 'fake-model',
        messages: MESSAGES,
        tools: [SAVE_TOOL],
        stream: true,
      })
    ).text();
    const cs = chunks(text);
    const withCalls = cs.filter((c) => c.choices[0].delta.tool_calls);
    expect(withCalls).toHaveLength(2);
    const [a] = withCalls[0].choices[0].delta.tool_calls!;
    expect(a.index).toBe(0);
    expect(a.id).toMatch(/^call_[a-z0-9]{8}$/);
    expect(JSON.parse(a.function.arguments!)).toEqual({ content: '<b>', path: 'A/B' });
    expect(withCalls[1].choices[0].delta.tool_calls![0].index).toBe(1);
    expect(cs.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
    expect(dataLines(text).at(-1)).toBe('[DONE]');
  });

  it('answers 400 "does not support tools" for a model without tools, and refuses foreign origins', async () => {
    const s = await start('ollama', { noToolsModels: ['gemma2'] });
    const res = await post(`${s.url}/v1/chat/completions`, {
      model: 'gemma2',
      messages: MESSAGES,
      tools: [SAVE_TOOL],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; type: string } };
    expect(body.error.message).toBe(
      'registry.ollama.ai/library/gemma2:latest does not support tools',
    );
    expect(body.error.type).toBe('api_error');
    const ok = await post(`${s.url}/v1/chat/completions`, { model: 'gemma2', messages: MESSAGES });
    expect(ok.status).toBe(200);
    const local = await fetch(`${s.url}/api/version`, {
      headers: { origin: 'http://localhost:5173' },
    });
    expect(local.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const foreign = await fetch(`${s.url}/api/version`, {
      headers: { origin: 'https://example.com' },
    });
    expect(foreign.status).toBe(403);
    const busy = await start('ollama', { busy: 1 });
    const b = await post(`${busy.url}/v1/chat/completions`, { messages: MESSAGES });
    expect(b.status).toBe(503);
    expect(await b.json()).toMatchObject({ error: { type: 'api_error' } });
  });
});

describe('plain', () => {
  it('ignores tools: a scripted call comes back as <tool_call> text', async () => {
    const s = await start('plain', {
      replies: [{ toolCalls: [{ name: 'listMemory', arguments: '{"rootPath": ' }] }],
    });
    const text = await (
      await post(`${s.url}/v1/chat/completions`, {
        messages: MESSAGES,
        tools: [SAVE_TOOL],
        stream: true,
      })
    ).text();
    const cs = chunks(text);
    expect(cs.some((c) => c.choices[0].delta.tool_calls)).toBe(false);
    const content = cs.map((c) => c.choices[0].delta.content ?? '').join('');
    expect(content).toBe(
      '<tool_call>\n{"name": "listMemory", "arguments": {"rootPath": }\n</tool_call>',
    );
    expect(cs.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect((await fetch(`${s.url}/props`)).status).toBe(404);
    const lm = await start('plain', { unknownPath200: true });
    const r = await fetch(`${lm.url}/api/extra/version`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      error: 'Unexpected endpoint or method. (GET /api/extra/version)',
    });
  });

  it('answers 401 OpenAI-shaped with a password', async () => {
    const s = await start('plain', { password: 'sk' });
    const r = await fetch(`${s.url}/v1/models`);
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    const ok = await fetch(`${s.url}/v1/models`, { headers: { authorization: 'Bearer sk' } });
    expect(ok.status).toBe(200);
  });
});

describe('all kinds', () => {
  it('disconnects after N tokens, passes scripted errors through, records requests', async () => {
    for (const kind of ['koboldcpp', 'llamacpp', 'ollama', 'plain'] as const) {
      const s = await start(kind, {
        replies: [
          { disconnectAfter: 2, text: 'one two three four' },
          { error: { status: 500, body: { error: { message: 'boom' } } } },
          (req) => ({
            text: `echo ${(req.body as { messages: { content: string }[] }).messages[0].content}`,
          }),
        ],
      });
      const res = await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES, stream: true });
      const reader = res.body!.getReader();
      let got = '';
      await expect(
        (async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            got += new TextDecoder().decode(value);
          }
        })(),
      ).rejects.toThrow();
      expect(
        chunks(got)
          .map((c) => c.choices[0].delta.content ?? '')
          .join(''),
      ).toBe('one two');
      const err = await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES });
      expect(err.status).toBe(500);
      expect(((await err.json()) as { error: { message: string } }).error.message).toBe('boom');
      const echo = (await (
        await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES })
      ).json()) as {
        choices: { message: { content: string } }[];
      };
      expect(echo.choices[0].message.content).toBe(`echo ${MESSAGES[0].content}`);
      const fallback = (await (
        await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES })
      ).json()) as {
        choices: { message: { content: string } }[];
      };
      expect(fallback.choices[0].message.content.length).toBeGreaterThan(0);
      const gens = s.generations();
      expect(gens).toHaveLength(4);
      expect(gens[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
      expect(gens[0].body).toMatchObject({ messages: MESSAGES, stream: true });
      expect(gens[0].headers['content-type']).toBe('application/json');
      expect(typeof gens[0].time).toBe('number');
      await s.close();
    }
  });

  it('stops by itself when idle', async () => {
    let reason = '';
    const s = await start('plain', { idleTimeoutMs: 100, onClose: (r) => (reason = r) });
    expect((await fetch(`${s.url}/v1/models`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 250));
    expect(reason).toBe('idle');
    await expect(fetch(`${s.url}/v1/models`)).rejects.toThrow();
  });

  it('stops a hang when the client aborts (OpenAI kinds) and close() ends open streams', async () => {
    const s = await start('llamacpp', { replies: [{ hang: true }, { hang: true }] });
    const ac = new AbortController();
    const res = await post(
      `${s.url}/v1/chat/completions`,
      { messages: MESSAGES, stream: true },
      {},
      ac.signal,
    );
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await expect(reader.read()).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 50));
    expect(s.generations()[0].clientClosed).toBe(true);
    const res2 = await post(`${s.url}/v1/chat/completions`, { messages: MESSAGES, stream: true });
    const t0 = Date.now();
    await s.close();
    await res2.text().catch(() => '');
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
