// The headless chat session against fake servers that copy each server's wire quirks: memory
// tool calls (native and prompted), context injection, abort, broken model output and errors.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createChatSession,
  toChatMessages,
  type ChatSettings,
  type SessionEvent,
  type ToolModeMemory,
} from '../../src/chat/chat-session';
import { createConnector, type ConnectorOptions } from '../../src/llm/connector';
import { MAX_TOOL_PARSE_CHARS } from '../../src/llm/limits';
import { splitThinking } from '../../src/llm/thinking';
import { EMPTY_REPLY, cutMessage, noRoomToAnswer } from '../../src/chat/answer';
import type { ChatMessage, ToolMode } from '../../src/llm/types';
import {
  BUNDLED_MODEL,
  createEmbedder,
  openMemory,
  type Embedder,
  type MemoryApi,
} from '../../src/memory';
import {
  startFakeServer,
  type FakeKind,
  type FakeServer,
  type FakeServerOptions,
  type RecordedRequest,
} from '../fixtures/fake-llm';
import { startRunawayServer, type RunawayReply } from '../e2e/harness/chat.server';

let embedder: Embedder;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  embedder = createEmbedder({ model: BUNDLED_MODEL });
  await embedder.ready();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});
afterAll(() => embedder.dispose());

interface Setup {
  fake: FakeServer;
  memory: MemoryApi;
  events: SessionEvent[];
  session: ReturnType<typeof createChatSession>;
  conversationId: number;
}

async function setup(
  kind: FakeKind,
  fakeOptions: FakeServerOptions,
  settings: Partial<ChatSettings> = {},
  connectorOptions: Partial<ConnectorOptions> = {},
  toolModes?: ToolModeMemory,
): Promise<Setup> {
  const fake = await startFakeServer(kind, {
    firstEventDelayMs: 20,
    toolDelayMs: 10,
    tokenDelayMs: 1,
    ...fakeOptions,
  });
  const memory = openMemory({ name: `chat-${crypto.randomUUID()}`, embedder });
  open.push(fake, memory);
  const events: SessionEvent[] = [];
  const connector = createConnector({
    endpoint: fake.url,
    retry: { attempts: 3, baseDelayMs: 5 },
    ...connectorOptions,
  });
  const session = createChatSession({
    memory,
    connector,
    settings,
    toolModes,
    onEvent: (e) => events.push(e),
  });
  const conv = await memory.createConversation('test');
  if (conv.status !== 'SUCCESS') throw new Error('no conversation');
  return { fake, memory, events, session, conversationId: conv.id };
}

/** The messages a generation request carried (OpenAI chat), or its prompt (KoboldCPP native). */
function sentText(req: RecordedRequest): string {
  const body = req.body as { messages?: ChatMessage[]; prompt?: string };
  return body.prompt ?? JSON.stringify(body.messages ?? []);
}

const GOAL = 'HaloWeave/Goals/MultiWindowSupport';
const USER_SAYS =
  'Please remember this: HaloWeave must support multiple windows, and tabs should sync between windows.';

async function saveThenRecall(s: Setup) {
  const first = await s.session.send(s.conversationId, USER_SAYS);
  expect(first).toMatchObject({ status: 'answered', text: 'Saved it.', rounds: 1 });

  const entry = await s.memory.queryMemory(GOAL);
  expect(entry.status).toBe('SUCCESS');
  if (entry.status !== 'SUCCESS') return;
  expect(entry.content).toBe('Support multiple synced windows');
  expect(entry.contextChunks.length).toBeGreaterThan(0);
  // The snapshot comes from this conversation: the user's own sentences.
  expect(entry.contextChunks.map((c) => c.text).join(' ')).toContain('multiple windows');

  const second = await s.session.send(s.conversationId, 'What did we decide about windows?');
  expect(second).toMatchObject({ status: 'answered', text: 'You wanted multi-window support.' });

  // The request after the queryMemory call carries the content and its context chunks.
  const gens = s.fake.generations();
  const afterQuery = sentText(gens[gens.length - 1]);
  expect(afterQuery).toContain('Support multiple synced windows');
  expect(afterQuery).toContain('tabs should sync between windows');

  // Everything is stored: user, assistant tool call, tool result, answer — twice.
  const messages = await s.memory.getMessages(s.conversationId);
  expect(messages.map((m) => m.role)).toEqual([
    'user',
    'assistant',
    'tool',
    'assistant',
    'user',
    'assistant',
    'tool',
    'assistant',
  ]);
  expect(messages[1].toolCalls?.[0]).toMatchObject({
    name: 'saveMemory',
    result: { status: 'SUCCESS', path: GOAL },
  });
  expect(messages[7].text).toBe('You wanted multi-window support.');
  // The final answer is in the semantic index.
  const hits = await s.memory.searchChunks(s.conversationId, 'multi-window support wanted', 3);
  expect(hits.map((h) => h.chunk.text)).toContain('You wanted multi-window support.');
}

const script = [
  {
    toolCalls: [
      { name: 'saveMemory', arguments: { path: GOAL, content: 'Support multiple synced windows' } },
    ],
  },
  { text: 'Saved it.' },
  { toolCalls: [{ name: 'queryMemory', arguments: { path: GOAL } }] },
  { text: 'You wanted multi-window support.' },
];

describe('chat session with native tool calls', () => {
  for (const kind of ['koboldcpp', 'llamacpp', 'ollama'] as const) {
    it(`${kind}: saves a memory with context, reads it back in a later turn, stores the answer`, async () => {
      const s = await setup(kind, { replies: script });
      expect(await s.session.toolMode()).toBe('native');
      await saveThenRecall(s);
      // Native tools were sent, each with a description and typed properties.
      const body = s.fake.generations()[0].body as {
        tools?: {
          function: {
            name: string;
            description: string;
            parameters: { properties: Record<string, { type?: unknown }> };
          };
        }[];
      };
      expect(body.tools?.map((t) => t.function.name)).toEqual([
        'saveMemory',
        'queryMemory',
        'queryMemoryHeading',
        'listMemory',
        'deleteMemory',
        'searchConversations',
      ]);
      for (const t of body.tools ?? []) {
        expect(t.function.description).toBeTruthy();
        for (const p of Object.values(t.function.parameters.properties))
          expect(p.type).toBeDefined();
      }
    });
  }

  it('koboldcpp: chunk token counts come from the server tokenizer', async () => {
    const s = await setup('koboldcpp', { replies: script });
    await s.session.send(s.conversationId, USER_SAYS);
    expect(s.fake.requests.some((r) => r.path === '/api/extra/tokencount')).toBe(true);
  });
});

describe('a save takes its context from its own chat', () => {
  it('regenerating in one chat after talking in another: the snapshot is of the chat it was said in', async () => {
    const s = await setup('llamacpp', {
      replies: [
        { text: 'Noted.' },
        { text: 'Ulaanbaatar, yes.' },
        {
          toolCalls: [
            {
              name: 'saveMemory',
              arguments: { path: 'Pets/Dog', content: 'The user has a dog named Zanzibar.' },
            },
          ],
        },
        { text: 'Saved.' },
      ],
    });
    const dogs = s.conversationId;
    const other = await s.memory.createConversation('Geography');
    if (other.status !== 'SUCCESS') throw new Error(other.message);
    await s.session.send(dogs, 'My dog is called Zanzibar.');
    await s.session.send(other.id, 'What is the capital of Mongolia? Ulaanbaatar, I think.');
    expect((await s.session.regenerate(dogs)).status).toBe('answered');
    const saved = await s.memory.queryMemory('Pets/Dog');
    if (saved.status !== 'SUCCESS') throw new Error('not saved');
    const texts = saved.contextChunks.map((c) => c.text).join(' ');
    expect(texts).toContain('Zanzibar');
    expect(texts).not.toContain('Mongolia');
  });
});

