// The prompted-mode token filter: once a tool call starts in the streamed text, the rest is not
// shown. It holds back at most a marker's length, so a reply of any size costs time in
// proportion to its length. And what a stopped or broken reply keeps: its text before a call.
import { jsonEnd } from './json-scan';
import { parseToolCalls, withoutOpenFence } from './prompted-tools';
import { THINK_CLOSE, THINK_OPEN, blankThinking, tagStartAtEnd } from './thinking';

/** Where a call starts, unmistakably: Hermes/Qwen, Mistral, Llama 3.1's special token. */
const CALL_MARKERS = ['<tool_call>', '[TOOL_CALLS]', '<|python_tag|>'];
const MARKER_CHARS = new Set([...CALL_MARKERS, THINK_OPEN, THINK_CLOSE].join(''));

/** The longest end of `text` that is the start of one of `markers` (a "<tool" split across tokens). */
function markerStartAtEnd(text: string, markers: readonly string[]): number {
  if (!MARKER_CHARS.has(text.slice(-1))) return 0; // most tokens: no marker ends in them
  return tagStartAtEnd(text, markers);
}

/** Where the first of `markers` is in `text` (-1: none), and which. */
function firstOf(text: string, markers: readonly string[]): { at: number; marker: string } {
  let at = -1;
  let which = '';
  for (const marker of markers) {
    const i = text.indexOf(marker);
    if (i !== -1 && (at === -1 || i < at)) {
      at = i;
      which = marker;
    }
  }
  return { at, marker: which };
}

const OUTSIDE_THINKING = [...CALL_MARKERS, THINK_OPEN];

/** A bare JSON value held back this long without being decided is shown (it is no call). */
const JSON_HOLD_MAX = 8192;

/**
 * Whether `lead` (from a `{` or `[` that begins a line) may still be, or begins, a bare JSON
 * call: `{"name"` or `[{"name"` so far, or begun like one as `beganLikeCall` reads it.
 */
function mayStartCall(lead: string): boolean {
  const head = lead.slice(0, 24).replace(/\s+/g, '');
  if ('{"name"'.startsWith(head) || '[{"name"'.startsWith(head)) return true;
  return beganLikeCall(lead);
}

/**
 * Where in `text` a `{` or `[` begins a line (after spaces or tabs), -1 if none; `atLineStart`:
 * whether `text` itself begins at a line's start, only spaces or tabs before it on its line.
 */
function jsonLineStart(text: string, atLineStart: boolean): number {
  for (let line = atLineStart ? 0 : text.indexOf('\n') + 1; line > 0 || atLineStart;) {
    atLineStart = false;
    let i = line;
    while (text[i] === ' ' || text[i] === '\t') i++;
    if (text[i] === '{' || text[i] === '[') return i;
    const next = text.indexOf('\n', i);
    if (next === -1) return -1;
    line = next + 1;
  }
  return -1;
}

/**
 * In prompted mode, stop showing tokens once a tool call starts. Thinking that starts the reply
 * (`<think>` to `</think>`, as `blankThinking` reads it) is shown whole: a call it mentions is
 * not made; a `<think>` the answer mentions later is text. Text that could be the start of a
 * marker (a trailing "<tool" split across tokens) is held back until it is decided. Only the
 * held-back text and the new token are searched: a marker cannot start in text already shown,
 * since that text ended with no marker's start. A `{` or `[` that begins a line outside the
 * thinking is held back while it may be a bare JSON call (`{"name": "saveMemory", "arguments"`
 * so far): hidden with all after it once it closes as a call (as `beforeToolCall` cuts a reply
 * there), shown once it cannot be one, closes as other JSON, or passes `JSON_HOLD_MAX`.
 */
