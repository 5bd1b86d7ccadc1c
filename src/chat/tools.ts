// The memory tools as data: name, description, JSON Schema and run. The same schema is sent to
// the model and validates its arguments (with a validator that needs no eval, so it runs under
// the app's CSP); a bad call gets an error result the model can correct.
import { Validator, type Schema } from '@cfworker/json-schema';
import { sizeInWords } from '../llm/limits';
import { toolNameKey } from '../llm/prompted-tools';
import type { ToolCall, ToolSpec } from '../llm/types';
import type { MemoryApi } from '../memory/types';
import { MAX_CONTENT_BYTES } from '../memory/validate';

/**
 * Characters of one call's arguments that are read. The largest content the engine keeps
 * (MAX_CONTENT_BYTES) written with every character escaped is at most 3 times as long; the rest
 * leaves room for paths and spacing. Larger arguments are refused unparsed (docs/decisions/0015).
 */
export const MAX_TOOL_ARGUMENT_CHARS = 4 * MAX_CONTENT_BYTES;

/** Characters kept of arguments over MAX_TOOL_ARGUMENT_CHARS: enough to see what they were. */
const KEPT_ARGUMENT_CHARS = 500;

/**
 * Arguments as they are kept with a call that was not run: as written, or, over
 * MAX_TOOL_ARGUMENT_CHARS, only their start (never parsed), so they cost neither storage nor
 * every later prompt.
 */
export function keptArguments(text: string): string {
  if (text.length <= MAX_TOOL_ARGUMENT_CHARS) return text;
  return `${text.slice(0, KEPT_ARGUMENT_CHARS)}… (cut: ${sizeInWords(text.length)} in all)`;
}

/** Any JSON value. Every property carries a `type` (KoboldCPP drops requests without one). */
const ANY_JSON: Schema['type'] = ['string', 'number', 'boolean', 'object', 'array', 'null'];

export interface ToolDefaults {
  contextTokens: number;
  recencyBias: number;
  /** The turn's chat: a save takes its context snapshot from it (not the last chat indexed). */
  conversationId?: number;
  /** The turn's chat from its user message on: what searchConversations leaves out. */
  exclude?: { conversationId: number; fromTurnId: number };
}

export interface MemoryTool {
  name: string;
  description: string;
  parameters: Schema & { properties: Record<string, Schema> };
  run(memory: MemoryApi, args: Record<string, unknown>, defaults: ToolDefaults): Promise<unknown>;
}

const path = (what: string): Schema => ({
  type: 'string',
  description: `${what}, segments separated by "/", e.g. "Project/Goals/Phase1"`,
});

