// Property tests over the connector's parsers with hostile model-server output from a fixed
// seed (issue 10): markers, brackets, quotes, fences and tags mixed and repeated thousands of
// times, nesting thousands deep. Every parser returns a result or throws a typed LlmError
// whose message says the fix; nothing else escapes, and no tool call carries arguments that
// would overflow the stack further on.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorFromResponse, errorFromStreamPayload, serverMessageOf } from '../../src/llm/errors';
import { isJson, jsonDepth, jsonEnd, jsonSpans } from '../../src/llm/json-scan';
import { MAX_JSON_DEPTH } from '../../src/llm/limits';
import { parseToolCalls } from '../../src/llm/prompted-tools';
import { createSseParser } from '../../src/llm/sse';
import { koboldNativeReducer, openAiChunkReducer } from '../../src/llm/stream';
import { tokenFilter } from '../../src/llm/token-filter';
import { createToolCallAccumulator } from '../../src/llm/tool-calls';
import { LlmError, type ToolCall } from '../../src/llm/types';

/** Fixed seed: a failure here reproduces on every machine. */
const RUNS = { seed: 0x5eed10, numRuns: 150 };

const PIECES = [
  '<think>',
  '</think>',
  '<|python_tag|>',
  '<tool_call>',
  '</tool_call>',
  '<TOOL_CALL>',
  '[TOOL_CALLS]',
  '[ARGS]',
  '[CALL_ID]',
  '{"name":',
  '"name": "saveMemory"',
  '"arguments":',
  '"parameters":',
  '{"tool_calls":[',
  '{',
  '}',
  '[',
  ']',
  '"',
  '\\',
  '\\u12',
  ',',
  ':',
  ' ',
  '\t',
  '\n',
  '\r',
  '\r\n',
  '```',
  '```json\n',
  'saveMemory',
  '1e999',
  '-0.5',
  'true',
  'null',
  '<|python_tag|>',
  '<html>',
  '<title>',
  '</title>',
  '<script>',
  '</script>',
  '<style',
  '<',
  '>',
  '&amp;',
  '&lt;',
  'data: ',
  'event: error',
  'error: ',
  ': ping',
  '[DONE]',
  'é',
  '😀',
  '\u0000',
];

const piece = fc.constantFrom(...PIECES);

/** One piece repeated up to thousands of times: the shape of every slow case found so far. */
const run = fc
  .tuple(piece, fc.integer({ min: 1, max: 4000 }))
  .map(([text, times]) => text.repeat(times));

/** A string nested `depth` levels deep around `inner`. */
const nestedText = fc
  .tuple(
    fc.integer({ min: 1, max: 3000 }),
    fc.constantFrom('[', '{"a":'),
    fc.boolean(),
    fc.constantFrom('1', '"x"', '', '{"name":"a","arguments":{}}'),
  )
  .map(([depth, open, closed, inner]) => {
    const close = open === '[' ? ']' : '}';
    return open.repeat(depth) + inner + (closed ? close.repeat(depth) : '');
  });

/** Hostile text: pieces, long runs, deep nesting and random strings, in any order. */
const hostile = fc
  .array(fc.oneof(piece, piece, run, nestedText, fc.string({ unit: 'grapheme', maxLength: 40 })), {
    maxLength: 30,
  })
  .map((parts) => parts.join(''));

/** Splits `text` at random places. */
const chunked = (text: string, cuts: number[]): string[] => {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const cut of at) {
    out.push(text.slice(from, cut));
    from = cut;
  }
  out.push(text.slice(from));
  return out;
};

/** A connector error as the app shows it: typed, with a code and a sentence that says the fix. */
function expectTypedError(e: unknown): void {
  expect(e).toBeInstanceOf(LlmError);
  const err = e as LlmError;
  expect(err.name).toBe('LlmError');
  expect(typeof err.code).toBe('string');
  expect(err.message).toMatch(/\S: \S/);
}

