// The connector to the user's model server: detection, streamed chat completions (OpenAI wire
// format) and KoboldCPP native generation, one JSON answer constrained to a schema in each
// server's own parameter, abort with genkey, server-side token counts, and network failures
// turned into typed errors with a sentence that says the fix.
import {
  corsError,
  errorFromResponse,
  isAbortError,
  errorFromStreamPayload,
  malformedStreamError,
  serverDownError,
  unreachableError,
  tooLargeError,
} from './errors';
import { MAX_ERROR_BODY_CHARS, MAX_TOOL_PARSE_CHARS, sizeInWords } from './limits';
import { sseEventBatches } from './sse';
import { koboldNativeReducer, openAiChunkReducer, type StreamReducer } from './stream';
import { estimateTokens } from '../memory/text';
import {
  LlmError,
  type ChatMessage,
  type GenerationResult,
  type ServerInfo,
  type ServerKind,
  type SseEvent,
  type ToolSpec,
} from './types';

export const DEFAULT_ENDPOINT = 'http://localhost:5001';
export const DEFAULT_CONTEXT_SIZE = 4096;

/** Each server kind as people call it. */
export const SERVER_LABELS: Readonly<Record<ServerKind, string>> = {
  koboldcpp: 'KoboldCPP',
  llamacpp: 'llama.cpp',
  ollama: 'Ollama',
  lmstudio: 'LM Studio',
  openai: 'OpenAI-compatible server',
  inpage: 'In this browser',
};

/** The model name KoboldCPP reports instead of the real one to a client without its password. */
const KOBOLD_PROTECTED_MODEL = 'protected-model';

/**
 * Detection succeeded, but KoboldCPP has a password that was not sent (or is wrong): it answers
 * detection without it and refuses generation with 401, so say so before the first chat.
 */
export function koboldPasswordMissing(info: ServerInfo): boolean {
  return info.kind === 'koboldcpp' && info.model === KOBOLD_PROTECTED_MODEL;
}

/** The sentence, with the fix, for `koboldPasswordMissing`. */
export function koboldPasswordError(info: ServerInfo): LlmError {
  return new LlmError(
    'UNAUTHORIZED',
    `KoboldCPP at ${info.baseUrl} has a password, and the one in Settings is missing or wrong: enter it under API key / password.`,
    { kind: 'koboldcpp' },
  );
}

export interface ConnectorOptions {
  /** Base URL of the server (default http://localhost:5001, KoboldCPP). */
  endpoint?: string;
  /** API key or KoboldCPP password, sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** Context size to use instead of what the server reports (0/undefined: the server's). */
  contextSize?: number;
  /** 503 handling: attempts in all and the first delay (doubles each time). */
  retry?: { attempts: number; baseDelayMs: number };
  /** Injected for tests; default the global fetch. */
  fetch?: typeof fetch;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Native tools; omit for prompted mode. */
  tools?: ToolSpec[];
  maxTokens: number;
  temperature?: number;
  stop?: string[];
  signal?: AbortSignal;
  onToken?: (text: string) => void;
}

export interface GenerateRequest {
  prompt: string;
  maxTokens: number;
  temperature?: number;
  stop?: string[];
  signal?: AbortSignal;
  onToken?: (text: string) => void;
}

/** How a structured answer is asked for: the server's schema parameter, or the prompt alone. */
export type StructuredMode = 'constrained' | 'prompted';

export interface StructuredRequest {
  messages: ChatMessage[];
  /**
   * KoboldCPP: `messages` as its native prompt with the instruct placeholders (`koboldPrompt`),
   * sent to `/api/v1/generate` with `grammar`. Without it, KoboldCPP gets `messages` on its
   * OpenAI endpoint with `response_format` (which it also turns into a grammar). Other servers
   * ignore it.
   */
  prompt?: string;
  /** The JSON schema of the answer (sent in constrained mode only). */
  schema: Record<string, unknown>;
  /** The schema's name where the wire wants one (OpenAI's `json_schema.name`). */
  schemaName?: string;
  maxTokens: number;
  temperature?: number;
  /** `constrained` (default): the server's schema parameter; `prompted`: none (the prompt asks). */
  mode?: StructuredMode;
  signal?: AbortSignal;
}