export const MEMORY_TOOLS: readonly MemoryTool[] = [
  {
    name: 'saveMemory',
    description:
      'Save something worth remembering (a fact, goal, decision, preference, list) at a hierarchical path. ' +
      'Saving to an existing path replaces it (the old version is kept in history). ' +
      'The relevant part of the current conversation is stored with it automatically.',
    parameters: {
      type: 'object',
      properties: {
        path: path('Where to save it'),
        content: { type: ANY_JSON, description: 'What to remember: text or any JSON value' },
        contextTokens: {
          type: 'integer',
          minimum: 0,
          maximum: 4000,
          description: 'How many tokens of conversation context to keep with it (default 1000)',
        },
      },
      required: ['path', 'content'],
    },
    run: (m, a, d) =>
      m.saveMemory(
        a.path,
        a.content,
        a.contextTokens ?? d.contextTokens,
        d.conversationId !== undefined ? { conversationId: d.conversationId } : undefined,
      ),
  },
  {
    name: 'queryMemory',
    description:
      'Read one saved memory by its exact path, with the conversation it was saved from.',
    parameters: {
      type: 'object',
      properties: { path: path('The exact path of the memory') },
      required: ['path'],
    },
    run: (m, a) => m.queryMemory(a.path),
  },
  {
    name: 'queryMemoryHeading',
    description:
      'Without a query: list the children of a heading (a path prefix such as "Project/Goals"; "" for the top), newest first. ' +
      'With a query: search every memory below the heading (at any depth) by its words and meaning, ' +
      'blended with recency, best first; each hit says which words matched.',
    parameters: {
      type: 'object',
      properties: {
        path: path('The heading to look under ("" for all memory)'),
        query: {
          type: 'string',
          description:
            'Optional question or keywords; names, places, dates and rare words find memories best',
        },
        recencyBias: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          description: '0 = by relevance only, 1 = newest first (default 0.3)',
        },
      },
      required: ['path'],
    },
    run: (m, a, d) => m.queryMemoryHeading(a.path, a.query, a.recencyBias ?? d.recencyBias),
  },
  {
    name: 'listMemory',
    description: 'Show the tree of saved memories below a path ("" or omitted for everything).',
    parameters: {
      type: 'object',
      properties: { rootPath: path('Where to start ("" for everything)') },
    },
    // `path` is what every other tool calls it: a model that writes it means the heading, not
    // all of memory (an argument a tool does not take is otherwise left out unread).
    run: (m, a) => m.listMemory(a.rootPath ?? a.path ?? ''),
  },
  {
    name: 'deleteMemory',
    description:
      'Delete a saved memory. A heading with entries below it needs recursive: true. Deleted memories can be restored by the user.',
    parameters: {
      type: 'object',
      properties: {
        path: path('The path to delete'),
        recursive: { type: 'boolean', description: 'Also delete everything below the path' },
      },
      required: ['path'],
    },
    run: (m, a) => m.deleteMemory(a.path, a.recursive ?? false),
  },
  {
    name: 'searchConversations',
    description:
      'Search what was said in every past chat (not only saved memories), by words and meaning: ' +
      'the best matching messages with their chat, date and speaker.',
    parameters: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description: 'What to look for: names, places, dates and rare words find messages best',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 20,
          description: 'How many messages to return (default 5)',
        },
      },
      required: ['query'],
    },
    run: (m, a, d) =>
      m.searchConversations(a.query, a.limit ?? 5, d.exclude ? { exclude: d.exclude } : undefined),
  },
];

/** Tools offered only when enabled in settings (docs/design.md, "Offered when enabled"). */
export const EXTRA_TOOLS: readonly MemoryTool[] = [
  {
    name: 'updateMemory',
    description:
      'Change some fields of a saved JSON object (a JSON merge patch; null removes a field).',
    parameters: {
      type: 'object',
      properties: {
        path: path('The memory to change'),
        patch: { type: 'object', description: 'Fields to set; null removes a field' },
      },
      required: ['path', 'patch'],
    },
    run: (m, a) => m.updateMemory(a.path, a.patch),
  },
  {
    name: 'moveMemory',
    description: 'Rename a memory or move a whole heading to a new path.',
    parameters: {
      type: 'object',
      properties: { from: path('The current path'), to: path('The new path') },
      required: ['from', 'to'],
    },
    run: (m, a) => m.moveMemory(a.from, a.to),
  },
];

