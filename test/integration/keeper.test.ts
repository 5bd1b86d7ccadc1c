// The memory keeper (src/chat/keeper.ts) against each fake server over HTTP and a real memory:
// the parameter each server is sent, an ADD that lands with its snapshot, an UPDATE that makes a
// new version, NONE and every bad answer writing nothing (a full export compared), the schema
// refusal falling back to prompted once and remembered, abort (KoboldCPP's by genkey), Undo,
// and a write that fails half way undoing the rest.
import { afterEach, describe, expect, it } from 'vitest';
import {
  KEEPER_INSTRUCTIONS,
  KEEPER_MAX_TOKENS,
  KEEPER_SCHEMA,
  runKeeper,
  schemaModeKey,
  undoKept,
  type KeeperExchange,
  type KeeperMemory,
  type KeeperOutcome,
  type SchemaModeMemory,
} from '../../src/chat/keeper';
import { createConnector, type StructuredMode } from '../../src/llm/connector';
import type { ChatMessage, ServerInfo } from '../../src/llm/types';
import { estimateTokens } from '../../src/memory/text';
import type { MemoryApi } from '../../src/memory/types';
import {
  startFakeServer,
  type FakeKind,
  type FakeScript,
  type FakeServer,
  type FakeServerOptions,
} from '../fixtures/fake-llm';
import { demoReply } from '../fixtures/fake-llm/demo';
import { keeperCardMessage, readKeeperCard, undoKeeperCard } from '../../src/chat/keeper-card';
import { closeAll, ok, openTestMemory } from './helpers';

const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await closeAll();
});

const EXCHANGE: KeeperExchange = {
  user: 'My sister Ana is moving to Lisbon in May. Any tips for her?',
  assistant: 'How exciting! Lisbon is lovely in spring; she should find a flat near a tram line.',
};
const ANA = 'Ana lives in Porto.';
const MOVE = 'Ana is moving to Lisbon in May.';

const ops = (operations: unknown[]): string => JSON.stringify({ operations });
const ADD = ops([{ op: 'add', path: 'Family/Ana/Move', content: MOVE }]);
const UPDATE = ops([
  { op: 'update', path: 'Family/Ana', content: 'Ana lives in Porto and moves to Lisbon in May.' },
]);

interface Setup {
  fake: FakeServer;
  memory: MemoryApi;
  server: ServerInfo;
  conversationId: number;
  keep(extra?: {
    signal?: AbortSignal;
    schemaModes?: SchemaModeMemory;
    maxTokens?: number;
    onWriting?: () => void;
  }): Promise<KeeperOutcome>;
  connector: ReturnType<typeof createConnector>;
}

/** A fake server, a memory holding one exchange and `Family/Ana`, and the keeper wired to both. */
async function setup(
  kind: FakeKind,
  options: FakeServerOptions = {},
  { entries = true }: { entries?: boolean } = {},
): Promise<Setup> {
  const fake = await startFakeServer(kind, {
    firstEventDelayMs: 5,
    tokenDelayMs: 1,
    ...options,
  });
  servers.push(fake);
  const { mem: memory } = openTestMemory();
  const connector = createConnector({ endpoint: fake.url, retry: { attempts: 1, baseDelayMs: 1 } });
  const server = await connector.detect();
  const conversationId = ok(await memory.createConversation('chat')).id;
  ok(await memory.recordTurn({ conversationId, role: 'user', text: EXCHANGE.user }));
  ok(await memory.recordTurn({ conversationId, role: 'assistant', text: EXCHANGE.assistant }));
  if (entries) ok(await memory.saveMemory('Family/Ana', ANA, 0, { conversationId }));
  return {
    fake,
    memory,
    server,
    conversationId,
    connector,
    keep: (extra = {}) =>
      runKeeper({
        memory,
        connector,
        server,
        exchanges: [EXCHANGE],
        conversationId,
        ...extra,
      }),
  };
}

async function exported(memory: MemoryApi): Promise<string> {
  const text = await memory.exportJson();
  if (typeof text !== 'string') throw new Error(text.message);
  return text;
}

/** Live entries as path → content (what a person sees in the explorer). */
async function live(memory: MemoryApi): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const e of await memory.memoryIndex()) {
    const entry = await memory.getEntry(e.path);
    if ('content' in entry) out[e.path] = entry.content;
  }
  return out;
}