describe('edit and resend with the server down', () => {
  it('the edited text is found by search even though no answer came', async () => {
    const s = await setup('llamacpp', { replies: [{ text: 'A fine name for a cat.' }] });
    await s.session.send(s.conversationId, 'My cat is called Whiskers.');
    const user = (await s.memory.getMessages(s.conversationId)).find((m) => m.role === 'user')!;
    // The page reloaded with the server off (port 9: nothing listens).
    const down = createChatSession({
      memory: s.memory,
      connector: createConnector({
        endpoint: 'http://127.0.0.1:9',
        retry: { attempts: 1, baseDelayMs: 5 },
      }),
    });
    const r = await down.resend(s.conversationId, user.id!, 'My dog is called Zanzibar.');
    expect(r.status).toBe('error');
    const found = await s.memory.searchConversations('Zanzibar dog', 5);
    if (found.status !== 'SUCCESS') throw new Error('search failed');
    expect(found.results.map((x) => x.turnId)).toContain(user.id);
  });
});

describe('a reply cut off in the middle of a tool call', () => {
  const CALL =
    'Let me save that. <tool_call>{"name": "saveMemory", "arguments": {"path": "Family/Ana", "content": "moves to Porto"}}</tool_call>';

  it('a dropped connection keeps what was said, not the half-written call', async () => {
    const s = await setup(
      'plain',
      { tokenDelayMs: 2, replies: [{ disconnectAfter: 14, text: CALL }] },
      { toolMode: 'prompted' },
    );
    const r = await s.session.send(s.conversationId, 'Ana moves to Porto.');
    expect(r.status).toBe('error');
    const kept = (await s.memory.getMessages(s.conversationId)).at(-1)!;
    expect(kept.role).toBe('assistant');
    expect(kept.text).toBe('Let me save that.');
  });

  it('Stop keeps what was said, not the half-written call, with native tools too', async () => {
    const s = await setup('plain', { replies: [{ hang: true, text: CALL }] }, { toolMode: 'auto' });
    const stop = new AbortController();
    let seen = '';
    await s.session.send(s.conversationId, 'Ana moves to Porto.', stop.signal, (e) => {
      if (e.type !== 'token') return;
      seen += e.text;
      if (seen.includes('"argu')) stop.abort();
    });
    const kept = (await s.memory.getMessages(s.conversationId)).at(-1)!;
    expect(kept.role).toBe('assistant');
    expect(kept.text).toBe('Let me save that.');
    expect(kept.meta?.aborted).toBe(true);
  });

  const BARE =
    'Let me save that.\n{"name": "saveMemory", "parameters": {"path": "Family/Ana", "content": "moves to Porto"}}';

  it('a call written as bare JSON: Stop keeps what was said before it', async () => {
    const s = await setup(
      'plain',
      // Its content long enough that the call is still being written when the stop comes.
      { replies: [{ hang: true, text: BARE.replace('moves to Porto', 'moves '.repeat(200)) }] },
      { toolMode: 'prompted' },
    );
    const stop = new AbortController();
    let seen = '';
    const asked = s.fake.generations().length;
    await s.session.send(s.conversationId, 'Ana moves to Porto.', stop.signal, (e) => {
      if (e.type !== 'token') return;
      seen += e.text;
      // Stopped while the call is being written (a token every 100 ms): its JSON is not shown.
      if (seen.includes('save that.')) setTimeout(() => stop.abort(), 600);
    });
    expect(s.fake.generations().length).toBe(asked + 1);
    expect(seen).toBe('Let me save that.\n');
    const kept = (await s.memory.getMessages(s.conversationId)).at(-1)!;
    expect(kept).toMatchObject({ role: 'assistant', text: 'Let me save that.' });
    expect(kept.meta?.aborted).toBe(true);
  });

  it('a call written as bare JSON: a dropped connection keeps what was said before it', async () => {
    const s = await setup(
      'plain',
      { tokenDelayMs: 2, replies: [{ disconnectAfter: 14, text: BARE }] },
      { toolMode: 'prompted' },
    );
    const r = await s.session.send(s.conversationId, 'Ana moves to Porto.');
    expect(r.status).toBe('error');
    const kept = (await s.memory.getMessages(s.conversationId)).at(-1)!;
    expect(kept).toMatchObject({ role: 'assistant', text: 'Let me save that.' });
  });
});

describe('chat session with prompted tool calls', () => {
  for (const kind of ['koboldcpp', 'plain'] as const) {
    it(`${kind}: tools described in the prompt, calls parsed from text, results as <tool_response>`, async () => {
      const s = await setup(kind, { replies: script }, { toolMode: 'prompted' });
      await saveThenRecall(s);
      const gens = s.fake.generations();
      // KoboldCPP goes through its native generate endpoint with instruct placeholders.
      if (kind === 'koboldcpp') {
        expect(gens.every((g) => g.path === '/api/extra/generate/stream')).toBe(true);
        const body = gens[0].body as { prompt: string; stop_sequence: string[]; genkey: string };
        expect(body.prompt).toContain('{{[INPUT]}}');
        expect(body.stop_sequence).toContain('</tool_call>');
        expect(body.genkey).toBeTruthy();
      } else {
        expect((gens[0].body as { tools?: unknown }).tools).toBeUndefined();
      }
      expect(sentText(gens[0])).toContain('<tool_call>');
      expect(sentText(gens[1])).toContain('<tool_response>');
    });
  }

  it("a small model's call written in Python (Llama 3.2's [name(key=value)]) is run, and its text not shown", async () => {
    const s = await setup(
      'koboldcpp',
      {
        replies: [
          {
            text: 'Noted!\n[save_memory(path="Family/Ana", content="Moving to Lisbon in May")]',
          },
          { text: 'I will remember that.' },
        ],
      },
      { toolMode: 'prompted' },
    );
    const r = await s.session.send(s.conversationId, 'My sister Ana is moving to Lisbon in May.');
    expect(r).toMatchObject({ status: 'answered', text: 'I will remember that.' });
    expect(await s.memory.getEntry('Family/Ana')).toMatchObject({
      content: 'Moving to Lisbon in May',
    });
    const said = (await s.memory.getMessages(s.conversationId)).filter(
      (m) => m.role === 'assistant',
    );
    expect(said.map((m) => m.text)).toEqual(['Noted!', 'I will remember that.']);
    expect(sentText(s.fake.generations()[1])).toContain('<tool_response>');
  });

  it('auto mode switches to prompted after a 400 "tools unsupported", once, and remembers it', async () => {
    const modes = new Map<string, ToolMode>();
    const store: ToolModeMemory = { get: (k) => modes.get(k), set: (k, v) => void modes.set(k, v) };
    const s = await setup(
      'llamacpp',
      { jinja: false, replies: [script[0], script[1]] },
      {},
      {},
      store,
    );
    const first = await s.session.send(s.conversationId, USER_SAYS);
    expect(first.status).toBe('answered');
    expect(s.events.some((e) => e.type === 'notice' && /prompt/.test(e.message))).toBe(true);
    expect((await s.memory.queryMemory(GOAL)).status).toBe('SUCCESS');
    expect(await s.session.toolMode()).toBe('prompted');

    // A new session against the same server and model starts prompted: no second 400.
    const connector = createConnector({ endpoint: s.fake.url });
    const again = createChatSession({ memory: s.memory, connector, toolModes: store });
    expect(await again.toolMode()).toBe('prompted');
  });

  it('ollama: a model without tool support switches to prompted', async () => {
    const s = await setup('ollama', {
      model: 'tinyllama',
      noToolsModels: ['tinyllama'],
      replies: [script[0], script[1]],
    });
    const r = await s.session.send(s.conversationId, USER_SAYS);
    expect(r.status).toBe('answered');
    expect(await s.session.toolMode()).toBe('prompted');
    expect((await s.memory.queryMemory(GOAL)).status).toBe('SUCCESS');
  });
});

