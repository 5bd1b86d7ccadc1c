// The app's composition (src/app/app.ts) without a page or a worker: a memory that keeps its
// settings and conversations in maps, and connectors whose servers answer when the test says.
import { describe, expect, it } from 'vitest';
import { App, type AppState } from '../../src/app/app';
import { createChatSession } from '../../src/chat/chat-session';
import type { SessionEvent } from '../../src/chat/types';
import { SETTINGS_KEY, type AppSettings, type NoticeStorage } from '../../src/app/settings';
import type { EmbedderProgress } from '../../src/embeddings/types';
import type { MemoryChange } from '../../src/memory/types';
import type { Connector, ConnectorOptions } from '../../src/llm/connector';
import { LlmError, type ServerInfo } from '../../src/llm/types';
import { serverDownError } from '../../src/llm/errors';
import type { MemoryClient } from '../../src/worker-client';
import { startFakeServer } from '../fixtures/fake-llm';

const KOBOLD: ServerInfo = {
  kind: 'koboldcpp',
  baseUrl: 'http://localhost:5001',
  model: 'koboldcpp/tiny',
  contextSize: 8192,
  tokenizer: true,
};

/** A server's answer to `detect`, settled by the test. */
interface Pending {
  resolve(info: ServerInfo): void;
  reject(error: Error): void;
}

/** Connectors as the app builds them: their options, and their servers' pending answers. */
function connectors() {
  const built: ConnectorOptions[] = [];
  const pending: Pending[] = [];
  const create = (options: ConnectorOptions): Connector => {
    built.push(options);
    return {
      baseUrl: options.endpoint ?? '',
      detect: () =>
        new Promise<ServerInfo>((resolve, reject) => {
          pending.push({ resolve, reject });
        }),
      chat: () => Promise.reject(new Error('not in these tests')),
      generate: () => Promise.reject(new Error('not in these tests')),
      structured: () => Promise.reject(new Error('not in these tests')),
      probeTools: () => Promise.reject(new Error('not in these tests')),
      countTokens: async (text) => text.length,
    };
  };
  return { built, pending, create };
}

/** The parts of the worker's API the composition uses, kept in maps. */
function fakeMemory(stored: Record<string, unknown> = {}) {
  const settings = new Map(Object.entries(stored));
  const conversations = new Map<number, string>();
  let nextId = 1;
  let progress: ((p: EmbedderProgress) => void) | undefined;
  let indexing: ((p: { done: number; total: number }) => void) | undefined;
  let changes: ((c: MemoryChange) => void) | undefined;
  const models: string[] = [];
  const memory = {
    onMemoryChange: async (fn: (c: MemoryChange) => void) => {
      changes = fn;
    },
    onModelProgress: async (fn: (p: EmbedderProgress) => void) => {
      progress = fn;
    },
    onIndexProgress: async (fn: (p: { done: number; total: number }) => void) => {
      indexing = fn;
    },
    getSetting: async (key: string) => settings.get(key),
    setSetting: async (key: string, value: unknown) => {
      settings.set(key, value);
    },
    // Newest first, as the engine lists them.
    listConversations: async () =>
      [...conversations].reverse().map(([id, title]) => ({ id, title })),
    createConversation: async (title: string) => {
      const id = nextId++;
      conversations.set(id, title);
      return { status: 'SUCCESS' as const, id };
    },
    renameConversation: async (id: number, title: string) => {
      conversations.set(id, title);
      return { status: 'SUCCESS' as const };
    },
    deleteConversation: async (id: number) => {
      conversations.delete(id);
      return { status: 'SUCCESS' as const };
    },
    useModel: async (model: string) => {
      models.push(model);
    },
    modelInfo: async () => ({ id: 'test-model', bundled: false }),
    setTokenCounter: async () => undefined,
  };
  return {
    memory: memory as unknown as MemoryClient,
    settings,
    conversations,
    models,
    progress: (p: EmbedderProgress) => progress?.(p),
    indexing: (p: { done: number; total: number }) => indexing?.(p),
    /** What the worker reports after a committed write (this tab's or another's). */
    changed: (c: MemoryChange) => changes?.(c),
  };
}