const bodyOf = (s: Setup, i = 0) => s.fake.generations()[i].body as Record<string, unknown>;

describe('each server kind', () => {
  const kinds: [FakeKind, FakeServerOptions, (body: Record<string, unknown>) => unknown][] = [
    ['koboldcpp', {}, (b) => b.grammar],
    ['llamacpp', {}, (b) => JSON.stringify(b.json_schema)],
    ['ollama', {}, (b) => JSON.stringify(b.format)],
    [
      'plain',
      { responseFormat: 'accept' },
      (b) =>
        JSON.stringify(
          (b.response_format as { json_schema: { schema: unknown } }).json_schema.schema,
        ),
    ],
  ];

  it.each(kinds)(
    '%s: the schema in its parameter; an ADD lands as an entry with its snapshot',
    async (kind, options, schemaSent) => {
      const s = await setup(kind, { ...options, replies: [{ text: ADD }] });
      const outcome = await s.keep();
      expect(outcome).toEqual({
        status: 'kept',
        mode: 'constrained',
        ops: [{ op: 'add', path: 'Family/Ana/Move', content: MOVE, version: 1 }],
      });
      expect(schemaSent(bodyOf(s))).toBe(JSON.stringify(KEEPER_SCHEMA));
      const entry = await s.memory.getEntry('Family/Ana/Move');
      expect(entry).toMatchObject({ content: MOVE, version: 1 });
      // The save took its context snapshot from the conversation, as the model's own saves do.
      const chunks = 'contextChunks' in entry ? entry.contextChunks : [];
      expect(chunks.map((c) => c.text).join(' ')).toMatch(/Lisbon/);
      // The request showed the similar entry and the exchange as data.
      const sent = JSON.stringify(bodyOf(s));
      expect(sent).toContain('- Family/Ana: \\"Ana lives in Porto.\\"');
      expect(sent).toContain('Person: My sister Ana is moving to Lisbon in May.');
    },
  );

  it('KoboldCPP gets its instruct placeholders on the native endpoint, and a genkey', async () => {
    const s = await setup('koboldcpp', { replies: [{ text: ADD }] });
    await s.keep();
    expect(s.fake.generations()[0].path).toBe('/api/v1/generate');
    expect(bodyOf(s).prompt).toMatch(
      /^\{\{\[SYSTEM\]\}\}[\s\S]*\{\{\[INPUT\]\}\}[\s\S]*\{\{\[OUTPUT\]\}\}$/,
    );
    expect(bodyOf(s).genkey).toMatch(/^sm-/);
  });
});

