// The app's composition, with no DOM: it owns the memory client, the settings, the connector and
// the chat session, and holds what the page shows about them (the server's status, the open
// conversation, the embedding model's progress and notices). main.ts creates it and hands it to
// <sm-app>, which renders its state and turns its children's events into calls here
// (docs/design.md, "Layers on the page").
import { proxy } from 'comlink';
import {
  createChatSession as createSession,
  type ChatSession,
  type ChatSessionOptions,
  type ToolModeMemory,
} from '../chat/chat-session';
import type { KeeperOutcome, KeeperRequest, SchemaModeMemory } from '../chat/keeper';
import type { EmbedderProgress, ModelInfo } from '../embeddings/types';
import {
  createConnector as createLlmConnector,
  koboldPasswordError,
  koboldPasswordMissing,
  type Connector,
  type ConnectorOptions,
  type ToolProbe,
} from '../llm/connector';
import { isAbortError } from '../llm/errors';
import { createInPageConnector, type InPageConnector } from '../llm/in-page/connector';
import { openModelFiles } from '../llm/in-page/model-files';
import type { InPageLoadProgress } from '../llm/in-page/types';
import { formatBytes } from './storage-status';
import { LlmError } from '../llm/types';
import type { ServerInfo, ServerKind, ToolMode } from '../llm/types';
import type { MemoryClient } from '../worker-client';
import type { IndexProgress, MemoryChange } from '../memory/types';
import { MemoryKeeper, type KeeperHandover, type KeeperTarget } from './memory-keeper';
import { KEEPER_HANDOVER_KEY, localHandover } from './keeper-handover';
import {
  DEFAULT_SETTINGS,
  SETTINGS_KEY,
  describeConnection,
  dismissNotice,
  isNoticeDismissed,
  normaliseSettings,
  parseFallbackNotice,
  toolModeKey,
  type AppSettings,
  type ConnectionReport,
  type ConnectionTest,
  type FallbackNotice,
  type NoticeStorage,
} from './settings';

const TOOL_MODES_KEY = 'toolModes';
/** Servers that refused the memory keeper's schema parameter (docs/chat.md, "Memory keeper"). */
const SCHEMA_MODES_KEY = 'schemaModes';
/** How long Test connection waits for the server before saying it does not answer. */
export const TEST_TIMEOUT_MS = 15_000;

/**
 * The servers whose tool support Test connection asks about: they refuse `tools` in ways the
 * connector knows (llama.cpp without --jinja, Ollama for a model without tools). KoboldCPP
 * emulates tool calls for every model; the others are not asked (a generation each time).
 */
const PROBED: ReadonlySet<ServerKind> = new Set(['llamacpp', 'ollama']);

/** What the status line says about the model server. */
export interface ServerStatus {
  /** Server kind (`koboldcpp`, `llamacpp`, `ollama`, `lmstudio`, `openai`). */
  kind?: string;
  model?: string;
  /** Context size in tokens. */
  contextSize?: number;
  /** `native` or `prompted` (or `auto` before the first turn). */
  toolMode?: string;
  state: 'connecting' | 'connected' | 'error';
  /** The error sentence (with the fix) when `state` is `error`; a detail otherwise. */
  message?: string;
  /** While connecting: how much of the in-page model's file is read (bytes). */
  progress?: { done: number; total: number };
  /** While connecting: the in-page model is open in another tab; it can be used here too. */
  otherTab?: boolean;
}

/** Everything the page shows that the app, not a component, decides. */
export interface AppState {
  settings: AppSettings;
  /** The stored settings have been read (the Settings dialog waits for them). */
  settingsLoaded: boolean;
  /** Settings were saved on this device before (no: the first run). */
  settingsSaved: boolean;
  /** The chat session for the current settings; undefined until started. */
  session: ChatSession | undefined;
  status: ServerStatus;
  /** The conversation the chat shows. */
  conversationId: number | undefined;
  /** The embedding model's download or load, while it lasts. */
  modelProgress: EmbedderProgress | undefined;
  /** A notice about the model or from a component, until dismissed. */
  notice: string | undefined;
  /** The offline-model fallback, unless dismissed on this device for what it says now. */
  fallback: FallbackNotice | undefined;
  /** Re-embedding after a model switch, while it lasts. */
  reembed: { done: number; total: number } | undefined;
  /** A rebuild of the chat index under way (after an update, or a repair): sentences done. */
  indexing: IndexProgress | undefined;
  /** The embedding model in use, once known. */
  activeModel: ModelInfo | undefined;
  /** The conversation whose exchanges the memory keeper is reading now. */
  keeping: number | undefined;
}