function memoryStorage(): NoticeStorage & { items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
  };
}

/** Resolves once the app's state satisfies `test` (checked now and after each change). */
function until(app: App, test: (state: Readonly<AppState>) => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (test(app.state)) return resolve();
    const stop = app.subscribe(() => {
      if (!test(app.state)) return;
      stop();
      resolve();
    });
  });
}

function compose(stored: Record<string, unknown> = {}, recheckMs?: number) {
  const mem = fakeMemory(stored);
  const conns = connectors();
  const storage = memoryStorage();
  const app = new App({
    memory: mem.memory,
    createConnector: conns.create,
    wrapCallback: (fn) => fn,
    noticeStorage: storage,
    ...(recheckMs ? { recheckMs } : {}),
  });
  return { app, mem, conns, storage };
}

/**
 * A started app connected to KoboldCPP, and what its chat session tells it (`events`, as the
 * session's turns would); `recheckMs`: how soon it asks a server that went away again.
 */
async function connectedHearing(recheckMs?: number) {
  const mem = fakeMemory();
  const conns = connectors();
  let heard: ((e: SessionEvent) => void) | undefined;
  const app = new App({
    memory: mem.memory,
    createConnector: conns.create,
    wrapCallback: (fn) => fn,
    noticeStorage: memoryStorage(),
    ...(recheckMs ? { recheckMs } : {}),
    createChatSession: (options) => {
      heard = options.onEvent;
      return createChatSession(options);
    },
  });
  await app.start();
  conns.pending[0].resolve(KOBOLD);
  await until(app, (s) => s.status.state === 'connected');
  return { app, events: (e: SessionEvent) => heard!(e) };
}

