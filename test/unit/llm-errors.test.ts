import { describe, expect, it } from 'vitest';
import {
  asLlmError,
  corsError,
  errorFromResponse,
  errorFromStreamPayload,
  isAbortError,
  isToolsUnsupported,
  malformedStreamError,
  serverDownError,
  serverMessageOf,
} from '../../src/llm/errors';
import { LlmError } from '../../src/llm/types';

const oa = (message: string) =>
  JSON.stringify({ error: { message, type: 'invalid_request_error' } });

/** Every user-facing message: one or two plain sentences, no stack traces or JSON. */
const plain = (message: string) => {
  expect(message.length).toBeGreaterThan(20);
  expect(message.length).toBeLessThan(520);
  expect(message).toMatch(/[.!]$/);
  expect(message).not.toMatch(/[{}]|Error:|undefined|null/);
};

describe('serverMessageOf', () => {
  it("reads each server's error shape", () => {
    expect(
      serverMessageOf('{"detail":{"msg":"Server is busy; please try again later.","type":"x"}}'),
    ).toBe('Server is busy; please try again later.');
    expect(serverMessageOf('{"detail":{"error":"Unauthorized","msg":""}}')).toBe('Unauthorized');
    expect(serverMessageOf(oa('bad thing'))).toBe('bad thing');
    expect(serverMessageOf('{"error":"model \\"x\\" not found"}')).toBe('model "x" not found');
    expect(serverMessageOf('{"code":500,"message":"boom","type":"server_error"}')).toBe('boom');
    expect(serverMessageOf('{"detail":[{"msg":"field required"},{"msg":"bad"}]}')).toBe(
      'field required; bad',
    );
  });

  it('reads HTML pages and plain text', () => {
    expect(
      serverMessageOf('<!DOCTYPE html><html><head><title>404 Not Found</title></head></html>'),
    ).toBe('404 Not Found');
    expect(
      serverMessageOf('<html><body><h1>Error</h1>\n<p>Bad &amp; wrong</p></body></html>'),
    ).toBe('Error Bad & wrong');
    expect(serverMessageOf('  Not Found\n')).toBe('Not Found');
    expect(serverMessageOf('{broken json')).toBe('{broken json');
    expect(serverMessageOf('')).toBe('');
    expect(serverMessageOf('x'.repeat(1000)).length).toBeLessThanOrEqual(300);
  });
});

describe('errorFromResponse', () => {
  it('maps 401/403 to UNAUTHORIZED with the Settings fix', () => {
    const err = errorFromResponse(
      401,
      '{"detail":{"error":"Unauthorized","msg":"Authentication key is missing or invalid."}}',
      'koboldcpp',
    );
    expect(err).toBeInstanceOf(LlmError);
    expect(err.code).toBe('UNAUTHORIZED');
    expect(err.message).toBe('The server refused the password/API key: check it in Settings.');
    expect(err.detail).toMatchObject({ status: 401, kind: 'koboldcpp' });
    expect(errorFromResponse(403, 'Forbidden').code).toBe('UNAUTHORIZED');
  });

  it('maps 503 (KoboldCPP busy, llama.cpp loading) and 429 to BUSY', () => {
    const err = errorFromResponse(
      503,
      '{"detail":{"msg":"Server is busy; please try again later.","type":"service_unavailable"}}',
      'koboldcpp',
    );
    expect(err.code).toBe('BUSY');
    expect(err.message).toMatch(/^KoboldCPP is busy/);
    plain(err.message);
    expect(errorFromResponse(503, '{"error":{"code":503,"message":"Loading model"}}').code).toBe(
      'BUSY',
    );
    expect(errorFromResponse(429, 'Too Many Requests').code).toBe('BUSY');
  });

  it('recognises tools-unsupported refusals', () => {
    const cases: [string, string | undefined][] = [
      [oa('tools param requires --jinja flag'), 'llamacpp'],
      [oa('Cannot use tools with stream'), 'llamacpp'],
      [
        '{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error"}}',
        'ollama',
      ],
      [
        oa(
          '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        ),
        'openai',
      ],
      [oa('Unsupported param: tools'), 'llamacpp'],
      [oa('This model does not support tool use'), 'lmstudio'],
    ];
    for (const [body, kind] of cases) {
      const err = errorFromResponse(400, body, kind as 'llamacpp');
      expect(err.code, body).toBe('TOOLS_UNSUPPORTED');
      expect(isToolsUnsupported(err)).toBe(true);
      plain(err.message.replace(/\([^)]*\)/g, ''));
    }
    expect(
      errorFromResponse(400, oa('tools param requires --jinja flag'), 'llamacpp').message,
    ).toMatch(/start llama-server with --jinja/);
    expect(
      errorFromResponse(400, oa('"auto" tool choice requires --enable-auto-tool-choice')).message,
    ).toMatch(/--enable-auto-tool-choice/);
  });

  it('recognises context overflow phrasings', () => {
    const phrasings = [
      '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}',
      oa("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."),
      '{"error":{"code":"context_length_exceeded","message":"Context length exceeded"}}',
      oa('input is too large to process. increase the physical batch size'),
      oa('prompt is too long (9000 tokens, max 8192)'),
      oa(
        'Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.',
      ),
      oa('Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096.'),
      oa('input length exceeds maximum context length'),
      'Context shift is disabled',
    ];
    for (const body of phrasings) {
      expect(errorFromResponse(400, body).code, body).toBe('CONTEXT_OVERFLOW');
    }
    expect(errorFromResponse(500, phrasings[0]!).code).toBe('CONTEXT_OVERFLOW');
  });

  it('maps 404 to NOT_FOUND, other 4xx to BAD_REQUEST and 5xx to SERVER_ERROR', () => {
    const nf = errorFromResponse(404, '<html><title>404 Not Found</title></html>', 'koboldcpp');
    expect(nf.code).toBe('NOT_FOUND');
    expect(nf.message).toMatch(/Endpoint URL/);
    const bad = errorFromResponse(422, oa('temperature must be a number'), 'ollama');
    expect(bad.code).toBe('BAD_REQUEST');
    expect(bad.message).toContain('temperature must be a number');
    expect(bad.detail.serverMessage).toBe('temperature must be a number');
    const server = errorFromResponse(500, 'Internal Server Error');
    expect(server.code).toBe('SERVER_ERROR');
    expect(server.message).toMatch(/HTTP 500/);
    expect(errorFromResponse(502, '').detail.serverMessage).toBeUndefined();
  });
});

