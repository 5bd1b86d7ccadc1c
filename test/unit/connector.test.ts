// The connector against the fake servers: detection, context size, token counts, auth header,
// KoboldCPP abort by genkey on the OpenAI endpoint, and stream endings.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConnector, kindFromPort, normaliseEndpoint } from '../../src/llm/connector';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const fake = async (...args: Parameters<typeof startFakeServer>) => {
  const s = await startFakeServer(args[0], {
    firstEventDelayMs: 10,
    tokenDelayMs: 1,
    toolDelayMs: 5,
    ...args[1],
  });
  servers.push(s);
  return s;
};

describe('detection', () => {
  it('tells KoboldCPP, llama.cpp, Ollama and a plain OpenAI server apart, with model and context', async () => {
    const cases = [
      ['koboldcpp', { kind: 'koboldcpp', model: 'qwen', contextSize: 8192, tokenizer: true }],
      ['llamacpp', { kind: 'llamacpp', contextSize: 8192, tokenizer: true }],
      ['ollama', { kind: 'ollama', tokenizer: false, contextSize: 4096 }],
      ['plain', { kind: 'openai', tokenizer: false, contextSize: 4096 }],
    ] as const;
    for (const [kind, expected] of cases) {
      const s = await fake(kind, { model: 'qwen', contextSize: 8192 });
      const info = await createConnector({ endpoint: s.url }).detect();
      expect(info, kind).toMatchObject(expected);
      expect(info.model, kind).toMatch(/qwen/);
    }
  });

  it('uses the context size setting over the server and the 4096 default', async () => {
    const s = await fake('koboldcpp', { contextSize: 8192 });
    expect(
      (await createConnector({ endpoint: s.url, contextSize: 2048 }).detect()).contextSize,
    ).toBe(2048);
  });

  it('normalises pasted endpoints and guesses the kind from the usual port', () => {
    expect(normaliseEndpoint(' localhost:5001/v1/ ')).toBe('http://localhost:5001');
    expect(kindFromPort('http://127.0.0.1:11434')).toBe('ollama');
    expect(kindFromPort('http://127.0.0.1:1234')).toBe('lmstudio');
    expect(kindFromPort('http://127.0.0.1:9999')).toBeUndefined();
  });
});