/** Runs `f`; a throw must be a typed LlmError. */
function resultOrTypedError<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch (e) {
    expectTypedError(e);
    return undefined;
  }
}

/** A call's arguments can go on to validation, storage and the worker without a RangeError. */
function expectSafeCall(call: ToolCall): void {
  expect(call.type).toBe('function');
  expect(call.id).not.toBe('');
  expect(call.function.name.trim()).not.toBe('');
  expect(typeof call.function.arguments).toBe('string');
  expect(jsonDepth(call.function.arguments)).toBeLessThanOrEqual(MAX_JSON_DEPTH);
  if (isJson(call.function.arguments, MAX_JSON_DEPTH)) {
    const value: unknown = JSON.parse(call.function.arguments);
    expect(() => JSON.stringify(structuredClone(value))).not.toThrow();
  }
}

/** `JSON.parse` accepts it (the reference `isJson` must agree with). */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('parseToolCalls with hostile replies', () => {
  it('returns calls that are safe to run, the text and no error, whatever the reply', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const r = parseToolCalls(text);
        expect(r.error).toBeUndefined();
        expect(typeof r.text).toBe('string');
        expect(r.invalid.every((b) => typeof b === 'string')).toBe(true);
        r.calls.forEach(expectSafeCall);
        expect(() => JSON.stringify(r)).not.toThrow();
      }),
      RUNS,
    );
  });

  it('finds a real call wherever hostile text surrounds it', () => {
    const call = '{"name": "saveMemory", "arguments": {"path": "A", "content": "b"}}';
    fc.assert(
      fc.property(
        // Thinking left open before the call would hold it: not a call the model made.
        hostile.filter((t) => !/<tool_call>|\[TOOL_CALLS\]|<\/?think>/i.test(t)),
        fc.constantFrom(`<tool_call>${call}</tool_call>`, `<tool_call>${call}`),
        (before, block) => {
          const r = parseToolCalls(`${before}\n${block}`);
          expect(r.calls.map((c) => c.function.name)).toContain('saveMemory');
        },
      ),
      RUNS,
    );
  });
});

describe('server error bodies', () => {
  it('always become a typed error whose message is one short sentence', () => {
    fc.assert(
      fc.property(hostile, fc.integer({ min: 400, max: 599 }), (body, status) => {
        const message = serverMessageOf(body);
        expect(message.length).toBeLessThanOrEqual(300);
        expect(message).not.toMatch(/\s\s|\n/);
        expectTypedError(errorFromResponse(status, body, 'llamacpp'));
        expectTypedError(errorFromStreamPayload(body));
      }),
      RUNS,
    );
  });
});

describe('the SSE parser', () => {
  it('gives the same events however the text is split, or a typed error', () => {
    fc.assert(
      fc.property(hostile, fc.array(fc.nat(), { maxLength: 40 }), (text, cuts) => {
        const whole = resultOrTypedError(() => {
          const p = createSseParser();
          return [...p.push(text), ...p.end()];
        });
        const split = resultOrTypedError(() => {
          const p = createSseParser();
          const events = chunked(text, cuts).flatMap((c) => p.push(c));
          return [...events, ...p.end()];
        });
        expect(split).toEqual(whole);
        for (const e of whole ?? []) expect(typeof e.data).toBe('string');
      }),
      RUNS,
    );
  });
});