/** The state before `start()`: default settings, not loaded yet, no session. */
export const IDLE_STATE: Readonly<AppState> = {
  settings: DEFAULT_SETTINGS,
  settingsLoaded: false,
  settingsSaved: false,
  session: undefined,
  status: { state: 'connecting' },
  conversationId: undefined,
  modelProgress: undefined,
  notice: undefined,
  fallback: undefined,
  reembed: undefined,
  indexing: undefined,
  activeModel: undefined,
  keeping: undefined,
};

export interface AppOptions {
  memory: MemoryClient;
  /** Builds the connector for the settings (tests hand in a fake). */
  createConnector?: (options: ConnectorOptions) => Connector;
  /** Builds the chat session (tests may hand in a fake). */
  createChatSession?: (options: ChatSessionOptions) => ChatSession;
  /**
   * Wraps a callback that the worker calls back (Comlink's `proxy`, the default); tests that
   * call a memory without a worker pass the callback as it is.
   */
  wrapCallback?: <F extends (...args: never[]) => unknown>(fn: F) => F;
  /** Where dismissed notices are remembered (undefined: localStorage, see settings.ts). */
  noticeStorage?: NoticeStorage;
  /** The memory keeper's run (tests may hand in a fake; default `runKeeper`). */
  runKeeper?: (request: KeeperRequest) => Promise<KeeperOutcome>;
  /**
   * Where the keeper's unkept exchanges wait when the page goes (default: localStorage, see
   * keeper-handover.ts; null: nowhere).
   */
  keeperHandover?: KeeperHandover | null;
  /**
   * While nothing answers at the server, the first wait before the status asks it again (ms;
   * doubling each time up to 30 s). Default RECHECK_FIRST_MS.
   */
  recheckMs?: number;
}

/** While nothing answers at the model server, how soon the status asks again (then doubling). */
const RECHECK_FIRST_MS = 3000;
const RECHECK_MAX_MS = 30_000;

export class App {
  readonly memory: MemoryClient;
  private current: AppState = IDLE_STATE;
  private readonly listeners = new Set<() => void>();
  private readonly createConnector: (options: ConnectorOptions) => Connector;
  /** The in-page model's connector while that kind is chosen (closed to free its memory). */
  private inPage: InPageConnector | undefined;
  private readonly createChatSession: (options: ChatSessionOptions) => ChatSession;
  /** A reply came while the status said the server was out of reach: it is being checked again. */
  private recovering = false;
  private readonly wrap: <F extends (...args: never[]) => unknown>(fn: F) => F;
  private readonly noticeStorage: NoticeStorage | undefined;
  private readonly keeper: MemoryKeeper;
  /** The server the memory keeper asks: the current settings' (set by `connect`). */
  private keeperTarget: KeeperTarget | undefined;
  /**
   * Nothing answered at the server: the status asks it again by itself (a person who starts
   * KoboldCPP after opening the page sees it connect, without sending a message to find out).
   */
  /** Saves of the settings made here (`followStoredSettings` leaves a read older than one). */
  private saves = 0;
  /** Chats this page deleted (the list's report of it is not news to it). */
  private readonly deletedHere = new Set<number>();
  private recheckTimer: ReturnType<typeof setTimeout> | undefined;
  private recheckDelay = 0;
  private readonly recheckFirst: number;

  constructor(options: AppOptions) {
    this.memory = options.memory;
    this.createConnector = options.createConnector ?? createLlmConnector;
    this.createChatSession = options.createChatSession ?? createSession;
    this.wrap = options.wrapCallback ?? proxy;
    this.noticeStorage = options.noticeStorage;
    this.recheckFirst = options.recheckMs ?? RECHECK_FIRST_MS;
    this.keeper = new MemoryKeeper({
      memory: this.memory,
      target: () => this.keeperTarget,
      enabled: () => this.current.settingsLoaded && this.current.settings.memoryKeeper,
      openConversation: () => this.current.conversationId,
      schemaModes: this.schemaModes(),
      onRunning: (keeping) => this.set({ keeping }),
      onStatusLine: (message) => this.showNotice(message),
      ...(options.runKeeper ? { run: options.runKeeper } : {}),
      ...(options.keeperHandover !== null
        ? { handover: options.keeperHandover ?? localHandover() }
        : {}),
    });
  }

