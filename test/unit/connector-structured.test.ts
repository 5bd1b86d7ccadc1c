// One constrained JSON answer (`Connector.structured`) from each fake server over HTTP: the
// parameter each server reads, the refusals that mean "no schema here" (SCHEMA_UNSUPPORTED),
// prompted mode, abort (KoboldCPP's by genkey), and what the fakes do with a schema.
import { afterEach, describe, expect, it } from 'vitest';
import { createConnector, structuredCall, type StructuredRequest } from '../../src/llm/connector';
import { errorFromResponse, isSchemaUnsupported } from '../../src/llm/errors';
import { LlmError } from '../../src/llm/types';
import { KEEPER_SCHEMA } from '../../src/chat/keeper';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';
import type { FakeKind, FakeServerOptions } from '../fixtures/fake-llm';
import { grammarProblem, unenforcedKeywords } from '../fixtures/fake-llm/schema-grammar';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function connect(kind: FakeKind, options: FakeServerOptions = {}) {
  const server = await startFakeServer(kind, {
    firstEventDelayMs: 5,
    tokenDelayMs: 1,
    toolDelayMs: 5,
    ...options,
  });
  servers.push(server);
  const connector = createConnector({
    endpoint: server.url,
    retry: { attempts: 3, baseDelayMs: 1 },
  });
  await connector.detect();
  return { server, connector };
}

const SCHEMA = {
  type: 'object',
  properties: {
    answer: { type: 'string', enum: ['yes', 'no'] },
    why: { type: 'string', maxLength: 80 },
  },
  required: ['answer', 'why'],
  additionalProperties: false,
};

const request = (extra: Partial<StructuredRequest> = {}): StructuredRequest => ({
  messages: [
    { role: 'system', content: 'Answer as JSON.' },
    { role: 'user', content: 'Is the sky blue?' },
  ],
  prompt: '{{[SYSTEM]}}Answer as JSON.{{[INPUT]}}Is the sky blue?{{[OUTPUT]}}',
  schema: SCHEMA,
  schemaName: 'verdict',
  maxTokens: 64,
  temperature: 0.2,
  ...extra,
});

const ANSWER = '{"answer": "yes", "why": "Rayleigh scattering"}';

describe('structuredCall: where each server reads the schema', () => {
  const server = { model: 'm', contextSize: 8192, genkey: 'sm-1' };

  it('KoboldCPP: native generate with the schema as a JSON grammar string, and the genkey', () => {
    const call = structuredCall('koboldcpp', request(), server);
    expect(call.path).toBe('/api/v1/generate');
    expect(call.body).toMatchObject({
      prompt: request().prompt,
      max_length: 64,
      max_context_length: 8192,
      genkey: 'sm-1',
      trim_stop: true,
      grammar: JSON.stringify(SCHEMA),
    });
    const prompted = structuredCall('koboldcpp', request({ mode: 'prompted' }), server);
    expect(prompted.body.grammar).toBeUndefined();
  });

  it('llama.cpp: its own json_schema; Ollama: native /api/chat with format; others: response_format', () => {
    expect(structuredCall('llamacpp', request(), server).body).toMatchObject({
      json_schema: SCHEMA,
      stream: false,
      max_tokens: 64,
    });
    const ollama = structuredCall('ollama', request(), server);
    expect(ollama.path).toBe('/api/chat');
    expect(ollama.body).toMatchObject({
      model: 'm',
      format: SCHEMA,
      stream: false,
      options: { num_predict: 64, temperature: 0.2 },
    });
    for (const kind of ['lmstudio', 'openai'] as const) {
      const call = structuredCall(kind, request(), server);
      expect(call.path).toBe('/v1/chat/completions');
      expect(call.body.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'verdict', strict: true, schema: SCHEMA },
      });
      expect(call.body.json_schema).toBeUndefined();
    }
  });

  it('prompted mode sends no schema parameter anywhere', () => {
    for (const kind of ['koboldcpp', 'llamacpp', 'ollama', 'lmstudio', 'openai'] as const) {
      const body = structuredCall(kind, request({ mode: 'prompted' }), server).body;
      for (const key of ['grammar', 'json_schema', 'response_format', 'format']) {
        expect(body[key], `${kind} ${key}`).toBeUndefined();
      }
    }
  });

  it('KoboldCPP without a native prompt: its OpenAI endpoint with response_format', () => {
    const call = structuredCall('koboldcpp', request({ prompt: undefined }), server);
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.body).toMatchObject({ genkey: 'sm-1', response_format: { type: 'json_schema' } });
  });
});

