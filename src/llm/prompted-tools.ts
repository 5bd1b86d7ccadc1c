// Prompted tool calling for models or servers without native tools: the tool list goes into the
// system prompt, calls are parsed leniently from the model's text (Hermes/Qwen `<tool_call>`,
// Mistral `[TOOL_CALLS]`, Llama 3 bare JSON) and results go back as `<tool_response>` blocks.

import { malformedStreamError, toolTextTooLargeError } from './errors';
import { isJson, jsonDepth, jsonEnd, jsonSpans, type JsonSpan } from './json-scan';
import { MAX_JSON_DEPTH, MAX_TOOL_PARSE_CHARS } from './limits';
import { blankThinking } from './thinking';
import { makeCallId } from './tool-calls';
import type { ChatMessage, LlmError, ToolCall, ToolSpec } from './types';

/**
 * Stop sequence for prompted mode: the model stops after one call and waits for its result.
 * Frozen at run time but typed `string[]` so it can go straight into a request's `stop`.
 */
export const PROMPTED_STOP: string[] = Object.freeze(['</tool_call>']) as string[];

/** What `parseToolCalls` found in a reply. */
export interface PromptedToolCalls {
  calls: ToolCall[];
  /** The reply's words before its first call (all of it when it has none): what the user sees. */
  text: string;
  /** Call blocks that were clearly meant as calls but could not be read (tell the model). */
  invalid: string[];
  /** The calls came in blocks marked as calls (`<tool_call>`, `[TOOL_CALLS]`), not bare JSON. */
  marked: boolean;
  /** Set when the reply was not searched at all (larger than MAX_TOOL_PARSE_CHARS). */
  error?: LlmError;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON that cannot close a surrounding `<tool_call>`/`<tool_response>` tag, whatever it holds. */
function tagSafeJson(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = JSON.stringify(String(value));
  }
  return (json ?? 'null').replace(/</g, '\\u003c').replace(/>/g, '\\u003e');
}

// ---------------------------------------------------------------------------------------------
// Describing the tools

function typeName(schema: unknown, depth = 0): string {
  if (!isRecord(schema) || depth > 3) return 'any';
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum.map((v) => JSON.stringify(v)).join('|');
  }
  const variants = Array.isArray(schema.anyOf)
    ? schema.anyOf
    : Array.isArray(schema.oneOf)
      ? schema.oneOf
      : undefined;
  if (variants) return variants.map((v) => typeName(v, depth + 1)).join('|');
  const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  const names = types.map((t) => {
    if (t === 'array') return `${typeName(schema.items, depth + 1)}[]`;
    return typeof t === 'string' ? t : 'any';
  });
  return names.join('|');
}

function exampleValue(schema: unknown): unknown {
  if (!isRecord(schema)) return '...';
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return '...';
  }
}

function describeOne(tool: ToolSpec): string {
  const { name, description, parameters } = tool.function;
  const properties = isRecord(parameters.properties) ? parameters.properties : {};
  const required = new Set(
    Array.isArray(parameters.required)
      ? parameters.required.filter((r): r is string => typeof r === 'string')
      : [],
  );
  const signature = Object.entries(properties)
    .map(([key, schema]) => `${key}${required.has(key) ? '' : '?'}: ${typeName(schema)}`)
    .join(', ');
  const lines = [`- ${name}(${signature}): ${description.trim()}`];
  for (const [key, schema] of Object.entries(properties)) {
    const about =
      isRecord(schema) && typeof schema.description === 'string' ? schema.description : '';
    if (about.trim() !== '') lines.push(`    ${key}: ${about.trim()}`);
  }
  return lines.join('\n');
}

function exampleCall(tool: ToolSpec): string {
  const { parameters } = tool.function;
  const properties = isRecord(parameters.properties) ? parameters.properties : {};
  const required = Array.isArray(parameters.required) ? parameters.required : [];
  const args: Record<string, unknown> = {};
  for (const key of required) {
    if (typeof key === 'string') args[key] = exampleValue(properties[key]);
  }
  return `<tool_call>${tagSafeJson({ name: tool.function.name, arguments: args })}</tool_call>`;
}