export interface StructuredResult {
  /** The answer as the model wrote it ('' when aborted). */
  text: string;
  /**
   * The request carried the schema parameter. The server may still not have applied it:
   * KoboldCPP drops a grammar it cannot read and generates freely, so check the answer anyway.
   */
  constrained: boolean;
  /** As the server said it (`stop`, `length`, …); null when it did not say. */
  finishReason: string | null;
  /** Stopped by the caller's signal. */
  aborted: boolean;
}

export interface Connector {
  readonly baseUrl: string;
  /** Finds out which server answers, its model and context size. */
  detect(signal?: AbortSignal): Promise<ServerInfo>;
  /** Streams a chat completion (`/v1/chat/completions`). */
  chat(request: ChatRequest): Promise<GenerationResult>;
  /** Streams a KoboldCPP native generation (`/api/extra/generate/stream`). */
  generate(request: GenerateRequest): Promise<GenerationResult>;
  /**
   * One JSON answer, not streamed, constrained to `schema` by the server's own parameter
   * (`structuredCall` says which) or asked for in the prompt alone. Aborting the signal ends it at
   * once (and stops KoboldCPP's generation by its genkey). A server that refuses the schema
   * rejects with SCHEMA_UNSUPPORTED; 503 is not retried (a structured answer is background work).
   */
  structured(request: StructuredRequest): Promise<StructuredResult>;
  /** Tokens of `text` by the server's tokenizer when it has one (cached), else an estimate. */
  countTokens(text: string, signal?: AbortSignal): Promise<number>;
  /**
   * Whether the server takes native tool calls for the detected model, asked as a chat does (a
   * streamed request with `tools`, one token long, its answer not read). Servers say no with a
   * refusal of the request: llama.cpp without `--jinja`, or a build without streamed tools, and
   * Ollama for a model without tool support (PROTOCOLS.md). Other failures reject as a chat's do.
   */
  probeTools(signal?: AbortSignal): Promise<ToolProbe>;
}

/** What probeTools learned: native tool calls work, or the server's refusal as a sentence. */
export type ToolProbe = { native: true } | { native: false; message: string };

/**
 * A generation's stop (`stop`: KoboldCPP's abort by genkey), told once, in the abort itself: a
 * Stop before the server answers stops it too, and a page that goes runs no code after the abort.
 * `tell` tells it now (once); `done` stops listening once the request has settled.
 */
function stopOnAbort(
  signal: AbortSignal | undefined,
  stop: (() => void) | undefined,
): { tell(): void; done(): void } {
  let told = false;
  const tell = () => {
    if (told) return;
    told = true;
    stop?.();
  };
  signal?.addEventListener('abort', tell, { once: true });
  return { tell, done: () => signal?.removeEventListener('abort', tell) };
}

/** The one tool a probe offers: valid for every server (KoboldCPP's rules included). */
export const PROBE_TOOL: ToolSpec = {
  type: 'function',
  function: {
    name: 'ping',
    description: 'Answers pong.',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string', description: 'Any text.' } },
    },
  },
};