describe('stop', () => {
  it('koboldcpp native: Stop ends the stream, keeps the partial answer marked, aborts with the genkey', async () => {
    const s = await setup(
      'koboldcpp',
      {
        replies: [
          { hang: true, text: 'Once upon a time there was a very long story about windows' },
        ],
      },
      { toolMode: 'prompted' },
    );
    const controller = new AbortController();
    let tokens = 0;
    const stopAfterTokens = (e: SessionEvent) => {
      if (e.type === 'token' && ++tokens === 3) controller.abort();
    };
    const session = createChatSession({
      memory: s.memory,
      connector: createConnector({ endpoint: s.fake.url }),
      settings: { toolMode: 'prompted' },
      onEvent: stopAfterTokens,
    });
    const started = Date.now();
    const r = await session.send(s.conversationId, 'Tell me a story.', controller.signal);
    expect(r.status).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(5000);
    const messages = await s.memory.getMessages(s.conversationId);
    const last = messages[messages.length - 1];
    expect(last.role).toBe('assistant');
    expect(last.meta).toMatchObject({ aborted: true });
    expect(last.text.length).toBeGreaterThan(0);
    expect('Once upon a time there was a very long story about windows').toContain(
      last.text.trim(),
    );
    // KoboldCPP was told to stop this generation, by its genkey.
    const gen = s.fake.generations()[0].body as { genkey: string };
    await expect
      .poll(() => s.fake.requests.find((q) => q.path === '/api/extra/abort')?.body)
      .toEqual({ genkey: gen.genkey });
  });
});

describe('broken input from the model', () => {
  it('invalid JSON, an unknown tool and wrong types get error results; nothing is written', async () => {
    const s = await setup('llamacpp', {
      replies: [
        { toolCalls: [{ name: 'saveMemory', arguments: '{"path": "A/B", "content": ' }] },
        { toolCalls: [{ name: 'rememberThis', arguments: { path: 'A/B' } }] },
        {
          toolCalls: [
            { name: 'saveMemory', arguments: { path: 5, content: 'x', contextTokens: 'lots' } },
          ],
        },
        { text: 'Sorry, I could not save that.' },
      ],
    });
    const r = await s.session.send(s.conversationId, USER_SAYS);
    expect(r).toMatchObject({ status: 'answered', rounds: 3 });
    const results = s.events.filter(
      (e): e is Extract<SessionEvent, { type: 'tool-result' }> => e.type === 'tool-result',
    );
    expect(results.map((e) => e.refused)).toEqual([true, true, true]);
    expect(results[0].result).toMatchObject({
      status: 'ERROR',
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/not valid JSON/),
    });
    expect(results[1].result).toMatchObject({
      status: 'ERROR',
      message: expect.stringMatching(/no tool named "rememberThis".*saveMemory/),
    });
    expect(results[2].result).toMatchObject({
      status: 'ERROR',
      message: expect.stringMatching(/path/),
    });
    // The model saw each error and could correct itself.
    expect(sentText(s.fake.generations()[1])).toContain('not valid JSON');
    const list = await s.memory.listMemory('');
    expect(list).toMatchObject({ status: 'SUCCESS', totalEntries: 0 });
  });

  it('a call that is not JSON goes back to the server wrapped in an object, the rest as stored', () => {
    const call = (id: string, args: unknown) => ({ id, name: 'saveMemory', arguments: args });
    const sent = toChatMessages([
      {
        conversationId: 1,
        role: 'assistant',
        text: '',
        time: new Date(0),
        toolCalls: [
          call('a', '{"path": "A/B", "content": '),
          call('b', '{"path":"A/B"}'),
          call('c', { path: 'A/C' }),
        ],
      },
    ]);
    const args = sent[0].role === 'assistant' ? sent[0].tool_calls!.map((c) => c.function) : [];
    expect(args.map((f) => JSON.parse(f.arguments) as unknown)).toEqual([
      { unparsed_arguments: '{"path": "A/B", "content": ' },
      { path: 'A/B' },
      { path: 'A/C' },
    ]);
    expect(args[1].arguments).toBe('{"path":"A/B"}');
  });

  it('a 9th round of tool calls ends the turn with a clear message', async () => {
    const s = await setup('llamacpp', {
      defaultReply: { toolCalls: [{ name: 'listMemory', arguments: {} }] },
    });
    const r = await s.session.send(s.conversationId, 'Loop forever please.');
    expect(r.status).toBe('round-limit');
    expect(r.rounds).toBe(8);
    expect(r.text).toMatch(/8 rounds/);
    expect(s.fake.generations()).toHaveLength(9);
    const messages = await s.memory.getMessages(s.conversationId);
    expect(messages.filter((m) => m.role === 'tool')).toHaveLength(8);
  });

  it('a reply with more calls than a round runs: the first 16 run, each of the rest is answered with why; all are stored', async () => {
    const calls = Array.from({ length: 20 }, (_, i) => ({
      name: 'saveMemory',
      arguments: { path: `Facts/F${i}`, content: `Fact number ${i}` },
    }));
    const s = await setup('llamacpp', {
      replies: [{ toolCalls: calls }, { text: 'Saved sixteen of them.' }],
    });
    const r = await s.session.send(s.conversationId, 'Remember these twenty facts.');
    expect(r).toMatchObject({ status: 'answered', rounds: 1 });
    const results = s.events.filter(
      (e): e is Extract<SessionEvent, { type: 'tool-result' }> => e.type === 'tool-result',
    );
    expect(results.map((e) => e.refused)).toEqual([
      ...Array<boolean>(16).fill(false),
      ...Array<boolean>(4).fill(true),
    ]);
    expect(results[16].result).toMatchObject({
      status: 'ERROR',
      message: expect.stringMatching(/20 tool calls.*at most 16.*not run.*next reply/),
    });
    expect(await s.memory.listMemory('Facts')).toMatchObject({ totalEntries: 16 });
    // Nothing lost: every call is stored with its result, and the model read each result.
    const [, round] = await s.memory.getMessages(s.conversationId);
    expect(round.toolCalls?.map((c) => (c.arguments as { path: string }).path)).toEqual(
      calls.map((c) => c.arguments.path),
    );
    const second = (s.fake.generations()[1].body as { messages: ChatMessage[] }).messages;
    expect(second.filter((m) => m.role === 'tool')).toHaveLength(20);
    expect(second.at(-1)?.content).toMatch(/not run/);
  });

  it('arguments over the size cap are refused unread: the model is told, and only their start is kept', async () => {
    const huge = `{"path": "Notes/Big", "content": "${'x'.repeat(2 ** 20)}"}`;
    const s = await setup('llamacpp', {
      replies: [{ toolCalls: [{ name: 'saveMemory', arguments: huge }] }, { text: 'Too much.' }],
    });
    const r = await s.session.send(s.conversationId, 'Save this enormous thing.');
    expect(r).toMatchObject({ status: 'answered', rounds: 1 });
    const result = s.events.find((e) => e.type === 'tool-result');
    expect(result).toMatchObject({
      refused: true,
      result: {
        status: 'ERROR',
        code: 'CONTENT_TOO_LARGE',
        message: expect.stringMatching(
          /arguments of saveMemory are 1 MB.*at most 128 KB.*Nothing was run/,
        ),
      },
    });
    // Neither the chat's storage nor the next prompt carries the megabyte.
    const stored = JSON.stringify(await s.memory.getMessages(s.conversationId));
    expect(stored.length).toBeLessThan(10_000);
    expect(JSON.stringify(s.fake.generations()[1].body).length).toBeLessThan(20_000);
    expect(await s.memory.listMemory('')).toMatchObject({ totalEntries: 0 });
  });
});