  /** The state now; a new object after each change. */
  get state(): Readonly<AppState> {
    return this.current;
  }

  /** Calls `listener` after each change of `state`; returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(patch: Partial<AppState>): void {
    const opened =
      'conversationId' in patch && patch.conversationId !== this.current.conversationId;
    this.current = { ...this.current, ...patch };
    // Another chat: a memory keeper run stops at once (its exchanges wait for the next one).
    if (opened) this.keeper.conversationOpened();
    for (const listener of this.listeners) listener();
  }

  /** Loads settings, subscribes to model progress, picks the conversation and connects. */
  async start(): Promise<void> {
    const memory = this.memory;
    void memory.onModelProgress(this.wrap((p: EmbedderProgress) => this.handleModelProgress(p)));
    void memory.onIndexProgress(
      this.wrap((p: IndexProgress) => this.set({ indexing: p.done < p.total ? p : undefined })),
    );
    const stored = await memory.getSetting(SETTINGS_KEY);
    this.set({
      settings: normaliseSettings(stored),
      settingsSaved: stored !== undefined,
      settingsLoaded: true,
    });
    // Settings saved in another tab are this tab's too (its keeper, its server, its next Save).
    void memory.onMemoryChange?.(
      this.wrap((change: MemoryChange) => {
        if (change.tables.includes('settings')) void this.followStoredSettings();
      }),
    );
    const convs = await memory.listConversations();
    this.set({ conversationId: convs[0]?.id ?? (await this.createConversation()) });
    this.followHandover();
    void this.applyModel();
    // Back online: the server is asked again at once.
    globalThis.addEventListener?.('online', () => {
      const { session, status } = this.current;
      if (session && status.state === 'error') {
        this.stopRecheck();
        void this.refreshStatus(session);
      }
    });
    this.connect();
  }