export function toolSpecs(tools: readonly MemoryTool[]): ToolSpec[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

export interface ToolOutcome {
  name: string;
  /** Parsed arguments, or the raw string when they were not JSON. */
  args: unknown;
  result: unknown;
  /** The call was refused before running (unknown tool, bad JSON, schema mismatch). */
  refused: boolean;
}

/** The tools that change saved memory. */
export const MEMORY_WRITERS: ReadonlySet<string> = new Set([
  'saveMemory',
  'updateMemory',
  'moveMemory',
  'deleteMemory',
]);

/** Whether a call changed saved memory: a writing tool that ran and succeeded. */
export function changedMemory(outcome: ToolOutcome): boolean {
  const status = (outcome.result as { status?: unknown } | null | undefined)?.status;
  return !outcome.refused && MEMORY_WRITERS.has(outcome.name) && status === 'SUCCESS';
}

/**
 * The tool a call names: by its exact name, else ignoring case, `_` and `-`, as small models
 * write names in the casing they were trained on (docs/chat.md, "Tool calls written as text").
 */
export function toolNamed<T extends { name: string }>(
  tools: readonly T[],
  name: string,
): T | undefined {
  const exact = tools.find((t) => t.name === name);
  if (exact) return exact;
  const key = toolNameKey(name);
  return tools.find((t) => toolNameKey(t.name) === key);
}

/** Validates and runs one call; never throws. */
export async function runToolCall(
  call: ToolCall,
  tools: readonly MemoryTool[],
  memory: MemoryApi,
  defaults: ToolDefaults,
  validators: Map<string, Validator> = new Map(),
): Promise<ToolOutcome> {
  const tool = toolNamed(tools, call.function.name);
  const name = tool?.name ?? call.function.name;
  const refuse = (args: unknown, message: string, code = 'INVALID_ARGUMENT'): ToolOutcome => ({
    name,
    args,
    refused: true,
    result: { status: 'ERROR', code, message },
  });
  const text = call.function.arguments ?? '';
  // Not parsed at all: a confused model's megabytes would cost time, storage and every prompt.
  if (text.length > MAX_TOOL_ARGUMENT_CHARS) {
    return refuse(
      keptArguments(text),
      `The arguments of ${name} are ${sizeInWords(text.length)}, and a tool call takes at most ${sizeInWords(MAX_TOOL_ARGUMENT_CHARS)}. Nothing was run. Save a summary, or split it over several calls.`,
      'CONTENT_TOO_LARGE',
    );
  }
  let args: unknown;
  const raw = text.trim();
  try {
    args = raw === '' ? {} : JSON.parse(raw);
  } catch {
    return refuse(
      raw,
      `The arguments of ${name} are not valid JSON. Send them as a JSON object, e.g. {"path": "Project/Goals"}.`,
    );
  }
  if (!tool) {
    return refuse(
      args,
      `There is no tool named "${name}". Available tools: ${tools.map((t) => t.name).join(', ')}.`,
    );
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return refuse(
      args,
      `The arguments of ${name} must be a JSON object with ${describeParams(tool)}.`,
    );
  }
  let validator = validators.get(name);
  if (!validator) {
    validator = new Validator(tool.parameters, '2020-12', false);
    validators.set(name, validator);
  }
  const check = validator.validate(args);
  if (!check.valid) {
    const problems = [
      ...new Set(
        check.errors
          .filter((e) => e.keyword !== 'properties' && e.keyword !== '$ref')
          .map((e) => `${e.instanceLocation.replace(/^#\/?/, '') || 'arguments'}: ${e.error}`),
      ),
    ].slice(0, 5);
    return refuse(
      args,
      `Invalid arguments for ${name}: ${problems.join('; ')}. Expected ${describeParams(tool)}.`,
    );
  }
  try {
    const result = await tool.run(memory, args as Record<string, unknown>, defaults);
    return { name, args, result, refused: false };
  } catch (e) {
    // The engine returns errors instead of throwing; this is a transport failure (e.g. the worker died).
    return {
      name,
      args,
      refused: false,
      result: {
        status: 'ERROR',
        code: 'INTERNAL_ERROR',
        message: e instanceof Error ? e.message : String(e),
      },
    };
  }
}

function describeParams(tool: MemoryTool): string {
  const required = new Set((tool.parameters.required as string[] | undefined) ?? []);
  return Object.entries(tool.parameters.properties as Record<string, Schema>)
    .map(
      ([k, s]) =>
        `"${k}" (${Array.isArray(s.type) ? 'any JSON' : String(s.type)}${required.has(k) ? '' : ', optional'})`,
    )
    .join(', ');
}