describe('prompted calls that share an id', () => {
  it('each call gets its own id, so each result answers its own call', async () => {
    // Two calls in one block (the stop sequence ends the reply at the first closing tag).
    const call = (path: string) =>
      `{"id": "call_1", "name": "queryMemory", "arguments": {"path": "${path}"}}`;
    const s = await setup(
      'plain',
      {
        replies: [
          { text: `<tool_call>[${call('Pets/Cat')}, ${call('Pets/Dog')}]</tool_call>` },
          { text: 'Tom.' },
        ],
      },
      { toolMode: 'prompted' },
    );
    await s.memory.saveMemory('Pets/Cat', 'Tom');
    const r = await s.session.send(s.conversationId, 'What are my pets called?');
    expect(r).toMatchObject({ status: 'answered', rounds: 1 });
    const calls = s.events.filter(
      (e): e is Extract<SessionEvent, { type: 'tool-call' }> => e.type === 'tool-call',
    );
    const results = s.events.filter(
      (e): e is Extract<SessionEvent, { type: 'tool-result' }> => e.type === 'tool-result',
    );
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    const resultOf = (id: string) => results.find((e) => e.id === id)?.result;
    expect(resultOf(calls[0].id)).toMatchObject({ status: 'SUCCESS', path: 'Pets/Cat' });
    expect(resultOf(calls[1].id)).toMatchObject({ status: 'NOT_FOUND' });
    // Stored the same way: each tool message names the call it answers.
    const [, round, ...answers] = await s.memory.getMessages(s.conversationId);
    expect(answers.filter((m) => m.role === 'tool').map((m) => m.toolCallId)).toEqual(
      round.toolCalls?.map((c) => c.id),
    );
  });
});

describe('words written after a tool call, before its result', () => {
  const cases = [
    {
      kind: 'plain',
      toolMode: 'prompted',
      call: '{"name": "queryMemory", "parameters": {"path": "Family/Ana"}}',
    },
    {
      kind: 'llamacpp',
      toolMode: 'native',
      call: '<tool_call>\n{"name": "queryMemory", "arguments": {"path": "Family/Ana"}}\n</tool_call>',
    },
  ] as const;
  for (const { kind, toolMode, call } of cases) {
    it(`${toolMode}: are neither stored nor found by search; the call runs`, async () => {
      const s = await setup(
        kind,
        {
          replies: [
            { text: `${call}\n\nYour sister Ana is moving to Lisbon in June.` },
            { text: 'I have nothing saved about Ana yet.' },
          ],
        },
        { toolMode },
      );
      const r = await s.session.send(s.conversationId, 'Where is my sister Ana moving?');
      expect(r).toMatchObject({ status: 'answered', rounds: 1 });
      const messages = await s.memory.getMessages(s.conversationId);
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expect(messages[1].text).toBe('');
      expect(messages[1].toolCalls?.[0]).toMatchObject({
        name: 'queryMemory',
        result: { status: 'NOT_FOUND' },
      });
      expect(messages.map((m) => m.text).join(' ')).not.toContain('Lisbon');
      const found = await s.memory.searchConversations('Ana is moving to Lisbon in June', 10);
      expect(found.status).toBe('SUCCESS');
      if (found.status !== 'SUCCESS') return;
      expect(found.results.map((f) => f.text).join(' ')).not.toContain('Lisbon');
    });
  }
});

describe('native tools, a call written as text', () => {
  const block = (name: string) =>
    `<tool_call>\n{"name": "${name}", "arguments": {"path": "Family/Ana", "content": "Ana moves to Lisbon"}}\n</tool_call>`;

  it('whose name differs in case or "_" runs the tool it means, stored under its name', async () => {
    const s = await setup('llamacpp', {
      replies: [{ text: block('save_memory') }, { text: 'Saved it.' }],
    });
    const r = await s.session.send(s.conversationId, 'Remember: Ana moves to Lisbon.');
    expect(r).toMatchObject({ status: 'answered', text: 'Saved it.', rounds: 1 });
    expect(await s.memory.queryMemory('Family/Ana')).toMatchObject({
      status: 'SUCCESS',
      content: 'Ana moves to Lisbon',
    });
    const [, round] = await s.memory.getMessages(s.conversationId);
    expect(round.text).toBe('');
    expect(round.toolCalls?.[0]).toMatchObject({
      name: 'saveMemory',
      result: { status: 'SUCCESS' },
    });
  });

  it('with a name no tool has gets an error result, and its markup is never the answer', async () => {
    const s = await setup('llamacpp', {
      replies: [{ text: block('rememberThis') }, { text: 'Sorry, I could not save that.' }],
    });
    const r = await s.session.send(s.conversationId, 'Remember: Ana moves to Lisbon.');
    expect(r).toMatchObject({ status: 'answered', rounds: 1 });
    const messages = await s.memory.getMessages(s.conversationId);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages[1].toolCalls?.[0]).toMatchObject({
      name: 'rememberThis',
      result: { status: 'ERROR', message: expect.stringMatching(/no tool named "rememberThis"/) },
    });
    expect(messages.map((m) => m.text).join(' ')).not.toContain('<tool_call>');
    expect(sentText(s.fake.generations()[1])).toContain('no tool named');
  });
});