describe('stream reducers and tool-call accumulation', () => {
  const deltaArgs = fc.oneof(
    hostile,
    nestedText,
    nestedText.map((t) => (parses(t) ? (JSON.parse(t) as unknown) : t)),
    fc.jsonValue(),
  );
  const delta = fc.record(
    {
      index: fc.oneof(fc.nat({ max: 5 }), fc.constant(-1), fc.constant('0')),
      id: fc.constantFrom('', 'c1', 'c2'),
      function: fc.record(
        { name: fc.constantFrom('', 'saveMemory', 'queryMemory'), arguments: deltaArgs },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  );

  it('an accumulator keeps safe calls or throws a typed error', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(delta, fc.array(delta, { maxLength: 3 })), { maxLength: 12 }),
        (deltas) => {
          const acc = createToolCallAccumulator();
          resultOrTypedError(() => deltas.forEach((d) => acc.add(d)));
          acc.calls().forEach(expectSafeCall);
        },
      ),
      RUNS,
    );
  });

  it('reducers fold any events into a result or a typed error', () => {
    const payload = fc.oneof(
      hostile,
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc
        .tuple(
          fc.string(),
          fc.array(delta, { maxLength: 3 }),
          fc.constantFrom(null, 'stop', 'null'),
        )
        .map(([content, tool_calls, finish_reason]) =>
          JSON.stringify({
            token: content,
            finish_reason,
            choices: [{ delta: { content, tool_calls }, finish_reason }],
          }),
        ),
    );
    const event = fc.record(
      { data: payload, event: fc.constantFrom('message', 'error', 'other') },
      { requiredKeys: ['data'] },
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 10 }), (events) => {
        for (const reducer of [openAiChunkReducer('ollama'), koboldNativeReducer()]) {
          resultOrTypedError(() => events.forEach((e) => reducer.push(e)));
          const result = reducer.result();
          expect(typeof result.text).toBe('string');
          result.toolCalls.forEach(expectSafeCall);
        }
      }),
      RUNS,
    );
  });
});

/**
 * Where the first call marker is outside the thinking that starts the reply (`<think>` before
 * anything but white space, open to the end unless closed); a later `<think>` is text.
 */
function firstCallOutsideThinking(reply: string): number {
  let thinking = false;
  for (const m of reply.matchAll(/<\/?think>|<tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>/g)) {
    if (m[0] === '<think>') thinking ||= reply.slice(0, m.index).trim() === '';
    else if (m[0] === '</think>') thinking = false;
    else if (!thinking) return m.index;
  }
  return -1;
}

describe('the prompted-mode token filter', () => {
  it('shows a prefix of the reply, all of it up to the first marker outside thinking', () => {
    fc.assert(
      fc.property(fc.array(hostile, { maxLength: 20 }), (tokens) => {
        let shown = '';
        const filter = tokenFilter('prompted', (t) => (shown += t));
        tokens.forEach(filter);
        const reply = tokens.join('');
        expect(reply.startsWith(shown)).toBe(true);
        const marker = firstCallOutsideThinking(reply);
        if (marker !== -1) expect(shown).toBe(reply.slice(0, marker));
        else expect(reply.length - shown.length).toBeLessThan('<|python_tag|>'.length);
      }),
      RUNS,
    );
  });
});

describe('JSON scanning', () => {
  const jsonish = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.jsonValue().map((v) => JSON.stringify(v, null, 2)),
    fc.tuple(fc.jsonValue(), fc.nat(), fc.constantFrom(...PIECES)).map(([v, at, p]) => {
      const s = JSON.stringify(v);
      const i = at % (s.length + 1);
      return s.slice(0, i) + p + s.slice(i);
    }),
    hostile,
    nestedText,
  );

  it('isJson agrees with JSON.parse, and refuses what nests too deep', () => {
    fc.assert(
      fc.property(jsonish, fc.integer({ min: 1, max: 100 }), (text, depth) => {
        expect(isJson(text, Infinity)).toBe(parses(text));
        expect(isJson(text, depth)).toBe(parses(text) && jsonDepth(text) <= depth);
      }),
      { ...RUNS, numRuns: 600 },
    );
  });

  it('jsonSpans finds balanced, ordered, disjoint spans', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        let last = 0;
        for (const span of jsonSpans(text)) {
          expect(span.start).toBeGreaterThanOrEqual(last);
          expect(jsonEnd(text, span.start)).toBe(span.end);
          last = span.end;
        }
      }),
      RUNS,
    );
  });
});