export function normaliseEndpoint(endpoint: string): string {
  let url = endpoint.trim();
  if (!/^https?:\/\//i.test(url)) url = 'http://' + url;
  url = url.replace(/\/+$/, '');
  // People paste the OpenAI base URL; the connector adds /v1/... itself.
  return url.replace(/\/v1$/i, '');
}

export function createConnector(options: ConnectorOptions = {}): Connector {
  const baseUrl = normaliseEndpoint(options.endpoint ?? DEFAULT_ENDPOINT);
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const retry = options.retry ?? { attempts: 3, baseDelayMs: 700 };
  let info: ServerInfo | undefined;
  const tokenCache = new Map<string, number>();

  const headers = (json = false): Record<string, string> => ({
    ...(json ? { 'Content-Type': 'application/json' } : {}),
    ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}),
  });

  /** fetch with network failures classified (server down vs CORS) and 503s retried. */
  async function request(
    path: string,
    init: RequestInit = {},
    kind = info?.kind ?? kindFromPort(baseUrl),
    attempts = retry.attempts,
    schema = false,
  ): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await doFetch(baseUrl + path, init);
      } catch (e) {
        if (isAbortError(e)) throw e;
        throw await classifyNetworkError(kind);
      }
      if (response.status === 503 && attempt < attempts) {
        await response.body?.cancel().catch(() => undefined);
        await sleep(retry.baseDelayMs * 2 ** (attempt - 1), init.signal ?? undefined);
        continue;
      }
      if (!response.ok) {
        const text = await readCapped(response, MAX_ERROR_BODY_CHARS);
        throw errorFromResponse(response.status, text, kind, schema);
      }
      return response;
    }
  }

  /**
   * `fetch` rejects alike for "nothing listens" and "CORS refused"; a no-cors probe tells them
   * apart, except in a cross-origin isolated page, whose COEP blocks the probe's opaque answer too.
   */
  async function classifyNetworkError(kind?: ServerKind): Promise<LlmError> {
    const page = globalThis as { crossOriginIsolated?: boolean; location?: { origin?: string } };
    if (page.crossOriginIsolated === true) {
      // KoboldCPP and llama-server let every page read their replies: nothing listens. (Port
      // 5001 is KoboldCPP's own; 8080, llama-server's default, is many servers', so it counts
      // only once detection found llama.cpp there.)
      if (kind === 'koboldcpp' || (kind === 'llamacpp' && info?.kind === 'llamacpp')) {
        return serverDownError(baseUrl, kind);
      }
      return unreachableError(baseUrl, kind, page.location?.origin);
    }
    try {
      await doFetch(baseUrl + '/', { mode: 'no-cors' });
      return corsError(
        baseUrl,
        kind,
        (globalThis as { location?: { origin?: string } }).location?.origin,
      );
    } catch {
      return serverDownError(baseUrl, kind);
    }
  }

  async function getJson(path: string, signal?: AbortSignal): Promise<unknown | undefined> {
    try {
      const r = await request(path, { headers: headers(), signal });
      return await r.json();
    } catch (e) {
      if (isAbortError(e)) throw e;
      if (
        e instanceof LlmError &&
        (e.code === 'SERVER_DOWN' || e.code === 'CORS' || e.code === 'UNAUTHORIZED')
      ) {
        throw e;
      }
      return undefined;
    }
  }

  async function detect(signal?: AbortSignal): Promise<ServerInfo> {
    const override =
      options.contextSize && options.contextSize > 0 ? options.contextSize : undefined;
    const kobold = (await getJson('/api/extra/version', signal)) as
      { result?: unknown; version?: unknown } | undefined;
    if (kobold && kobold.result === 'KoboldCpp') {
      const ctx = (await getJson('/api/extra/true_max_context_length', signal)) as
        { value?: unknown } | undefined;
      const model = (await getJson('/api/v1/model', signal)) as { result?: unknown } | undefined;
      info = {
        kind: 'koboldcpp',
        baseUrl,
        model: typeof model?.result === 'string' ? model.result.replace(/^koboldcpp\//, '') : '',
        contextSize: override ?? positive(ctx?.value) ?? DEFAULT_CONTEXT_SIZE,
        version: typeof kobold.version === 'string' ? kobold.version : undefined,
        tokenizer: true,
      };
      return info;
    }
    const props = (await getJson('/props', signal)) as
      | { default_generation_settings?: { n_ctx?: unknown }; n_ctx?: unknown; model_path?: unknown }
      | undefined;
    const models = (await getJson('/v1/models', signal)) as
      { data?: { id?: unknown }[] } | undefined;
    const firstModel = typeof models?.data?.[0]?.id === 'string' ? models.data[0].id : '';
    if (props && (props.default_generation_settings || props.n_ctx !== undefined)) {
      const modelPath = typeof props.model_path === 'string' ? props.model_path : '';
      info = {
        kind: 'llamacpp',
        baseUrl,
        model: firstModel || modelPath.split(/[\\/]/).pop() || '',
        contextSize:
          override ??
          positive(props.default_generation_settings?.n_ctx) ??
          positive(props.n_ctx) ??
          DEFAULT_CONTEXT_SIZE,
        tokenizer: true,
      };
      return info;
    }
    if (models) {
      const ollama = (await getJson('/api/version', signal)) as { version?: unknown } | undefined;
      const kind: ServerKind =
        ollama && typeof ollama.version === 'string'
          ? 'ollama'
          : baseUrl.endsWith(':1234')
            ? 'lmstudio'
            : 'openai';
      info = {
        kind,
        baseUrl,
        model: firstModel,
        contextSize: override ?? DEFAULT_CONTEXT_SIZE,
        tokenizer: false,
      };
      if (kind === 'ollama' && typeof ollama?.version === 'string') info.version = ollama.version;
      return info;
    }
    throw new LlmError(
      'NOT_FOUND',
      `Something answers at ${baseUrl}, but it is not KoboldCPP, llama.cpp or an OpenAI-compatible server. Check the Endpoint URL in Settings.`,
    );
  }

  async function stream(
    path: string,
    body: Record<string, unknown>,
    reducer: StreamReducer,
    signal: AbortSignal | undefined,
    onToken: ((t: string) => void) | undefined,
    onAbort?: () => void,
  ): Promise<GenerationResult> {
    // Told in the abort itself, once: a Stop while the server has not answered yet (KoboldCPP's
    // tool path is silent until it ends; a long prompt is read before the first token) must stop
    // the generation too, not only one that is streaming.
    const stop = stopOnAbort(signal, onAbort);
    const stopped = (): GenerationResult => {
      stop.tell();
      return { ...reducer.result(), aborted: true };
    };
    try {
      let response: Response;
      try {
        response = await request(path, {
          method: 'POST',
          headers: headers(true),
          body: JSON.stringify(body),
          signal,
        });
      } catch (e) {
        if (isAbortError(e) || signal?.aborted) return stopped();
        throw e;
      }
      if (!response.body)
        throw new LlmError('MALFORMED_STREAM', 'The server answered without a body.');
      let done = false;
      try {
        read: for await (const events of sseEventBatches(response.body, signal)) {
          for (const event of events) {
            // Stopped by a consumer of the tokens: not one event more.
            if (signal?.aborted) break read;
            const step = pushEvent(reducer, event, info?.kind);
            for (const t of step.tokens) onToken?.(t);
            if (step.done) {
              done = true;
              break read;
            }
          }
        }
      } catch (e) {
        if (isAbortError(e) || signal?.aborted) return stopped();
        if (e instanceof LlmError) {
          // A bad event mid-stream (a data line that is not JSON, an error event) loses nothing
          // already shown: what came before it is kept, as after a dropped connection.
          const said = reducer.result().text;
          if (!said || e.detail.partial !== undefined) throw e;
          throw new LlmError(e.code, `${e.message} The partial answer was kept.`, {
            ...e.detail,
            partial: said,
          });
        }
        throw disconnected(baseUrl, reducer.result().text);
      }
      if (signal?.aborted) return stopped();
      // A server that closes right after its finish_reason (no [DONE]) ended normally too.
      if (!done && reducer.result().finishReason === null)
        throw disconnected(baseUrl, reducer.result().text);
      return { ...reducer.result(), aborted: false };
    } finally {
      stop.done();
    }
  }

  async function chat(req: ChatRequest): Promise<GenerationResult> {
    const kind = info?.kind;
    const genkey = kind === 'koboldcpp' ? makeGenkey() : undefined;
    const body: Record<string, unknown> = {
      model: info?.model || undefined,
      messages: req.messages,
      stream: true,
      max_tokens: req.maxTokens,
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.stop?.length ? { stop: req.stop } : {}),
      ...(req.tools?.length ? { tools: req.tools, tool_choice: 'auto' } : {}),
      ...(genkey ? { genkey } : {}),
    };
    return stream(
      '/v1/chat/completions',
      body,
      openAiChunkReducer(),
      req.signal,
      req.onToken,
      () => {
        if (genkey) void abortKobold(genkey);
      },
    );
  }

  async function generate(req: GenerateRequest): Promise<GenerationResult> {
    const genkey = makeGenkey();
    const body = {
      prompt: req.prompt,
      max_length: req.maxTokens,
      max_context_length: info?.contextSize ?? DEFAULT_CONTEXT_SIZE,
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      stop_sequence: req.stop ?? [],
      trim_stop: true,
      genkey,
    };
    return stream(
      '/api/extra/generate/stream',
      body,
      koboldNativeReducer(),
      req.signal,
      req.onToken,
      () => {
        void abortKobold(genkey);
      },
    );
  }

  async function structured(req: StructuredRequest): Promise<StructuredResult> {
    const kind = info?.kind ?? kindFromPort(baseUrl) ?? 'openai';
    const constrained = (req.mode ?? 'constrained') === 'constrained';
    const genkey = kind === 'koboldcpp' ? makeGenkey() : undefined;
    const call = structuredCall(kind, req, {
      model: info?.model ?? '',
      contextSize: info?.contextSize ?? DEFAULT_CONTEXT_SIZE,
      genkey,
    });
    // KoboldCPP is told to stop in the abort itself, not after the request settles: a page that
    // goes (the keeper's run stopped on pagehide) runs no code after it.
    const stop = stopOnAbort(req.signal, genkey ? () => void abortKobold(genkey) : undefined);
    const stopped = (): StructuredResult => {
      stop.tell();
      return { text: '', constrained, finishReason: null, aborted: true };
    };
    try {
      const response = await request(
        call.path,
        {
          method: 'POST',
          headers: headers(true),
          body: JSON.stringify(call.body),
          signal: req.signal,
        },
        kind,
        1,
        constrained,
      );
      const body = await readAll(response, MAX_TOOL_PARSE_CHARS);
      if (body === undefined) {
        throw tooLargeError(`an answer over ${sizeInWords(MAX_TOOL_PARSE_CHARS)}`, kind);
      }
      if (req.signal?.aborted) return stopped();
      const answer = structuredAnswer(call.path, body, kind);
      return { ...answer, constrained, aborted: false };
    } catch (e) {
      if (isAbortError(e) || req.signal?.aborted) return stopped();
      throw e;
    } finally {
      stop.done();
    }
  }

  /** Closing the connection does not stop KoboldCPP mid-prompt; its abort endpoint does. */
  async function abortKobold(genkey: string): Promise<void> {
    try {
      await doFetch(baseUrl + '/api/extra/abort', {
        method: 'POST',
        headers: headers(true),
        body: JSON.stringify({ genkey }),
        // Sent even when the page goes meanwhile (a closed tab would leave KoboldCPP generating).
        keepalive: true,
      });
    } catch {
      // best effort: the stream is already closed on our side
    }
  }

  async function countTokens(text: string, signal?: AbortSignal): Promise<number> {
    if (!text) return 0;
    const cached = tokenCache.get(text);
    if (cached !== undefined) return cached;
    let n: number | undefined;
    try {
      if (info?.kind === 'koboldcpp') {
        const r = await request('/api/extra/tokencount', {
          method: 'POST',
          headers: headers(true),
          body: JSON.stringify({ prompt: text }),
          signal,
        });
        n = positiveOrZero(((await r.json()) as { value?: unknown }).value);
      } else if (info?.kind === 'llamacpp') {
        const r = await request('/tokenize', {
          method: 'POST',
          headers: headers(true),
          body: JSON.stringify({ content: text }),
          signal,
        });
        const tokens = ((await r.json()) as { tokens?: unknown }).tokens;
        n = Array.isArray(tokens) ? tokens.length : undefined;
      }
    } catch (e) {
      if (isAbortError(e)) throw e;
      n = undefined; // the tokenizer is optional: estimate instead
    }
    const count = n ?? estimateTokens(text);
    if (n !== undefined) {
      if (tokenCache.size > 5000) tokenCache.clear();
      tokenCache.set(text, count);
    }
    return count;
  }

  async function probeTools(signal?: AbortSignal): Promise<ToolProbe> {
    const body = {
      model: info?.model || undefined,
      messages: [{ role: 'user', content: 'Say OK.' }],
      stream: true,
      max_tokens: 1,
      tools: [PROBE_TOOL],
      tool_choice: 'auto',
    };
    let response: Response;
    try {
      response = await request(
        '/v1/chat/completions',
        { method: 'POST', headers: headers(true), body: JSON.stringify(body), signal },
        info?.kind,
        1,
      );
    } catch (e) {
      if (e instanceof LlmError && e.code === 'TOOLS_UNSUPPORTED')
        return { native: false, message: e.message };
      throw e;
    }
    // Accepted: that is the answer; the token itself is not needed.
    await response.body?.cancel().catch(() => undefined);
    return { native: true };
  }

  return { baseUrl, detect, chat, generate, structured, countTokens, probeTools };
}