describe('a reasoning model’s <think>…</think> in the text', () => {
  it('a call it only considers there is not run; the answer after it is stored whole', async () => {
    const s = await setup(
      'koboldcpp',
      {
        replies: [
          {
            text: '<think>\nI could run {"name": "deleteMemory", "parameters": {"path": "Family/Ana"}} but they only asked.\n</think>\nAna moves to Lisbon in June.',
          },
        ],
      },
      { toolMode: 'prompted' },
    );
    await s.memory.saveMemory('Family/Ana', 'Ana moves to Lisbon in June.');
    const r = await s.session.send(s.conversationId, 'Where is Ana moving?');
    expect(r).toMatchObject({ status: 'answered', rounds: 0 });
    expect(s.events.map((e) => e.type)).not.toContain('tool-call');
    expect(await s.memory.queryMemory('Family/Ana')).toMatchObject({ status: 'SUCCESS' });
    const last = (await s.memory.getMessages(s.conversationId)).at(-1)!;
    expect(last.text).toMatch(/^<think>[\s\S]*<\/think>\nAna moves to Lisbon in June\.$/);
  });

  it('<tool_call> mentioned there neither hides the reply nor becomes a broken call', async () => {
    const s = await setup(
      'koboldcpp',
      {
        replies: [
          {
            text: '<think>\nThey want this remembered, so I should emit a <tool_call> for saveMemory.\n</think>\n\n<tool_call>\n{"name": "saveMemory", "arguments": {"path": "Family/Ana", "content": "Ana moves to Lisbon"}}\n</tool_call>',
          },
          { text: 'Saved it.' },
        ],
      },
      { toolMode: 'prompted' },
    );
    const r = await s.session.send(s.conversationId, 'Remember: Ana moves to Lisbon.');
    expect(r).toMatchObject({ status: 'answered', text: 'Saved it.', rounds: 1 });
    const results = s.events.filter(
      (e): e is Extract<SessionEvent, { type: 'tool-result' }> => e.type === 'tool-result',
    );
    expect(results.map((e) => [e.name, e.refused])).toEqual([['saveMemory', false]]);
    expect(await s.memory.queryMemory('Family/Ana')).toMatchObject({ status: 'SUCCESS' });
    // The thinking was shown as it came, mention and all.
    const shown = s.events.flatMap((e) => (e.type === 'token' ? [e.text] : [])).join('');
    expect(shown).toContain('I should emit a <tool_call> for saveMemory.\n</think>');
  });
});

describe('a prompted call written as a Python dict', () => {
  it('runs, and the entry is saved as written, apostrophe and all', async () => {
    const s = await setup(
      'plain',
      {
        replies: [
          {
            text: "<tool_call>{'name': 'saveMemory', 'arguments': {'path': 'Family/Ana', 'content': 'Ana's moving to Lisbon'}}</tool_call>",
          },
          { text: 'Saved it.' },
        ],
      },
      { toolMode: 'prompted' },
    );
    const r = await s.session.send(s.conversationId, 'Remember: Ana is moving to Lisbon.');
    expect(r).toMatchObject({ status: 'answered', text: 'Saved it.', rounds: 1 });
    expect(await s.memory.queryMemory('Family/Ana')).toMatchObject({
      status: 'SUCCESS',
      content: "Ana's moving to Lisbon",
    });
  });
});

describe('a user message that cannot be stored', () => {
  it('is not sent to the model; the person is told why in one sentence', async () => {
    const s = await setup('llamacpp', {});
    const full =
      'Browser storage is full; nothing was written. Delete or export old memories, or allow more storage.';
    const memory: MemoryApi = {
      ...s.memory,
      addMessage: async (m) =>
        m.role === 'user'
          ? { status: 'ERROR', code: 'STORAGE_FULL', message: full }
          : s.memory.addMessage(m),
    };
    const events: SessionEvent[] = [];
    const session = createChatSession({
      memory,
      connector: createConnector({ endpoint: s.fake.url }),
      onEvent: (e) => events.push(e),
    });
    const r = await session.send(s.conversationId, 'Remember that my cat is called Tom.');
    expect(r.status).toBe('error');
    expect(r.notSent).toBe(true);
    expect(r.userId).toBeUndefined();
    expect(r.error?.message).toBe(
      `Your message could not be stored, so it was not sent to the model: ${full}`,
    );
    expect(s.fake.generations()).toHaveLength(0);
    expect(events.filter((e) => e.type !== 'thinking')).toEqual([
      { type: 'notice', message: r.error?.message },
    ]);
    expect(await s.memory.getMessages(s.conversationId)).toEqual([]);
  });
});

describe('a chat deleted while its reply streams (in another tab)', () => {
  it('stays deleted: the reply is not kept, nothing of the turn is indexed, and the turn says why', async () => {
    const s = await setup('koboldcpp', {
      replies: [{ text: 'Lisbon is lovely in May, and the trams are worth a ride.' }],
      tokenDelayMs: 20,
    });
    let deleted: Promise<unknown> | undefined;
    await s.session.send(s.conversationId, 'My sister Ana moves to Lisbon', undefined, (e) => {
      if (e.type === 'token' && !deleted) deleted = s.memory.deleteConversation(s.conversationId);
    });
    await deleted;
    expect(deleted).toBeDefined();
    expect((await s.memory.listConversations()).map((c) => c.id)).not.toContain(s.conversationId);
    expect(await s.memory.getMessages(s.conversationId)).toEqual([]);
    expect(await s.memory.searchChunks(null, 'Lisbon trams sister Ana', 5)).toEqual([]);
    expect(s.events).toContainEqual({
      type: 'notice',
      message: expect.stringMatching(
        /Could not store a message: Chat \d+ is not here: it was deleted/,
      ),
    });
  });

  it('a message stored just before its chat was deleted is not indexed afterwards, and the chat stays deleted', async () => {
    const memory = openMemory({ name: `chat-${crypto.randomUUID()}`, embedder });
    open.push(memory);
    const chat = await memory.createConversation('Trip');
    if (chat.status !== 'SUCCESS') throw new Error(chat.message);
    const stored = await memory.addMessage({
      conversationId: chat.id,
      role: 'user',
      text: 'The ferry to the island leaves at nine.',
    });
    if (stored.status !== 'SUCCESS') throw new Error(stored.message);
    await memory.deleteConversation(chat.id);
    const indexed = await memory.recordTurn({
      conversationId: chat.id,
      turnId: stored.id,
      role: 'user',
      text: 'The ferry to the island leaves at nine.',
    });
    expect(indexed).toMatchObject({ status: 'ERROR', code: 'NOT_FOUND' });
    expect(await memory.searchChunks(null, 'ferry island', 5)).toEqual([]);
    expect((await memory.listConversations()).map((c) => c.id)).not.toContain(chat.id);
  });
});