/**
 * The system-prompt section for prompted tools: how to call, the tools with their parameters
 * (`?` marks optional ones), one example. Kept short: it is paid for in context tokens.
 */
export function describeTools(tools: ToolSpec[]): string {
  if (tools.length === 0) return '';
  return [
    '# Tools',
    'To use a tool, write exactly this and then stop (arguments as JSON):',
    '<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>',
    'The result comes back in a <tool_response> block. Use only these tools; when none is needed, just answer.',
    '',
    ...tools.map(describeOne),
    '',
    'Example:',
    exampleCall(tools[0]!),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Lenient JSON. Every step is one pass over its text (no backtracking regex, no rescans), and
// nothing nested deeper than MAX_JSON_DEPTH is parsed, so hostile replies cost time in
// proportion to their length and cannot overflow the stack.

/** Appends without spreading: `push(...items)` overflows the stack on a very long array. */
function append<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

/** A letter, digit, `_` or `-`: what a code fence's language tag is made of. */
function isTagChar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    c === 0x5f ||
    c === 0x2d
  );
}

/** Index just past a fence's language tag (```json), starting right after the backticks. */
function tagEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && isTagChar(text.charCodeAt(i))) i++;
  return i;
}

/** `text` without a code fence opened at its end (a call it held was cut off after it). */
export function withoutOpenFence(text: string): string {
  const fence = text.lastIndexOf('```');
  if (fence === -1 || text.split('```').length % 2 === 1) return text;
  return text.slice(tagEnd(text, fence + 3)).trim() === '' ? text.slice(0, fence) : text;
}

/** Removes a surrounding Markdown code fence (```json … ```), if any. */
function stripFences(text: string): string {
  const t = text.trim();
  if (!t.startsWith('```')) return t;
  let body = t.slice(tagEnd(t, 3));
  if (body.endsWith('```')) body = body.slice(0, -3);
  return body.trim();
}

interface Fence {
  start: number;
  end: number;
  body: string;
  /** Its language tag (```json: `json`), as written. */
  lang: string;
}

/**
 * The closed ```…``` fences in a text, in order; with `open`, also one opened and never closed
 * (to the end).
 */
function fencesIn(text: string, open = false): Fence[] {
  const fences: Fence[] = [];
  for (let at = text.indexOf('```'); at !== -1;) {
    const bodyStart = tagEnd(text, at + 3);
    const lang = text.slice(at + 3, bodyStart);
    const close = text.indexOf('```', bodyStart);
    if (close === -1) {
      if (open) fences.push({ start: at, end: text.length, body: text.slice(bodyStart), lang });
      break;
    }
    fences.push({ start: at, end: close + 3, body: text.slice(bodyStart, close), lang });
    at = text.indexOf('```', close + 3);
  }
  return fences;
}

/**
 * Repairs what models get wrong in JSON: raw newlines and tabs inside strings, and trailing
 * commas before `}`/`]`. Strings are tracked so commas and newlines inside them are kept.
 */
function repairJson(text: string): string {
  // Unchanged runs are copied as slices: one string per repair, not one per character.
  let out = '';
  let copied = 0;
  const replace = (at: number, length: number, by: string): void => {
    out += text.slice(copied, at) + by;
    copied = at + length;
  };
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
      else if (c === 0x0a) replace(i, 1, '\\n');
      else if (c === 0x0d) replace(i, 1, '\\r');
      else if (c === 0x09) replace(i, 1, '\\t');
      continue;
    }
    if (c === 0x22) {
      inString = true;
    } else if (c === 0x2c) {
      // Each run of whitespace is looked past by the one comma before it: linear overall.
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === '}' || text[j] === ']') replace(i, 1, '');
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** A letter, digit or `_`: what a Python name is made of. */
function isNameChar(c: number): boolean {
  return isTagChar(c) && c !== 0x2d;
}

const PYTHON_WORDS: Readonly<Record<string, string>> = {
  True: 'true',
  False: 'false',
  None: 'null',
};

