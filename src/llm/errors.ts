// Turns server replies and network failures into LlmErrors whose message is a plain sentence
// with the fix (docs/design.md, "Connector and its errors"), recognising each server's error
// shapes and phrasings (PROTOCOLS.md).

import { MAX_ERROR_BODY_CHARS, MAX_JSON_DEPTH, MAX_TOOL_PARSE_CHARS, sizeInWords } from './limits';
import { LlmError, type LlmErrorCode, type ServerKind } from './types';

const MAX_SERVER_MESSAGE = 300;

/** Known ways servers say the prompt does not fit the context window. */
const CONTEXT_OVERFLOW_PATTERNS: readonly RegExp[] = [
  // llama.cpp: "the request exceeds the available context size, try increasing it"
  /exceed\w*\s+(?:the\s+)?(?:available\s+|maximum\s+|max\s+|model'?s?\s+)?context/i,
  // OpenAI, vLLM: "This model's maximum context length is 4096 tokens. However, …"
  /maximum\s+context\s+length/i,
  /context[_\s]length[_\s]exceeded/i,
  /context[_\s](?:window|size)[_\s]exceeded/i,
  /exceed_context_size/i,
  // llama.cpp (older), Ollama, others: "prompt is too long", "input is too large to process"
  /(?:prompt|input)\s+(?:is\s+)?too\s+(?:long|large)/i,
  /input\s+length\s+exceeds/i,
  /too\s+many\s+tokens/i,
  /context\s+shift\s+is\s+disabled/i,
  /context\s+overflow/i,
  // LM Studio: "… loaded with context length of only 4096 tokens, which is not enough"
  /context\s+length\s+of\s+only/i,
  /tokens\s+to\s+keep.*greater\s+than\s+the\s+context/i,
  // TGI: "`inputs` tokens + `max_new_tokens` must be <= 4096"
  /tokens.*must\s+be\s+<=\s*\d+/i,
];

/** Known ways servers refuse the OpenAI `tools` parameter. */
const TOOLS_UNSUPPORTED_PATTERNS: readonly RegExp[] = [
  /requires\s+--jinja/i, // llama.cpp: "tools param requires --jinja flag"
  /cannot\s+use\s+tools\s+with\s+stream/i, // llama.cpp builds without streamed tools
  /does\s+not\s+support\s+tool/i, // Ollama: "<model> does not support tools"
  /enable-auto-tool-choice/i, // vLLM: "\"auto\" tool choice requires --enable-auto-tool-choice …"
  /unsupported\s+param(?:eter)?s?:?\s*["'`]?tool/i, // old llama.cpp: "Unsupported param: tools"
  /tool(?:s|\s+calls|\s+calling|\s+use)?\s+(?:is\s+|are\s+)?not\s+supported/i,
  /unrecognized\s+request\s+argument.*\btools?\b/i,
];

/**
 * Known ways servers refuse a JSON schema for the answer (the parameter itself, or the schema it
 * cannot turn into a grammar), for the requests that send one (`Connector.structured`): a chat
 * request's native tool schemas can fail alike, and that is no refusal of an answer's schema.
 */
const SCHEMA_UNSUPPORTED_PATTERNS: readonly RegExp[] = [
  // llama.cpp (and Ollama on its llama-server runner): "\"json_schema\": JSON schema conversion failed:\n…"
  /json[\s_-]?schema\s+conversion\s+failed/i,
  // Ollama 0.5 – 0.12: "invalid JSON schema in format"; newer: "invalid format: …; expected \"json\" or a valid JSON Schema object"
  /invalid\s+json\s+schema/i,
  /invalid\s+format\b.*json\s+schema/i,
  // Ollama before 0.5 (format was a string): "json: cannot unmarshal object into Go struct field ChatRequest.format of type string"
  /cannot\s+unmarshal\b.*\bformat\b/i,
  // OpenAI-style validation: "Unrecognized request argument supplied: response_format"
  /unrecogni[sz]ed\s+(?:request\s+)?(?:argument|parameter|field|key)s?\b.*\b(?:response_format|json_schema)\b/i,
  /\b(?:unsupported|unknown|unexpected|extra|invalid)\s+(?:request\s+)?(?:argument|parameter|field|key|param)s?\b.*\b(?:response_format|json_schema)\b/i,
  /\b(?:response_format|json_schema)\b.*\b(?:not\s+supported|unsupported|not\s+allowed|not\s+permitted|must\s+be\s+one\s+of|must\s+be\s+'?json_schema|is\s+not\s+(?:a\s+)?valid)/i,
  // LM Studio: "'response_format.type' must be 'json_schema' or 'text'"
  /response_format\.type/i,
  // vLLM / xgrammar and others: "The provided JSON schema contains features not supported by xgrammar."
  /json\s+schema\b.*\bnot\s+supported/i,
  /(?:structured\s+output|guided\s+decoding|json\s+mode)\b.*\bnot\s+(?:supported|available|enabled)/i,
  /does\s+not\s+support\s+(?:structured\s+output|json\s+schema|response_format|guided)/i,
];

/** A FastAPI/pydantic 422 whose `loc` names the schema parameter (its `msg` alone does not). */
const SCHEMA_LOCATION = /"loc"\s*:\s*\[[^\]]*"(?:response_format|json_schema|format|grammar)"/;

const BUSY_PATTERNS: readonly RegExp[] = [/server\s+is\s+busy/i, /loading\s+model/i];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clip(text: string): string {
  const t = text.slice(0, MAX_ERROR_BODY_CHARS).replace(/\s+/g, ' ').trim();
  return t.length > MAX_SERVER_MESSAGE ? `${t.slice(0, MAX_SERVER_MESSAGE - 1)}…` : t;
}

/** The message inside a parsed error payload, whichever server's shape it has. */
function messageOf(value: unknown, depth = 0): string | undefined {
  if (depth > 4) return undefined;
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  if (Array.isArray(value)) {
    // FastAPI validation errors: {"detail":[{"msg":…},…]}
    const parts = value.map((v) => messageOf(v, depth + 1)).filter((m) => m !== undefined);
    return parts.length > 0 ? parts.join('; ') : undefined;
  }
  if (!isRecord(value)) return undefined;
  for (const key of ['error', 'detail', 'message', 'msg']) {
    const found = messageOf(value[key], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** `word` at `at` in `text`, in any case. */
function startsWithWord(text: string, at: number, word: string): boolean {
  return text.slice(at, at + word.length).toLowerCase() === word;
}

/** Where `pattern` (global, case-insensitive) next matches in `text` from `from`, or -1. */
function search(text: string, pattern: RegExp, from: number): number {
  pattern.lastIndex = from;
  return pattern.exec(text)?.index ?? -1;
}

const HTML_ENTITIES: Record<string, string> = {
  '&nbsp;': ' ',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&amp;': '&',
};

/**
 * The words of an HTML page: its title when it has one, else its text, with tags, scripts and
 * styles taken out. One pass with `indexOf`: a page of unclosed `<` costs time in proportion
 * to its length (a `<[^>]*>` regex retried at every `<` does not).
 */
function htmlText(html: string): string {
  const titleAt = search(html, /<title/gi, 0);
  const titleOpenEnd = titleAt === -1 ? -1 : html.indexOf('>', titleAt + 6);
  const titleClose = titleOpenEnd === -1 ? -1 : search(html, /<\/title>/gi, titleOpenEnd + 1);
  const source = titleClose === -1 ? html : html.slice(titleOpenEnd + 1, titleClose);

  // Where each block's closing tag is next, found once and reused while it lies ahead.
  const closes = new Map<string, number>();
  const closeOf = (name: 'script' | 'style', from: number): number => {
    const known = closes.get(name);
    if (known !== undefined && (known === -1 || known >= from)) return known;
    const found = search(source, name === 'script' ? /<\/script>/gi : /<\/style>/gi, from);
    closes.set(name, found);
    return found;
  };

  let out = '';
  let i = 0;
  while (i < source.length) {
    const lt = source.indexOf('<', i);
    if (lt === -1) {
      out += source.slice(i);
      break;
    }
    out += source.slice(i, lt);
    const block = startsWithWord(source, lt + 1, 'script')
      ? 'script'
      : startsWithWord(source, lt + 1, 'style')
        ? 'style'
        : undefined;
    const close = block ? closeOf(block, lt + 1 + block.length) : -1;
    if (block && close !== -1) {
      out += ' ';
      i = close + block.length + 3;
      continue;
    }
    const gt = source.indexOf('>', lt + 1);
    if (gt === -1) {
      out += source.slice(lt); // no tag closes after this: the rest is text
      break;
    }
    out += ' ';
    i = gt + 1;
  }
  return out.replace(/&(?:nbsp|lt|gt|quot|amp);/g, (entity) => HTML_ENTITIES[entity] ?? entity);
}

/**
 * The server's own words from an error body: JSON in KoboldCPP (`{"detail":{"msg"|"error"}}`),
 * OpenAI (`{"error":{"message"}}`), Ollama (`{"error":"…"}`) or llama.cpp stream
 * (`{"code","message"}`) shape, else the text of an HTML page (its title when it has one), else
 * the plain text. Collapsed to one line and clipped; '' when the body says nothing. Only the
 * first MAX_ERROR_BODY_CHARS are read.
 */
export function serverMessageOf(bodyText: string): string {
  const body = bodyText.slice(0, MAX_ERROR_BODY_CHARS).trim();
  if (body === '') return '';
  if (body.startsWith('{') || body.startsWith('[') || body.startsWith('"')) {
    try {
      const found = messageOf(JSON.parse(body));
      if (found !== undefined) return clip(found);
    } catch {
      // not JSON after all: fall through to text
    }
  }
  if (/^<(?:!doctype|html|head|body|\?xml)/i.test(body) || /<\/[a-z]+>/i.test(body)) {
    return clip(htmlText(body));
  }
  return clip(body);
}

/** The server's name as the subject at the start of a sentence. */
function serverName(kind: ServerKind | undefined): string {
  switch (kind) {
    case 'koboldcpp':
      return 'KoboldCPP';
    case 'llamacpp':
      return 'The llama.cpp server';
    case 'ollama':
      return 'Ollama';
    case 'lmstudio':
      return 'LM Studio';
    default:
      return 'The server';
  }
}

function quoted(serverMessage: string): string {
  return serverMessage === '' ? '' : ` ("${serverMessage}")`;
}

function make(
  code: LlmErrorCode,
  message: string,
  status: number | undefined,
  serverMessage: string,
  kind: ServerKind | undefined,
  partial?: string,
): LlmError {
  const detail: LlmError['detail'] = {};
  if (status !== undefined) detail.status = status;
  if (serverMessage !== '') detail.serverMessage = serverMessage;
  if (kind !== undefined) detail.kind = kind;
  if (partial !== undefined) detail.partial = partial;
  return new LlmError(code, message, detail);
}

function toolsUnsupportedMessage(serverMessage: string, kind: ServerKind | undefined): string {
  const why = quoted(serverMessage);
  if (/--jinja/i.test(serverMessage) || (kind === 'llamacpp' && /jinja/i.test(serverMessage))) {
    return `The llama.cpp server refused native tool calls${why}: start llama-server with --jinja to use them, or keep the prompted tools the app switches to.`;
  }
  if (/enable-auto-tool-choice/i.test(serverMessage)) {
    return `The server refused native tool calls${why}: start vLLM with --enable-auto-tool-choice and a --tool-call-parser, or keep the prompted tools the app switches to.`;
  }
  return `This server or model does not support native tool calls${why}: the app describes the tools in the prompt instead (prompted tools).`;
}

/**
 * Maps an HTTP error reply to an LlmError with a user-facing sentence. Recognises the message
 * before the status where servers disagree on the status (context overflow, tools refused).
 */
export function errorFromResponse(
  status: number,
  bodyText: string,
  kind?: ServerKind,
  /** The request asked for a JSON schema: only then is a refusal of one SCHEMA_UNSUPPORTED. */
  schema = false,
): LlmError {
  const msg = serverMessageOf(bodyText);
  const name = serverName(kind);
  const fail = (code: LlmErrorCode, message: string): LlmError =>
    make(code, message, status, msg, kind);

  if (status === 401 || status === 403) {
    return fail('UNAUTHORIZED', 'The server refused the password/API key: check it in Settings.');
  }
  if (status === 503 || status === 429 || BUSY_PATTERNS.some((p) => p.test(msg))) {
    return fail(
      'BUSY',
      `${name} is busy (another generation is running, or the model is still loading): wait a moment, then try again.`,
    );
  }
  if (CONTEXT_OVERFLOW_PATTERNS.some((p) => p.test(msg))) {
    return fail(
      'CONTEXT_OVERFLOW',
      `The prompt is longer than the model's context window${quoted(msg)}: lower the context size or the maximum reply length in Settings, or give the server a larger context.`,
    );
  }
  if (
    schema &&
    status >= 400 &&
    (SCHEMA_UNSUPPORTED_PATTERNS.some((p) => p.test(msg)) ||
      ((status === 400 || status === 422) &&
        SCHEMA_LOCATION.test(bodyText.slice(0, MAX_ERROR_BODY_CHARS))))
  ) {
    return fail(
      'SCHEMA_UNSUPPORTED',
      `${name} does not take a JSON schema for the answer${quoted(msg)}: the memory keeper asks for JSON in its prompt instead, and checks the answer.`,
    );
  }
  if (TOOLS_UNSUPPORTED_PATTERNS.some((p) => p.test(msg))) {
    return fail('TOOLS_UNSUPPORTED', toolsUnsupportedMessage(msg, kind));
  }
  if (status === 404) {
    return fail(
      'NOT_FOUND',
      `${name} answered "not found"${quoted(msg)}: check the Endpoint URL (just the server address, e.g. http://localhost:5001) and the model name in Settings.`,
    );
  }
  if (status >= 400 && status < 500) {
    return fail(
      'BAD_REQUEST',
      `${name} rejected the request${quoted(msg)}: check the model and generation settings, or switch Tools to "prompted" in Settings.`,
    );
  }
  return fail(
    'SERVER_ERROR',
    `${name} failed${quoted(msg)}${status >= 500 ? ` (HTTP ${status})` : ''}: check its console window, then try again.`,
  );
}

/**
 * An error reported inside a stream: llama.cpp's `error: {"code","message","type"}` line, or a
 * `data: {"error":…}` payload. Classified like a reply with the payload's `code` as status
 * (500 when it has none), so a context overflow mid-stream still reads as one.
 */
export function errorFromStreamPayload(payload: string, kind?: ServerKind): LlmError {
  let status = 500;
  try {
    const parsed: unknown = JSON.parse(payload);
    const code = isRecord(parsed)
      ? isRecord(parsed.error)
        ? (parsed.error.code ?? parsed.code)
        : parsed.code
      : undefined;
    if (typeof code === 'number' && code >= 400 && code < 600) status = code;
  } catch {
    // plain-text error line: keep 500
  }
  return errorFromResponse(status, payload, kind);
}

/** The stream could not be read (bad JSON, wrong protocol). */
export function malformedStreamError(what: string, kind?: ServerKind): LlmError {
  return make(
    'MALFORMED_STREAM',
    `${serverName(kind)} sent a reply the app could not read (${clip(what)}): check that the Endpoint URL points at a supported server, then try again.`,
    undefined,
    '',
    kind,
  );
}

/**
 * The server sent more than a cap in limits.ts allows (`what`: "one stream event over 16 MB").
 * `partial` is the text streamed before it, kept like a disconnect's.
 */
export function tooLargeError(what: string, kind?: ServerKind, partial?: string): LlmError {
  const kept = partial ? ' The partial answer was kept.' : '';
  return make(
    'MALFORMED_STREAM',
    `${serverName(kind)} sent ${what}, more than the app reads: lower the maximum reply length in Settings and check that the server keeps to it, then try again.${kept}`,
    undefined,
    '',
    kind,
    partial,
  );
}

/** Tool-call arguments nested deeper than MAX_JSON_DEPTH: unreadable without overflowing the stack. */
export function tooDeepError(kind?: ServerKind): LlmError {
  return make(
    'MALFORMED_STREAM',
    `The model wrote tool-call arguments nested deeper than ${MAX_JSON_DEPTH} levels, which the app does not read: try again, and if it keeps happening, switch Tools to "prompted" in Settings or use another model.`,
    undefined,
    '',
    kind,
  );
}

/** A reply longer than MAX_TOOL_PARSE_CHARS was not searched for prompted tool calls. */
export function toolTextTooLargeError(): LlmError {
  return make(
    'MALFORMED_STREAM',
    `The model's reply is over ${sizeInWords(MAX_TOOL_PARSE_CHARS)}, more than the app searches for tool calls, so none of them was run: lower the maximum reply length in Settings, then try again.`,
    undefined,
    '',
    undefined,
  );
}

/** The server refused the `tools` parameter: switch to prompted tools. */
export function isToolsUnsupported(err: unknown): boolean {
  return isRecord(err) && err.name === 'LlmError' && err.code === 'TOOLS_UNSUPPORTED';
}

/** The server refused the JSON schema of a structured answer: ask for JSON in the prompt instead. */
export function isSchemaUnsupported(err: unknown): boolean {
  return isRecord(err) && err.name === 'LlmError' && err.code === 'SCHEMA_UNSUPPORTED';
}

/** A user cancel (`AbortController.abort()`), which is not an error to show. */
export function isAbortError(err: unknown): boolean {
  return isRecord(err) && err.name === 'AbortError';
}

/** `err` as an LlmError to show: itself, or an unexpected failure said as SERVER_ERROR. */
export function asLlmError(err: unknown): LlmError {
  if (err instanceof LlmError) return err;
  return new LlmError(
    'SERVER_ERROR',
    `Something went wrong: ${err instanceof Error ? err.message : String(err)}`,
  );
}

function startCommand(kind: ServerKind | undefined): string {
  switch (kind) {
    case 'koboldcpp':
      return 'start KoboldCPP';
    case 'llamacpp':
      return 'start llama-server';
    case 'ollama':
      return 'start Ollama';
    case 'lmstudio':
      return "start LM Studio's local server";
    case 'openai':
      return 'start your server';
    default:
      return 'start KoboldCPP (or your server)';
  }
}

/** `fetch` failed and a `no-cors` probe found nothing listening. */
export function serverDownError(url: string, kind?: ServerKind): LlmError {
  return make(
    'SERVER_DOWN',
    `Nothing answers at ${url}: ${startCommand(kind)} and check the Endpoint URL in Settings.`,
    undefined,
    '',
    kind,
  );
}

/** What to change for a server that does not let this page (`origin`) read its replies. */
function corsFix(kind: ServerKind | undefined, origin: string): string {
  switch (kind) {
    case 'ollama':
      return `set the environment variable OLLAMA_ORIGINS=${origin} for Ollama and restart it`;
    case 'lmstudio':
      return 'turn on "Enable CORS" in LM Studio\'s server settings';
    default:
      return `allow ${origin} in the server's CORS settings (vLLM: --allowed-origins)`;
  }
}

/**
 * `fetch` failed in a cross-origin isolated page, where the `no-cors` probe is blocked as well
 * (COEP): nothing listening and a reply the browser blocked cannot be told apart, so both are
 * said, with the way for the person to tell them apart.
 */
export function unreachableError(url: string, kind?: ServerKind, origin?: string): LlmError {
  const page = origin ?? "this page's address";
  return make(
    'SERVER_DOWN',
    `Nothing answers at ${url}, or the server there does not let this page (${page}) read its ` +
      `replies: the browser cannot tell which. If it is not running, ${startCommand(kind)} and ` +
      `check the Endpoint URL in Settings. If it is (open ${url} in a new tab: something ` +
      `answers there), ${corsFix(kind, page)}.`,
    undefined,
    '',
    kind,
  );
}

/**
 * `fetch` failed but a `no-cors` probe reached the server: the browser blocked the reply.
 * `origin` is this page's origin (`location.origin`), named in the fix when given.
 */
export function corsError(url: string, kind?: ServerKind, origin?: string): LlmError {
  const page = origin ? ` (${origin})` : '';
  const thisOrigin = origin ?? "this page's address";
  let message: string;
  switch (kind) {
    case 'koboldcpp':
      message = `KoboldCPP at ${url} answered, but the browser blocked the reply. KoboldCPP allows every page itself, so check the port in the Endpoint URL, and open this app over http:// when the server is on another computer without https.`;
      break;
    case 'llamacpp':
      message = `The llama.cpp server at ${url} answered, but the browser blocked the reply. Recent llama-server builds allow every page: check the port in the Endpoint URL, update llama.cpp if it is old, and remove any proxy in front of it that drops CORS headers.`;
      break;
    case 'ollama':
      message = `Ollama at ${url} blocks requests from this page${page}: set the environment variable OLLAMA_ORIGINS=${thisOrigin} for Ollama and restart it.`;
      break;
    case 'lmstudio':
      message = `LM Studio at ${url} blocks requests from web pages: turn on "Enable CORS" in its server settings, then try again.`;
      break;
    default:
      message = `The server at ${url} answered, but does not allow requests from this page${page}: allow ${thisOrigin} in its CORS settings (vLLM: --allowed-origins), then try again.`;
  }
  return make('CORS', message, undefined, '', kind);
}