describe('server failures become typed errors with a sentence', () => {
  it('server down', async () => {
    const fake = await startFakeServer('koboldcpp');
    const url = fake.url;
    await fake.close();
    const memory = openMemory({ name: `chat-${crypto.randomUUID()}`, embedder });
    open.push(memory);
    const session = createChatSession({ memory, connector: createConnector({ endpoint: url }) });
    const r = await session.send(1, 'hello');
    expect(r.status).toBe('error');
    expect(r.error?.code).toBe('SERVER_DOWN');
    expect(r.error?.message).toContain(url);
  });

  it('CORS-like failure: fetch fails but a no-cors probe gets through', async () => {
    // Nothing can be detected through CORS; Ollama's usual port tells which fix to give.
    const s = await setup(
      'ollama',
      { replies: [{ text: 'hi' }] },
      {},
      {
        endpoint: 'http://127.0.0.1:11434',
        fetch: async (_input, init) => {
          if (init?.mode === 'no-cors') return new Response(null, { status: 200 });
          throw new TypeError('Failed to fetch');
        },
      },
    );
    const r = await s.session.send(s.conversationId, 'hello');
    expect(r.error?.code).toBe('CORS');
    expect(r.error?.message).toMatch(/OLLAMA_ORIGINS/);
  });

  it('a server restarted as another model mid-session: the next turn detects it afresh', async () => {
    const first = await startFakeServer('koboldcpp', { model: 'small', contextSize: 8192 });
    const port = Number(new URL(first.url).port);
    const memory = openMemory({ name: `chat-${crypto.randomUUID()}`, embedder });
    open.push(first, memory);
    const session = createChatSession({
      memory,
      connector: createConnector({ endpoint: first.url, retry: { attempts: 1, baseDelayMs: 5 } }),
    });
    const conv = await memory.createConversation('test');
    if (conv.status !== 'SUCCESS') throw new Error('no conversation');
    expect((await session.send(conv.id, 'hello')).status).toBe('answered');
    expect(await session.server()).toMatchObject({ model: 'small', contextSize: 8192 });
    await first.close();
    const gone = await session.send(conv.id, 'still there?');
    expect(gone.error?.code).toBe('SERVER_DOWN');
    // The person starts KoboldCPP again with another model, on the same port.
    const second = await startFakeServer('koboldcpp', {
      port,
      model: 'big',
      contextSize: 2048,
      firstEventDelayMs: 5,
    });
    open.push(second);
    expect((await session.send(conv.id, 'and now?')).status).toBe('answered');
    expect(await session.server()).toMatchObject({ model: 'big', contextSize: 2048 });
    expect(second.generations().map((r) => (r.body as { model?: string }).model)).toEqual(['big']);
  });

  it('401: wrong password, and the right one works', async () => {
    const s = await setup('koboldcpp', { password: 'sesame', replies: [{ text: 'in' }] });
    const r = await s.session.send(s.conversationId, 'hello');
    expect(r.error?.code).toBe('UNAUTHORIZED');
    expect(r.error?.message).toMatch(/has a password.*API key \/ password/);
    // Said on connecting (KoboldCPP answers detection without its password), before anything
    // is generated.
    await expect(s.session.server()).rejects.toThrow(/has a password/);
    expect(s.fake.generations()).toHaveLength(0);
    // The status line hears of it, not only the chat.
    expect(s.events).toContainEqual({ type: 'unreachable', message: r.error?.message });
    const ok = createChatSession({
      memory: s.memory,
      connector: createConnector({ endpoint: s.fake.url, apiKey: 'sesame' }),
    });
    expect(await ok.send(s.conversationId, 'hello again')).toMatchObject({
      status: 'answered',
      text: 'in',
    });
  });

  it('503: retried with backoff, then said so', async () => {
    const brief = await setup('koboldcpp', { busy: 1, replies: [{ text: 'after a wait' }] });
    expect(await brief.session.send(brief.conversationId, 'hi')).toMatchObject({
      status: 'answered',
      text: 'after a wait',
    });
    const s = await setup('koboldcpp', { busy: 10 });
    const r = await s.session.send(s.conversationId, 'hi');
    expect(r.error?.code).toBe('BUSY');
    expect(r.error?.message).toMatch(/busy/i);
    expect(s.fake.generations()).toHaveLength(3);
  });

  it('mid-stream disconnect keeps the partial answer and says what happened', async () => {
    const s = await setup('llamacpp', {
      tokenDelayMs: 30,
      replies: [{ disconnectAfter: 4, text: 'The answer is forty two and more words follow' }],
    });
    const r = await s.session.send(s.conversationId, 'What is the answer?');
    expect(r.status).toBe('error');
    expect(r.error?.code).toBe('DISCONNECTED');
    expect(r.error?.message).toMatch(/closed the connection/);
    const messages = await s.memory.getMessages(s.conversationId);
    const last = messages[messages.length - 1];
    expect(last.role).toBe('assistant');
    expect(last.meta).toMatchObject({ error: 'DISCONNECTED' });
    expect(last.text.length).toBeGreaterThan(0);
  });
});

describe('a reply with no words', () => {
  it('is said where the reply would be, and the next question goes out with the open one, never two user messages in a row', async () => {
    const s = await setup('llamacpp', { replies: [{ text: '' }, { text: 'Lisbon, in May.' }] });
    const first = await s.session.send(s.conversationId, 'Where is Ana moving?');
    expect(first).toMatchObject({ status: 'answered', text: '' });
    expect(s.events).toContainEqual({ type: 'notice', message: EMPTY_REPLY });
    const stored = await s.memory.getMessages(s.conversationId);
    expect(stored.map((m) => [m.role, m.text, m.meta?.notice])).toEqual([
      ['user', 'Where is Ana moving?', undefined],
      ['assistant', '', EMPTY_REPLY],
    ]);

    const second = await s.session.send(s.conversationId, 'And when?');
    expect(second).toMatchObject({ status: 'answered', text: 'Lisbon, in May.' });
    const sent = (s.fake.generations()[1].body as { messages: ChatMessage[] }).messages;
    expect(sent.map((m) => m.role)).toEqual(['system', 'user']);
    expect(sent[1].content).toBe('Where is Ana moving?\n\nAnd when?');
  });
});

describe('a reasoning model that writes its thinking in the reply (<think>…</think>)', () => {
  const THOUGHT =
    '<think>\nAna moved to Porto. Maybe she works in Lisbon though? I will not say that.\n</think>\n\n';
  it('shows it as it came, but neither indexes it nor sends it back as what was said', async () => {
    const s = await setup('koboldcpp', {
      replies: [
        { text: `${THOUGHT}Lovely news about Ana and her flat in Porto!` },
        { text: 'Sure.' },
      ],
    });
    expect((await s.session.send(s.conversationId, 'My sister Ana moved to Porto.')).status).toBe(
      'answered',
    );
    const [, reply] = await s.memory.getMessages(s.conversationId);
    expect(reply.text).toContain('<think>');
    const found = async (q: string) =>
      (await s.memory.searchChunks(null, q, 5)).map((h) => h.chunk.text).join(' | ');
    expect(await found('Lisbon')).not.toContain('Lisbon');
    expect(await found('flat in Porto')).toContain('Lovely news about Ana');
    await s.session.send(s.conversationId, 'Thanks!');
    const next = sentText(s.fake.generations().at(-1)!);
    expect(next).toContain('Lovely news about Ana');
    expect(next).not.toContain('Lisbon');
    expect(next).not.toContain('<think>');
    // Restored from a backup, it is indexed the same way.
    const restored = openMemory({ name: `chat-${crypto.randomUUID()}`, embedder });
    open.push(restored);
    const backup = await s.memory.exportJson();
    expect(await restored.importJson(backup, 'replace')).toMatchObject({ status: 'SUCCESS' });
    const lexical = async (q: string) =>
      (await restored.searchChunks(null, q, 5, { signals: 'lexical' })).map((h) => h.chunk.text);
    expect(await lexical('Lisbon')).toEqual([]);
    expect((await lexical('flat Porto')).join(' ')).toContain('Lovely news about Ana');
  });

  it('a reply that only thought, out of output tokens, is kept and says to raise them', async () => {
    const s = await setup(
      'llamacpp',
      {
        replies: [
          { text: '<think>\nLet me consider every angle of this question at great length' },
        ],
      },
      { maxOutputTokens: 6 },
    );
    await s.session.send(s.conversationId, 'Think hard.');
    expect(s.events).toContainEqual({ type: 'notice', message: noRoomToAnswer(6) });
    // The thinking is kept, marked cut (shown as it came); it is not indexed.
    const [, thought] = await s.memory.getMessages(s.conversationId);
    expect(thought.text).toMatch(/^<think>\nLet me/);
    expect(thought.meta?.cut).toBe('length');
    expect(await s.memory.searchChunks(null, 'consider', 5, { signals: 'lexical' })).toEqual([]);
  });
});

