// Reliability: a hostile model server against the chat session (node; the same session the app
// runs, over a real connector and a real engine). Streams that never end (stopped by the user,
// or cut by the connector's size cap), replies of megabytes, tool-call JSON that does not parse,
// 30 tool calls in one reply, markup in the model name and the answer. After each case: the turn
// ended in time with a status that says what happened, every tool result matches the store, the
// stored chat can be sent again, and the next turn works.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatSession, type SessionEvent, type TurnResult } from '../../src/chat/chat-session';
import { createConnector } from '../../src/llm/connector';
import type { ToolMode } from '../../src/llm/types';
import type { MemoryApi } from '../../src/memory/types';
import {
  startFakeServer,
  type FakeKind,
  type FakeReply,
  type FakeToolCall,
} from '../fixtures/fake-llm';
import { ok, openTestMemory, sharedEmbedder } from '../integration/helpers';
import {
  MARKUP,
  applyGarble,
  garble,
  jsonText,
  markup,
  shallowJsonText,
  type Garble,
} from './arbitraries';
import { Tally, check, runCount, testTimeout, uncaughtDuring, within } from './config';
import { ENDLESS, startEndlessServer, type Endless } from './endless-llm';
import {
  dispose,
  chatProblems,
  entriesByPath,
  expectNoPollution,
  expectSound,
  safeJson,
  snapshotDb,
  text,
} from './store';

const MB = 1 << 20;

async function seeded(): Promise<{ mem: MemoryApi; name: string }> {
  const tm = openTestMemory();
  ok(await tm.mem.createConversation('hostile'));
  ok(await tm.mem.saveMemory('Seed/One', { keep: 'this' }));
  ok(await tm.mem.saveMemory('Seed/Two', 'two'));
  return tm;
}

function session(
  mem: MemoryApi,
  endpoint: string,
  toolMode: ToolMode,
  events: SessionEvent[],
  fetchFn?: typeof fetch,
) {
  return createChatSession({
    memory: mem,
    connector: createConnector({
      endpoint,
      retry: { attempts: 1, baseDelayMs: 0 },
      ...(fetchFn ? { fetch: fetchFn } : {}),
    }),
    settings: { toolMode },
    onEvent: (e) => events.push(e),
  });
}

/** Checks every case ends with: a sound store, a chat that can be sent again, no pollution. */
async function expectSoundChat(name: string, label: string): Promise<void> {
  const snap = await snapshotDb(name);
  expectSound(snap, label);
  expect(chatProblems(snap), `${label}: the stored chat is broken`).toEqual([]);
  expectNoPollution(label);
}

/**
 * Tool results against the store: each path holds what the last successful save or delete of the
 * turn left there (saves and deletes are the writes these replies make).
 */
async function expectToolResultsHold(
  name: string,
  label: string,
  events: readonly SessionEvent[],
): Promise<void> {
  const now = entriesByPath(await snapshotDb(name));
  const args = new Map<string, { content?: unknown }>();
  const expected = new Map<string, string | undefined>();
  for (const e of events) {
    if (e.type === 'tool-call') args.set(e.id, (e.args ?? {}) as { content?: unknown });
    if (e.type !== 'tool-result') continue;
    const r = e.result as { status: string; path?: string };
    if (r.status !== 'SUCCESS' || r.path === undefined) continue;
    if (e.name === 'saveMemory') expected.set(r.path, text(args.get(e.id)?.content));
    if (e.name === 'deleteMemory') {
      for (const p of expected.keys()) {
        if (p === r.path || p.startsWith(`${r.path}/`)) expected.set(p, undefined);
      }
    }
  }
  for (const [path, content] of expected) {
    const stored = now.get(path);
    expect(stored === undefined ? undefined : text(stored.content), `${label}: "${path}"`).toBe(
      content,
    );
  }
  const results = events.filter((e) => e.type === 'tool-result').length;
  const snap = await snapshotDb(name);
  const toolMessages = (snap.messages as { role: string }[]).filter((m) => m.role === 'tool');
  expect(toolMessages.length, `${label}: one stored tool message per result`).toBe(results);
}