/**
 * A Python dict written for JSON (`{'name': 'saveMemory', 'arguments': {'flag': True}}`), as
 * small models trained on Python write calls: single-quoted strings become double-quoted ones,
 * and `True`, `False`, `None` outside strings become JSON's words. Double-quoted strings are
 * copied as they are, apostrophes and all. A `'` inside a single-quoted string ends it only
 * before `,` `:` `}` `]` or the end, so "Ana's" stays one string. One pass.
 */
function pythonToJson(text: string): string {
  let out = '';
  let i = 0;
  const endsString = (at: number): boolean => {
    let j = at + 1;
    while (j < text.length && /\s/.test(text[j]!)) j++;
    return j === text.length || ',:}]'.includes(text[j]!);
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "'") {
      let body = '';
      let j = i + 1;
      for (; j < text.length; j++) {
        const d = text[j]!;
        if (d === '\\' && text[j + 1] === "'") {
          body += "'";
          j++;
        } else if (d === '\\') {
          body += d + (text[j + 1] ?? '');
          j++;
        } else if (d === '"') body += '\\"';
        else if (d === "'" && endsString(j)) break;
        else body += d;
      }
      out += `"${body}"`;
      i = j + 1;
    } else if (isNameChar(text.charCodeAt(i)) && (i === 0 || !isNameChar(text.charCodeAt(i - 1)))) {
      let j = i;
      while (j < text.length && isNameChar(text.charCodeAt(j))) j++;
      const word = text.slice(i, j);
      out += PYTHON_WORDS[word] ?? word;
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** `JSON.parse` of text already known to be JSON (the catch is a guard, never the path taken). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Parses JSON as written, else after repair, else (`python`: inside a block marked as a call)
 * read as a Python dict; undefined when none works or it nests deeper than MAX_JSON_DEPTH. Text
 * is checked before `JSON.parse` sees it, so no attempt throws.
 */
function parseLenient(text: string, python = false): unknown {
  const t = stripFences(text);
  if (t === '') return undefined;
  if (isJson(t, MAX_JSON_DEPTH)) return parseJson(t);
  const repaired = repairJson(t);
  if (isJson(repaired, MAX_JSON_DEPTH)) return parseJson(repaired);
  if (!python) return undefined;
  const fromPython = repairJson(pythonToJson(t));
  return isJson(fromPython, MAX_JSON_DEPTH) ? parseJson(fromPython) : undefined;
}

/**
 * How many levels of spans inside a balanced span that does not parse are tried in its place
 * (`[{call}, {oops}]` still gives the call). Each level is one more pass over the text at
 * most, so this bounds the work at a few passes.
 */
const RETRY_LEVELS = 2;

/**
 * The JSON values among `spans` of `text`: each span parsed once; where one does not parse,
 * the spans inside it are tried instead, up to RETRY_LEVELS deep. `accept` filters candidate
 * texts before parsing; `onValue` gets each value with its span.
 */
function valuesInSpans(
  text: string,
  spans: JsonSpan[],
  accept: (candidate: string) => boolean,
  onValue: (value: unknown, span: JsonSpan) => void,
  retries = RETRY_LEVELS,
): void {
  for (const span of spans) {
    const candidate = text.slice(span.start, span.end);
    if (!accept(candidate)) continue;
    const value = span.depth <= MAX_JSON_DEPTH ? parseLenient(candidate) : undefined;
    if (value !== undefined) onValue(value, span);
    else if (retries > 0) valuesInSpans(text, span.children, accept, onValue, retries - 1);
  }
}

// ---------------------------------------------------------------------------------------------
// From parsed JSON to calls

/**
 * Arguments as a JSON string: objects stringified, JSON strings kept (repaired if needed).
 * Undefined for arguments nested deeper than MAX_JSON_DEPTH: no tool could take them.
 */
function argumentsText(value: unknown, python = false): string | undefined {
  if (value === undefined || value === null) return '{}';
  if (typeof value !== 'string') {
    try {
      return JSON.stringify(value);
    } catch {
      return undefined; // parseLenient bounds the depth; this is a last guard
    }
  }
  if (value.trim() === '') return '{}';
  if (isJson(value, MAX_JSON_DEPTH)) return value;
  if (jsonDepth(value) > MAX_JSON_DEPTH) return undefined;
  const repaired = parseLenient(value, python);
  // Unreadable arguments are passed on as written: validation tells the model what is wrong.
  return repaired === undefined ? value : JSON.stringify(repaired);
}

const TOOL_NAME = /^[A-Za-z_][\w.-]*$/;

/**
 * The calls a parsed value holds: `{name, arguments|parameters}`, `{"function":{…}}`,
 * `{"tool_call":{…}}`, `{"tool_calls":[…]}` or an array of those. Outside a `<tool_call>`
 * block (`strict`) a call needs an identifier-like name and an arguments/parameters key, so
 * ordinary JSON in prose is not taken for a call.
 */
function callsIn(value: unknown, strict: boolean, depth = 0): ToolCall[] {
  if (depth > 4) return [];
  if (Array.isArray(value)) return value.flatMap((v) => callsIn(v, strict, depth + 1));
  if (!isRecord(value)) return [];
  if (isRecord(value.tool_call)) return callsIn(value.tool_call, strict, depth + 1);
  if (Array.isArray(value.tool_calls)) return callsIn(value.tool_calls, strict, depth + 1);
  const source =
    isRecord(value.function) && typeof value.function.name === 'string' ? value.function : value;
  const name = typeof source.name === 'string' ? source.name.trim() : '';
  if (name === '') return [];
  const hasArgs = 'arguments' in source || 'parameters' in source;
  if (strict && (!hasArgs || !TOOL_NAME.test(name))) return [];
  const args = argumentsText('arguments' in source ? source.arguments : source.parameters, !strict);
  if (args === undefined) return [];
  const id = typeof value.id === 'string' && value.id.trim() !== '' ? value.id : makeCallId();
  return [{ id, type: 'function', function: { name, arguments: args } }];
}

/** Every JSON value in `text`, one after another (a block holding several calls). */
function jsonValuesIn(text: string): unknown[] {
  const values: unknown[] = [];
  valuesInSpans(
    text,
    jsonSpans(text),
    () => true,
    (value) => values.push(value),
  );
  return values;
}

// ---------------------------------------------------------------------------------------------
// Parsing a reply

interface Span {
  start: number;
  end: number;
}

/** `line` without the spaces and tabs at its end. */
function trimSpacesEnd(line: string): string {
  let end = line.length;
  while (end > 0 && (line[end - 1] === ' ' || line[end - 1] === '\t')) end--;
  return line.slice(0, end);
}

/**
 * What the user sees of a reply with calls: its words before the first call (docs/chat.md,
 * "Tool calls written as text"). What follows a call was written before its result came, so it is
 * not said: "Ana moves to Lisbon" after a search that finds nothing would be stored and recalled
 * as fact. A lead-in of the call goes with it (Llama's `<|python_tag|>`, a fence opened around
 * it); trailing spaces are cut and blank runs shortened, line by line rather than with
 * `/[ \t]+\n/`, which retries a long run of spaces from each of its characters.
 */
function textBefore(text: string, spans: readonly Span[]): string {
  let at = text.length;
  for (const span of spans) at = Math.min(at, span.start);
  let before = text.slice(0, at);
  const tag = before.lastIndexOf('<|python_tag|>');
  if (tag !== -1 && before.slice(tag + '<|python_tag|>'.length).trim() === '') {
    before = before.slice(0, tag);
  }
  const lines = withoutOpenFence(before).split('\n');
  for (let i = 0; i < lines.length - 1; i++) lines[i] = trimSpacesEnd(lines[i]!);
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** What one form of call found: its calls, unreadable blocks and where they stand. */
interface Found {
  calls: ToolCall[];
  invalid: string[];
  spans: Span[];
  marked: boolean;
}

/** Hermes/Qwen: every `<tool_call>` block; the closing tag is optional (a stop sequence trims it). */
function parseTagged(text: string): Found | undefined {
  // The lazy body stops at the first closing tag, next opening tag or the end: one pass.
  const re = /<tool_call>([\s\S]*?)(?:<\/tool_call>|(?=<tool_call>)|$)/gi;
  const spans: Span[] = [];
  const calls: ToolCall[] = [];
  const invalid: string[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    spans.push({ start: m.index, end: m.index + m[0].length });
    const body = m[1]!.trim();
    const whole = parseLenient(body, true);
    const found =
      whole !== undefined
        ? callsIn(whole, false)
        : jsonValuesIn(stripFences(body)).flatMap((v) => callsIn(v, false));
    if (found.length > 0) append(calls, found);
    else invalid.push(body);
  }
  if (spans.length === 0) return undefined;
  return { calls, invalid, spans, marked: true };
}

/** `name[CALL_ID]id[ARGS]` after a Mistral marker, read where it stands (sticky). */
const MISTRAL_NAMED = /([A-Za-z_][\w.-]*)\s*(?:\[CALL_ID\]\s*([\w-]+)\s*)?\[ARGS\]\s*/y;

/** Mistral: `[TOOL_CALLS] [{…}]`, or the newer `[TOOL_CALLS]name[ARGS]{…}`. */
function parseMistral(text: string): Found | undefined {
  const marker = '[TOOL_CALLS]';
  if (!text.includes(marker)) return undefined;
  const spans: Span[] = [];
  const calls: ToolCall[] = [];
  const invalid: string[] = [];
  let from = 0;
  for (let at = text.indexOf(marker, from); at !== -1; at = text.indexOf(marker, from)) {
    let i = at + marker.length;
    while (i < text.length && /\s/.test(text[i]!)) i++;
    let end: number;
    let found: ToolCall[] = [];
    if (text[i] === '[' || text[i] === '{') {
      // Whether it closes or not, the scan ends where the next search starts: one pass.
      end = jsonEnd(text, i);
      if (end === -1) end = text.length;
      const value = parseLenient(text.slice(i, end), true);
      if (value !== undefined) found = callsIn(value, false);
    } else {
      MISTRAL_NAMED.lastIndex = i;
      const named = MISTRAL_NAMED.exec(text);
      if (named) {
        const argsAt = i + named[0].length;
        // Arguments end at the next marker at the latest, so no text is scanned twice.
        const next = text.indexOf(marker, argsAt);
        const limit = next === -1 ? text.length : next;
        end = text[argsAt] === '{' ? jsonEnd(text, argsAt, limit) : -1;
        if (end === -1) end = limit;
        const args = parseLenient(text.slice(argsAt, end), true);
        const argsText = args === undefined ? undefined : argumentsText(args, true);
        if (argsText !== undefined) {
          const id = named[2] ?? makeCallId();
          found = [{ id, type: 'function', function: { name: named[1]!, arguments: argsText } }];
        }
      } else {
        end = i;
      }
    }
    spans.push({ start: at, end });
    if (found.length > 0) append(calls, found);
    else invalid.push(text.slice(at, end).trim());
    from = Math.max(end, at + marker.length);
  }
  return { calls, invalid, spans, marked: true };
}

const NAME_KEY = /"name"\s*:/;

/** Llama 3 and others: a fenced or bare JSON object/array that is a call (or calls). */
function parseJsonCalls(text: string): Found | undefined {
  if (!NAME_KEY.test(text)) return undefined;
  const spans: Span[] = [];
  const calls: ToolCall[] = [];
  for (const fence of fencesIn(text)) {
    const value = parseLenient(fence.body);
    const found = value === undefined ? [] : callsIn(value, true);
    if (found.length > 0) {
      append(calls, found);
      spans.push({ start: fence.start, end: fence.end });
    }
  }
  // Bare JSON between those fences. Valid JSON that is not a call is skipped whole: nothing
  // inside it is a call either; JSON that does not parse has the spans inside it tried.
  const bare = (from: number, to: number): void =>
    valuesInSpans(
      text,
      jsonSpans(text, from, to),
      (candidate) => NAME_KEY.test(candidate),
      (value, span) => {
        const found = callsIn(value, true);
        if (found.length === 0) return;
        append(calls, found);
        spans.push({ start: span.start, end: span.end });
      },
    );
  let at = 0;
  for (const fence of [...spans]) {
    bare(at, fence.start);
    at = fence.end;
  }
  bare(at, text.length);
  if (calls.length === 0) return undefined;
  return { calls, invalid: [], spans, marked: false };
}

/** A tool's name as calls may write it: case, `_` and `-` aside (`save_memory`, `SaveMemory`). */
export function toolNameKey(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, '');
}

/** Whether a value can end at `at`: only spaces, then `,` `)` `]` `}` `:` or the end. */
function endsValue(text: string, at: number): boolean {
  let j = at;
  while (text[j] === ' ' || text[j] === '\t') j++;
  return j >= text.length || ',)]}:\n'.includes(text[j]!);
}

/**
 * Where the bracket opened just before `from` closes (`(`, `[` or `{`, any of them counting),
 * strings in either quote skipped; with `comma`, also the first `,` at its own level: the end of
 * one argument. -1 when it does not close.
 */
function closeOf(text: string, from: number, comma = false): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      // A `'` ends a single-quoted string only where a value can end (before `,` `)` `]` `}`
      // `:` or the end), so "Ana's" in 'Ana's flat' stays in it, as pythonToJson reads it.
      let j = i + 1;
      while (j < text.length && (text[j] !== c || (c === "'" && !endsValue(text, j + 1)))) {
        j += text[j] === '\\' ? 2 : 1;
      }
      i = j;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return i;
      depth--;
    } else if (comma && c === ',' && depth === 0) return i;
  }
  return -1;
}