describe('operations', () => {
  it('an UPDATE makes a new version; the one before goes to history', async () => {
    const s = await setup('llamacpp', { replies: [{ text: UPDATE }] });
    const outcome = await s.keep();
    expect(outcome).toMatchObject({
      status: 'kept',
      ops: [{ op: 'update', path: 'Family/Ana', version: 2, previousVersion: 1 }],
    });
    expect(await s.memory.getEntry('Family/Ana')).toMatchObject({
      content: 'Ana lives in Porto and moves to Lisbon in May.',
      version: 2,
    });
    const history = ok(await s.memory.getHistory('Family/Ana'));
    expect(history.versions[0]).toMatchObject({ version: 1, content: ANA, reason: 'update' });
  });

  it('NONE, or no operations, writes nothing', async () => {
    const s = await setup('ollama', {
      replies: [
        { text: ops([{ op: 'none', path: 'Family/Ana', content: '' }]) },
        { text: ops([]) },
      ],
    });
    const before = await exported(s.memory);
    expect(await s.keep()).toEqual({ status: 'nothing', mode: 'constrained', ops: [] });
    expect(await s.keep()).toEqual({ status: 'nothing', mode: 'constrained', ops: [] });
    expect(await exported(s.memory)).toBe(before);
  });

  it('a fact is saved with the exchange it came from, so recall still brings the later one of the batch', async () => {
    const s = await setup(
      'llamacpp',
      {
        replies: [
          {
            text: ops([
              { op: 'add', path: 'Family/Tom', content: 'Tom works as a nurse in Berlin.' },
            ]),
          },
        ],
      },
      { entries: false },
    );
    const said = async (role: 'user' | 'assistant', text: string) =>
      ok(await s.memory.recordTurn({ conversationId: s.conversationId, role, text })).turnId;
    const tom: KeeperExchange = {
      user: 'My brother Tom works as a nurse in Berlin.',
      assistant: 'That sounds like demanding work!',
    };
    const cycling: KeeperExchange = {
      user: 'He likes cycling on weekends too.',
      assistant: 'A good way to unwind.',
    };
    await said('user', tom.user);
    tom.replyId = await said('assistant', tom.assistant);
    const askedId = await said('user', cycling.user);
    cycling.replyId = await said('assistant', cycling.assistant);
    const outcome = await runKeeper({
      memory: s.memory,
      connector: s.connector,
      server: s.server,
      exchanges: [tom, cycling],
      conversationId: s.conversationId,
    });
    expect(outcome).toMatchObject({ status: 'kept', ops: [{ op: 'add', path: 'Family/Tom' }] });
    const entry = ok(await s.memory.queryMemory('Family/Tom'));
    // The snapshot ends with the exchange the fact was told in, not with the chat's newest.
    const quoted = entry.contextChunks.map((c) => c.text);
    expect(quoted).toEqual([tom.user, tom.assistant]);
    // Asked about the later exchange, recall brings its turn beside the entry.
    const recalled = await s.memory.recallMemory('Which hobby does Tom like, cycling?', 10);
    if (!Array.isArray(recalled)) throw new Error(recalled.message);
    expect(recalled.filter((h) => h.kind === 'turn').map((h) => h.turnId)).toContain(askedId);
  });

  it('the demo fake keeps what the person said about Ana once (add, then the same again)', async () => {
    const s = await setup('koboldcpp', { defaultReply: demoReply }, { entries: false });
    expect(await s.keep()).toMatchObject({
      status: 'kept',
      ops: [{ op: 'add', path: 'Family/Ana' }],
    });
    expect(await s.memory.getEntry('Family/Ana')).toMatchObject({ content: MOVE });
    // Shown the entry, the demo updates it with what it holds already: no second version, and
    // no card with an Undo for a change that was not made.
    expect(await s.keep()).toMatchObject({ status: 'nothing', ops: [] });
    expect(await s.memory.getEntry('Family/Ana')).toMatchObject({ content: MOVE, version: 1 });
    expect(ok(await s.memory.getHistory('Family/Ana')).versions).toEqual([]);
  });
});

