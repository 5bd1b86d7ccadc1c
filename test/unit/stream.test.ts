// The stream reducers over hand-written SSE bodies (test/fixtures/streams/README.md: written after
// each server's documented wire format, not captured), whole and split at every byte.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sseEvents } from '../../src/llm/sse';
import {
  koboldNativeReducer,
  openAiChunkReducer,
  type StreamOutcome,
  type StreamReducer,
} from '../../src/llm/stream';
import { LlmError, type SseEvent } from '../../src/llm/types';

const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../fixtures/streams/${name}`, import.meta.url)));

const bodyOf = (bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> => {
  const points = [...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let at = 0;
      for (const p of [...points, bytes.length]) {
        controller.enqueue(bytes.slice(at, p));
        at = p;
      }
      controller.close();
    },
  });
};

interface Replay {
  streamed: string;
  outcome?: StreamOutcome;
  error?: { code: string; message: string };
  sawDone: boolean;
}

/** Runs bytes through sseEvents and a reducer as the connector would; ids the reader made up normalised. */
async function replay(
  bytes: Uint8Array,
  cuts: number[],
  reducer: () => StreamReducer,
): Promise<Replay> {
  const r = reducer();
  let streamed = '';
  let sawDone = false;
  try {
    for await (const event of sseEvents(bodyOf(bytes, cuts))) {
      const step = r.push(event);
      streamed += step.tokens.join('');
      if (step.done) {
        sawDone = true;
        break;
      }
    }
  } catch (err) {
    if (!(err instanceof LlmError)) throw err;
    return { streamed, error: { code: err.code, message: err.message }, sawDone };
  }
  const outcome = r.result();
  const toolCalls = outcome.toolCalls.map((c) => ({
    ...c,
    id: /^call_[0-9a-f]{16}$/.test(c.id) ? '<made-up>' : c.id,
  }));
  return { streamed, outcome: { ...outcome, toolCalls }, sawDone };
}

interface Case {
  file: string;
  reducer: () => StreamReducer;
  expected: Replay;
}

const call = (id: string, name: string, args: unknown) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
});

const CASES: Case[] = [
  {
    file: 'kobold-native.sse',
    reducer: () => koboldNativeReducer(),
    expected: {
      streamed: ' Hello, I remember the café.',
      outcome: { text: ' Hello, I remember the café.', toolCalls: [], finishReason: 'stop' },
      sawDone: true,
    },
  },
  {
    file: 'kobold-native-null-string.sse',
    reducer: () => koboldNativeReducer(),
    expected: {
      streamed: 'Anna likes tea and',
      outcome: { text: 'Anna likes tea and', toolCalls: [], finishReason: 'length' },
      sawDone: true,
    },
  },
  {
    file: 'kobold-openai-tool-call.sse',
    reducer: () => openAiChunkReducer('koboldcpp'),
    expected: {
      streamed: "I'll remember that.",
      outcome: {
        text: "I'll remember that.",
        toolCalls: [
          call(
            'call_48213',
            'saveMemory',
            '{"path": "People/Anna", "content": "Anna likes green tea."}',
          ),
        ],
        finishReason: 'tool_calls',
      },
      sawDone: true,
    },
  },
  {
    file: 'kobold-openai-tool-calls-no-call.sse',
    reducer: () => openAiChunkReducer('koboldcpp'),
    expected: {
      streamed: 'Hello! How can I help?',
      // finish_reason says tool_calls, but there is no call: callers go by toolCalls.
      outcome: { text: 'Hello! How can I help?', toolCalls: [], finishReason: 'tool_calls' },
      sawDone: true,
    },
  },
  {
    file: 'llamacpp-tool-call-deltas.sse',
    reducer: () => openAiChunkReducer('llamacpp'),
    expected: {
      // Its `reasoning_content` is the reply's thinking, ahead of the answer.
      streamed: '<think>The user wants me to remember.</think>Noted: café 🧠\n',
      outcome: {
        text: '<think>The user wants me to remember.</think>Noted: café 🧠\n',
        toolCalls: [
          call('Qm7vT2xKc9LpA4sWd8RfB3nYh6JzE1uG', 'saveMemory', {
            path: 'Places/Café',
            content: 'Best ☕ in town',
          }),
        ],
        finishReason: 'tool_calls',
      },
      sawDone: true,
    },
  },
  {
    file: 'llamacpp-old-empty-id.sse',
    reducer: () => openAiChunkReducer('llamacpp'),
    expected: {
      streamed: 'Noted: café 🧠\n',
      outcome: {
        text: 'Noted: café 🧠\n',
        toolCalls: [
          call('<made-up>', 'saveMemory', { path: 'Places/Café', content: 'Best ☕ in town' }),
        ],
        finishReason: 'tool_calls',
      },
      sawDone: true,
    },
  },
  {
    file: 'ollama-whole-call.sse',
    reducer: () => openAiChunkReducer('ollama'),
    expected: {
      streamed: '',
      outcome: {
        text: '',
        toolCalls: [call('call_k2x9pq1z', 'queryMemory', { query: 'What does Anna drink?' })],
        finishReason: 'tool_calls',
      },
      sawDone: true,
    },
  },
  {
    file: 'openai-parallel-calls-crlf.sse',
    reducer: () => openAiChunkReducer('openai'),
    expected: {
      streamed: '',
      outcome: {
        text: '',
        toolCalls: [
          call('call_a1', 'queryMemory', '{"query": "Anna"}'),
          call('call_b2', 'listMemory', '{"path": "People"}'),
        ],
        finishReason: 'tool_calls',
      },
      sawDone: true,
    },
  },
];

describe('hand-written streams, in each server’s documented wire format', () => {
  for (const c of CASES) {
    describe(c.file, () => {
      const bytes = fixture(c.file);

      it('replays to the expected result', async () => {
        expect(await replay(bytes, [], c.reducer)).toEqual(c.expected);
      });

      it('gives the same result split at every byte boundary', async () => {
        for (let i = 1; i < bytes.length; i++) {
          const got = await replay(bytes, [i], c.reducer);
          if (JSON.stringify(got) !== JSON.stringify(c.expected)) {
            expect({ splitAt: i, got }).toEqual({ splitAt: i, got: c.expected });
          }
        }
      });

      it('gives the same result split at random boundaries', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }),
            async (cuts) => {
              expect(await replay(bytes, cuts, c.reducer)).toEqual(c.expected);
            },
          ),
          { numRuns: 150 },
        );
      });

      it('gives the same result one byte at a time', async () => {
        const every = Array.from({ length: bytes.length }, (_, i) => i);
        expect(await replay(bytes, every, c.reducer)).toEqual(c.expected);
      });
    });
  }

  describe('llamacpp-stream-error.sse', () => {
    const bytes = fixture('llamacpp-stream-error.sse');
    const expected = {
      streamed: 'Let me',
      error: { code: 'CONTEXT_OVERFLOW', message: expect.stringContaining('context') as string },
      sawDone: false,
    };

    it('surfaces the `error:` line as an LlmError after the tokens before it', async () => {
      expect(await replay(bytes, [], () => openAiChunkReducer('llamacpp'))).toEqual(expected);
    });

    it('does so however the bytes are split', async () => {
      for (let i = 1; i < bytes.length; i++) {
        expect(await replay(bytes, [i], () => openAiChunkReducer('llamacpp'))).toEqual(expected);
      }
    });
  });
});

const ev = (data: string, event?: string): SseEvent => (event ? { event, data } : { data });
const chunk = (choice: unknown) => ev(JSON.stringify({ choices: [choice] }));

const thrown = (fn: () => unknown): LlmError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof LlmError) return err;
    throw err;
  }
  throw new Error('expected an LlmError');
};

describe('openAiChunkReducer', () => {
  it('collects content tokens, skips empty ones and reasoning', () => {
    const r = openAiChunkReducer();
    expect(r.push(chunk({ delta: { role: 'assistant', content: '' } }))).toEqual({
      tokens: [],
      done: false,
    });
    expect(r.push(chunk({ delta: { content: 'Hi' } })).tokens).toEqual(['Hi']);
    expect(r.push(chunk({ delta: { reasoning_content: 'hmm' } })).tokens).toEqual([]);
    expect(r.push(chunk({ delta: { content: null }, finish_reason: 'stop' })).tokens).toEqual([]);
    expect(r.result()).toEqual({ text: 'Hi', toolCalls: [], finishReason: 'stop' });
  });

  it('gives thinking sent apart before the answer as the reply’s <think>…</think> start', () => {
    // llama.cpp (reasoning format deepseek), vLLM and LM Studio: `reasoning_content`.
    const r = openAiChunkReducer('llamacpp');
    const tokens = [
      chunk({ delta: { role: 'assistant', content: null, reasoning_content: 'Ana… ' } }),
      chunk({ delta: { content: null, reasoning_content: 'Lisbon.' } }),
      chunk({ delta: { content: 'She moves to ', reasoning_content: null } }),
      chunk({ delta: { content: 'Lisbon.' }, finish_reason: 'stop' }),
    ].flatMap((e) => r.push(e).tokens);
    expect(tokens.join('')).toBe('<think>Ana… Lisbon.</think>She moves to Lisbon.');
    expect(r.result().text).toBe('<think>Ana… Lisbon.</think>She moves to Lisbon.');
    // Ollama: `reasoning`; thinking then a call, no words.
    const o = openAiChunkReducer('ollama');
    o.push(chunk({ delta: { content: '', reasoning: 'Save it.' } }));
    const fn = { name: 'saveMemory', arguments: '{}' };
    o.push(chunk({ delta: { tool_calls: [{ index: 0, id: 'c1', function: fn }] } }));
    o.push(chunk({ delta: {}, finish_reason: 'tool_calls' }));
    expect(o.result().text).toBe('<think>Save it.</think>');
    expect(o.result().toolCalls).toHaveLength(1);
  });

  it('keeps thinking cut off for length open, and closes thinking that ends the reply', () => {
    const cut = openAiChunkReducer();
    cut.push(chunk({ delta: { reasoning_content: 'Let me think' } }));
    cut.push(chunk({ delta: { reasoning_content: ' more' }, finish_reason: 'length' }));
    expect(cut.result()).toEqual({
      text: '<think>Let me think more',
      toolCalls: [],
      finishReason: 'length',
    });
    const only = openAiChunkReducer();
    only.push(chunk({ delta: { reasoning_content: 'Nothing to add.' } }));
    only.push(chunk({ delta: {}, finish_reason: 'stop' }));
    expect(only.result().text).toBe('<think>Nothing to add.</think>');
  });

  it('skips a usage chunk with choices: [] and metadata without choices', () => {
    const r = openAiChunkReducer();
    expect(r.push(ev('{"choices":[],"usage":{"total_tokens":3}}'))).toEqual({
      tokens: [],
      done: false,
    });
    expect(r.push(ev('{"object":"chat.completion.chunk"}')).done).toBe(false);
  });

  it('ends at [DONE] and ignores anything after it', () => {
    const r = openAiChunkReducer();
    expect(r.push(ev('[DONE]'))).toEqual({ tokens: [], done: true });
    expect(r.push(ev('not json'))).toEqual({ tokens: [], done: true });
  });

  it('reads /v1/completions chunks (choices[0].text) and a final `message`', () => {
    const r = openAiChunkReducer();
    r.push(chunk({ text: 'a' }));
    r.push(chunk({ message: { content: 'b' }, finish_reason: 'length' }));
    expect(r.result()).toEqual({ text: 'ab', toolCalls: [], finishReason: 'length' });
  });

  it('treats "null" and missing finish_reason as not finished', () => {
    const r = openAiChunkReducer();
    r.push(chunk({ delta: { content: 'x' }, finish_reason: 'null' }));
    expect(r.result().finishReason).toBeNull();
  });

  it('throws MALFORMED_STREAM for a data line that is not JSON', () => {
    const err = thrown(() => openAiChunkReducer().push(ev('{"choices": [')));
    expect(err.code).toBe('MALFORMED_STREAM');
    expect(err.message).toMatch(/could not read/);
    expect(thrown(() => openAiChunkReducer().push(ev('42'))).code).toBe('MALFORMED_STREAM');
  });

  it('throws the classified error for a {"error":…} payload', () => {
    const r = openAiChunkReducer('lmstudio');
    const err = thrown(() =>
      r.push(ev('{"error":{"message":"Model unloaded unexpectedly","type":"server_error"}}')),
    );
    expect(err.code).toBe('SERVER_ERROR');
    expect(err.detail.serverMessage).toBe('Model unloaded unexpectedly');
    const overflow = thrown(() =>
      openAiChunkReducer().push(
        ev(
          '{"error":{"code":400,"message":"This model\'s maximum context length is 4096 tokens"}}',
        ),
      ),
    );
    expect(overflow.code).toBe('CONTEXT_OVERFLOW');
  });

  it("throws for llama.cpp's error event", () => {
    const err = thrown(() =>
      openAiChunkReducer('llamacpp').push(ev('{"code":500,"message":"boom"}', 'error')),
    );
    expect(err.code).toBe('SERVER_ERROR');
    expect(err.detail).toMatchObject({ status: 500, serverMessage: 'boom', kind: 'llamacpp' });
  });
});

describe('koboldNativeReducer', () => {
  const kn = (token: string, finish: unknown) =>
    ev(JSON.stringify({ token, finish_reason: finish }), 'message');

  it('ends on the first non-null finish_reason, accepting "null" as null', () => {
    const r = koboldNativeReducer();
    expect(r.push(kn('A', null))).toEqual({ tokens: ['A'], done: false });
    expect(r.push(kn('B', 'null'))).toEqual({ tokens: ['B'], done: false });
    expect(r.push(kn('C', 'stop'))).toEqual({ tokens: ['C'], done: true });
    expect(r.push(kn('D', null))).toEqual({ tokens: [], done: true });
    expect(r.result()).toEqual({ text: 'ABC', toolCalls: [], finishReason: 'stop' });
  });

  it('accepts events without an event field and ignores other event types', () => {
    const r = koboldNativeReducer();
    r.push(ev('{"token":"x","finish_reason":null}'));
    r.push(ev('{"token":"y"}', 'ping'));
    expect(r.result().text).toBe('x');
  });

  it('throws MALFORMED_STREAM for bad JSON and a classified error for an error payload', () => {
    expect(thrown(() => koboldNativeReducer().push(ev('{token', 'message'))).code).toBe(
      'MALFORMED_STREAM',
    );
    const busy = thrown(() =>
      koboldNativeReducer().push(
        ev(
          '{"detail":{"msg":"Server is busy; please try again later.","type":"service_unavailable"}}',
        ),
      ),
    );
    expect(busy.code).toBe('BUSY');
  });
});