export function tokenFilter(
  mode: 'native' | 'prompted',
  forward: (t: string) => void,
): (t: string) => void {
  if (mode === 'native') return forward;
  let held = '';
  let hidden = false;
  let thinking = false;
  /** Whether anything but white space was shown: thinking can only start before that. */
  let said = false;
  /** Whether what was shown ends at a line's start (only spaces or tabs after its last break). */
  let atLineStart = true;
  /** A bare JSON value that begins a line, held back while it may be a call. */
  let json: string | undefined;
  /** The JSON at `pending`'s start was shown as text: not held back again. */
  let released = false;
  const show = (text: string): void => {
    if (text === '') return;
    said ||= /\S/.test(text);
    const nl = text.lastIndexOf('\n');
    const tail = nl === -1 ? text : text.slice(nl + 1);
    atLineStart = (nl !== -1 || atLineStart) && /^[ \t]*$/.test(tail);
    forward(text);
  };
  /** The held JSON with `t`: still held, a call (the rest hidden), or text to read on. */
  const readJson = (held: string, t: string): 'held' | 'call' | 'text' => {
    const lead = held.trimStart();
    if (firstOf(lead, CALL_MARKERS).at !== -1 || !mayStartCall(lead)) return 'text';
    if (/[}\]]/.test(t)) {
      const end = jsonEnd(lead, 0);
      if (end !== -1) return parseToolCalls(lead.slice(0, end)).calls.length ? 'call' : 'text';
    }
    return held.length > JSON_HOLD_MAX ? 'text' : 'held';
  };
  return (t) => {
    if (hidden) return;
    let pending = held + t;
    held = '';
    if (json !== undefined) {
      const now = readJson(json + t, t);
      if (now === 'call') hidden = true;
      if (now !== 'text') {
        json = now === 'held' ? json + t : undefined;
        return;
      }
      pending = json + t;
      json = undefined;
      released = true;
    }
    for (;;) {
      const markers = thinking ? [THINK_CLOSE] : said ? CALL_MARKERS : OUTSIDE_THINKING;
      const { at, marker } = firstOf(pending, markers);
      if (at === -1) {
        const upTo = pending.length - markerStartAtEnd(pending, markers);
        // JSON just shown as text is looked at again only from its next line.
        const from = released ? pending.indexOf('\n') : 0;
        released = false;
        const found =
          thinking || from === -1
            ? -1
            : jsonLineStart(pending.slice(from, upTo), from === 0 && atLineStart);
        const start = found === -1 ? -1 : from + found;
        if (start !== -1) {
          show(pending.slice(0, start));
          const rest = pending.slice(start);
          const now = readJson(rest, rest);
          if (now === 'call') {
            hidden = true;
            return;
          }
          if (now === 'held') {
            json = rest;
            return;
          }
          // Not a call: shown as text, from where it starts.
          pending = rest;
          released = true;
          continue;
        }
        show(pending.slice(0, upTo));
        held = pending.slice(upTo);
        return;
      }
      if (marker === THINK_OPEN && /\S/.test(pending.slice(0, at))) {
        // Words came first: this `<think>` is the answer's, and the search goes on without it.
        show(pending.slice(0, at));
        pending = pending.slice(at);
        continue;
      }
      if (marker === THINK_OPEN || marker === THINK_CLOSE) {
        show(pending.slice(0, at + marker.length));
        pending = pending.slice(at + marker.length);
        thinking = marker === THINK_OPEN;
        // What follows thinking begins the answer, as at a line's start.
        if (!thinking) atLineStart = true;
        released = false;
        continue;
      }
      hidden = true;
      show(pending.slice(0, at));
      return;
    }
  };
}

/**
 * `text` up to where a tool call starts: what a stopped or broken reply keeps of itself (a call
 * half written is neither said nor run). A call starts at a marker, or at a bare JSON call that
 * begins a line (`{"name"`, `[{"name"`): a whole one counts when it is a call as parseToolCalls
 * reads bare JSON, a half-written one at the end when it has begun like one (a tool-like name,
 * then nothing or `arguments`/`parameters`), so JSON in an answer is not cut. Thinking
 * (`<think>…</think>`) holds no call (docs/chat.md, "Tool calls written as text").
 */
export function beforeToolCall(text: string): string {
  const outside = blankThinking(text);
  const marker = firstOf(outside, CALL_MARKERS).at;
  const limit = marker === -1 ? text.length : marker;
  const at = Math.min(limit, jsonCallStart(outside, limit));
  if (at === text.length) return text;
  return withoutOpenFence(text.slice(0, at));
}

/** `{"name"` (or `[{"name"`) at the start of a line, with the spaces before it. */
const JSON_CALL_HEAD = /^[ \t]*\[?\s*\{\s*"name"/;

/** Where the first bare JSON call that begins a line starts, before `limit`; else `text.length`. */
function jsonCallStart(text: string, limit: number): number {
  for (let line = 0; line < limit;) {
    const next = text.indexOf('\n', line);
    // The head may run over lines (`{` alone, then `"name"`), as the streaming filter reads it.
    const head = JSON_CALL_HEAD.exec(text.slice(line, line + 200));
    if (head) {
      const start = line + head[0].length - head[0].trimStart().length;
      const end = jsonEnd(text, start);
      if (end === -1) {
        // It does not close (it runs to the end, or is not JSON): no later line is tried, so
        // the scan stays one pass.
        return beganLikeCall(text.slice(start)) ? start : text.length;
      }
      if (parseToolCalls(text.slice(start, end)).calls.length > 0) return start;
      line = text.indexOf('\n', end);
      if (line === -1) break;
      line++;
      continue;
    }
    if (next === -1) break;
    line = next + 1;
  }
  return text.length;
}

/** The start of a call cut off: `{"name": "saveMem`, `{"name": "saveMemory", "argu`, … */
function beganLikeCall(tail: string): boolean {
  const head = /^\[?\s*\{\s*"name"\s*(?::\s*(?:"([A-Za-z_][\w.-]*)?(")?)?)?/.exec(tail);
  if (!head) return false;
  let rest = tail.slice(head[0].length);
  if (rest === '') return true;
  if (head[2] === undefined) return false; // more than an identifier: "Anna Smith"
  rest = rest.trimStart();
  if (rest === '') return true;
  if (rest[0] !== ',') return false;
  rest = rest.slice(1).trimStart();
  if (rest === '') return true;
  if (rest[0] !== '"') return false;
  const close = rest.indexOf('"', 1);
  const key = rest.slice(1, close === -1 ? rest.length : close);
  return close === -1
    ? 'arguments'.startsWith(key) || 'parameters'.startsWith(key)
    : key === 'arguments' || key === 'parameters';
}