/** One structured request on the wire: where it goes and its JSON body. */
export interface StructuredCall {
  path: '/api/v1/generate' | '/api/chat' | '/v1/chat/completions';
  body: Record<string, unknown>;
}

/**
 * The request `structured` sends to a server of `kind` (docs/chat.md, "Memory keeper"): the
 * schema goes where that server reads it, and only in constrained mode.
 * - KoboldCPP: native `/api/v1/generate` with `grammar` holding the schema as a JSON string
 *   (KoboldCPP turns a JSON grammar into GBNF itself; one it cannot read is ignored), or, with
 *   no native prompt given, its OpenAI endpoint with `response_format`.
 * - llama.cpp: `/v1/chat/completions` with llama-server's own top-level `json_schema`.
 * - Ollama: native `/api/chat` with `format` (the schema object), `stream: false`.
 * - LM Studio, vLLM, any other: `response_format: {type: 'json_schema', json_schema: {name,
 *   strict, schema}}`.
 */
export function structuredCall(
  kind: ServerKind,
  req: StructuredRequest,
  server: { model: string; contextSize: number; genkey?: string },
): StructuredCall {
  const constrained = (req.mode ?? 'constrained') === 'constrained';
  const temperature = req.temperature !== undefined ? { temperature: req.temperature } : {};
  if (kind === 'koboldcpp' && req.prompt !== undefined) {
    return {
      path: '/api/v1/generate',
      body: {
        prompt: req.prompt,
        max_length: req.maxTokens,
        max_context_length: server.contextSize,
        ...temperature,
        // The model's next turn would start here: an answer never goes past it.
        stop_sequence: ['{{[INPUT]}}'],
        trim_stop: true,
        ...(server.genkey ? { genkey: server.genkey } : {}),
        ...(constrained
          ? { grammar: JSON.stringify(req.schema), grammar_retain_state: false }
          : {}),
      },
    };
  }
  if (kind === 'ollama') {
    return {
      path: '/api/chat',
      body: {
        model: server.model,
        messages: req.messages.map((m) => ({ role: m.role, content: m.content ?? '' })),
        stream: false,
        options: { num_predict: req.maxTokens, ...temperature },
        ...(constrained ? { format: req.schema } : {}),
      },
    };
  }
  const body: Record<string, unknown> = {
    ...(server.model ? { model: server.model } : {}),
    messages: req.messages,
    stream: false,
    max_tokens: req.maxTokens,
    ...temperature,
    ...(server.genkey ? { genkey: server.genkey } : {}),
  };
  if (constrained) {
    if (kind === 'llamacpp') body.json_schema = req.schema;
    else {
      body.response_format = {
        type: 'json_schema',
        json_schema: { name: req.schemaName ?? 'answer', strict: true, schema: req.schema },
      };
    }
  }
  return { path: '/v1/chat/completions', body };
}

