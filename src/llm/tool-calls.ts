// Accumulates streamed OpenAI `delta.tool_calls` pieces into whole tool calls, tolerating the
// shapes local servers send (PROTOCOLS.md): incremental argument pieces (llama.cpp, vLLM),
// whole calls in one delta (Ollama), KoboldCPP's fake stream, empty ids, objects as arguments.

import { tooDeepError } from './errors';
import { createDepthMeter, type DepthMeter } from './json-scan';
import { MAX_JSON_DEPTH } from './limits';
import type { ToolCall } from './types';

/** Collects `delta.tool_calls` arrays from a stream; read the calls once it has ended. */
export interface ToolCallAccumulator {
  /**
   * Adds one `delta.tool_calls` value (normally an array; a single object is accepted too).
   * Throws an LlmError (MALFORMED_STREAM) for arguments nested deeper than MAX_JSON_DEPTH.
   */
  add(deltaToolCalls: unknown): void;
  /** The calls so far, in index order, without entries that never got a function name. */
  calls(): ToolCall[];
  /** Characters of arguments held so far, for the reply's size cap. */
  size(): number;
}

interface Entry {
  index: number;
  id: string;
  name: string;
  args: string;
  /** Follows the arguments' nesting as pieces arrive, so a deep value fails early and once. */
  depth: DepthMeter;
}

/** A made-up tool call id (`call_` + 16 hex digits) for servers that send none. */
export function makeCallId(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return `call_${hex}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Arguments as the JSON text the model wrote. Some servers send an object instead of a string;
 * missing arguments (a tool without parameters) read as `{}` so they still parse. An object
 * too deep for `JSON.stringify` is a typed error, not a RangeError.
 */
function argumentsText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return undefined;
  try {
    return JSON.stringify(value);
  } catch {
    throw tooDeepError();
  }
}

export function createToolCallAccumulator(): ToolCallAccumulator {
  const entries = new Map<number, Entry>();
  // Lookups by id and the next free index, kept as entries change: a reply with many calls
  // costs time in proportion to its pieces, not to pieces × calls.
  const byId = new Map<string, Entry>();
  let maxIndex = -1;
  let argsChars = 0;
  let last: Entry | undefined;

  const entryAt = (index: number): Entry => {
    let entry = entries.get(index);
    if (!entry) {
      entry = { index, id: '', name: '', args: '', depth: createDepthMeter() };
      entries.set(index, entry);
      if (index > maxIndex) maxIndex = index;
    }
    return entry;
  };

  const nextIndex = (): number => maxIndex + 1;

  /**
   * Where a piece without `index` goes: to the call with the same id; a piece naming a
   * function starts a new call (whole-call deltas); a bare argument piece continues the
   * latest call (KoboldCPP's name-then-arguments fake stream).
   */
  const entryFor = (piece: Record<string, unknown>, name: string, id: string): Entry => {
    if (typeof piece.index === 'number' && Number.isInteger(piece.index) && piece.index >= 0) {
      return entryAt(piece.index);
    }
    if (id !== '') {
      const known = byId.get(id);
      if (known) return known;
    }
    if (last && (name === '' || last.name === '') && (id === '' || last.id === '')) return last;
    return entryAt(nextIndex());
  };

  const addOne = (piece: unknown): void => {
    if (!isRecord(piece)) return;
    const fn = isRecord(piece.function) ? piece.function : {};
    const name = typeof fn.name === 'string' ? fn.name.trim() : '';
    const id = typeof piece.id === 'string' ? piece.id : '';
    const entry = entryFor(piece, name, id);
    last = entry;
    if (entry.id === '' && id !== '') {
      entry.id = id;
      if (!byId.has(id)) byId.set(id, entry);
    }
    // First name wins: some servers repeat the name on later deltas.
    if (entry.name === '' && name !== '') entry.name = name;
    let args: string | undefined;
    try {
      args = argumentsText(fn.arguments);
    } catch (e) {
      drop(entry);
      throw e;
    }
    if (args === undefined) return;
    const appended = typeof fn.arguments === 'string';
    // An object is always the whole arguments: its nesting is measured afresh.
    const depth = appended ? entry.depth : createDepthMeter();
    if (depth.push(args) > MAX_JSON_DEPTH) {
      drop(entry);
      throw tooDeepError();
    }
    argsChars += appended ? args.length : args.length - entry.args.length;
    entry.args = appended ? entry.args + args : args;
    entry.depth = depth;
  };

  /** Forgets a call whose arguments cannot be read, so `calls()` never hands it on. */
  const drop = (entry: Entry): void => {
    entries.delete(entry.index);
    if (byId.get(entry.id) === entry) byId.delete(entry.id);
    if (last === entry) last = undefined;
    argsChars -= entry.args.length;
  };

  return {
    add(deltaToolCalls) {
      if (Array.isArray(deltaToolCalls)) for (const piece of deltaToolCalls) addOne(piece);
      else addOne(deltaToolCalls);
    },
    calls() {
      const seen = new Set<string>();
      const out: ToolCall[] = [];
      for (const entry of [...entries.values()].sort((a, b) => a.index - b.index)) {
        if (entry.name === '') continue;
        // Made-up ids are kept on the entry so repeated calls() agree.
        if (entry.id === '' || seen.has(entry.id)) entry.id = makeCallId();
        seen.add(entry.id);
        const args = entry.args.trim() === '' ? '{}' : entry.args;
        out.push({
          id: entry.id,
          type: 'function',
          function: { name: entry.name, arguments: args },
        });
      }
      return out;
    },
    size() {
      return argsChars;
    },
  };
}
