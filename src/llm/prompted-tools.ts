// Prompted tool calling for models or servers without native tools: the tool list goes into the
// system prompt, calls are parsed leniently from the model's text (Hermes/Qwen `<tool_call>`,
// Mistral `[TOOL_CALLS]`, Llama 3 bare JSON) and results go back as `<tool_response>` blocks.

import { makeCallId } from './tool-calls';
import type { ChatMessage, ToolCall, ToolSpec } from './types';

/**
 * Stop sequence for prompted mode: the model stops after one call and waits for its result.
 * Frozen at run time but typed `string[]` so it can go straight into a request's `stop`.
 */
export const PROMPTED_STOP: string[] = Object.freeze(['</tool_call>']) as string[];

/** What `parseToolCalls` found in a reply. */
export interface PromptedToolCalls {
  calls: ToolCall[];
  /** The reply with the call blocks removed: what the user should see. */
  text: string;
  /** Call blocks that were clearly meant as calls but could not be read (tell the model). */
  invalid: string[];
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
// Lenient JSON

/** Removes a surrounding Markdown code fence (```json … ```), if any. */
function stripFences(text: string): string {
  const t = text.trim();
  const m = /^```[\w-]*\s*([\s\S]*?)\s*(?:```)?\s*$/.exec(t);
  return m ? m[1]!.trim() : t;
}

/**
 * Repairs what models get wrong in JSON: raw newlines and tabs inside strings, and trailing
 * commas before `}`/`]`. Strings are tracked so commas and newlines inside them are kept.
 */
function repairJson(text: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      else if (c === '\n') {
        out += '\\n';
        continue;
      } else if (c === '\r') {
        out += '\\r';
        continue;
      } else if (c === '\t') {
        out += '\\t';
        continue;
      }
      out += c;
      continue;
    }
    if (c === '"') inString = true;
    if (c === ',') {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === '}' || text[j] === ']') continue;
    }
    out += c;
  }
  return out;
}

/** Parses JSON as written, else after repair; undefined when neither works. */
function parseLenient(text: string): unknown {
  const t = stripFences(text);
  if (t === '') return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    try {
      return JSON.parse(repairJson(t)) as unknown;
    } catch {
      return undefined;
    }
  }
}

/** Index just past the JSON object/array starting at `start`, or -1 if it does not close. */
function jsonEnd(text: string, start: number): number {
  const closers: string[] = [];
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') closers.push('}');
    else if (c === '[') closers.push(']');
    else if (c === '}' || c === ']') {
      if (closers.pop() !== c) return -1;
      if (closers.length === 0) return i + 1;
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// From parsed JSON to calls

/** Arguments as a JSON string: objects stringified, JSON strings kept (repaired if needed). */
function argumentsText(value: unknown): string {
  if (value === undefined || value === null) return '{}';
  if (typeof value !== 'string') return JSON.stringify(value);
  if (value.trim() === '') return '{}';
  try {
    JSON.parse(value);
    return value;
  } catch {
    const repaired = parseLenient(value);
    // Unreadable arguments are passed on as written: validation tells the model what is wrong.
    return repaired === undefined ? value : JSON.stringify(repaired);
  }
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
  const args = 'arguments' in source ? source.arguments : source.parameters;
  const id = typeof value.id === 'string' && value.id.trim() !== '' ? value.id : makeCallId();
  return [{ id, type: 'function', function: { name, arguments: argumentsText(args) } }];
}

/** Every JSON value in `text`, one after another (a block holding several calls). */
function jsonValuesIn(text: string): unknown[] {
  const values: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '{' || c === '[') {
      const end = jsonEnd(text, i);
      if (end !== -1) {
        const value = parseLenient(text.slice(i, end));
        if (value !== undefined) {
          values.push(value);
          i = end;
          continue;
        }
      }
    }
    i++;
  }
  return values;
}

// ---------------------------------------------------------------------------------------------
// Parsing a reply

interface Span {
  start: number;
  end: number;
}

function withoutSpans(text: string, spans: Span[]): string {
  let out = '';
  let at = 0;
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    if (span.start < at) continue;
    out += text.slice(at, span.start);
    at = span.end;
  }
  return out + text.slice(at);
}