describe('a request that fails before any reply', () => {
  // fetch rejects alike when nothing listens and when the browser blocks a reply (CORS).
  const refused = (probes: RequestInit[]) => async (_input: unknown, init?: RequestInit) => {
    if (init?.mode === 'no-cors') {
      probes.push(init);
      return new Response(null, { status: 200 });
    }
    throw new TypeError('Failed to fetch');
  };

  it('a no-cors probe that gets through: the browser blocked the reply, said with the fix', async () => {
    const probes: RequestInit[] = [];
    const c = createConnector({ endpoint: 'http://127.0.0.1:11434', fetch: refused(probes) });
    await expect(c.detect()).rejects.toMatchObject({
      code: 'CORS',
      message: expect.stringMatching(/OLLAMA_ORIGINS/),
    });
    expect(probes).toHaveLength(1);
  });

  it('in a cross-origin isolated page, whose COEP blocks the probe too: both causes, each with its fix', async () => {
    vi.stubGlobal('crossOriginIsolated', true);
    try {
      const probes: RequestInit[] = [];
      const c = createConnector({ endpoint: 'http://127.0.0.1:11434', fetch: refused(probes) });
      const e: unknown = await c.detect().catch((err: unknown) => err);
      expect(e).toMatchObject({ code: 'SERVER_DOWN' });
      expect((e as Error).message).toMatch(
        /^Nothing answers at http:\/\/127\.0\.0\.1:11434, or the server there does not let this page .* read its replies.*start Ollama.*OLLAMA_ORIGINS=/,
      );
      // Not asked: its answer would be blocked whatever the server does.
      expect(probes).toHaveLength(0);
      // KoboldCPP lets every page read its replies: where it is expected, nothing listens.
      const kobold = createConnector({ endpoint: 'http://127.0.0.1:5001', fetch: refused(probes) });
      await expect(kobold.detect()).rejects.toThrow(
        /^Nothing answers at http:\/\/127\.0\.0\.1:5001: start KoboldCPP and check the Endpoint URL in Settings\.$/,
      );
      // Port 8080 is llama-server's default, and many another server's: both causes are said.
      const other = createConnector({ endpoint: 'http://127.0.0.1:8080', fetch: refused(probes) });
      await expect(other.detect()).rejects.toThrow(/or the server there does not let this page/);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe('a stream that goes bad', () => {
  it('a data line that is not JSON, mid-answer: the words before it are kept with the error', async () => {
    const events = [
      'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Lisbon, "}}]}\n\n',
      'data: {"choices":[{"index":0,"delta":{"content":"in May"}}]}\n\n',
      'data: {"choices": [oops\n\n',
    ];
    const c = createConnector({
      endpoint: 'http://127.0.0.1:1234',
      fetch: async () =>
        new Response(events.join(''), { headers: { 'content-type': 'text/event-stream' } }),
    });
    const e: unknown = await c
      .chat({ messages: [{ role: 'user', content: 'Where?' }], maxTokens: 20 })
      .catch((err: unknown) => err);
    expect(e).toMatchObject({ code: 'MALFORMED_STREAM', detail: { partial: 'Lisbon, in May' } });
    expect((e as Error).message).toMatch(/could not read .* The partial answer was kept\.$/);
  });
});

describe('token counts', () => {
  it('asks the server tokenizer once per text (cached) and estimates without one', async () => {
    const k = await fake('koboldcpp');
    const c = createConnector({ endpoint: k.url });
    await c.detect();
    const n = await c.countTokens('Hello, world');
    expect(n).toBeGreaterThan(0);
    expect(await c.countTokens('Hello, world')).toBe(n);
    expect(k.requests.filter((r) => r.path === '/api/extra/tokencount')).toHaveLength(1);

    const l = await fake('llamacpp');
    const cl = createConnector({ endpoint: l.url });
    await cl.detect();
    expect(await cl.countTokens('one two three')).toBeGreaterThan(0);
    expect(l.requests.some((r) => r.path === '/tokenize')).toBe(true);

    const o = await fake('ollama');
    const co = createConnector({ endpoint: o.url });
    await co.detect();
    expect(await co.countTokens('x'.repeat(40))).toBe(10);
  });
});

describe('requests', () => {
  it('sends the password as a Bearer token', async () => {
    const s = await fake('koboldcpp', { password: 'pw', replies: [{ text: 'ok' }] });
    const c = createConnector({ endpoint: s.url, apiKey: 'pw' });
    await c.detect();
    const r = await c.chat({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 20 });
    expect(r.text).toBe('ok');
    expect(s.generations()[0].headers.authorization).toBe('Bearer pw');
    expect((s.generations()[0].body as { max_tokens: number }).max_tokens).toBe(20);
  });

  it('KoboldCPP OpenAI endpoint: Stop posts /api/extra/abort with the generation genkey', async () => {
    const s = await fake('koboldcpp', {
      replies: [{ hang: true, text: 'a b c d e f g h i j k l m n o p' }],
    });
    const c = createConnector({ endpoint: s.url });
    await c.detect();
    const controller = new AbortController();
    let tokens = 0;
    const r = await c.chat({
      messages: [{ role: 'user', content: 'go' }],
      maxTokens: 50,
      signal: controller.signal,
      onToken: () => ++tokens === 2 && controller.abort(),
    });
    expect(r.aborted).toBe(true);
    expect(r.text.length).toBeGreaterThan(0);
    const genkey = (s.generations()[0].body as { genkey: string }).genkey;
    expect(genkey).toMatch(/^sm-/);
    await expect
      .poll(() => s.requests.find((q) => q.path === '/api/extra/abort')?.body)
      .toEqual({ genkey });
  });

  it('KoboldCPP: a Stop before the server answers (its silent tool path) stops the generation too', async () => {
    const s = await fake('koboldcpp', { replies: [{ hang: true }] });
    const c = createConnector({ endpoint: s.url });
    await c.detect();
    const controller = new AbortController();
    const pending = c.chat({
      messages: [{ role: 'user', content: 'what do you remember?' }],
      maxTokens: 50,
      signal: controller.signal,
      tools: [
        {
          type: 'function',
          function: {
            name: 'listMemory',
            description: 'List the memory tree.',
            parameters: { type: 'object', properties: { path: { type: 'string' } } },
          },
        },
      ],
    });
    await expect.poll(() => s.generations().length).toBe(1);
    controller.abort();
    expect(await pending).toMatchObject({ text: '', aborted: true });
    const genkey = (s.generations()[0].body as { genkey: string }).genkey;
    await expect
      .poll(() => s.requests.filter((q) => q.path === '/api/extra/abort').map((q) => q.body))
      .toEqual([{ genkey }]);
  });

  it('native KoboldCPP stream: ends on a non-null finish_reason, also the old "null" string form', async () => {
    for (const nullAsString of [false, true]) {
      const s = await fake('koboldcpp', {
        nullAsString,
        replies: [{ text: 'Hello there, friend.' }],
      });
      const c = createConnector({ endpoint: s.url });
      await c.detect();
      const seen: string[] = [];
      const r = await c.generate({
        prompt: '{{[INPUT]}}hi{{[OUTPUT]}}',
        maxTokens: 30,
        onToken: (t) => seen.push(t),
      });
      expect(r).toMatchObject({ text: 'Hello there, friend.', aborted: false });
      expect(seen.join('')).toBe('Hello there, friend.');
      expect(r.finishReason).not.toBeNull();
    }
  });
});

describe('probeTools (Test connection asks whether native tool calls work)', () => {
  const probe = async (...args: Parameters<typeof startFakeServer>) => {
    const s = await fake(...args);
    const connector = createConnector({ endpoint: s.url });
    await connector.detect();
    return { s, result: await connector.probeTools() };
  };

  it('llama.cpp with --jinja and Ollama with a tool model take them', async () => {
    for (const kind of ['llamacpp', 'ollama'] as const) {
      const { s, result } = await probe(kind, { model: 'qwen3' });
      expect(result, kind).toEqual({ native: true });
      // Asked as a chat asks: streamed, with a tool, for the detected model, one token long.
      const [asked] = s.generations();
      expect(asked.body, kind).toMatchObject({
        stream: true,
        max_tokens: 1,
        tool_choice: 'auto',
        tools: [{ type: 'function', function: { name: 'ping' } }],
      });
      expect((asked.body as { model: string }).model, kind).toMatch(/qwen3/);
    }
  });

  it('llama.cpp without --jinja, or without streamed tools, says no, with the fix', async () => {
    const noJinja = await probe('llamacpp', { jinja: false });
    expect(noJinja.result.native).toBe(false);
    expect(!noJinja.result.native && noJinja.result.message).toMatch(
      /refused native tool calls \("tools param requires --jinja flag"\): start llama-server with --jinja/,
    );
    const noStream = await probe('llamacpp', { toolsNoStream: true });
    expect(!noStream.result.native && noStream.result.message).toMatch(
      /Cannot use tools with stream/,
    );
  });

  it('Ollama says no for a model without tool support', async () => {
    const { result } = await probe('ollama', { model: 'gemma2', noToolsModels: ['gemma2'] });
    expect(result.native).toBe(false);
    expect(!result.native && result.message).toMatch(
      /"registry\.ollama\.ai\/library\/gemma2:latest does not support tools".*prompted tools/,
    );
  });

  it('any other failure rejects as a chat would (a password missing)', async () => {
    const s = await fake('llamacpp', { password: 'sesame' });
    const connector = createConnector({ endpoint: s.url });
    await expect(connector.probeTools()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
