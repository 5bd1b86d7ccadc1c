// The memory keeper wired into the app's composition (src/app/app.ts), on fake timers, with a
// memory kept in maps, a fake chat session and a fake keeper run: the turns the chat panel runs
// through `state.session` reach the keeper; it asks the settings' server with the session's
// detection, remembers schema modes in the memory's settings, says it is running, stores its
// card, puts a refused answer in the notice line; a chat switch aborts it; the setting turns it
// off.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../src/app/app';
import { SETTINGS_KEY } from '../../src/app/settings';
import {
  KEEPER_IDLE_MS,
  KEEPER_QUIET_MS,
  type KeeperOutcome,
  type KeeperRequest,
} from '../../src/chat/keeper';
import { readKeeperCard } from '../../src/chat/keeper-card';
import type { ChatSession, ChatSessionOptions, TurnResult } from '../../src/chat/types';
import type { Connector, ConnectorOptions } from '../../src/llm/connector';
import type { ServerInfo } from '../../src/llm/types';
import type { Message } from '../../src/memory/types';
import type { MemoryClient } from '../../src/worker-client';

const SERVER: ServerInfo = {
  kind: 'llamacpp',
  baseUrl: 'http://127.0.0.1:8080',
  model: 'tiny',
  contextSize: 4096,
  tokenizer: true,
};

function compose(stored: Record<string, unknown> = {}) {
  const settings = new Map(Object.entries(stored));
  const messages: Message[] = [];
  let nextId = 1;
  const memory = {
    onModelProgress: async () => undefined,
    onIndexProgress: async () => undefined,
    getSetting: async (key: string) => settings.get(key),
    setSetting: async (key: string, value: unknown) => void settings.set(key, value),
    listConversations: async () => [{ id: 1, title: 'One' }],
    createConversation: async () => ({ status: 'SUCCESS' as const, id: 2 }),
    useModel: async () => undefined,
    modelInfo: async () => ({ id: 'test-model', bundled: false }),
    getMessages: async (c: number) => messages.filter((m) => m.conversationId === c),
    addMessage: async (m: Omit<Message, 'id' | 'time'>) => {
      const id = nextId++;
      messages.push({ ...m, id, time: new Date() });
      return { status: 'SUCCESS' as const, id };
    },
  };
  const connectors: Connector[] = [];
  const createConnector = (options: ConnectorOptions): Connector => {
    const c = {
      baseUrl: options.endpoint ?? '',
      detect: async () => SERVER,
      chat: () => Promise.reject(new Error('not here')),
      generate: () => Promise.reject(new Error('not here')),
      structured: () => Promise.reject(new Error('not here')),
      probeTools: () => Promise.reject(new Error('not here')),
      countTokens: async (t: string) => t.length,
    } as Connector;
    connectors.push(c);
    return c;
  };
  /** A session whose send stores the exchange and answers without a tool call. */
  const createChatSession = (options: ChatSessionOptions): ChatSession => ({
    server: () => options.connector.detect(),
    toolMode: async () => 'native',
    send: async (c, text): Promise<TurnResult> => {
      const userId = nextId++;
      messages.push({ id: userId, conversationId: c, role: 'user', text, time: new Date() });
      const replyId = nextId++;
      messages.push({
        id: replyId,
        conversationId: c,
        role: 'assistant',
        text: 'How exciting!',
        time: new Date(),
      });
      return {
        status: 'answered',
        text: 'How exciting!',
        rounds: 1,
        userId,
        replyId,
        wrote: false,
      };
    },
    regenerate: () => Promise.reject(new Error('not here')),
    resend: () => Promise.reject(new Error('not here')),
    continueReply: () => Promise.reject(new Error('not here')),
  });
  const runs: { request: KeeperRequest; settle(o: KeeperOutcome): void }[] = [];
  const app = new App({
    memory: memory as unknown as MemoryClient,
    createConnector,
    createChatSession,
    wrapCallback: (fn) => fn,
    noticeStorage: { getItem: () => null, setItem: () => undefined },
    runKeeper: (request) =>
      new Promise((resolve) => {
        runs.push({ request, settle: resolve });
        request.signal?.addEventListener('abort', () =>
          resolve({ status: 'aborted', mode: 'constrained', ops: [] }),
        );
      }),
  });
  return { app, settings, messages, connectors, runs };
}

async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the memory keeper in the app', () => {
  it('on by default: a turn of the session leads to one run on the same server once idle; its card is stored; the state says it runs', async () => {
    const { app, messages, connectors, runs, settings } = compose();
    await app.start();
    expect(app.state.settings.memoryKeeper).toBe(true);
    const result = await app.state.session!.send(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    expect(runs).toHaveLength(1);
    const { request } = runs[0];
    expect(request.connector).toBe(connectors.at(-1));
    expect(request.server).toEqual(SERVER);
    expect(request.conversationId).toBe(1);
    expect(request.contextTokens).toBe(app.state.settings.contextTokens);
    expect(app.state.keeping).toBe(1);
    // The schema modes live in the memory's settings, as the tool modes do.
    await request.schemaModes!.set('k', 'prompted');
    expect(settings.get('schemaModes')).toEqual({ k: 'prompted' });
    expect(await request.schemaModes!.get('k')).toBe('prompted');

    runs[0].settle({
      status: 'kept',
      mode: 'constrained',
      ops: [{ op: 'add', path: 'Family/Ana', content: 'Ana moves.', version: 1 }],
    });
    await flush();
    expect(app.state.keeping).toBeUndefined();
    expect(readKeeperCard(messages.at(-1)!)?.replyId).toBe(result.replyId);
  });

  it('a refused answer is one line in the notice; opening another chat aborts a run', async () => {
    const { app, runs } = compose();
    await app.start();
    await app.state.session!.send(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS);
    await flush();
    app.openConversation(2);
    expect(runs[0].request.signal!.aborted).toBe(true);
    app.openConversation(1);
    await vi.advanceTimersByTimeAsync(KEEPER_QUIET_MS);
    await flush();
    expect(runs).toHaveLength(2);
    runs[1].settle({
      status: 'refused',
      mode: 'constrained',
      ops: [],
      message: 'The memory keeper’s answer was not JSON, so nothing was saved.',
    });
    await flush();
    expect(app.state.notice).toBe('The memory keeper’s answer was not JSON, so nothing was saved.');
  });

  it('off in the stored settings, or turned off: nothing runs', async () => {
    const { app, runs } = compose({ [SETTINGS_KEY]: { memoryKeeper: false } });
    await app.start();
    expect(app.state.settings.memoryKeeper).toBe(false);
    await app.state.session!.send(1, 'My sister Ana is moving to Lisbon in May.');
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS * 20);
    expect(runs).toHaveLength(0);

    const on = compose();
    await on.app.start();
    await on.app.state.session!.send(1, 'My sister Ana is moving to Lisbon in May.');
    await on.app.saveSettings({ ...on.app.state.settings, memoryKeeper: false });
    await vi.advanceTimersByTimeAsync(KEEPER_IDLE_MS * 20);
    expect(on.runs).toHaveLength(0);
  });
});