describe('App (the composition of memory, settings, connector and chat session)', () => {
  it('starts from the stored settings: a connector for their server, the newest conversation, the status from the server', async () => {
    const { app, mem, conns } = compose({
      [SETTINGS_KEY]: { endpoint: 'http://127.0.0.1:8080', apiKey: 'secret', contextSize: 4096 },
    });
    await mem.memory.createConversation('Older');
    await mem.memory.createConversation('Newer');
    await app.start();
    expect(app.state.settingsLoaded).toBe(true);
    expect(app.state.settingsSaved).toBe(true);
    expect(app.state.settings.endpoint).toBe('http://127.0.0.1:8080');
    expect(app.state.conversationId).toBe(2);
    expect(conns.built).toEqual([
      { endpoint: 'http://127.0.0.1:8080', apiKey: 'secret', contextSize: 4096 },
    ]);
    expect(app.state.session).toBeDefined();
    expect(app.state.status).toEqual({ state: 'connecting' });
    conns.pending[0].resolve(KOBOLD);
    await until(app, (s) => s.status.state === 'connected');
    expect(app.state.status).toEqual({
      state: 'connected',
      kind: 'koboldcpp',
      model: 'koboldcpp/tiny',
      contextSize: 8192,
      toolMode: 'native',
    });
  });

  it('on a first run opens a new conversation and reports a server that does not answer', async () => {
    const { app, mem, conns } = compose();
    await app.start();
    expect(app.state.settingsSaved).toBe(false);
    expect(app.state.settings.apiKey).toBe('');
    expect(conns.built[0].apiKey).toBeUndefined();
    expect([...mem.conversations]).toEqual([[1, 'New chat']]);
    expect(app.state.conversationId).toBe(1);
    conns.pending[0].reject(new Error('Nothing answers at http://localhost:5001.'));
    await until(app, (s) => s.status.state === 'error');
    expect(app.state.status.message).toBe('Nothing answers at http://localhost:5001.');
  });

  it('a server started after the page opened: the status asks again by itself and says connected', async () => {
    const { app, conns } = compose({}, 5);
    await app.start();
    conns.pending[0].reject(serverDownError('http://localhost:5001', 'koboldcpp'));
    await until(app, (s) => s.status.state === 'error');
    expect(app.state.status.message).toMatch(/^Nothing answers at http:\/\/localhost:5001/);
    // Asked again (still nothing), then again: the server is up now.
    await expect.poll(() => conns.pending.length).toBe(2);
    conns.pending[1].reject(serverDownError('http://localhost:5001', 'koboldcpp'));
    await expect.poll(() => conns.pending.length).toBe(3);
    expect(app.state.status.state).toBe('error');
    // Still nothing, and said the same: the state is not replaced (nothing redraws).
    const said = app.state;
    conns.pending[2].reject(serverDownError('http://localhost:5001', 'koboldcpp'));
    await expect.poll(() => conns.pending.length).toBe(4);
    expect(app.state).toBe(said);
    conns.pending[3].resolve(KOBOLD);
    await until(app, (s) => s.status.state === 'connected');
  });

  it('a server that refuses (a wrong key) is not asked again until the settings change', async () => {
    const { app, conns } = compose({}, 5);
    await app.start();
    conns.pending[0].reject(new LlmError('UNAUTHORIZED', 'The server refused the API key.'));
    await until(app, (s) => s.status.state === 'error');
    await new Promise((r) => setTimeout(r, 60));
    expect(conns.pending).toHaveLength(1);
  });

  it('a server that goes away mid-session: the status says so, and says connected again once a reply comes', async () => {
    const { app, events } = await connectedHearing();
    const down = 'Nothing answers at http://localhost:5001: start KoboldCPP.';
    events({ type: 'notice', message: down });
    expect(app.state.status.state).toBe('connected');
    events({ type: 'unreachable', message: down });
    expect(app.state.status).toEqual({ state: 'error', message: down });
    events({ type: 'token', text: 'Back' });
    events({ type: 'token', text: ' again' });
    await until(app, (s) => s.status.state === 'connected');
    expect(app.state.status).toMatchObject({ state: 'connected', kind: 'koboldcpp' });
  });

  it('a server that went away mid-session is asked again by itself: connected once it answers, without a reply', async () => {
    const { app, events } = await connectedHearing(5);
    const down = 'Nothing answers at http://localhost:5001: start KoboldCPP.';
    events({ type: 'unreachable', message: down });
    expect(app.state.status).toEqual({ state: 'error', message: down });
    // No message sent, no token: the status line asks the server again and says connected.
    await until(app, (s) => s.status.state === 'connected');
    expect(app.state.status).toMatchObject({ state: 'connected', model: 'koboldcpp/tiny' });
  });

  it("settings saved in another tab are this tab's too: its server, its keeper, and its next Save", async () => {
    const { app, mem, conns } = compose({
      [SETTINGS_KEY]: { endpoint: 'http://127.0.0.1:8080', memoryKeeper: true },
    });
    await app.start();
    conns.pending[0].resolve(KOBOLD);
    await until(app, (s) => s.status.state === 'connected');
    // Its own Save is reported back too: nothing changes, nothing is rebuilt.
    await app.saveSettings({ ...app.state.settings });
    const built = conns.built.length;
    mem.changed({ tables: ['settings'] });
    await new Promise((r) => setTimeout(r, 20));
    expect(conns.built).toHaveLength(built);
    // Another tab saves: another server, the keeper off.
    mem.settings.set(SETTINGS_KEY, {
      ...(mem.settings.get(SETTINGS_KEY) as AppSettings),
      endpoint: 'http://127.0.0.1:5001',
      memoryKeeper: false,
    });
    mem.changed({ tables: ['settings'] });
    await until(app, (s) => s.settings.endpoint === 'http://127.0.0.1:5001');
    expect(app.state.settings.memoryKeeper).toBe(false);
    expect(conns.built.at(-1)?.endpoint).toBe('http://127.0.0.1:5001');
    // A Save here now keeps what the other tab set, changing only what this one changed.
    await app.saveSettings({ ...app.state.settings, temperature: 0.3 });
    expect(mem.settings.get(SETTINGS_KEY)).toMatchObject({
      endpoint: 'http://127.0.0.1:5001',
      memoryKeeper: false,
      temperature: 0.3,
    });
  });

  it('a Save here while another write is being followed is not undone by the older read', async () => {
    const { app, mem } = compose({ [SETTINGS_KEY]: { temperature: 0.7 } });
    await app.start();
    const client = mem.memory as unknown as { getSetting(k: string): Promise<unknown> };
    const read = client.getSetting;
    let answer!: () => void;
    // The follow's read is slow: it answers with the row as it was when it was asked.
    client.getSetting = (k) => {
      const then = mem.settings.get(k);
      return new Promise((r) => (answer = () => r(then)));
    };
    mem.changed({ tables: ['settings'] });
    client.getSetting = read;
    await app.saveSettings({ ...app.state.settings, temperature: 0.2 });
    answer();
    await new Promise((r) => setTimeout(r, 20));
    expect(app.state.settings.temperature).toBe(0.2);
  });

  it('saving settings rebuilds the connector and session at once and stores the settings', async () => {
    const { app, mem, conns } = compose();
    await app.start();
    const first = app.state.session;
    const next: AppSettings = { ...app.state.settings, endpoint: 'http://10.0.0.2:5001' };
    const saved = app.saveSettings(next);
    // Before the write finishes: a message sent right after Save goes to the new server.
    expect(conns.built.at(-1)?.endpoint).toBe('http://10.0.0.2:5001');
    expect(app.state.session).not.toBe(first);
    expect(app.state.status).toEqual({ state: 'connecting' });
    await saved;
    expect(mem.settings.get(SETTINGS_KEY)).toMatchObject({ endpoint: 'http://10.0.0.2:5001' });
    expect(app.state.settingsSaved).toBe(true);
    conns.pending[1].resolve({ ...KOBOLD, baseUrl: 'http://10.0.0.2:5001', model: 'new' });
    await until(app, (s) => s.status.state === 'connected');
    expect(app.state.status.model).toBe('new');
    // The old server answering late does not speak for the new one (everything here settles in
    // microtasks, so one macrotask later the old session's answer has been handled).
    conns.pending[0].resolve(KOBOLD);
    await new Promise((resolve) => setImmediate(resolve));
    expect(app.state.status.model).toBe('new');
  });

  it('switches the embedding model only when the saved settings change it', async () => {
    const { app, mem } = compose();
    await app.start();
    await until(app, (s) => s.activeModel !== undefined);
    expect(mem.models).toEqual(['default']);
    await app.saveSettings({ ...app.state.settings, temperature: 0.2 });
    expect(mem.models).toEqual(['default']);
    await app.saveSettings({ ...app.state.settings, embeddingModel: 'bundled' });
    expect(mem.models).toEqual(['default', 'bundled']);
  });

  it('deleting the open conversation opens the newest left, or a new one', async () => {
    const { app, mem } = compose();
    await app.start();
    const second = await app.newConversation();
    expect(second).toBe(2);
    expect(app.state.conversationId).toBe(2);
    await app.deleteConversation(2);
    expect(app.state.conversationId).toBe(1);
    await app.deleteConversation(1);
    expect([...mem.conversations.keys()]).toEqual([3]);
    expect(app.state.conversationId).toBe(3);
    app.openConversation(3);
    await app.renameConversation(3, 'Plans');
    expect(mem.conversations.get(3)).toBe('Plans');
  });

  it('Test connection asks llama.cpp and Ollama whether they take native tool calls', async () => {
    const servers = [
      await startFakeServer('llamacpp', { jinja: false, tokenDelayMs: 1 }),
      await startFakeServer('ollama', {
        model: 'gemma2',
        noToolsModels: ['gemma2'],
        tokenDelayMs: 1,
      }),
      await startFakeServer('llamacpp', { tokenDelayMs: 1 }),
    ];
    try {
      const app = new App({
        memory: fakeMemory().memory,
        wrapCallback: (fn) => fn,
        noticeStorage: memoryStorage(),
      });
      await app.start();
      const tools = async (endpoint: string, toolMode: 'auto' | 'native' | 'prompted') => {
        const r = await app.testConnection({
          endpoint,
          apiKey: '',
          contextSize: 0,
          toolMode,
          signal: new AbortController().signal,
        });
        return r.ok ? r.lines.find((l) => l.label === 'Tool calls')?.value : r.message;
      };
      const [noJinja, noTools, jinja] = servers.map((s) => s.url);
      expect(await tools(noJinja, 'auto')).toMatch(
        /^prompted: The llama\.cpp server refused native tool calls .*start llama-server with --jinja/,
      );
      expect(await tools(noTools, 'auto')).toMatch(
        /^prompted: .*gemma2:latest does not support tools/,
      );
      expect(await tools(noTools, 'native')).toMatch(
        /^native \(set in Settings\), but the server refuses them: .*Choose Auto or Prompted/,
      );
      expect(await tools(jinja, 'auto')).toBe(
        'native: the server takes them for this model (asked just now)',
      );
      // Prompted by choice: nothing to ask.
      const asked = servers[2].generations().length;
      expect(await tools(jinja, 'prompted')).toMatch(/^prompted: the tools are described/);
      expect(servers[2].generations()).toHaveLength(asked);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });

  it('tests a typed server with its own connector, tried once, and says what an earlier chat learned', async () => {
    const { app, mem, conns } = compose();
    await app.start();
    const session = app.state.session;
    await mem.memory.setSetting('toolModes', {
      'koboldcpp|http://localhost:5001|koboldcpp/tiny': 'prompted',
    });
    const report = app.testConnection({
      endpoint: 'http://localhost:5001',
      apiKey: '',
      contextSize: 0,
      toolMode: 'auto',
      signal: new AbortController().signal,
    });
    expect(conns.built.at(-1)).toEqual({
      endpoint: 'http://localhost:5001',
      apiKey: undefined,
      contextSize: 0,
      retry: { attempts: 1, baseDelayMs: 0 },
    });
    conns.pending.at(-1)!.resolve(KOBOLD);
    const r = await report;
    expect(r.ok).toBe(true);
    expect(r.ok && r.lines.find((l) => l.label === 'Tool calls')?.value).toBe(
      'prompted: this server and model refused native tool calls before',
    );
    expect(app.state.session).toBe(session);
    expect(app.state.status).toEqual({ state: 'connecting' });
  });

  it('shows the offline-model fallback until dismissed, and not again on this device', async () => {
    const message =
      'Embedding model Xenova/all-MiniLM-L6-v2 could not be loaded (network error); using the bundled offline model structured-memory/glove-100d-sif.';
    const { app, mem, storage } = compose();
    await app.start();
    mem.progress({ status: 'fallback', message });
    expect(app.state.fallback?.requested).toBe('Xenova/all-MiniLM-L6-v2');
    app.dismissFallback();
    expect(app.state.fallback).toBeUndefined();

    const again = new App({
      memory: mem.memory,
      createConnector: connectors().create,
      wrapCallback: (fn) => fn,
      noticeStorage: storage,
    });
    await again.start();
    mem.progress({ status: 'fallback', message });
    expect(again.state.fallback).toBeUndefined();
  });

  it('shows a rebuild of the chat index while it lasts, and not once it is done', async () => {
    const { app, mem } = compose();
    await app.start();
    expect(app.state.indexing).toBeUndefined();
    mem.indexing({ done: 0, total: 9000 });
    expect(app.state.indexing).toEqual({ done: 0, total: 9000 });
    mem.indexing({ done: 4096, total: 9000 });
    expect(app.state.indexing).toEqual({ done: 4096, total: 9000 });
    mem.indexing({ done: 9000, total: 9000 });
    expect(app.state.indexing).toBeUndefined();
  });

  it('tells its subscribers of each change, and a notice lasts until dismissed', async () => {
    const { app } = compose();
    let changes = 0;
    const stop = app.subscribe(() => changes++);
    app.showNotice('The file was imported.');
    expect(app.state.notice).toBe('The file was imported.');
    app.dismissNotice();
    expect(app.state.notice).toBeUndefined();
    expect(changes).toBe(2);
    stop();
    app.showNotice('Unheard.');
    expect(changes).toBe(2);
  });
});