describe('structured answers from each fake server', () => {
  it('every kind answers a constrained request with the scripted JSON, the parameter recorded', async () => {
    const cases: [FakeKind, FakeServerOptions, string, string][] = [
      ['koboldcpp', {}, '/api/v1/generate', 'grammar'],
      ['llamacpp', {}, '/v1/chat/completions', 'json_schema'],
      ['ollama', {}, '/api/chat', 'format'],
      ['plain', { responseFormat: 'accept' }, '/v1/chat/completions', 'response_format'],
    ];
    for (const [kind, options, path, param] of cases) {
      const { server, connector } = await connect(kind, {
        ...options,
        replies: [{ text: ANSWER }],
      });
      const r = await connector.structured(request());
      expect(r, kind).toMatchObject({ text: ANSWER, constrained: true, aborted: false });
      expect(r.finishReason, kind).toBe('stop');
      const sent = server.generations()[0];
      expect(sent.path, kind).toBe(path);
      expect((sent.body as Record<string, unknown>)[param], kind).toBeDefined();
    }
  });

  it('a reply scripted for the chat stays for the chat: the keeper’s request gets nothing to keep', async () => {
    const { connector } = await connect('koboldcpp', { replies: [{ text: 'Hello there.' }] });
    const keeperSchema = KEEPER_SCHEMA as unknown as Record<string, unknown>;
    const asked = await connector.structured(request({ schema: keeperSchema }));
    expect(asked.text).toBe('{"operations":[]}');
    const chat = await connector.generate({ prompt: 'Hi', maxTokens: 8 });
    expect(chat.text).toBe('Hello there.');
  });

  it('a strict OpenAI-style server refuses response_format: SCHEMA_UNSUPPORTED, then prompted works', async () => {
    const { server, connector } = await connect('plain', { replies: [{ text: ANSWER }] });
    const refused = await connector.structured(request()).catch((e: unknown) => e);
    expect(isSchemaUnsupported(refused)).toBe(true);
    expect((refused as LlmError).detail).toMatchObject({ status: 400 });
    expect((refused as LlmError).message).toMatch(/JSON schema/);
    const r = await connector.structured(request({ mode: 'prompted' }));
    expect(r).toMatchObject({ text: ANSWER, constrained: false });
    expect((server.generations()[1].body as Record<string, unknown>).response_format).toBe(
      undefined,
    );
  });

  it('Ollama before 0.5 (format a string) and llama.cpp with a schema it cannot convert refuse it', async () => {
    const old = await connect('ollama', { formatString: true });
    const e1 = await old.connector.structured(request()).catch((e: unknown) => e);
    expect(isSchemaUnsupported(e1), String(e1)).toBe(true);

    const llama = await connect('llamacpp');
    const bad = { type: 'object', properties: { id: { type: 'string', pattern: '\\S+' } } };
    const e2 = await llama.connector.structured(request({ schema: bad })).catch((e: unknown) => e);
    expect(isSchemaUnsupported(e2), String(e2)).toBe(true);
    expect((e2 as LlmError).detail.serverMessage).toMatch(/JSON schema conversion failed/);
  });

  it('a busy server is not retried: a structured answer is background work', async () => {
    const { server, connector } = await connect('llamacpp', { busy: 5 });
    const e = await connector.structured(request()).catch((x: unknown) => x);
    expect((e as LlmError).code).toBe('BUSY');
    expect(server.generations()).toHaveLength(1);
  });

  it('a reply cut by the length limit comes back as written, with finish reason length', async () => {
    const { connector } = await connect('llamacpp', { replies: [{ text: ANSWER }] });
    const r = await connector.structured(request({ maxTokens: 3 }));
    expect(r.finishReason).toBe('length');
    expect(() => JSON.parse(r.text) as unknown).toThrow();
  });
});