/**
 * Python keyword arguments (`path="Family/Ana", content={'city': 'Lisbon'}, pinned=True`) as
 * a JSON object's text; undefined where one is not `name=value` (a positional argument: the
 * line is code, not a call).
 */
function keywordsToJson(args: string): string | undefined {
  const key = /\s*([A-Za-z_]\w*)\s*=(?!=)/y;
  const parts: string[] = [];
  for (let i = 0; args.slice(i).trim() !== '';) {
    key.lastIndex = i;
    const m = key.exec(args);
    if (!m) return undefined;
    const at = i + m[0].length;
    let end = closeOf(args, at, true);
    if (end === -1) end = args.length;
    else if (args[end] !== ',') return undefined; // a stray closing bracket
    const value = args.slice(at, end).trim();
    if (value === '') return undefined;
    parts.push(`${JSON.stringify(m[1])}: ${value}`);
    i = end + 1;
  }
  return `{${parts.join(', ')}}`;
}

/**
 * `name(` at a line's start, as Llama 3.2 writes its calls (`[saveMemory(path="…", content="…")]`)
 * and Gemma in a ```tool_code block (`saveMemory(…)`, or `print(default_api.saveMemory(…))`).
 */
const PYTHONIC_HEAD = /[ \t]*(\[\s*)?(print\(\s*)?(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)\s*\(/y;
const PYTHONIC_NEXT = /\s*,\s*(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)\s*\(/y;

/**
 * Whether `text` may hold a Python-style call of one of the tools (`names`, as `toolNameKey`
 * gives them): a tool's name followed by `(`. Cheap; `parseToolCalls` decides.
 */
export function mayHavePythonicCall(text: string, names: ReadonlySet<string>): boolean {
  const re = /\b([A-Za-z_]\w*)\s*\(/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (names.has(toolNameKey(m[1]!))) return true;
  }
  return false;
}

/** Fences whose code is a call (Gemma's ```tool_code), not an example in an answer. */
const CALL_FENCES = new Set(['', 'tool_code', 'tool_call', 'tool']);

/**
 * Whether a place in `text` lies inside a fenced block whose language is not a call's
 * (```python, ```js: code shown, not run); asked for places in ascending order.
 */
function inCodeFence(text: string): (at: number) => boolean {
  const shown = fencesIn(text, true).filter((f) => !CALL_FENCES.has(f.lang.toLowerCase()));
  // Asked for line starts in order: one pointer over the fences, so the text is read once.
  let i = 0;
  return (at) => {
    while (i < shown.length && shown[i]!.end <= at) i++;
    const fence = shown[i];
    return fence !== undefined && at > fence.start && at < fence.end;
  };
}

/**
 * Calls written as Python (Llama 3.2's `[name(key=value, …), …]`, Gemma's `tool_code`): only a
 * line that is nothing but calls of known tools (`names`, as `toolNameKey` gives them), their
 * arguments all keywords with Python or JSON values, outside a fence of shown code (```python).
 * So code in an answer (`print(x)`, `max(a, b)`, `saveMemory("a", "b")`), a sentence that
 * names a call (`deleteMemory(path="Family") would remove it all`) and an example in a code
 * block are never taken for one.
 */
function parsePythonic(text: string, names: ReadonlySet<string>): Found | undefined {
  if (names.size === 0) return undefined;
  const calls: ToolCall[] = [];
  const spans: Span[] = [];
  const fenced = inCodeFence(text);
  for (let line = 0; line < text.length;) {
    PYTHONIC_HEAD.lastIndex = line;
    const head = PYTHONIC_HEAD.exec(text);
    let next = text.indexOf('\n', line);
    if (next === -1) next = text.length;
    if (head && names.has(toolNameKey(head[3]!)) && !fenced(line)) {
      const start = line + head[0].length - head[0].trimStart().length;
      const found: ToolCall[] = [];
      let name = head[3]!;
      let at = line + head[0].length;
      let end = -1;
      for (;;) {
        const close = closeOf(text, at);
        // Unclosed, it runs to the end: nothing after it is a call of its own. Closed, the
        // lines inside it are not looked at again, so the text is read once.
        if (close === -1)
          return calls.length ? { calls, invalid: [], spans, marked: false } : undefined;
        next = Math.max(next, close);
        if (text[close] !== ')') break;
        const args = keywordsToJson(text.slice(at, close));
        const value = args === undefined ? undefined : parseLenient(args, true);
        if (!isRecord(value)) break;
        found.push({
          id: makeCallId(),
          type: 'function',
          function: { name, arguments: JSON.stringify(value) },
        });
        end = close + 1;
        // Another call in the list: `[a(…), b(…)]`.
        PYTHONIC_NEXT.lastIndex = end;
        const more = head[1] ? PYTHONIC_NEXT.exec(text) : null;
        if (!more || !names.has(toolNameKey(more[1]!))) break;
        name = more[1]!;
        at = end + more[0].length;
      }
      if (found.length && end !== -1) {
        // Its closing `]` (the list) and `)` (print) go with it; then the line must end.
        const tail = /^[ \t]*\)?[ \t]*\]?\)?[ \t;]*(?:\n|$)/.exec(text.slice(end, end + 16));
        if (tail) {
          end += tail[0].length;
          append(calls, found);
          spans.push({ start, end });
          next = Math.max(next, end - 1);
        }
      }
    }
    // On from the line after the one the call (or its attempt) ended on.
    const nl = text.indexOf('\n', next);
    line = (nl === -1 ? text.length : nl) + 1;
  }
  return calls.length ? { calls, invalid: [], spans, marked: false } : undefined;
}

/**
 * The calls with one id each: a model that writes ids may repeat one (`"id": "call_1"` on every
 * call), and each result must answer its own call. A repeat gets a made-up id, as a repeat
 * in streamed native calls does (tool-calls.ts).
 */
function withOwnIds(calls: ToolCall[]): ToolCall[] {
  const seen = new Set<string>();
  return calls.map((call) => {
    const own = seen.has(call.id) ? { ...call, id: makeCallId() } : call;
    seen.add(own.id);
    return own;
  });
}

/**
 * Finds the tool calls in a model's reply, outside its `<think>…</think>` thinking, trying in
 * order (PROTOCOLS.md): `<tool_call>` blocks, a `[TOOL_CALLS]` list, fenced or bare JSON calls,
 * then lines that call one of the tools `names` (as `toolNameKey` gives them) in Python. The
 * first form present wins.
 * Never throws: a reply over MAX_TOOL_PARSE_CHARS is not searched and comes back whole with
 * `error` set. Ids are made up unless the model wrote one, and for a repeat of an earlier one.
 * Time grows in proportion to the reply's length.
 */
export function parseToolCalls(
  text: string,
  names: ReadonlySet<string> = new Set(),
): PromptedToolCalls {
  const source = typeof text === 'string' ? text : '';
  if (source.length > MAX_TOOL_PARSE_CHARS) {
    return {
      calls: [],
      text: source.trim(),
      invalid: [],
      marked: false,
      error: toolTextTooLargeError(),
    };
  }
  try {
    // Thinking is searched for nothing: its place is kept, so spans stand in `source` too.
    const outside = blankThinking(source);
    const found =
      parseTagged(outside) ??
      parseMistral(outside) ??
      parseJsonCalls(outside) ??
      parsePythonic(outside, names);
    if (!found) return { calls: [], text: source.trim(), invalid: [], marked: false };
    const { calls, invalid, spans, marked } = found;
    return { calls: withOwnIds(calls), text: textBefore(source, spans), invalid, marked };
  } catch (e) {
    // A last guard for the "never throws" promise; the property tests expect it unused.
    const what = e instanceof Error ? e.message : String(e);
    return {
      calls: [],
      text: source.trim(),
      invalid: [],
      marked: false,
      error: malformedStreamError(`its tool calls: ${what}`),
    };
  }
}

/**
 * The JSON value in an answer that was asked to be JSON only (prompted, not constrained), read
 * as leniently as tool calls: the whole text (code fences stripped, raw newlines and trailing
 * commas repaired) or the first fenced block, any JSON value; else the first balanced object in
 * the prose that parses. The caller checks its shape. Undefined when there is none, or when the text is over MAX_TOOL_PARSE_CHARS.
 */
export function jsonAnswer(text: string): unknown {
  if (typeof text !== 'string' || text.length > MAX_TOOL_PARSE_CHARS) return undefined;
  const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  const whole = parseLenient(text);
  if (whole !== undefined) return whole;
  for (const fence of fencesIn(text)) {
    const value = parseLenient(fence.body);
    if (value !== undefined) return value;
  }
  return jsonValuesIn(text).find(isObject);
}

// ---------------------------------------------------------------------------------------------
// Results and conversation history

/**
 * A tool result for the model: `<tool_response>{"name":…,"content":…}</tool_response>`, with
 * `<` and `>` escaped inside the JSON so a result cannot close the tag.
 */
export function formatToolResponse(name: string, result: unknown): string {
  return `<tool_response>${tagSafeJson({ name, content: result === undefined ? null : result })}</tool_response>`;
}

function jsonOrText(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** An assistant's native call written the way prompted mode asks the model to write it. */
export function formatToolCall(call: ToolCall): string {
  const args = jsonOrText(call.function.arguments);
  return `<tool_call>${tagSafeJson({ name: call.function.name, arguments: args })}</tool_call>`;
}

/**
 * Rewrites a conversation for a server without native tools: assistant `tool_calls` become
 * `<tool_call>` text after the assistant's words, and tool results become a user message of
 * `<tool_response>` blocks (consecutive results share one message, as chat templates expect
 * user and assistant to alternate).
 */
export function toPromptedMessages(messages: ChatMessage[]): ChatMessage[] {
  const names = new Map<string, string>();
  const out: ChatMessage[] = [];
  let lastFromTool = false;
  for (const message of messages) {
    if (message.role === 'tool') {
      const name =
        message.name ?? names.get(message.tool_call_id ?? '') ?? message.tool_call_id ?? 'tool';
      const block = formatToolResponse(name, jsonOrText(message.content));
      const previous = out[out.length - 1];
      if (lastFromTool && previous) previous.content = `${previous.content ?? ''}\n${block}`;
      else out.push({ role: 'user', content: block });
      lastFromTool = true;
      continue;
    }
    lastFromTool = false;
    if (message.role === 'assistant') {
      const parts: string[] = [];
      if (message.content && message.content.trim() !== '') parts.push(message.content);
      for (const call of message.tool_calls ?? []) {
        names.set(call.id, call.function.name);
        parts.push(formatToolCall(call));
      }
      out.push({ role: 'assistant', content: parts.join('\n') });
      continue;
    }
    out.push({ role: message.role, content: message.content ?? '' });
  }
  return out;
}
