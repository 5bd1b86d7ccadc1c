// One straight path per chat turn (issue 14): from Send until the model server receives its
// request, the session makes at most two calls to the memory engine (docs/design.md, "One chat
// turn"). A spy on the memory client counts the calls; the fake llama.cpp server notes how many
// had been made when each generation request arrived. Regenerate, edit and resend, and continue
// are held to the same count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChatSession,
  type ChatSession,
  type SessionEvent,
  type ToolModeMemory,
} from '../../src/chat/chat-session';
import { createConnector } from '../../src/llm/connector';
import type { ToolMode } from '../../src/llm/types';
import {
  BUNDLED_MODEL,
  createEmbedder,
  openMemory,
  type Embedder,
  type MemoryApi,
} from '../../src/memory';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';

/** The engine with every method call's name written to `calls`, as the worker client would see it. */
function spied(memory: MemoryApi, calls: string[]): MemoryApi {
  return new Proxy(memory, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(key));
        return Reflect.apply(value, target, args) as unknown;
      };
    },
  });
}

/** Learned tool modes in the memory's settings, as the app keeps them (src/ui/sm-app.ts). */
function settingsToolModes(memory: MemoryApi): ToolModeMemory {
  return {
    get: async (key) =>
      ((await memory.getSetting('toolModes')) as Record<string, ToolMode> | undefined)?.[key],
    set: async (key, mode) => {
      const all =
        ((await memory.getSetting('toolModes')) as Record<string, ToolMode> | undefined) ?? {};
      await memory.setSetting('toolModes', { ...all, [key]: mode });
    },
  };
}

describe('memory calls before the model is asked', () => {
  let embedder: Embedder;
  let engine: MemoryApi;
  let fake: FakeServer;
  let session: ChatSession;
  const calls: string[] = [];
  /** The calls made since `mark`, as seen when each generation request arrived. */
  const seen: string[][] = [];
  let mark = 0;
  let conversationId = 0;
  const events: SessionEvent[] = [];

  beforeAll(async () => {
    embedder = createEmbedder({ model: BUNDLED_MODEL });
    engine = openMemory({ name: `turn-calls-${crypto.randomUUID()}`, embedder });
    fake = await startFakeServer('llamacpp', {
      firstEventDelayMs: 5,
      tokenDelayMs: 1,
      defaultReply: () => {
        seen.push(calls.slice(mark));
        return { text: 'Lisbon, with the blue umbrella.' };
      },
    });
    // Something for auto-recall and the outline to find.
    expect(
      await engine.saveMemory('Travel/Lisbon', 'Flight on the ninth; pack the blue umbrella.'),
    ).toMatchObject({ status: 'SUCCESS' });
    const conv = await engine.createConversation('Trip');
    if (conv.status !== 'SUCCESS') throw new Error('no conversation');
    conversationId = conv.id;
    const memory = spied(engine, calls);
    session = createChatSession({
      memory,
      connector: createConnector({ endpoint: fake.url, retry: { attempts: 1, baseDelayMs: 0 } }),
      settings: { toolMode: 'auto', autoRecall: true },
      toolModes: settingsToolModes(memory),
      onEvent: (e) => events.push(e),
    });
    // Connected as the app connects (its status line asks for both before any Send).
    await session.server();
    await session.toolMode();
  });

  afterAll(async () => {
    await fake?.close();
    await engine?.close();
    await embedder?.dispose();
  });

  /** Runs `turn`, returning the calls it made before its (first) generation request arrived. */
  async function callsBeforeModel(turn: () => Promise<unknown>): Promise<string[]> {
    mark = calls.length;
    const before = seen.length;
    await turn();
    expect(seen.length).toBeGreaterThan(before);
    return seen[before];
  }

  it('Send: the message stored, then one call for its indexing and the prompt', async () => {
    const made = await callsBeforeModel(() =>
      session.send(conversationId, 'When do we fly to Lisbon, and what do I pack?'),
    );
    expect(made).toEqual(['addMessage', 'prepareTurn']);
    // The prompt still carries the outline and what auto-recall found.
    const system = JSON.stringify(fake.generations().at(-1)?.body);
    expect(system).toContain('Travel');
    expect(system).toContain('blue umbrella');
  });

  it('a second Send in the same conversation: still two', async () => {
    const made = await callsBeforeModel(() => session.send(conversationId, 'And the hotel?'));
    expect(made).toEqual(['addMessage', 'prepareTurn']);
  });

  it('regenerate: the conversation to find the message, then the turn’s start', async () => {
    const made = await callsBeforeModel(() => session.regenerate(conversationId));
    expect(made).toEqual(['getMessages', 'prepareTurn']);
  });

  it('continue: the conversation, then the recall for the question the reply answers', async () => {
    const reply = events.filter((e) => e.type === 'message' && e.role === 'assistant').at(-1);
    if (reply?.type !== 'message') throw new Error('no reply');
    const made = await callsBeforeModel(() => session.continueReply(conversationId, reply.id));
    expect(made).toEqual(['prepareTurn', 'recallMemory']);
  });

  it('edit and resend: the edit, then the turn’s start', async () => {
    const user = events.filter((e) => e.type === 'message' && e.role === 'user').at(-1);
    if (user?.type !== 'message') throw new Error('no user message');
    const made = await callsBeforeModel(() =>
      session.resend(conversationId, user.id, 'And the hotel in Alfama?'),
    );
    expect(made).toEqual(['editUserMessage', 'prepareTurn']);
  });
});

describe('prepareTurn', () => {
  it('resolves once the message is searchable, with the conversation, outline and recall', async () => {
    const embedder = createEmbedder({ model: BUNDLED_MODEL });
    const memory = openMemory({ name: `prepare-${crypto.randomUUID()}`, embedder });
    try {
      await memory.saveMemory('Garden/Tomatoes', 'Water the tomatoes every evening.');
      const conv = await memory.createConversation('Garden');
      if (conv.status !== 'SUCCESS') throw new Error('no conversation');
      const text = 'How often should I water the tomatoes?';
      const stored = await memory.addMessage({ conversationId: conv.id, role: 'user', text });
      if (stored.status !== 'SUCCESS') throw new Error('not stored');
      const ready = await memory.prepareTurn({
        conversationId: conv.id,
        index: { turnId: stored.id, text },
        recall: { query: text, limit: 12 },
        outlineDepth: 2,
      });
      expect(ready.indexed).toMatchObject({ status: 'SUCCESS', turnId: stored.id, chunks: 1 });
      expect(ready.messages.map((m) => [m.id, m.text])).toEqual([[stored.id, text]]);
      expect(ready.outline).toEqual([
        { path: 'Garden', entries: 1, children: [{ path: 'Garden/Tomatoes', entries: 1 }] },
      ]);
      // The message itself is never recalled: the entry alone.
      expect(ready.recall.map((h) => (h.kind === 'entry' ? h.path : h.turnId))).toEqual([
        'Garden/Tomatoes',
      ]);
      const hits = await memory.searchChunks(conv.id, 'water tomatoes', 3);
      expect(hits.map((h) => h.chunk.turnId)).toEqual([stored.id]);
      // Nothing asked for, nothing read but the conversation.
      expect(await memory.prepareTurn({ conversationId: conv.id })).toEqual({
        messages: ready.messages,
        outline: [],
        recall: [],
      });
    } finally {
      await memory.close();
      await embedder.dispose();
    }
  });
});
