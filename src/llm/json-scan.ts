// Single-pass scans over JSON-like text in model output: nesting depth, and the balanced
// `{…}`/`[…]` candidates in prose. No recursion and no rescanning, so any input costs time in
// proportion to its length and deep nesting cannot overflow the stack.

import { MAX_JSON_DEPTH } from './limits';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Follows the nesting of JSON text that arrives in pieces (strings respected). */
export interface DepthMeter {
  /** Reads the next piece; returns the deepest nesting seen so far. */
  push(text: string): number;
}

export function createDepthMeter(): DepthMeter {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  let escaped = false;
  return {
    push(text) {
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (inString) {
          if (escaped) escaped = false;
          else if (c === BACKSLASH) escaped = true;
          else if (c === QUOTE) inString = false;
        } else if (c === QUOTE) {
          inString = true;
        } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          depth++;
          if (depth > deepest) deepest = depth;
        } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && depth > 0) {
          depth--;
        }
      }
      return deepest;
    },
  };
}

/** How deeply `text` nests objects and arrays (unclosed ones count). */
export function jsonDepth(text: string): number {
  return createDepthMeter().push(text);
}

/** A balanced `{…}` or `[…]` in a text. */
export interface JsonSpan {
  start: number;
  /** Just past the closing bracket. */
  end: number;
  /** Nesting depth, this span's own brackets included (`{}` is 1). */
  depth: number;
  /** The balanced spans directly inside it, in order. */
  children: JsonSpan[];
}

/**
 * The outermost balanced `{…}`/`[…]` spans in `text[from, to)`. Inside a span strings are
 * respected; quotes in the prose around spans are not. Where a bracket never closes, or closes
 * with the wrong bracket, the balanced spans inside it are taken instead, as a search starting
 * again after it would find them. Spans inside MAX_JSON_DEPTH or more open brackets are left
 * out (their depth still counts): nothing that deep is parsed.
 */
export function jsonSpans(text: string, from = 0, to = text.length): JsonSpan[] {
  const out: JsonSpan[] = [];
  // The open brackets as typed stacks that double when full, children only for the first
  // MAX_JSON_DEPTH levels: 500,000 unclosed brackets cost no allocation each.
  let starts = new Int32Array(64);
  let inner = new Int32Array(64);
  let closers = new Uint8Array(64);
  const kids: (JsonSpan[] | undefined)[] = [];
  let open = 0;
  let inString = false;
  let escaped = false;
  const fail = (): void => {
    for (let k = 0; k < Math.min(open, MAX_JSON_DEPTH); k++) {
      for (const child of kids[k] ?? []) out.push(child);
      kids[k] = undefined;
    }
    open = 0;
    inString = false;
    escaped = false;
  };
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (open === starts.length) {
        const grow = <T extends Int32Array | Uint8Array>(a: T, b: T): T => (b.set(a), b);
        starts = grow(starts, new Int32Array(open * 2));
        inner = grow(inner, new Int32Array(open * 2));
        closers = grow(closers, new Uint8Array(open * 2));
      }
      starts[open] = i;
      inner[open] = 0;
      closers[open] = c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
      open++;
      continue;
    }
    if (open === 0) continue; // prose: its quotes and stray closers mean nothing
    if (c === QUOTE) {
      inString = true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (closers[open - 1] !== c) {
        fail();
        continue;
      }
      open--;
      const depth = inner[open]! + 1;
      if (open > 0 && depth > inner[open - 1]!) inner[open - 1] = depth;
      if (open >= MAX_JSON_DEPTH) continue; // too deep to parse: no span is made
      const span: JsonSpan = {
        start: starts[open]!,
        end: i + 1,
        depth,
        children: kids[open] ?? [],
      };
      kids[open] = undefined;
      if (open === 0) out.push(span);
      else (kids[open - 1] ??= []).push(span);
    }
  }
  fail();
  return out;
}

/** Index just past the JSON object/array starting at `start`, or -1 if it does not close before `to`. */
export function jsonEnd(text: string, start: number, to = text.length): number {
  const closers: number[] = [];
  let inString = false;
  let escaped = false;
  for (let i = start; i < to; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE) closers.push(CLOSE_BRACE);
    else if (c === OPEN_BRACKET) closers.push(CLOSE_BRACKET);
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (closers.pop() !== c) return -1;
      if (closers.length === 0) return i + 1;
    }
  }
  return -1;
}

const COMMA = 0x2c;
const COLON = 0x3a;

/** JSON's four whitespace characters (JSON.parse takes no others). */
function isJsonSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/**
 * Whether `text` is exactly one JSON value, as `JSON.parse` reads it, nesting at most
 * `maxDepth` levels. One pass with an explicit stack and no exceptions: a failed `JSON.parse`
 * costs tens of microseconds for its error message, which a reply full of near-JSON multiplies
 * into seconds, and a value nested thousands deep parses but overflows `JSON.stringify`.
 */
export function isJson(text: string, maxDepth: number): boolean {
  const n = text.length;
  const closers: number[] = [];
  let i = 0;

  const space = (): void => {
    while (i < n && isJsonSpace(text.charCodeAt(i))) i++;
  };
  const digits = (): boolean => {
    const start = i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    return i > start;
  };
  const string = (): boolean => {
    i++; // the opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c !== BACKSLASH) {
        i++;
        continue;
      }
      const e = text.charCodeAt(i + 1);
      if (e === 0x75) {
        // \uXXXX
        for (let k = 2; k < 6; k++) if (!isHex(text.charCodeAt(i + k))) return false;
        i += 6;
      } else if (
        e === QUOTE ||
        e === BACKSLASH ||
        e === 0x2f ||
        e === 0x62 ||
        e === 0x66 ||
        e === 0x6e ||
        e === 0x72 ||
        e === 0x74
      ) {
        i += 2;
      } else {
        return false;
      }
    }
    return false;
  };
  const number = (): boolean => {
    if (text.charCodeAt(i) === 0x2d) i++;
    if (text.charCodeAt(i) === 0x30) i++;
    else if (!digits()) return false;
    if (text.charCodeAt(i) === 0x2e) {
      i++;
      if (!digits()) return false;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = text.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (!digits()) return false;
    }
    return true;
  };
  /** A key and its colon, spaces after. */
  const key = (): boolean => {
    if (text.charCodeAt(i) !== QUOTE || !string()) return false;
    space();
    if (text.charCodeAt(i) !== COLON) return false;
    i++;
    space();
    return true;
  };

  space();
  for (;;) {
    // A value starts at i.
    if (i >= n) return false;
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (closers.length >= maxDepth) return false;
      const closer = c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
      i++;
      space();
      if (text.charCodeAt(i) === closer) {
        i++; // empty: a whole value
      } else {
        closers.push(closer);
        if (c === OPEN_BRACE && !key()) return false;
        continue;
      }
    } else if (c === QUOTE) {
      if (!string()) return false;
    } else if (text.startsWith('true', i)) {
      i += 4;
    } else if (text.startsWith('false', i)) {
      i += 5;
    } else if (text.startsWith('null', i)) {
      i += 4;
    } else if (!number()) {
      return false;
    }
    // A value ended: a comma and the next value, or closers, or the end.
    for (;;) {
      space();
      const closer = closers[closers.length - 1];
      if (closer === undefined) return i === n;
      const d = text.charCodeAt(i);
      if (d === closer) {
        closers.pop();
        i++;
        continue;
      }
      if (d !== COMMA) return false;
      i++;
      space();
      if (closer === CLOSE_BRACE && !key()) return false;
      break;
    }
  }
}