function tidy(text: string): string {
  return text
    .replace(/<\/?tool_call>/gi, '')
    .replace(/<\|python_tag\|>/g, '')
    .replace(/```[\w-]*[ \t]*\r?\n?\s*```/g, '') // fences emptied by removing a call
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Hermes/Qwen: every `<tool_call>` block; the closing tag is optional (a stop sequence trims it). */
function parseTagged(text: string): PromptedToolCalls | undefined {
  const re = /<tool_call>([\s\S]*?)(?:<\/tool_call>|(?=<tool_call>)|$)/gi;
  const spans: Span[] = [];
  const calls: ToolCall[] = [];
  const invalid: string[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    spans.push({ start: m.index, end: m.index + m[0].length });
    const body = m[1]!.trim();
    const whole = parseLenient(body);
    const found =
      whole !== undefined
        ? callsIn(whole, false)
        : jsonValuesIn(stripFences(body)).flatMap((v) => callsIn(v, false));
    if (found.length > 0) calls.push(...found);
    else invalid.push(body);
  }
  if (spans.length === 0) return undefined;
  return { calls, text: tidy(withoutSpans(text, spans)), invalid };
}

/** Mistral: `[TOOL_CALLS] [{…}]`, or the newer `[TOOL_CALLS]name[ARGS]{…}`. */
function parseMistral(text: string): PromptedToolCalls | undefined {
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
      end = jsonEnd(text, i);
      if (end === -1) end = text.length;
      const value = parseLenient(text.slice(i, end));
      if (value !== undefined) found = callsIn(value, false);
    } else {
      const named = /^([A-Za-z_][\w.-]*)\s*(?:\[CALL_ID\]\s*([\w-]+)\s*)?\[ARGS\]\s*/.exec(
        text.slice(i),
      );
      if (named) {
        const argsAt = i + named[0].length;
        end = text[argsAt] === '{' ? jsonEnd(text, argsAt) : -1;
        if (end === -1) {
          const next = text.indexOf(marker, argsAt);
          end = next === -1 ? text.length : next;
        }
        const args = parseLenient(text.slice(argsAt, end));
        if (args !== undefined) {
          const id = named[2] ?? makeCallId();
          found = [
            {
              id,
              type: 'function',
              function: { name: named[1]!, arguments: argumentsText(args) },
            },
          ];
        }
      } else {
        end = i;
      }
    }
    spans.push({ start: at, end });
    if (found.length > 0) calls.push(...found);
    else invalid.push(text.slice(at, end).trim());
    from = Math.max(end, at + marker.length);
  }
  return { calls, text: tidy(withoutSpans(text, spans)), invalid };
}

/** Llama 3 and others: a fenced or bare JSON object/array that is a call (or calls). */
function parseJsonCalls(text: string): PromptedToolCalls | undefined {
  if (!/"name"\s*:/.test(text)) return undefined;
  const spans: Span[] = [];
  const calls: ToolCall[] = [];
  const fence = /```[\w-]*\s*([\s\S]*?)```/g;
  for (let m = fence.exec(text); m !== null; m = fence.exec(text)) {
    const value = parseLenient(m[1]!);
    const found = value === undefined ? [] : callsIn(value, true);
    if (found.length > 0) {
      calls.push(...found);
      spans.push({ start: m.index, end: m.index + m[0].length });
    }
  }
  let i = 0;
  while (i < text.length) {
    const inSpan = spans.find((s) => i >= s.start && i < s.end);
    if (inSpan) {
      i = inSpan.end;
      continue;
    }
    const c = text[i];
    if (c === '{' || c === '[') {
      const end = jsonEnd(text, i);
      if (end !== -1) {
        const candidate = text.slice(i, end);
        const value = /"name"\s*:/.test(candidate) ? parseLenient(candidate) : undefined;
        if (value !== undefined) {
          const found = callsIn(value, true);
          if (found.length > 0) {
            calls.push(...found);
            spans.push({ start: i, end });
          }
          // Valid JSON that is not a call is skipped whole: nothing inside it is a call either.
          i = end;
          continue;
        }
      }
    }
    i++;
  }
  if (calls.length === 0) return undefined;
  return { calls, text: tidy(withoutSpans(text, spans)), invalid: [] };
}

/**
 * Finds the tool calls in a model's reply, trying in order (PROTOCOLS.md): `<tool_call>`
 * blocks, a `[TOOL_CALLS]` list, then fenced or bare JSON calls. The first form present wins.
 * Never throws; ids are made up unless the model wrote one.
 */
export function parseToolCalls(text: string): PromptedToolCalls {
  const source = typeof text === 'string' ? text : '';
  return (
    parseTagged(source) ??
    parseMistral(source) ??
    parseJsonCalls(source) ?? { calls: [], text: source.trim(), invalid: [] }
  );
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