/**
 * The answer in a structured reply's body, by the endpoint it came from. A body that says it is
 * an error (LM Studio answers some with 200) is one; a body without the answer is MALFORMED_STREAM.
 */
export function structuredAnswer(
  path: StructuredCall['path'],
  body: string,
  kind?: ServerKind,
): { text: string; finishReason: string | null } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw malformedStreamError(`the answer is not JSON: ${body.slice(0, 80)}`, kind);
  }
  const rec = (v: unknown): Record<string, unknown> | undefined =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  const reason = (v: unknown): string | null =>
    typeof v === 'string' && v !== '' && v !== 'null' ? v : null;
  const top = rec(parsed);
  let text: unknown;
  let finishReason: string | null = null;
  if (path === '/api/v1/generate') {
    const first = Array.isArray(top?.results) ? rec(top.results[0]) : undefined;
    text = first?.text;
    finishReason = reason(first?.finish_reason);
  } else if (path === '/api/chat') {
    text = rec(top?.message)?.content;
    finishReason = reason(top?.done_reason);
  } else {
    const choice = Array.isArray(top?.choices) ? rec(top.choices[0]) : undefined;
    const content = rec(choice?.message)?.content;
    text = content === null ? '' : content;
    finishReason = reason(choice?.finish_reason);
  }
  if (typeof text === 'string') return { text, finishReason };
  if (top && (top.error ?? top.detail) !== undefined) throw errorFromStreamPayload(body, kind);
  throw malformedStreamError(`no answer in ${body.slice(0, 80)}`, kind);
}