describe('abort', () => {
  it('KoboldCPP: ends at once and stops the generation with /api/extra/abort and its genkey', async () => {
    const { server, connector } = await connect('koboldcpp', { replies: [{ hang: true }] });
    const controller = new AbortController();
    const pending = connector.structured(request({ signal: controller.signal }));
    await expect.poll(() => server.generations().length).toBe(1);
    controller.abort();
    expect(await pending).toMatchObject({ text: '', aborted: true });
    const genkey = (server.generations()[0].body as { genkey: string }).genkey;
    expect(genkey).toMatch(/^sm-/);
    await expect
      .poll(() => server.requests.find((q) => q.path === '/api/extra/abort')?.body)
      .toEqual({ genkey });
  });

  it('KoboldCPP: the stop is sent in the abort itself, kept alive, once (a page that goes runs nothing after)', async () => {
    const server = await startFakeServer('koboldcpp', {
      toolDelayMs: 5,
      replies: [{ hang: true }],
    });
    servers.push(server);
    const sent: { url: string; init?: RequestInit }[] = [];
    const connector = createConnector({
      endpoint: server.url,
      retry: { attempts: 1, baseDelayMs: 1 },
      fetch: (input, init) => {
        sent.push({ url: String(input), init });
        return fetch(input, init);
      },
    });
    await connector.detect();
    const controller = new AbortController();
    const pending = connector.structured(request({ signal: controller.signal }));
    await expect.poll(() => server.generations().length).toBe(1);
    controller.abort();
    // Before any await: the stop is on its way in the same task as the abort.
    const stops = () => sent.filter((x) => x.url.endsWith('/api/extra/abort'));
    expect(stops()).toHaveLength(1);
    expect(stops()[0].init?.keepalive).toBe(true);
    expect(await pending).toMatchObject({ aborted: true });
    expect(stops()).toHaveLength(1);
  });

  it('llama.cpp and Ollama: the connection closes, and nothing is sent to abort', async () => {
    for (const kind of ['llamacpp', 'ollama'] as const) {
      const { server, connector } = await connect(kind, { replies: [{ hang: true }] });
      const controller = new AbortController();
      const pending = connector.structured(request({ signal: controller.signal }));
      await expect.poll(() => server.generations().length).toBe(1);
      controller.abort();
      expect(await pending, kind).toMatchObject({ aborted: true });
      await expect.poll(() => server.generations()[0].clientClosed).toBe(true);
      expect(
        server.requests.some((q) => q.path.includes('abort')),
        kind,
      ).toBe(false);
    }
  });

  it('an already aborted signal sends nothing that generates', async () => {
    const { server, connector } = await connect('llamacpp');
    const controller = new AbortController();
    controller.abort();
    expect(await connector.structured(request({ signal: controller.signal }))).toMatchObject({
      aborted: true,
    });
    expect(server.generations()).toHaveLength(0);
  });
});