describe('every bad answer writes nothing (a full export before and after)', () => {
  const huge = 'x'.repeat(2001);
  /** Answers a server holding the model to the schema can give: checked by the keeper. */
  const constrained: [string, FakeScript, RegExp][] = [
    ['a bad path', { text: ops([{ op: 'add', path: 'Family//Ana', content: MOVE }]) }, /bad path/],
    [
      'an update of a missing entry',
      { text: ops([{ op: 'update', path: 'Family/Bob', content: 'Bob is back.' }]) },
      /update Family\/Bob, which is not one of the entries it was shown/,
    ],
    [
      'a huge value',
      { text: ops([{ op: 'add', path: 'Notes/Long', content: huge }]) },
      /2,001 characters/,
    ],
    [
      'the same path twice',
      {
        text: ops([
          { op: 'add', path: 'Family/Bea', content: 'Bea plays cello.' },
          { op: 'add', path: 'Family/Bea/', content: 'Bea is twelve.' },
        ]),
      },
      /named Family\/Bea twice/,
    ],
    [
      'an add of a path already saved',
      { text: ops([{ op: 'add', path: 'Family/Ana', content: MOVE }]) },
      /add Family\/Ana, which is already saved/,
    ],
  ];
  /** Answers only an unconstrained (prompted) model gives. */
  const prompted: [string, FakeScript, RegExp][] = [
    ['not JSON', { text: 'Sure! I will remember that Ana is moving.' }, /was not JSON/],
    [
      'the wrong schema',
      { text: ops([{ op: 'remember', path: 'Family/Ana', content: MOVE }]) },
      /did not have the expected form/,
    ],
    [
      '100 operations',
      {
        text: ops(
          Array.from({ length: 100 }, (_, i) => ({ op: 'add', path: `Notes/N${i}`, content: 'x' })),
        ),
      },
      /asked for 100 operations/,
    ],
  ];

  it('constrained (llama.cpp): a bad path, a missing entry, a huge value, a path twice, an add over an entry', async () => {
    const s = await setup('llamacpp', { replies: constrained.map(([, reply]) => reply) });
    for (const [what, , message] of constrained) {
      const before = await exported(s.memory);
      const outcome = await s.keep();
      expect(outcome.status, what).toBe('refused');
      expect(outcome.message, what).toMatch(message);
      expect(outcome.ops, what).toEqual([]);
      expect(await exported(s.memory), what).toBe(before);
    }
  });

  it('cut by the length limit (constrained, not JSON): refused, and it says so', async () => {
    const long = ops([
      {
        op: 'add',
        path: 'Family/Ana/Move',
        content: `${MOVE} ${'She packs slowly. '.repeat(200)}`,
      },
    ]);
    const s = await setup('llamacpp', { replies: [{ text: long }] });
    const before = await exported(s.memory);
    const outcome = await s.keep();
    expect(outcome).toMatchObject({ status: 'refused' });
    expect(outcome.message).toMatch(
      /was not JSON, so nothing was saved\. The answer was cut by the length limit\./,
    );
    expect(await exported(s.memory)).toBe(before);
  });

  it('prompted (a server that refuses the schema): not JSON, the wrong schema, 100 operations', async () => {
    const modes = new Map<string, StructuredMode>();
    const schemaModes: SchemaModeMemory = {
      get: (k) => modes.get(k),
      set: (k, v) => void modes.set(k, v),
    };
    const s = await setup('plain', { replies: prompted.map(([, reply]) => reply) });
    for (const [what, , message] of prompted) {
      const before = await exported(s.memory);
      // Room for 100 operations: with the default limit the answer is cut (and refused as such).
      const outcome = await s.keep({ schemaModes, maxTokens: 4000 });
      expect(outcome, what).toMatchObject({ status: 'refused', mode: 'prompted', ops: [] });
      expect(outcome.message, what).toMatch(message);
      expect(await exported(s.memory), what).toBe(before);
    }
  });

  it('a server that refuses the schema parameter: nothing written by the refusal', async () => {
    const s = await setup('ollama', { formatString: true, replies: [{ text: 'no JSON here' }] });
    const before = await exported(s.memory);
    const outcome = await s.keep();
    expect(outcome).toMatchObject({ status: 'refused', mode: 'prompted' });
    expect(await exported(s.memory)).toBe(before);
  });
});

describe('a server that refuses the schema parameter', () => {
  it('falls back to prompted output once, and that is remembered for the next run', async () => {
    const modes = new Map<string, StructuredMode>();
    const schemaModes: SchemaModeMemory = {
      get: (k) => modes.get(k),
      set: (k, v) => void modes.set(k, v),
    };
    const s = await setup('plain', {
      replies: [{ text: 'Here you go:\n' + ADD }, { text: UPDATE }],
    });

    const first = await s.keep({ schemaModes });
    expect(first).toMatchObject({ status: 'kept', mode: 'prompted' });
    expect(first.message).toMatch(/does not take a JSON schema/);
    expect(s.fake.generations()).toHaveLength(2);
    expect(bodyOf(s, 0).response_format).toBeDefined();
    expect(bodyOf(s, 1).response_format).toBeUndefined();
    expect(modes.get(schemaModeKey(s.server))).toBe('prompted');
    expect(await s.memory.getEntry('Family/Ana/Move')).toMatchObject({ content: MOVE });

    const second = await s.keep({ schemaModes });
    expect(second).toMatchObject({ status: 'kept', mode: 'prompted' });
    expect(second.message).toBeUndefined();
    expect(s.fake.generations()).toHaveLength(3);
    expect(bodyOf(s, 2).response_format).toBeUndefined();
  });

  it('Ollama before 0.5 (format a string): native /api/chat again, without format', async () => {
    const s = await setup('ollama', { formatString: true, replies: [{ text: ADD }] });
    expect(await s.keep()).toMatchObject({ status: 'kept', mode: 'prompted' });
    expect(s.fake.generations().map((g) => g.path)).toEqual(['/api/chat', '/api/chat']);
    expect(bodyOf(s, 0).format).toBeDefined();
    expect(bodyOf(s, 1).format).toBeUndefined();
  });
});