  /** Asks the server again after a while, while nothing answers there (`recheckTimer`). */
  private recheckLater(session: ChatSession): void {
    clearTimeout(this.recheckTimer);
    this.recheckDelay = Math.min(
      RECHECK_MAX_MS,
      this.recheckDelay ? this.recheckDelay * 2 : this.recheckFirst,
    );
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      if (session === this.current.session && this.current.status.state === 'error')
        void this.refreshStatus(session);
    }, this.recheckDelay);
  }

  private stopRecheck(): void {
    clearTimeout(this.recheckTimer);
    this.recheckTimer = undefined;
    this.recheckDelay = 0;
  }

  /**
   * The memory keeper's exchanges left by pages that went: taken now, and whenever another page
   * leaves some (another tab closing); this page's are left when it goes, and taken back if it
   * comes back from the back/forward cache.
   */
  private followHandover(): void {
    void this.keeper.claim();
    globalThis.addEventListener?.('pagehide', () => this.keeper.handOver());
    globalThis.addEventListener?.('pageshow', (e) => {
      if (e.persisted) void this.keeper.claim();
    });
    globalThis.addEventListener?.('storage', (e) => {
      if (e.key === KEEPER_HANDOVER_KEY && e.newValue) void this.keeper.claim();
    });
  }

  /** Saves the settings; a new server or key takes effect at once, a new model in the background. */
  /**
   * The settings as stored now, when another tab saved them: taken as Save here takes them
   * (server, keeper, embedding model), without writing them again. A write that only repeats
   * what this tab holds (its own Save) changes nothing.
   */
  private async followStoredSettings(): Promise<void> {
    const saves = this.saves;
    const stored = await this.memory.getSetting(SETTINGS_KEY);
    // A Save here since the read began is newer than what it read.
    if (stored === undefined || saves !== this.saves) return;
    const next = normaliseSettings(stored);
    if (JSON.stringify(next) === JSON.stringify(this.current.settings)) return;
    if (this.take(next)) void this.applyModel();
  }

  /**
   * Makes `next` this tab's settings: a new session (keeping an in-page model they leave as it
   * is) and the keeper told at once. True when the embedding model changed (the caller applies
   * it once the settings are stored).
   */
  private take(next: AppSettings): boolean {
    const before = this.current.settings;
    this.set({ settings: next, settingsSaved: true });
    this.connect(sameModel(before, next));
    this.keeper.settingsChanged();
    return before.embeddingModel !== next.embeddingModel;
  }

  async saveSettings(next: AppSettings): Promise<void> {
    this.saves++;
    // Connect first: a message sent right after Save must go to the new endpoint.
    const settings = normaliseSettings(next);
    const newModel = this.take(settings);
    await this.memory.setSetting(SETTINGS_KEY, settings);
    if (newModel) void this.applyModel();
  }

  /**
   * Test connection: detects the server typed in Settings (not saved yet) the way a chat does,
   * and says what it found or the sentence with the fix. Touches nothing the chat uses.
   */
  async testConnection(test: ConnectionTest): Promise<ConnectionReport> {
    const connector = this.createConnector({
      endpoint: test.endpoint,
      apiKey: test.apiKey || undefined,
      contextSize: test.contextSize,
      retry: { attempts: 1, baseDelayMs: 0 },
    });
    const timeout = AbortSignal.timeout(TEST_TIMEOUT_MS);
    let info: ServerInfo;
    try {
      info = await connector.detect(AbortSignal.any([test.signal, timeout]));
    } catch (e) {
      if (timeout.aborted) {
        return {
          ok: false,
          message: `${connector.baseUrl} did not answer within ${TEST_TIMEOUT_MS / 1000} seconds: wait until the server has loaded its model, then check the Endpoint URL.`,
        };
      }
      if (isAbortError(e)) throw e;
      return { ok: false, message: e instanceof Error ? e.message : String(e) };
    }
    if (koboldPasswordMissing(info))
      return { ok: false, message: koboldPasswordError(info).message };
    const remembered =
      test.toolMode === 'auto' ? await this.toolModes().get(toolModeKey(info)) : undefined;
    let probe: ToolProbe | { failed: string } | undefined;
    if (PROBED.has(info.kind) && test.toolMode !== 'prompted') {
      try {
        probe = await connector.probeTools(AbortSignal.any([test.signal, timeout]));
      } catch (e) {
        if (isAbortError(e) && !timeout.aborted) throw e;
        probe = {
          failed: timeout.aborted
            ? `no answer within ${TEST_TIMEOUT_MS / 1000} seconds`
            : e instanceof Error
              ? e.message
              : String(e),
        };
      }
    }
    return {
      ok: true,
      lines: describeConnection(info, {
        toolMode: test.toolMode,
        remembered,
        contextOverride: test.contextSize,
        probe,
      }),
    };
  }

  /** Starts a conversation and opens it; its id, or undefined when it could not be made. */
  async newConversation(): Promise<number | undefined> {
    const id = await this.createConversation();
    if (id !== undefined) this.set({ conversationId: id });
    return id;
  }

  /** Opens a conversation in the chat. */
  openConversation(id: number): void {
    this.set({ conversationId: id });
  }

  /**
   * Opens a conversation at one of its messages (a Source or a "Recalled:" link, which name ids
   * stored earlier): true when the message is there to scroll to. A chat no longer here (deleted)
   * does not open, and a message no longer in its chat opens the chat; a notice says which.
   */
  async openMessage(conversationId: number, messageId: number): Promise<boolean> {
    const messages = await this.memory.getMessages(conversationId);
    if (!messages.length) {
      this.showNotice('That chat is no longer here.');
      return false;
    }
    this.openConversation(conversationId);
    if (messages.some((m) => m.id === messageId)) return true;
    this.showNotice('That message is no longer in its chat.');
    return false;
  }

  async renameConversation(id: number, title: string): Promise<void> {
    await this.memory.renameConversation(id, title);
  }

  /** Deletes a conversation; the open one gives way to the newest left, or to a new one. */
  async deleteConversation(id: number): Promise<void> {
    this.deletedHere.add(id);
    await this.memory.deleteConversation(id);
    if (this.current.conversationId === id) {
      const rest = await this.memory.listConversations();
      this.set({ conversationId: rest[0]?.id ?? (await this.createConversation()) });
    }
  }

  /**
   * The chat list no longer holds the open chat: when it was deleted elsewhere (another tab,
   * another device through sync), the newest chat left opens, or a new one, and the person is
   * told, instead of writing on into a chat that is gone (its messages would be refused).
   */
  openChatMaybeGone(): Promise<void> {
    // One look at a time: two at once, with no chat left, would each open a new one.
    this.chatCheck ??= this.lookForOpenChat().finally(() => (this.chatCheck = undefined));
    return this.chatCheck;
  }

  private chatCheck: Promise<void> | undefined;

  private async lookForOpenChat(): Promise<void> {
    const id = this.current.conversationId;
    if (id === undefined || this.deletedHere.has(id)) return;
    const chats = await this.memory.listConversations();
    if (this.current.conversationId !== id || chats.some((c) => c.id === id)) return;
    this.set({ conversationId: chats[0]?.id ?? (await this.createConversation()) });
    this.showNotice(
      'The chat you had open was deleted (in another tab, on another device, or by Replace all).',
    );
  }

  /**
   * The composer's words changed (`drafting`: it holds some): the person is not idle, so the
   * memory keeper waits.
   */
  noteTyping(drafting: boolean): void {
    this.keeper.typing(drafting);
  }

  /** Shows a notice (from a component, or about the model) until dismissed. */
  showNotice(message: string): void {
    this.set({ notice: message });
  }

  dismissNotice(): void {
    this.set({ notice: undefined });
  }

  /** Dismisses the offline-model notice on this device, for what it says now. */
  dismissFallback(): void {
    if (this.current.fallback) dismissNotice(this.current.fallback.key, this.noticeStorage);
    this.set({ fallback: undefined });
  }

  private async createConversation(): Promise<number | undefined> {
    const r = await this.memory.createConversation('New chat');
    return r && r.status === 'SUCCESS' ? r.id : undefined;
  }

  /** The tool modes learned per server and model, kept in the memory database. */
  private toolModes(): ToolModeMemory {
    const memory = this.memory;
    return {
      get: async (key) =>
        ((await memory.getSetting(TOOL_MODES_KEY)) as Record<string, ToolMode> | undefined)?.[key],
      set: async (key, mode) => {
        const all =
          ((await memory.getSetting(TOOL_MODES_KEY)) as Record<string, ToolMode> | undefined) ?? {};
        await memory.setSetting(TOOL_MODES_KEY, { ...all, [key]: mode });
      },
    };
  }

  /** The memory keeper's schema modes learned per server and model, kept as the tool modes are. */
  private schemaModes(): SchemaModeMemory {
    const memory = this.memory;
    type Modes = Record<string, 'constrained' | 'prompted'> | undefined;
    return {
      get: async (key) => ((await memory.getSetting(SCHEMA_MODES_KEY)) as Modes)?.[key],
      set: async (key, mode) => {
        const all = ((await memory.getSetting(SCHEMA_MODES_KEY)) as Modes) ?? {};
        await memory.setSetting(SCHEMA_MODES_KEY, { ...all, [key]: mode });
      },
    };
  }

  /** A connector and chat session for the current settings; detects the server right away. */
  /**
   * A new chat session for the settings now; `keepModel`: the in-page model loaded for the same
   * file and context size is kept (a new temperature does not load gigabytes again).
   */
  private connect(keepModel = false): void {
    const s = this.current.settings;
    let connector: Connector;
    if (keepModel && this.inPage && s.modelSource === 'inpage') {
      connector = this.inPage;
    } else if (s.modelSource === 'inpage') {
      this.inPage?.close();
      const inPage = createInPageConnector({
        name: s.inPageModel,
        files: () => inPageFiles(s.inPageModel),
        contextSize: s.contextSize,
        onProgress: (p) => {
          if (this.inPage === inPage && this.current.status.state === 'connecting') {
            this.set({ status: loadStatus(s.inPageModel, p) });
          }
        },
      });
      this.inPage = inPage;
      connector = this.inPage;
    } else {
      this.inPage?.close();
      this.inPage = undefined;
      connector = this.createConnector({
        endpoint: s.endpoint,
        apiKey: s.apiKey || undefined,
        contextSize: s.contextSize,
      });
    }
    // The memory keeper hears every turn of the session (it wraps it) and asks the same server.
    const session: ChatSession = this.keeper.wrap(
      this.createChatSession({
        memory: this.memory,
        connector,
        settings: s,
        toolModes: this.toolModes(),
        wrapCallback: this.wrap,
        onEvent: (e) => {
          if (e.type === 'notice' && /prompt/.test(e.message)) void this.refreshStatus(session);
          // A server that went away (or locked) mid-session: the status line says so, not
          // "connected", until a reply comes again or the server answers when asked again (the
          // session detects it afresh: it may be back as another model).
          if (e.type === 'unreachable' && session === this.current.session) {
            this.set({ status: { state: 'error', message: e.message } });
            this.recheckLater(session);
          }
          if (e.type === 'token' && this.current.status.state === 'error' && !this.recovering) {
            this.recovering = true;
            void this.refreshStatus(session).finally(() => (this.recovering = false));
          }
        },
      }),
    );
    this.keeperTarget = {
      connector,
      server: (signal) => session.server(signal),
      contextTokens: s.contextTokens,
    };
    this.stopRecheck();
    this.set({ session, status: { state: 'connecting' } });
    void this.refreshStatus(session);
  }

  /** The in-page model is open in another tab: load a copy here too instead of waiting. */
  useModelHere(): void {
    this.inPage?.useHere();
  }

  /**
   * The in-page model's file `name` was deleted (Settings → Delete): its engine is ended, which
   * frees its memory, and the chat says there is no model instead of using the stale one.
   */
  inPageModelDeleted(name: string): void {
    const s = this.current.settings;
    if (this.inPage && s.modelSource === 'inpage' && s.inPageModel === name) this.connect();
  }

  private async refreshStatus(session: ChatSession): Promise<void> {
    try {
      const info = await session.server();
      const toolMode = await session.toolMode();
      if (session !== this.current.session) return;
      this.stopRecheck();
      this.set({
        status: {
          state: 'connected',
          kind: info.kind,
          model: info.model,
          contextSize: info.contextSize,
          toolMode,
        },
      });
    } catch (e) {
      if (session !== this.current.session) return;
      const message = e instanceof Error ? e.message : String(e);
      // Asked again and still nothing: the same status is not set again (the page would redraw
      // its notices every few seconds, under a person's pointer).
      const { status } = this.current;
      if (status.state !== 'error' || status.message !== message)
        this.set({ status: { state: 'error', message } });
      // Only a server that does not answer comes by itself; a refusal waits for new settings.
      if (e instanceof LlmError && e.code === 'SERVER_DOWN') this.recheckLater(session);
    }
  }

  private async applyModel(): Promise<void> {
    try {
      await this.memory.useModel(
        this.current.settings.embeddingModel,
        this.wrap((p: { done: number; total: number }) => {
          this.set({ reembed: p.done < p.total ? p : undefined });
        }),
      );
      this.set({ activeModel: await this.memory.modelInfo() });
    } catch (e) {
      this.set({
        notice: `The embedding model could not be loaded: ${e instanceof Error ? e.message : String(e)}`,
      });
    } finally {
      this.set({ reembed: undefined });
    }
  }

  private handleModelProgress(p: EmbedderProgress): void {
    const patch: Partial<AppState> = { modelProgress: p.status === 'ready' ? undefined : p };
    if (p.status === 'fallback' && p.message) {
      const notice = parseFallbackNotice(p.message);
      patch.fallback = isNoticeDismissed(notice.key, this.noticeStorage) ? undefined : notice;
    }
    this.set(patch);
  }
}