/** Before detection succeeds (e.g. CORS blocks it), the usual port is the best guess of the kind. */
export function kindFromPort(baseUrl: string): ServerKind | undefined {
  const port = /:(\d+)$/.exec(new URL(baseUrl).host)?.[1];
  return (
    { '5001': 'koboldcpp', '8080': 'llamacpp', '11434': 'ollama', '1234': 'lmstudio' } as const
  )[port ?? ''];
}

/**
 * One event into the reducer. The reducers throw LlmErrors for what they cannot read; anything
 * else they throw is a reply the app could not read too, never the dropped connection that
 * errors from reading the body mean.
 */
function pushEvent(
  reducer: { push(e: SseEvent): { tokens: string[]; done: boolean } },
  event: SseEvent,
  kind: ServerKind | undefined,
): { tokens: string[]; done: boolean } {
  try {
    return reducer.push(event);
  } catch (e) {
    if (e instanceof LlmError) throw e;
    throw malformedStreamError(e instanceof Error ? e.message : String(e), kind);
  }
}

/**
 * The start of an error reply's body, at most `maxChars`: a server that sends an endless or
 * huge error page still gets its message read, and the rest is not waited for.
 */
async function readCapped(response: Response, maxChars: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder('utf-8');
  let text = '';
  try {
    while (text.length < maxChars) {
      const { done, value } = await reader.read();
      if (done) {
        text += decoder.decode();
        return text.slice(0, maxChars);
      }
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel().catch(() => undefined);
  } catch {
    // a body that fails midway: its start is still the best message there is
  } finally {
    reader.releaseLock();
  }
  return text.slice(0, maxChars);
}

/** A reply body whole, or undefined once it passes `maxChars` (the rest is not read). */
async function readAll(response: Response, maxChars: number): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder('utf-8');
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      text += decoder.decode(value, { stream: true });
      if (text.length > maxChars) {
        await reader.cancel().catch(() => undefined);
        return undefined;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function disconnected(baseUrl: string, partial: string): LlmError {
  return new LlmError(
    'DISCONNECTED',
    `The server at ${baseUrl} closed the connection in the middle of the answer (it may have crashed or run out of memory).` +
      (partial
        ? ' The partial answer was kept.'
        : ' Try again, or check the server window for errors.'),
    { partial },
  );
}

function positive(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : undefined;
}

function positiveOrZero(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined;
}

function makeGenkey(): string {
  const random = globalThis.crypto?.randomUUID?.() ?? `${Date.now()}-${Math.random()}`;
  return `sm-${random}`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