describe('abort', () => {
  it('KoboldCPP: ends at once, sends the genkey abort, writes nothing', async () => {
    const s = await setup('koboldcpp', { replies: [{ hang: true, text: ADD }] });
    const before = await exported(s.memory);
    const controller = new AbortController();
    const running = s.keep({ signal: controller.signal });
    await expect.poll(() => s.fake.generations().length).toBe(1);
    controller.abort();
    expect(await running).toEqual({ status: 'aborted', mode: 'constrained', ops: [] });
    const genkey = bodyOf(s).genkey;
    await expect
      .poll(() => s.fake.requests.find((r) => r.path === '/api/extra/abort')?.body)
      .toEqual({ genkey });
    expect(await exported(s.memory)).toBe(before);
  });

  it('llama.cpp: the connection closes; an abort before the request sends nothing', async () => {
    const s = await setup('llamacpp', { replies: [{ hang: true, text: ADD }] });
    const controller = new AbortController();
    const running = s.keep({ signal: controller.signal });
    await expect.poll(() => s.fake.generations().length).toBe(1);
    controller.abort();
    expect((await running).status).toBe('aborted');
    await expect.poll(() => s.fake.generations()[0].clientClosed).toBe(true);

    const early = new AbortController();
    early.abort();
    expect((await s.keep({ signal: early.signal })).status).toBe('aborted');
    expect(s.fake.generations()).toHaveLength(1);
  });
});

describe('undo', () => {
  const both = ops([
    { op: 'add', path: 'Family/Ana/Move', content: MOVE },
    { op: 'update', path: 'Family/Ana', content: 'Ana lives in Lisbon.' },
  ]);

  it('reverses a kept outcome: the add deleted, the update restored', async () => {
    const s = await setup('llamacpp', { replies: [{ text: both }] });
    const before = await live(s.memory);
    const outcome = await s.keep();
    expect(outcome.status).toBe('kept');
    expect(await live(s.memory)).not.toEqual(before);
    expect(await undoKept(s.memory, outcome)).toMatchObject({ status: 'undone' });
    expect(await live(s.memory)).toEqual(before);
    expect(await s.memory.getEntry('Family/Ana')).toMatchObject({ content: ANA, version: 3 });
  });

  it('leaves an entry changed since the keeper saved it', async () => {
    const s = await setup('llamacpp', { replies: [{ text: both }] });
    const outcome = await s.keep();
    ok(await s.memory.editMemory('Family/Ana', 'Ana lives in Lisbon now, in Alfama.'));
    const undo = await undoKept(s.memory, outcome);
    expect(undo.status).toBe('partial');
    expect(undo.message).toMatch(/Family\/Ana changed after the memory keeper saved it/);
    expect(undo.undone.map((o) => o.path)).toEqual(['Family/Ana/Move']);
    expect(await s.memory.getEntry('Family/Ana')).toMatchObject({
      content: 'Ana lives in Lisbon now, in Alfama.',
    });
  });
});