describe('errorFromStreamPayload', () => {
  it("uses the payload's code as the status", () => {
    const err = errorFromStreamPayload('{"code":400,"message":"bad request here"}', 'llamacpp');
    expect(err.code).toBe('BAD_REQUEST');
    expect(err.detail.status).toBe(400);
    expect(errorFromStreamPayload('{"error":{"code":503,"message":"x"}}').code).toBe('BUSY');
    expect(errorFromStreamPayload('something broke').code).toBe('SERVER_ERROR');
  });
});

describe('network failures', () => {
  it('serverDownError names the URL and says what to start', () => {
    const err = serverDownError('http://localhost:5001');
    expect(err.code).toBe('SERVER_DOWN');
    expect(err.message).toBe(
      'Nothing answers at http://localhost:5001: start KoboldCPP (or your server) and check the Endpoint URL in Settings.',
    );
    expect(serverDownError('http://127.0.0.1:11434', 'ollama').message).toContain('start Ollama');
  });

  it('corsError gives the fix for each server kind', () => {
    const url = 'http://localhost:11434';
    const origin = 'https://memory.example';
    expect(corsError(url, 'ollama', origin).message).toContain(`OLLAMA_ORIGINS=${origin}`);
    expect(corsError(url, 'lmstudio').message).toContain('"Enable CORS"');
    expect(corsError(url, 'koboldcpp').message).toMatch(/port/);
    expect(corsError(url, 'llamacpp').message).toMatch(/llama.cpp server/);
    expect(corsError(url, undefined, origin).message).toContain(`allow ${origin}`);
    for (const kind of [
      'koboldcpp',
      'llamacpp',
      'ollama',
      'lmstudio',
      'openai',
      undefined,
    ] as const) {
      const err = corsError(url, kind, origin);
      expect(err.code).toBe('CORS');
      plain(err.message);
    }
  });

  it('malformedStreamError is a readable sentence', () => {
    const err = malformedStreamError('a data line is not JSON', 'llamacpp');
    expect(err.code).toBe('MALFORMED_STREAM');
    expect(err.message).toMatch(/^The llama.cpp server sent a reply the app could not read/);
  });

  it('tells a user cancel apart from errors', () => {
    expect(isAbortError(new DOMException('The operation was aborted.', 'AbortError'))).toBe(true);
    expect(isAbortError(AbortSignal.abort().reason)).toBe(true);
    expect(isAbortError(new TypeError('Failed to fetch'))).toBe(false);
    expect(isAbortError(null)).toBe(false);
    expect(isToolsUnsupported(new Error('x'))).toBe(false);
    expect(isToolsUnsupported({ name: 'LlmError', code: 'TOOLS_UNSUPPORTED', message: '' })).toBe(
      true,
    );
  });
});

describe('asLlmError', () => {
  it('keeps an LlmError and says anything else as an unexpected failure', () => {
    const known = new LlmError('BUSY', 'The server is busy.');
    expect(asLlmError(known)).toBe(known);
    const other = asLlmError(new TypeError('x is not a function'));
    expect(other).toBeInstanceOf(LlmError);
    expect(other.code).toBe('SERVER_ERROR');
    expect(other.message).toBe('Something went wrong: x is not a function');
    expect(asLlmError('plain').message).toBe('Something went wrong: plain');
  });
});