describe('a reasoning model whose server sends the thinking apart (reasoning_content, reasoning)', () => {
  for (const kind of ['llamacpp', 'ollama'] as const) {
    it(`${kind}: is kept as the reply's thinking, shown as it comes, neither indexed nor sent back`, async () => {
      const s = await setup(kind, {
        replies: [
          {
            reasoning: 'Ana moved to Porto. Maybe she works in Lisbon? I will not say that.',
            text: 'Lovely news about Ana and her flat in Porto!',
          },
          { text: 'Sure.' },
        ],
      });
      await s.session.send(s.conversationId, 'My sister Ana moved to Porto.');
      const streamed = s.events.flatMap((e) => (e.type === 'token' ? [e.text] : [])).join('');
      expect(streamed).toMatch(/^<think>Ana moved to Porto\. Maybe .*<\/think>Lovely news/);
      const [, reply] = await s.memory.getMessages(s.conversationId);
      expect(splitThinking(reply.text)).toEqual({
        thought: 'Ana moved to Porto. Maybe she works in Lisbon? I will not say that.',
        answer: 'Lovely news about Ana and her flat in Porto!',
      });
      const found = async (q: string) =>
        (await s.memory.searchChunks(null, q, 5, { signals: 'lexical' })).map((h) => h.chunk.text);
      expect(await found('Lisbon')).toEqual([]);
      expect((await found('flat Porto')).join(' ')).toContain('Lovely news about Ana');
      await s.session.send(s.conversationId, 'Thanks!');
      const next = sentText(s.fake.generations().at(-1)!);
      expect(next).toContain('Lovely news about Ana');
      expect(next).not.toContain('Lisbon');
    });
  }
});

describe('a reasoning model that only thought, and stopped', () => {
  it('is no answer: the chat says so and the question stays open, as for an empty reply', async () => {
    const s = await setup('llamacpp', {
      replies: [{ reasoning: 'Hmm. I am not sure what to say.', text: '' }],
    });
    const r = await s.session.send(s.conversationId, 'What do you think?');
    expect(r).toMatchObject({ status: 'answered', text: '' });
    expect(s.events).toContainEqual({ type: 'notice', message: EMPTY_REPLY });
    const [, reply] = await s.memory.getMessages(s.conversationId);
    expect(reply).toMatchObject({ text: '', meta: { notice: EMPTY_REPLY } });
  });
});

describe('a reply whose tokens all went before any word', () => {
  it('says to raise the output tokens, not to ask again', async () => {
    const s = await setup(
      'llamacpp',
      { replies: [{ text: ' \n \n ', chunks: [' ', '\n', ' ', '\n', ' '] }] },
      { maxOutputTokens: 3 },
    );
    const r = await s.session.send(s.conversationId, 'Think hard.');
    expect(r).toMatchObject({ status: 'answered', text: '' });
    const said = noRoomToAnswer(3);
    expect(said).toMatch(/all 3 output tokens .* raise "Max output tokens"/);
    expect(s.events).toContainEqual({ type: 'notice', message: said });
    const [, reply] = await s.memory.getMessages(s.conversationId);
    expect(reply.meta?.notice).toBe(said);
  });
});

describe('a context too small for any prompt', () => {
  it('says what takes the room: the output tokens, and the native tools’ descriptions', async () => {
    const s = await setup(
      'llamacpp',
      { contextSize: 1024, replies: [{ text: 'never sent' }] },
      { maxOutputTokens: 512 },
    );
    const r = await s.session.send(s.conversationId, 'Hello');
    expect(r.status).toBe('error');
    expect(r.error?.code).toBe('CONTEXT_OVERFLOW');
    expect(r.error?.message).toMatch(
      /^The context size \(1024 tokens\) leaves no room for a prompt after 512 output tokens and the memory tools' descriptions \(about \d+ tokens\)\./,
    );
    expect(s.fake.generations()).toHaveLength(0);
  });
});

describe('a message longer than the context', () => {
  it('goes with its middle cut, and the person is told so, once', async () => {
    const s = await setup('llamacpp', { contextSize: 2048, replies: [{ text: 'Read it.' }] });
    const long = Array.from({ length: 300 }, (_, i) => `Sentence ${i} of a very long message.`);
    const r = await s.session.send(s.conversationId, long.join(' '));
    expect(r.error?.message).toBeUndefined();
    expect(r.status).toBe('answered');
    const sent = (s.fake.generations()[0].body as { messages: ChatMessage[] }).messages;
    expect(sent.at(-1)?.content).toContain('middle of a long message cut');
    const notices = s.events.filter((e) => e.type === 'notice');
    expect(notices).toEqual([{ type: 'notice', message: cutMessage(2048) }]);
    // The whole message is stored: only what the model read was cut.
    const [user] = await s.memory.getMessages(s.conversationId);
    expect(user.text).toBe(long.join(' '));
  });
});