describe('undo: headings and the entries below them', () => {
  it('undoes an add made below another add of the same run: the deeper one first', async () => {
    const nested = ops([
      { op: 'add', path: 'Family/Bea/Job', content: 'Bea works at the harbour.' },
      { op: 'add', path: 'Family/Bea', content: 'Bea is Ana’s sister.' },
    ]);
    const s = await setup('llamacpp', { replies: [{ text: nested }] });
    const before = await live(s.memory);
    const outcome = await s.keep();
    expect(outcome.status).toBe('kept');
    expect(await undoKept(s.memory, outcome)).toMatchObject({ status: 'undone' });
    expect(await live(s.memory)).toEqual(before);
  });

  it('refuses an add at a heading with entries below it, writing nothing', async () => {
    // Family/Ana is saved: an entry at Family could not be undone without them.
    const s = await setup('llamacpp', {
      replies: [{ text: ops([{ op: 'add', path: 'Family', content: 'The family.' }]) }],
    });
    const before = await live(s.memory);
    const outcome = await s.keep();
    expect(outcome).toMatchObject({ status: 'refused', ops: [] });
    expect(outcome.message).toBe(
      'The memory keeper asked to add Family, which has entries below it, so nothing was saved.',
    );
    expect(await live(s.memory)).toEqual(before);
  });

  it('says in plain words why an add with entries saved below it since was left', async () => {
    const s = await setup('llamacpp', { replies: [{ text: ADD }] });
    const outcome = await s.keep();
    ok(await s.memory.saveMemory('Family/Ana/Move/Date', 'The move is on 12 May.', 0));
    const undo = await undoKept(s.memory, outcome);
    expect(undo).toMatchObject({ status: 'partial', undone: [] });
    expect(undo.message).toBe('Family/Ana/Move has entries below it now, so it was left as it is.');
  });

  /** A kept run of ADD with its card stored; the card as it is stored now. */
  async function keptWithCard() {
    const s = await setup('llamacpp', { replies: [{ text: ADD }] });
    const outcome = await s.keep();
    const { id } = ok(
      await s.memory.addMessage(keeperCardMessage(s.conversationId, outcome.ops, 2)),
    );
    const card = async () =>
      (await s.memory.getMessages(s.conversationId)).find((m) => m.id === id)!;
    return { s, card };
  }

  it('a card partly undone offers the rest again, and takes it once the way is clear', async () => {
    const { s, card } = await keptWithCard();
    ok(await s.memory.saveMemory('Family/Ana/Move/Date', 'The move is on 12 May.', 0));
    expect(await undoKeeperCard(s.memory, await card())).toMatchObject({
      status: 'partial',
      left: [{ path: 'Family/Ana/Move' }],
    });
    expect(readKeeperCard(await card())?.undone?.left).toHaveLength(1);
    // The person deletes what was saved below it; Undo the rest now goes through.
    ok(await s.memory.deleteMemory('Family/Ana/Move/Date'));
    expect(await undoKeeperCard(s.memory, await card())).toEqual({ status: 'undone' });
    expect(await s.memory.getEntry('Family/Ana/Move')).toMatchObject({ code: 'NOT_FOUND' });
    expect(readKeeperCard(await card())?.undone).toEqual({ status: 'undone' });
  });

  it('a card partly undone for good (the entry changed since) offers nothing more', async () => {
    const { s, card } = await keptWithCard();
    ok(await s.memory.editMemory('Family/Ana/Move', 'Ana moves in June after all.'));
    const first = await undoKeeperCard(s.memory, await card());
    // Its one operation was left: the card says nothing was undone, not "partly".
    expect(first).toMatchObject({ status: 'partial', nothing: true });
    expect(readKeeperCard(await card())?.undone?.nothing).toBe(true);
    expect(first.left).toBeUndefined();
    expect(await undoKeeperCard(s.memory, await card())).toEqual(first);
    expect(await s.memory.getEntry('Family/Ana/Move')).toMatchObject({
      content: 'Ana moves in June after all.',
    });
  });

  it('Undo in a second tab showing the card from before is not done again, nor overwrites the card', async () => {
    const { s, card } = await keptWithCard();
    const stale = await card(); // the other tab's copy, read before the Undo
    expect(await undoKeeperCard(s.memory, await card())).toEqual({ status: 'undone' });
    // The person saves the entry again by hand; the second tab's Undo must not delete it.
    ok(await s.memory.saveMemory('Family/Ana/Move', 'Ana is moving to Lisbon.', 0));
    expect(await undoKeeperCard(s.memory, stale)).toEqual({ status: 'undone' });
    expect(await s.memory.getEntry('Family/Ana/Move')).toMatchObject({
      content: 'Ana is moving to Lisbon.',
    });
    expect(readKeeperCard(await card())?.undone).toEqual({ status: 'undone' });
  });

  it('tells its caller when it starts writing, and not when it writes nothing', async () => {
    const s = await setup('llamacpp', { replies: [{ text: ADD }, { text: ADD }] });
    let told = 0;
    expect((await s.keep({ onWriting: () => told++ })).status).toBe('kept');
    expect(told).toBe(1);
    // The same add again: refused (already saved) before any write.
    expect((await s.keep({ onWriting: () => told++ })).status).toBe('refused');
    expect(told).toBe(1);
  });
});

describe('a server that is busy', () => {
  for (const kind of ['koboldcpp', 'llamacpp'] as const) {
    it(`${kind}: a 503 writes nothing and says the exchanges are worth asking again`, async () => {
      const s = await setup(kind, { busy: 1, replies: [{ text: ADD }] });
      const before = await live(s.memory);
      const outcome = await s.keep();
      expect(outcome).toMatchObject({ status: 'error', retry: true, ops: [] });
      expect(await live(s.memory)).toEqual(before);
      // Once it is free, the same exchanges are kept.
      expect((await s.keep()).status).toBe('kept');
    });
  }
});