/** The status line while the in-page model loads (docs/in-page-model.md). */
export function loadStatus(name: string, p: InPageLoadProgress): ServerStatus {
  if (p.phase === 'other-tab') {
    return {
      state: 'connecting',
      otherTab: true,
      message: `${name} is open in another tab of this app. Close it there and it loads here, or use it here too: a second copy takes another ${formatBytes(p.total)} of memory.`,
    };
  }
  if (p.phase === 'reading') {
    const percent = p.total ? Math.floor((p.done / p.total) * 100) : 0;
    return {
      state: 'connecting',
      progress: { done: p.done, total: p.total },
      message: `Loading ${name}: ${percent}% (${formatBytes(p.done)} of ${formatBytes(p.total)})…`,
    };
  }
  return { state: 'connecting', message: `Loading ${name}: setting it up…` };
}

/** The chosen GGUF (every part of a split one) from this browser's storage, or a sentence that says to choose one. */
async function inPageFiles(name: string): Promise<Blob[]> {
  const files = name ? await openModelFiles(name) : undefined;
  if (!files) {
    throw new LlmError(
      'NOT_FOUND',
      name
        ? `The model file ${name} is no longer in this browser: choose it again in Settings → Model.`
        : 'Choose a GGUF model file in Settings → Model (In this browser).',
      { kind: 'inpage' },
    );
  }
  return files;
}

/** Whether two settings run the same in-page model (the same file, at the same context size). */
function sameModel(a: AppSettings, b: AppSettings): boolean {
  return (
    a.modelSource === 'inpage' &&
    b.modelSource === 'inpage' &&
    a.inPageModel === b.inPageModel &&
    a.contextSize === b.contextSize
  );
}
