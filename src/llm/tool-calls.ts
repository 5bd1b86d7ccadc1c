// Accumulates streamed OpenAI `delta.tool_calls` pieces into whole tool calls, tolerating the
// shapes local servers send (PROTOCOLS.md): incremental argument pieces (llama.cpp, vLLM),
// whole calls in one delta (Ollama), KoboldCPP's fake stream, empty ids, objects as arguments.

import type { ToolCall } from './types';

/** Collects `delta.tool_calls` arrays from a stream; read the calls once it has ended. */
export interface ToolCallAccumulator {
  /** Adds one `delta.tool_calls` value (normally an array; a single object is accepted too). */
  add(deltaToolCalls: unknown): void;
  /** The calls so far, in index order, without entries that never got a function name. */
  calls(): ToolCall[];
}

interface Entry {
  index: number;
  id: string;
  name: string;
  args: string;
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
 * missing arguments (a tool without parameters) read as `{}` so they still parse.
 */
function argumentsText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return undefined;
  return JSON.stringify(value);
}

export function createToolCallAccumulator(): ToolCallAccumulator {
  const entries = new Map<number, Entry>();
  let last: Entry | undefined;

  const entryAt = (index: number): Entry => {
    let entry = entries.get(index);
    if (!entry) {
      entry = { index, id: '', name: '', args: '' };
      entries.set(index, entry);
    }
    return entry;
  };

  const nextIndex = (): number => {
    let max = -1;
    for (const key of entries.keys()) if (key > max) max = key;
    return max + 1;
  };

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
      for (const entry of entries.values()) if (entry.id === id) return entry;
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
    if (entry.id === '' && id !== '') entry.id = id;
    // First name wins: some servers repeat the name on later deltas.
    if (entry.name === '' && name !== '') entry.name = name;
    const args = argumentsText(fn.arguments);
    if (args === undefined) return;
    if (typeof fn.arguments === 'string') entry.args += args;
    else entry.args = args; // an object is always the whole arguments
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
  };
}