describe('a server that refuses the request for another reason', () => {
  it('says so for the keeper, not with the chat’s advice about the Tools setting', async () => {
    const s = await setup('llamacpp', {
      replies: [{ error: { status: 400, body: { error: { message: 'bad sampler settings' } } } }],
    });
    const outcome = await s.keep();
    expect(outcome).toMatchObject({ status: 'error', ops: [] });
    expect(outcome.retry).toBeUndefined();
    expect(outcome.message).toBe(
      'The memory keeper’s request was refused by the server ("bad sampler settings"), so nothing was saved. If this goes on, turn the memory keeper off in Settings.',
    );
  });
});

describe('a server with a small context', () => {
  it('gets a request that fits its context with the answer, the instructions whole', async () => {
    const s = await setup('llamacpp', { replies: [{ text: ADD }] });
    const long = (i: number) => ({
      user: `My sister Ana is moving to Lisbon in May (${i}). ${'We talked about flats. '.repeat(80)}`,
      assistant: `How exciting (${i})! ${'Lisbon has many flats. '.repeat(80)}`,
    });
    const outcome = await runKeeper({
      memory: s.memory,
      connector: s.connector,
      server: { ...s.server, contextSize: 2048 },
      exchanges: [long(1), long(2), long(3), long(4)],
      conversationId: s.conversationId,
    });
    expect(outcome.status).toBe('kept');
    const { messages } = bodyOf(s) as { messages: ChatMessage[] };
    const tokens = messages.reduce((n, m) => n + estimateTokens(String(m.content)) + 4, 0);
    expect(tokens + KEEPER_MAX_TOKENS).toBeLessThanOrEqual(2048);
    expect(messages[0].content).toBe(KEEPER_INSTRUCTIONS);
    expect(String(messages[1].content)).toContain('(4)'); // the newest exchange is there
  });
});

describe('entries the keeper sees in part', () => {
  it('shows a long entry read only, and refuses an update of it, keeping it whole', async () => {
    const long = `Ana is moving to Lisbon in May. ${'She keeps notes on every flat she visits. '.repeat(40)}The end.`;
    const s = await setup('llamacpp', {
      replies: [
        {
          text: ops([
            { op: 'update', path: 'Family/Ana/Notes', content: 'Ana is moving to Lisbon in May.' },
          ]),
        },
      ],
    });
    ok(await s.memory.saveMemory('Family/Ana/Notes', long, 0));
    const outcome = await s.keep();
    const sent = JSON.stringify(bodyOf(s));
    expect(sent).toContain('Family/Ana/Notes (read only)');
    expect(sent).toContain('- Family/Ana: '); // short plain text: may be updated
    expect(outcome).toMatchObject({ status: 'refused', ops: [] });
    expect(outcome.message).toBe(
      'The memory keeper asked to update Family/Ana/Notes, which it was shown only in part or as structured data, so nothing was saved.',
    );
    expect(await s.memory.getEntry('Family/Ana/Notes')).toMatchObject({
      content: long,
      version: 1,
    });
  });
});

describe('all or nothing', () => {
  it('a write the engine refuses half way undoes the ones before it', async () => {
    const s = await setup('llamacpp', {
      replies: [
        {
          text: ops([
            { op: 'add', path: 'Family/Bea', content: 'Bea plays cello.' },
            { op: 'update', path: 'Family/Ana', content: 'Ana lives in Lisbon.' },
          ]),
        },
      ],
    });
    let saves = 0;
    const m = s.memory;
    const failing: KeeperMemory = {
      recallMemory: (...a) => m.recallMemory(...a),
      memoryOutline: (...a) => m.memoryOutline(...a),
      memoryIndex: () => m.memoryIndex(),
      getEntry: (...a) => m.getEntry(...a),
      deleteMemory: (...a) => m.deleteMemory(...a),
      getHistory: (...a) => m.getHistory(...a),
      restoreMemory: (...a) => m.restoreMemory(...a),
      saveMemory: async (...a) =>
        ++saves === 2
          ? { status: 'ERROR', code: 'STORAGE_FULL', message: 'The browser storage is full.' }
          : m.saveMemory(...a),
    };
    const before = await live(m);
    const outcome = await runKeeper({
      memory: failing,
      connector: s.connector,
      server: s.server,
      exchanges: [EXCHANGE],
      conversationId: s.conversationId,
    });
    expect(outcome).toMatchObject({ status: 'error', ops: [] });
    expect(outcome.message).toBe(
      'The memory keeper could not save Family/Ana (The browser storage is full.), so nothing was kept.',
    );
    expect(await live(m)).toEqual(before);
  });
});