describe('turn events', () => {
  it('send() reports this turn’s events to its own listener: tokens, tool call and result, stored messages', async () => {
    const s = await setup('llamacpp', { replies: [script[0], { text: 'Saved it.' }] });
    const turn: SessionEvent[] = [];
    await s.session.send(s.conversationId, USER_SAYS, undefined, (e) => turn.push(e));
    const types = new Set(turn.map((e) => e.type));
    for (const t of ['thinking', 'tool-call', 'tool-result', 'token', 'message'])
      expect(types).toContain(t);
    expect(
      turn
        .filter((e) => e.type === 'token')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('Saved it.');
    // After the turn, its listener hears nothing more.
    const before = turn.length;
    await s.session.send(s.conversationId, 'thanks');
    expect(turn.length).toBe(before);
  });
});

/** Conditions waited on get this long (a loaded machine is slow, and a pass returns at once). */
const POLL = { timeout: 30_000, interval: 20 };

describe('Stop ends the turn, whatever the stream or the memory is doing', () => {
  /** A session against a llama.cpp-like server that misbehaves as told; `memory` wraps the real one. */
  async function runaway(reply: RunawayReply, wrapMemory: (m: MemoryApi) => MemoryApi = (m) => m) {
    const server = await startRunawayServer(() => reply);
    const real = openMemory({ name: `chat-${crypto.randomUUID()}`, embedder });
    open.push(server, real);
    const memory = wrapMemory(real);
    const conv = await real.createConversation('stop');
    if (conv.status !== 'SUCCESS') throw new Error('no conversation');
    const events: SessionEvent[] = [];
    const session = createChatSession({
      memory,
      connector: createConnector({ endpoint: server.url, retry: { attempts: 1, baseDelayMs: 0 } }),
      settings: { toolMode: 'native' },
    });
    const controller = new AbortController();
    const turn = session.send(conv.id, 'Tell me everything.', controller.signal, (e) =>
      events.push(e),
    );
    const tokens = () => events.flatMap((e) => (e.type === 'token' ? [e.text] : [])).join('');
    return { server, memory: real, conversationId: conv.id, events, controller, turn, tokens };
  }

  it('while the headers never come', async () => {
    const r = await runaway({ kind: 'stall-headers' });
    await expect.poll(() => r.server.generations.length, POLL).toBe(1);
    r.controller.abort();
    expect(await r.turn).toMatchObject({ status: 'aborted', text: '' });
    const messages = await r.memory.getMessages(r.conversationId);
    expect(messages.map((m) => m.role)).toEqual(['user']);
    await expect.poll(() => r.server.generations[0].clientClosed, POLL).toBe(true);
  });

  it('mid-stream, on a stream that never ends: what arrived is kept, marked stopped', async () => {
    const r = await runaway({
      kind: 'endless',
      text: 'Once upon a time there was a window.',
      everyMs: 2,
    });
    await expect.poll(() => r.tokens().length, POLL).toBeGreaterThan(60);
    r.controller.abort();
    const result = await r.turn;
    const shown = r.tokens().trim();
    expect(result).toMatchObject({ status: 'aborted', text: shown });
    const last = (await r.memory.getMessages(r.conversationId)).at(-1)!;
    expect(last).toMatchObject({ role: 'assistant', text: shown, meta: { aborted: true } });
    await expect.poll(() => r.server.generations[0].clientClosed, POLL).toBe(true);
  });

  it('on a stream that stalls mid-answer', async () => {
    const r = await runaway({ kind: 'stall-body', text: 'The answer is forty two, and' });
    await expect.poll(() => r.tokens(), POLL).toBe('The answer is forty two, and');
    r.controller.abort();
    expect(await r.turn).toMatchObject({ status: 'aborted', text: 'The answer is forty two, and' });
    const last = (await r.memory.getMessages(r.conversationId)).at(-1)!;
    expect(last).toMatchObject({ text: 'The answer is forty two, and', meta: { aborted: true } });
  });

  it('mid tool call, whose arguments never end: nothing runs, nothing is written', async () => {
    const r = await runaway({ kind: 'endless-tool', everyMs: 2 });
    await expect.poll(() => r.server.written(), POLL).toBeGreaterThan(200);
    r.controller.abort();
    expect(await r.turn).toMatchObject({ status: 'aborted', text: '' });
    expect(r.events.map((e) => e.type)).not.toContain('tool-call');
    expect((await r.memory.getMessages(r.conversationId)).map((m) => m.role)).toEqual(['user']);
    expect(await r.memory.listMemory('')).toMatchObject({ status: 'SUCCESS', totalEntries: 0 });
  });

  it('while the user message is being indexed (a model still loading, say)', async () => {
    // The turn's start indexes the message (prepareTurn): here that never finishes.
    const r = await runaway({ kind: 'text', text: 'never asked for' }, (m) => ({
      ...m,
      recordTurn: () => new Promise<never>(() => undefined),
      prepareTurn: (req) => (req.index ? new Promise<never>(() => undefined) : m.prepareTurn(req)),
    }));
    await expect.poll(() => r.events.some((e) => e.type === 'message'), POLL).toBe(true);
    r.controller.abort();
    expect(await r.turn).toMatchObject({ status: 'aborted' });
    expect(r.server.generations).toHaveLength(0);
    expect((await r.memory.getMessages(r.conversationId)).map((m) => m.role)).toEqual(['user']);
  });

  it('while a memory tool runs: the calls that finished are kept with the stopped round', async () => {
    const fake = await startFakeServer('llamacpp', {
      firstEventDelayMs: 5,
      tokenDelayMs: 1,
      replies: [
        {
          text: 'Let me check.',
          toolCalls: [
            { name: 'listMemory', arguments: {} },
            { name: 'saveMemory', arguments: { path: 'A/B', content: 'x' } },
          ],
        },
      ],
    });
    const memory = openMemory({ name: `chat-${crypto.randomUUID()}`, embedder });
    open.push(fake, memory);
    const conv = await memory.createConversation('stop');
    if (conv.status !== 'SUCCESS') throw new Error('no conversation');
    const controller = new AbortController();
    const session = createChatSession({
      memory: { ...memory, saveMemory: () => new Promise<never>(() => undefined) },
      connector: createConnector({ endpoint: fake.url }),
      settings: { toolMode: 'native' },
      onEvent: (e) => {
        if (e.type === 'tool-call' && e.name === 'saveMemory') controller.abort();
      },
    });
    const r = await session.send(conv.id, 'What is saved?', controller.signal);
    expect(r).toMatchObject({ status: 'aborted', text: 'Let me check.' });
    const messages = await memory.getMessages(conv.id);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(messages[1]).toMatchObject({ text: 'Let me check.', meta: { aborted: true } });
    expect(messages[1].toolCalls?.map((c) => c.name)).toEqual(['listMemory']);
  });

  it('while detection, started before the turn, never answers', async () => {
    const seen: IncomingMessage[] = [];
    const silent = createServer((req) => void seen.push(req));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    open.push({
      close: () =>
        new Promise<void>((resolve) => {
          silent.closeAllConnections();
          silent.close(() => resolve());
        }),
    });
    const memory = openMemory({ name: `chat-${crypto.randomUUID()}`, embedder });
    open.push(memory);
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const session = createChatSession({ memory, connector: createConnector({ endpoint: url }) });
    // The status line asks first, without a signal; the turn then waits on that same detection.
    void session.server().catch(() => undefined);
    const controller = new AbortController();
    const turn = session.send(1, 'hello', controller.signal);
    await expect.poll(() => seen.length, POLL).toBeGreaterThan(0);
    controller.abort();
    expect(await turn).toMatchObject({ status: 'aborted', text: '' });
  });
});

describe('a reply too long to search for tool calls', () => {
  /** A session whose answers are stored but not indexed (a megabyte would take long to embed). */
  async function longReply(text: string, toolMode: 'native' | 'prompted') {
    const s = await setup('llamacpp', { replies: [{ text, chunks: [text] }] }, { toolMode });
    const memory: MemoryApi = {
      ...s.memory,
      recordTurn: async (t) => ({ status: 'SUCCESS', turnId: t.turnId ?? 0, chunks: 0 }),
    };
    const events: SessionEvent[] = [];
    const session = createChatSession({
      memory,
      connector: createConnector({ endpoint: s.fake.url }),
      settings: { toolMode, autoRecall: false },
      onEvent: (e) => events.push(e),
    });
    const result = await session.send(s.conversationId, 'Go on and on.');
    return { ...s, result, events, messages: await s.memory.getMessages(s.conversationId) };
  }
  const filler = 'and so on, '.repeat(Math.ceil(MAX_TOOL_PARSE_CHARS / 11) + 10);

  it('prompted: the answer stands, and the turn says its tool calls were not run', async () => {
    const call = '<tool_call>{"name": "saveMemory", "arguments": {"path": "A/B", "content": "x"}}';
    const r = await longReply(`${filler}\n${call}`, 'prompted');
    expect(r.result.status).toBe('answered');
    expect(r.result.error?.code).toBe('MALFORMED_STREAM');
    const sentence = r.result.error!.message;
    expect(sentence).toMatch(/over 1 MB.*none of them was run.*lower the maximum reply length/);
    expect(r.events).toContainEqual({ type: 'notice', message: sentence });
    // Told on the turn, and kept with it: a notice message after the answer (left out of the
    // prompt, like every notice).
    expect(r.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'assistant']);
    expect(r.messages[1].text.startsWith('and so on')).toBe(true);
    expect(r.messages[2]).toMatchObject({ text: '', meta: { notice: sentence } });
    expect(toChatMessagesRoles(r.messages)).toEqual(['user', 'assistant']);
    expect(await r.memory.listMemory('')).toMatchObject({ totalEntries: 0 });
  });

  it('native: a long answer with nothing like a call in it raises no alarm', async () => {
    const r = await longReply(filler, 'native');
    expect(r.result).toMatchObject({ status: 'answered' });
    expect(r.result.error).toBeUndefined();
    expect(r.events.filter((e) => e.type === 'notice')).toEqual([]);
    expect(r.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});

function toChatMessagesRoles(messages: Parameters<typeof toChatMessages>[0]): string[] {
  return toChatMessages(messages).map((m) => m.role);
}