const MODES: ToolMode[] = ['auto', 'native', 'prompted'];

describe('reliability: a hostile model server', () => {
  beforeAll(async () => {
    await sharedEmbedder().ready();
  });
  afterAll(() => expectNoPollution('after all model-server cases'));

  const ENDLESS_RUNS = runCount(3);

  it(
    'a stream that never ends: Stop ends the turn, or the size cap does; the next turn works',
    async () => {
      const seen = new Tally();
      const needsStop = (k: Endless) => k === 'tokens' || k === 'keep-alive' || k === 'silent';
      await check(
        'model server: streams that never end',
        fc.asyncProperty(
          fc.constantFrom(...ENDLESS),
          fc.constantFrom('llamacpp' as const, 'koboldcpp' as const),
          fc.constantFrom(...MODES),
          fc.integer({ min: 1, max: 40 }),
          async (kind, dialect, toolMode, stopAfter) => {
            const label = `${dialect} ${kind} (${toolMode} tools), Stop after ${stopAfter} events`;
            const server = await startEndlessServer({ dialect, kind, model: MARKUP[1] });
            const { mem, name } = await seeded();
            try {
              const events: SessionEvent[] = [];
              const chat = session(mem, server.url, toolMode, events);
              const stop = new AbortController();
              if (needsStop(kind))
                void server.reached(kind === 'silent' ? 1 : stopAfter).then(() => stop.abort());
              const [result, uncaught] = await uncaughtDuring(() =>
                within(chat.send(1, 'Tell me everything you know.', stop.signal), label),
              );
              expect(uncaught, `${label}: uncaught errors`).toEqual([]);
              seen.add(`${kind}: ${result.status}${result.error ? ` ${result.error.code}` : ''}`);
              if (needsStop(kind)) {
                expect(result.status, `${label}: ${safeJson(result)}`).toBe('aborted');
              } else {
                expect(result.status, `${label}: ${safeJson(result)}`).toBe('error');
                expect(result.error?.code, label).toBe('MALFORMED_STREAM');
                expect(result.error?.message, label).toMatch(/16 MB/);
              }
              await expectSoundChat(name, label);
              // The next turn, with the server behaving, is answered.
              const next = await within(chat.send(1, 'Hello again.'), `${label}, next turn`);
              expect(next, `${label}: the next turn`).toMatchObject({
                status: 'answered',
                text: 'Recovered.',
              });
              await expectSoundChat(name, `${label}, next turn`);
            } finally {
              await server.close();
              await dispose(mem, name);
            }
          },
        ),
        { runs: ENDLESS_RUNS },
      );
      seen.print('model server: streams that never end');
    },
    testTimeout(ENDLESS_RUNS * 2),
  );

  type Hostile =
    | { kind: 'huge-text' }
    | { kind: 'huge-blob' }
    | { kind: 'huge-arguments' }
    | { kind: 'invalid-json'; calls: { tool: string; args: string; garble: Garble }[] }
    | { kind: 'many-calls'; calls: FakeToolCall[] }
    | { kind: 'markup'; text: string };

  const savedArgs = (i: number) =>
    fc.tuple(shallowJsonText, fc.boolean()).map(([content, deep]) => ({
      name: 'saveMemory',
      arguments: `{"path":"Many/P${i}${deep ? '/Deep' : ''}","content":${content}}`,
    }));
  const someCall = (i: number): fc.Arbitrary<FakeToolCall> =>
    fc.oneof(
      { weight: 4, arbitrary: savedArgs(i) },
      {
        weight: 1,
        arbitrary: fc.constant({ name: 'queryMemory', arguments: { path: 'Seed/One' } }),
      },
      { weight: 1, arbitrary: fc.constant({ name: 'listMemory', arguments: {} }) },
      {
        weight: 1,
        arbitrary: fc.constant({
          name: 'queryMemoryHeading',
          arguments: { path: '', query: MARKUP[0] },
        }),
      },
      {
        weight: 1,
        arbitrary: fc.constant({ name: 'deleteMemory', arguments: { path: 'Seed/Two' } }),
      },
      { weight: 1, arbitrary: fc.constant({ name: 'forgetEverything', arguments: { all: true } }) },
    );

  // 5 MB of prose ('huge-text') and 5 MB without a sentence break ('huge-blob').
  const hostile: fc.Arbitrary<Hostile> = fc.oneof(
    fc.constant({ kind: 'huge-text' as const }),
    fc.constant({ kind: 'huge-blob' as const }),
    fc.constant({ kind: 'huge-arguments' as const }),
    fc
      .array(
        fc.record({
          tool: fc.constantFrom('saveMemory', 'queryMemory', 'deleteMemory'),
          args: fc
            .tuple(jsonText, fc.nat(3))
            .map(([c, i]) => `{"path":"Bad/P${i}","content":${c}}`),
          garble,
        }),
        { minLength: 1, maxLength: 3 },
      )
      .map((calls) => ({ kind: 'invalid-json' as const, calls })),
    fc
      .tuple(...Array.from({ length: 30 }, (_, i) => someCall(i)))
      .map((calls) => ({ kind: 'many-calls' as const, calls })),
    markup.map((t) => ({ kind: 'markup' as const, text: t })),
  );

  function replyOf(h: Hostile): FakeReply {
    switch (h.kind) {
      case 'huge-text':
      case 'huge-blob': {
        const unit = h.kind === 'huge-text' ? 'The plan moves on. ' : 'QmFzZTY0IGRhdGE';
        const text = unit.repeat(Math.ceil((5 * MB) / unit.length));
        const chunks = Array.from({ length: Math.ceil(text.length / (256 * 1024)) }, (_, i) =>
          text.slice(i * 256 * 1024, (i + 1) * 256 * 1024),
        );
        return { text, chunks };
      }
      case 'huge-arguments':
        return {
          toolCalls: [
            { name: 'saveMemory', arguments: { path: 'Huge/Args', content: 'h'.repeat(5 * MB) } },
          ],
        };
      case 'invalid-json':
        return {
          toolCalls: h.calls.map((c) => ({
            name: c.tool,
            arguments: applyGarble(c.args, c.garble),
          })),
        };
      case 'many-calls':
        return { toolCalls: h.calls };
      case 'markup':
        return {
          text: h.text,
          toolCalls: [{ name: 'saveMemory', arguments: { path: 'Markup/Saved', content: h.text } }],
        };
    }
  }

  const HOSTILE_RUNS = runCount(4);

  it(
    'megabyte replies, unreadable tool calls, 30 calls in one reply, markup: the turn ends in time and the store matches',
    async () => {
      const seen = new Tally();
      await check(
        'model server: hostile replies',
        fc.asyncProperty(
          hostile,
          fc.constantFrom<FakeKind>('koboldcpp', 'llamacpp', 'ollama', 'plain'),
          fc.constantFrom(...MODES),
          markup,
          async (h, kind, toolMode, model) => {
            const label = `${h.kind} from ${kind} (${toolMode} tools)`;
            const fake = await startFakeServer(kind, {
              model,
              replies: [replyOf(h), { text: 'Done.' }],
              defaultReply: { text: 'Recovered.' },
              firstEventDelayMs: 0,
              toolDelayMs: 0,
              tokenDelayMs: 0,
              idleTimeoutMs: 60_000,
            });
            const { mem, name } = await seeded();
            try {
              const events: SessionEvent[] = [];
              const chat = session(mem, fake.url, toolMode, events);
              const [result, uncaught] = await uncaughtDuring(() =>
                within(chat.send(1, 'Do what you do.'), label),
              );
              expect(uncaught, `${label}: uncaught errors`).toEqual([]);
              const calls = events.filter((e) => e.type === 'tool-result').length;
              seen.add(
                `${h.kind} ${kind}/${toolMode}: ${result.status}${result.error ? ` ${result.error.code}` : ''}, ${calls} calls`,
              );
              expect(['answered', 'error'], `${label}: ${safeJson(result)}`).toContain(
                result.status,
              );
              expect(
                (await chat.server()).model,
                `${label}: the model name, as the server said it`,
              ).toContain(model);
              await expectToolResultsHold(name, label, events);
              await expectSoundChat(name, label);
              expectTurnShape(label, h, result);
              // The next scripted answer: "Done." when the hostile reply was itself the answer.
              const next = await within(chat.send(1, 'And now?'), `${label}, next turn`);
              expect(next, `${label}: the next turn`).toMatchObject({ status: 'answered' });
              expect(next.text, `${label}: the next turn`).toMatch(/^(Done|Recovered)\.$/);
              await expectSoundChat(name, `${label}, next turn`);
            } finally {
              await fake.close();
              await dispose(mem, name);
            }
          },
        ),
        { runs: HOSTILE_RUNS, shrink: false },
      );
      seen.print('model server: hostile replies');
    },
    testTimeout(HOSTILE_RUNS * 2),
  );

  // Found by the 5 MB reply: V8's Intl.Segmenter takes time quadratic in the text's length to
  // walk its sentences (16,000 sentences: 6 s here; a 5 MB reply: about half an hour, in one
  // synchronous block of the memory worker). splitSentences (src/memory/text.ts) walks bounded
  // windows of the text.
  it('a long reply reaches Intl.Segmenter in pieces of at most 64 KB', async () => {
    const lengths: number[] = [];
    const proto = Intl.Segmenter.prototype;
    const segment = proto.segment;
    proto.segment = function (this: Intl.Segmenter, input?: string) {
      const s = String(input);
      lengths.push(s.length);
      // A long input is not walked here: walking it is the slow part this case is about.
      return segment.call(this, s.length > 64 * 1024 ? s.slice(0, 100) : s);
    };
    const { mem, name } = await seeded();
    try {
      const reply = 'The plan moves on. '.repeat(20_000);
      ok(await mem.recordTurn({ conversationId: 1, role: 'assistant', text: reply }));
    } finally {
      proto.segment = segment;
      await dispose(mem, name);
    }
    expect(Math.max(...lengths)).toBeLessThanOrEqual(64 * 1024);
  });

  // Found by the 5 MB reply from KoboldCPP and llama.cpp: indexing a reply counted each
  // sentence's tokens with its own request to the server's tokenizer, all sent at once (5 MB: over
  // 10,000 requests in flight; the turn took minutes here). recordTurn counts groups of sentences
  // (src/memory/token-count.ts), a few at a time.
  it('indexing a long reply keeps at most 8 tokenizer requests in flight', async () => {
    const reply = Array.from({ length: 400 }, (_, i) => `Sentence ${i} moves the plan on.`).join(
      ' ',
    );
    const fake = await startFakeServer('llamacpp', {
      replies: [{ text: reply, chunks: [reply.slice(0, 6_000), reply.slice(6_000)] }],
      tokenDelayMs: 0,
      idleTimeoutMs: 60_000,
    });
    let inFlight = 0;
    let most = 0;
    const counting: typeof fetch = async (input, init) => {
      const tokenizer = String(input).endsWith('/tokenize');
      if (tokenizer) most = Math.max(most, ++inFlight);
      try {
        return await fetch(input, init);
      } finally {
        if (tokenizer) inFlight--;
      }
    };
    const { mem, name } = await seeded();
    try {
      const result = await within(
        session(mem, fake.url, 'native', [], counting).send(1, 'Go on.'),
        'a long reply',
      );
      expect(result.status).toBe('answered');
    } finally {
      await fake.close();
      await dispose(mem, name);
    }
    expect(most).toBeLessThanOrEqual(8);
  });

  function expectTurnShape(label: string, h: Hostile, result: TurnResult): void {
    if (h.kind === 'huge-text' || h.kind === 'huge-blob') {
      expect(result.status, label).toBe('answered');
      expect(result.text.length, `${label}: the answer`).toBeGreaterThan(4 * MB);
    }
  }
});