describe('a save meanwhile', () => {
  it("the person's edit between the keeper's check and its write wins: nothing is kept", async () => {
    const addAndUpdate = ops([
      { op: 'add', path: 'Family/Ana/Move', content: MOVE },
      { op: 'update', path: 'Family/Ana', content: 'Ana lives in Lisbon.' },
    ]);
    const s = await setup('llamacpp', { replies: [{ text: addAndUpdate }] });
    const m = s.memory;
    const EDIT = 'Ana lives in Lisbon now, in Alfama.';
    let edited = false;
    // The person edits Family/Ana right after the keeper has read it to plan its update.
    const racing: KeeperMemory = {
      recallMemory: (...a) => m.recallMemory(...a),
      memoryOutline: (...a) => m.memoryOutline(...a),
      memoryIndex: () => m.memoryIndex(),
      getEntry: async (...a) => {
        const entry = await m.getEntry(...a);
        if (a[0] === 'Family/Ana' && !edited) {
          edited = true;
          ok(await m.editMemory('Family/Ana', EDIT));
        }
        return entry;
      },
      deleteMemory: (...a) => m.deleteMemory(...a),
      getHistory: (...a) => m.getHistory(...a),
      restoreMemory: (...a) => m.restoreMemory(...a),
      saveMemory: (...a) => m.saveMemory(...a),
    };
    const outcome = await runKeeper({
      memory: racing,
      connector: s.connector,
      server: s.server,
      exchanges: [EXCHANGE],
      conversationId: s.conversationId,
    });
    expect(edited).toBe(true);
    expect(outcome).toMatchObject({ status: 'error', ops: [] });
    expect(outcome.message).toMatch(/could not save Family\/Ana .*nothing was kept/);
    // The person's edit stands, and the keeper's add before it was undone.
    expect(await m.getEntry('Family/Ana')).toMatchObject({ content: EDIT, version: 2 });
    expect(await m.getEntry('Family/Ana/Move')).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('saveMemory with the version it expects: refused with CHANGED, writing nothing, when another is there', async () => {
    const { mem } = openTestMemory();
    ok(await mem.saveMemory('Family/Ana', ANA));
    expect(await mem.saveMemory('Family/Ana', MOVE, 0, { expectedVersion: null })).toMatchObject({
      status: 'ERROR',
      code: 'CHANGED',
    });
    expect(await mem.saveMemory('Family/Bea', MOVE, 0, { expectedVersion: 1 })).toMatchObject({
      status: 'ERROR',
      code: 'CHANGED',
    });
    expect(await mem.saveMemory('Family/Ana', MOVE, 0, { expectedVersion: 2 })).toMatchObject({
      status: 'ERROR',
      code: 'CHANGED',
    });
    expect(await mem.getEntry('Family/Ana')).toMatchObject({ content: ANA, version: 1 });
    expect(await mem.getEntry('Family/Bea')).toMatchObject({ status: 'ERROR', code: 'NOT_FOUND' });
    expect(await mem.saveMemory('Family/Ana', MOVE, 0, { expectedVersion: 1 })).toMatchObject({
      status: 'SUCCESS',
      version: 2,
    });
    expect(
      await mem.saveMemory('Family/Bea', 'Bea plays cello.', 0, { expectedVersion: null }),
    ).toMatchObject({
      status: 'SUCCESS',
      version: 1,
    });
  });
});

describe('the card', () => {
  it('is stored in its chat without making the chat the newest', async () => {
    const { mem, clock } = openTestMemory();
    const older = ok(await mem.createConversation('Older'));
    ok(await mem.addMessage({ conversationId: older.id, role: 'user', text: 'My sister Ana…' }));
    clock.advance(60_000);
    const newer = ok(await mem.createConversation('Newer'));
    ok(await mem.addMessage({ conversationId: newer.id, role: 'user', text: 'Hello' }));
    clock.advance(60_000);
    const op = { op: 'add' as const, path: 'Family/Ana', content: 'Lisbon', version: 1 };
    ok(await mem.addMessage(keeperCardMessage(older.id, [op], 1)));
    expect((await mem.listConversations()).map((c) => c.title)).toEqual(['Newer', 'Older']);
  });
});