describe('the fakes hold a constrained answer to its schema', () => {
  it('a scripted reply off the schema is a mistake in the test (500 that says so)', async () => {
    const { connector } = await connect('llamacpp', { replies: [{ text: 'not json' }] });
    const e = await connector.structured(request()).catch((x: unknown) => x);
    expect((e as LlmError).detail.serverMessage).toMatch(/breaks the schema/);
  });

  it('Ollama native /api/chat streams NDJSON by default, ending with done and done_reason', async () => {
    const { server } = await connect('ollama', { replies: [{ text: ANSWER }] });
    const r = await fetch(`${server.url}/api/chat`, {
      method: 'POST',
      body: JSON.stringify({ model: 'fake-model', messages: [], format: SCHEMA }),
    });
    expect(r.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await r.text())
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { message: { content: string }; done: boolean; done_reason?: string },
      );
    expect(lines.map((l) => l.message.content).join('')).toBe(ANSWER);
    expect(lines.at(-1)).toMatchObject({ done: true, done_reason: 'stop' });
    expect(lines.slice(0, -1).every((l) => !l.done)).toBe(true);
  });

  it('KoboldCPP drops a grammar it cannot convert and generates freely', async () => {
    const bad = { type: 'object', properties: { id: { type: 'string', pattern: '\\S+' } } };
    const { connector } = await connect('koboldcpp', { replies: [{ text: 'free text' }] });
    const r = await connector.structured(request({ schema: bad }));
    expect(r).toMatchObject({ text: 'free text', constrained: true });
  });

  it('the converters take the test schema whole, every keyword enforced', () => {
    expect(grammarProblem(SCHEMA)).toBeUndefined();
    expect(unenforcedKeywords(SCHEMA)).toEqual([]);
    expect(unenforcedKeywords({ type: 'array', uniqueItems: true })).toEqual(['uniqueItems at #']);
    expect(grammarProblem({ type: 'object', properties: { a: { type: 'date' } } })).toMatch(
      /Unrecognized schema/,
    );
    expect(grammarProblem({ $ref: 'https://example.com/s.json' })).toMatch(/Unsupported ref/);
  });
});

describe('SCHEMA_UNSUPPORTED from each way servers say it', () => {
  it.each([
    [
      400,
      '{"error":{"message":"Unrecognized request argument supplied: response_format","type":"invalid_request_error"}}',
    ],
    [
      500,
      '{"error":{"code":500,"message":"\\"json_schema\\": JSON schema conversion failed:\\nUnrecognized schema: {}","type":"server_error"}}',
    ],
    [
      400,
      '{"error":"json: cannot unmarshal object into Go struct field ChatRequest.format of type string"}',
    ],
    [500, '{"error":"invalid JSON schema in format"}'],
    [400, '{"error":{"message":"\'response_format.type\' must be \'json_schema\' or \'text\'"}}'],
    [
      400,
      '{"object":"error","message":"The provided JSON schema contains features not supported by xgrammar.","type":"BadRequestError","code":400}',
    ],
    [
      422,
      '{"detail":[{"loc":["body","response_format"],"msg":"Extra inputs are not permitted","type":"extra_forbidden"}]}',
    ],
  ])('%i %s', (status, body) => {
    const e = errorFromResponse(status, body, 'openai', true);
    expect(e.code).toBe('SCHEMA_UNSUPPORTED');
    expect(isSchemaUnsupported(e)).toBe(true);
    // The same words from a request that asked for no schema (a chat's tool schemas) are not.
    expect(errorFromResponse(status, body, 'openai').code).not.toBe('SCHEMA_UNSUPPORTED');
  });

  it('other refusals keep their codes', () => {
    expect(errorFromResponse(400, '{"error":"llama3 does not support tools"}').code).toBe(
      'TOOLS_UNSUPPORTED',
    );
    expect(
      errorFromResponse(
        400,
        '{"error":{"message":"the request exceeds the available context size"}}',
      ).code,
    ).toBe('CONTEXT_OVERFLOW');
    expect(
      errorFromResponse(422, '{"detail":[{"loc":["body","temperature"],"msg":"bad"}]}').code,
    ).toBe('BAD_REQUEST');
    expect(isSchemaUnsupported(new Error('x'))).toBe(false);
  });
});
