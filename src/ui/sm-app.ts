// The app shell: conversations, chat and the memory explorer side by side (tabs on a narrow
// screen), the header with memory stats, Settings and Export/Import, the banners (model
// progress, the offline-model fallback, the way into Settings when no server answers), and the
// wiring between the worker, the connector and the chat session. Leaf components get data by
// properties and report by events; this element is where those events turn into calls.
import { proxy } from 'comlink';
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { createChatSession, type ChatSession, type ToolModeMemory } from '../chat/chat-session';
import type { EmbedderProgress, ModelInfo } from '../embeddings/types';
import { createConnector, koboldPasswordError, koboldPasswordMissing } from '../llm/connector';
import { isAbortError } from '../llm/errors';
import type { ServerInfo, ToolMode } from '../llm/types';
import type { Conversation, EntrySummary, MemoryStats } from '../memory/types';
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
  type FallbackNotice,
} from '../app/settings';
import type { MemoryClient } from '../worker-client';
import {
  MemoryWatch,
  RELOAD,
  followMemoryChanges,
  patchConversations,
  patchEntries,
} from './memory-watch';
import { base, tokens } from './styles';
import type { SmChat, ChatStatus } from './sm-chat';
import type { ConnectionReport, SmSettings, TestConnectionDetail } from './sm-settings';
import './sm-chat';
import './sm-conversations';
import './sm-explorer';
import './sm-entry-detail';
import './sm-settings';
import './sm-data-menu';
import './sm-update-prompt';

type Tab = 'chats' | 'chat' | 'memory';

const TOOL_MODES_KEY = 'toolModes';
/** How long Test connection waits for the server before saying it does not answer. */
const TEST_TIMEOUT_MS = 15_000;

/**
 * `<sm-app>`: the root element of Structured Memory.
 *
 * @property memory - the memory worker's proxy (set by main.ts)
 */
@customElement('sm-app')
export class SmApp extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        display: flex;
        flex-direction: column;
        height: 100dvh;
        background: var(--sm-bg);
      }
      .skip {
        position: absolute;
        z-index: 100;
        top: 4px;
        left: 4px;
        padding: 8px 12px;
        border-radius: var(--sm-radius);
        background: var(--sm-accent);
        color: var(--sm-accent-text);
        transform: translateY(-150%);
      }
      .skip:focus {
        transform: none;
      }
      header {
        display: flex;
        align-items: center;
        gap: var(--sm-gap);
        padding: 8px 16px;
        background: var(--sm-surface);
        border-bottom: 1px solid var(--sm-border);
        flex-wrap: wrap;
      }
      h1 {
        font-size: 1.05rem;
        margin: 0;
        white-space: nowrap;
      }
      .stats {
        flex: 1;
        margin: 0;
        font-size: 0.85rem;
        color: var(--sm-muted);
        min-width: 8rem;
      }
      .actions {
        display: flex;
        gap: 8px;
        align-items: center;
      }
      button.settings {
        display: inline-flex;
        align-items: center;
        gap: 6px;
      }
      button.settings svg {
        color: var(--sm-muted);
      }
      .banner {
        padding: 6px 16px;
        font-size: 0.85rem;
        background: var(--sm-surface-2);
        border-bottom: 1px solid var(--sm-border);
        display: flex;
        flex-wrap: wrap;
        gap: 4px 10px;
        align-items: center;
      }
      .banner .text {
        flex: 1 1 0;
        min-width: 0;
      }
      .banner button {
        padding: 3px 10px;
      }
      .banner details {
        flex: none;
        font-size: 0.8rem;
        white-space: nowrap;
      }
      .banner details[open] {
        order: 5;
        flex-basis: 100%;
      }
      .banner summary {
        cursor: pointer;
        color: var(--sm-accent);
      }
      .banner details p {
        margin: 4px 0 2px;
        white-space: normal;
        overflow-wrap: anywhere;
      }
      .banner progress {
        width: 12rem;
      }
      .banner.connect {
        background: #fff6e0;
      }
      .banner.error {
        color: var(--sm-danger);
      }
      main {
        flex: 1;
        display: grid;
        grid-template-columns: 220px minmax(0, 1fr) minmax(360px, 34%);
        min-height: 0;
      }
      main:focus {
        outline: none;
      }
      .panel {
        min-height: 0;
        min-width: 0;
        display: flex;
        flex-direction: column;
        border-right: 1px solid var(--sm-border);
      }
      .panel:last-child {
        border-right: none;
      }
      .memory {
        overflow: auto;
        background: var(--sm-surface);
      }
      .memory sm-explorer {
        flex: 0 0 auto;
        height: min(58vh, 520px);
        min-height: 300px;
        padding: 8px 10px 10px;
      }
      .memory sm-explorer:only-child {
        flex: 1 1 auto;
        height: auto;
      }
      .memory sm-entry-detail {
        border-top: 1px solid var(--sm-border);
      }
      sm-chat {
        flex: 1;
        min-height: 0;
      }
      sm-conversations {
        flex: 1;
        min-height: 0;
        overflow: auto;
      }
      nav.tabs {
        display: none;
      }
      /* The tablist lays its buttons out in the nav's row. */
      nav.tabs .tablist {
        display: contents;
      }
      @media (max-width: 999px) {
        nav.tabs {
          display: flex;
          border-bottom: 1px solid var(--sm-border);
          background: var(--sm-surface);
        }
        nav.tabs button {
          flex: 1;
          border: none;
          border-radius: 0;
          border-bottom: 3px solid transparent;
          padding: 10px;
        }
        nav.tabs button[aria-selected='true'] {
          border-bottom-color: var(--sm-accent);
          font-weight: 600;
        }
        main {
          grid-template-columns: minmax(0, 1fr);
        }
        .panel {
          border-right: none;
        }
        .panel[data-hidden] {
          display: none;
        }
        header .stats {
          order: 3;
          flex-basis: 100%;
        }
      }
      /* A phone: one row of title and buttons, one line of counts, one line a banner. */
      @media (max-width: 600px) {
        header {
          gap: 2px 6px;
          padding: 6px 10px 4px;
          flex-wrap: wrap;
        }
        h1 {
          flex: 1;
          font-size: 0.9rem;
          min-width: 0;
          overflow: hidden;
          text-overflow: ellipsis;
        }
        .actions {
          gap: 4px;
          font-size: 0.8125rem;
        }
        .actions > button {
          padding: 5px 10px;
        }
        /* The gear alone; "Settings" stays its accessible name. */
        button.settings {
          padding: 5px 8px;
        }
        button.settings svg {
          color: inherit;
        }
        button.settings .label {
          position: absolute;
          width: 1px;
          height: 1px;
          overflow: hidden;
          clip-path: inset(50%);
          white-space: nowrap;
        }
        header .stats {
          font-size: 0.75rem;
          white-space: nowrap;
          overflow: hidden;
          text-overflow: ellipsis;
        }
        .stats .extra {
          display: none;
        }
        .banner {
          padding: 4px 10px;
          font-size: 0.8rem;
          flex-wrap: nowrap;
        }
        .banner:has(details[open]) {
          flex-wrap: wrap;
        }
        .banner .text {
          white-space: nowrap;
          overflow: hidden;
          text-overflow: ellipsis;
        }
        .banner button {
          flex: none;
          padding: 2px 8px;
        }
        .banner progress {
          width: 6rem;
        }
        nav.tabs button {
          padding: 7px 10px 6px;
        }
        .memory sm-explorer {
          height: min(46vh, 420px);
          min-height: 260px;
        }
      }
    `,
  ];

  /** The memory worker's proxy. */
  @property({ attribute: false }) memory: MemoryClient | undefined;
  /** Set when the worker itself failed to start. */
  @property({ attribute: false }) workerError: string | undefined;

  @state() private settings: AppSettings = DEFAULT_SETTINGS;
  @state() private settingsLoaded = false;
  /** Settings were saved on this device before (no: the first run). */
  @state() private settingsSaved = false;
  @state() private session: ChatSession | undefined;
  @state() private status: ChatStatus = { state: 'connecting' };
  @state() private conversationId: number | undefined;
  @state() private selectedPath: string | undefined;
  @state() private tab: Tab = 'chat';
  @state() private modelProgress: EmbedderProgress | undefined;
  @state() private modelNotice: string | undefined;
  /** The offline-model fallback, unless dismissed on this device for what it says now. */
  @state() private fallback: FallbackNotice | undefined;
  @state() private reembed: { done: number; total: number } | undefined;
  @state() private storageUsed: string | undefined;
  @state() private activeModel: ModelInfo | undefined;

  @query('sm-chat') private chat!: SmChat;
  @query('sm-settings') private settingsDialog!: SmSettings;
  @query('main') private mainContent!: HTMLElement;

  private readonly conversations = new MemoryWatch<Conversation[]>(this, {
    tables: ['conversations'],
    load: async () => (this.memory ? this.memory.listConversations() : []),
    // Patched from the worker's reports (docs/design.md, "Change notifications").
    patch: patchConversations,
  });

  private readonly stats = new MemoryWatch<MemoryStats | undefined>(this, {
    tables: ['structured_memory', 'chunks'],
    load: async () => {
      if (!this.memory) return undefined;
      void this.updateStorage();
      return this.memory.stats();
    },
    debounceMs: 150,
  });

  /**
   * The context chunks kept with the entries (what an entry's detail shows). `stats().chunks`
   * counts the chat sentences indexed, which an import without those chats (or deleting a chat)
   * leaves at 0 while the entries still carry their context.
   */
  private readonly contextChunks = new MemoryWatch<
    { entries: readonly EntrySummary[]; total: number } | undefined
  >(this, {
    tables: ['structured_memory'],
    load: async () => {
      if (!this.memory) return undefined;
      const entries = await this.memory.memoryIndex();
      return { entries, total: entries.reduce((n, e) => n + e.chunks, 0) };
    },
    // Patched from the worker's reports, as the explorer's list is: no write reads it again.
    patch: (value, change) => {
      if (!value) return value;
      const entries = patchEntries(value.entries, change);
      if (entries === RELOAD) return RELOAD;
      if (entries === value.entries) return value;
      return { entries, total: entries.reduce((n, e) => n + e.chunks, 0) };
    },
    debounceMs: 300,
  });

  override connectedCallback(): void {
    super.connectedCallback();
    this.addEventListener('sm-select-path', (e) => this.handleSelectPath(e.detail.path));
    this.addEventListener(
      'sm-open-message',
      (e) => void this.handleOpenMessage(e.detail.conversationId, e.detail.messageId),
    );
    this.addEventListener('sm-new-conversation', () => void this.handleNewConversation());
    this.addEventListener('sm-switch-conversation', (e) =>
      this.handleSwitchConversation(e.detail.id),
    );
    this.addEventListener(
      'sm-rename-conversation',
      (e) => void this.memory?.renameConversation(e.detail.id, e.detail.title),
    );
    this.addEventListener(
      'sm-delete-conversation',
      (e) => void this.handleDeleteConversation(e.detail.id),
    );
    this.addEventListener(
      'sm-save-settings',
      (e) => void this.handleSaveSettings(e.detail.settings),
    );
    this.addEventListener('sm-test-connection', (e) => this.handleTestConnection(e.detail));
    // The chat's "Open settings" is about the server: straight to its address.
    this.addEventListener('sm-open-settings', () => this.openSettings('endpoint'));
    this.addEventListener('sm-notice', (e) => {
      this.modelNotice = e.detail.message;
    });
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('memory') && this.memory) void this.start(this.memory);
  }

  /** Loads settings, subscribes to model progress, picks the conversation and connects. */
  private async start(memory: MemoryClient): Promise<void> {
    // First, before any load through this client (this element's children load once it renders).
    void followMemoryChanges(memory);
    void navigator.storage?.persist?.().catch(() => false);
    void memory.onModelProgress(proxy((p: EmbedderProgress) => this.handleModelProgress(p)));
    const stored = await memory.getSetting(SETTINGS_KEY);
    this.settings = normaliseSettings(stored);
    this.settingsSaved = stored !== undefined;
    this.settingsLoaded = true;
    void this.conversations.reload();
    void this.stats.reload();
    void this.contextChunks.reload();
    const convs = await memory.listConversations();
    this.conversationId = convs[0]?.id ?? (await this.createConversation());
    void this.applyModel();
    this.connect();
  }

  private async createConversation(): Promise<number | undefined> {
    const r = await this.memory?.createConversation('New chat');
    return r && r.status === 'SUCCESS' ? r.id : undefined;
  }

  /** The tool modes learned per server and model, kept in the memory database. */
  private toolModes(memory: MemoryClient): ToolModeMemory {
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

  /** A connector and chat session for the current settings; detects the server right away. */
  private connect(): void {
    const memory = this.memory;
    if (!memory) return;
    const s = this.settings;
    const connector = createConnector({
      endpoint: s.endpoint,
      apiKey: s.apiKey || undefined,
      contextSize: s.contextSize,
    });
    const session = createChatSession({
      memory,
      connector,
      settings: s,
      toolModes: this.toolModes(memory),
      wrapCallback: proxy,
      onEvent: (e) => {
        if (e.type === 'notice' && /prompt/.test(e.message)) void this.refreshStatus(session);
      },
    });
    this.session = session;
    this.status = { state: 'connecting' };
    void this.refreshStatus(session);
  }

  private async refreshStatus(session: ChatSession): Promise<void> {
    try {
      const info = await session.server();
      const toolMode = await session.toolMode();
      if (session !== this.session) return;
      this.status = {
        state: 'connected',
        kind: info.kind,
        model: info.model,
        contextSize: info.contextSize,
        toolMode,
      };
    } catch (e) {
      if (session !== this.session) return;
      this.status = { state: 'error', message: e instanceof Error ? e.message : String(e) };
    }
  }

  private handleTestConnection(detail: TestConnectionDetail): void {
    detail.reply = this.testConnection(detail);
  }

  /**
   * Test connection: detects the server typed in Settings (not saved yet) the way a chat does,
   * and says what it found or the sentence with the fix. Touches nothing the chat uses.
   */
  private async testConnection(d: TestConnectionDetail): Promise<ConnectionReport> {
    const connector = createConnector({
      endpoint: d.endpoint,
      apiKey: d.apiKey || undefined,
      contextSize: d.contextSize,
      retry: { attempts: 1, baseDelayMs: 0 },
    });
    const timeout = AbortSignal.timeout(TEST_TIMEOUT_MS);
    let info: ServerInfo;
    try {
      info = await connector.detect(AbortSignal.any([d.signal, timeout]));
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
      d.toolMode === 'auto' && this.memory
        ? await this.toolModes(this.memory).get(toolModeKey(info))
        : undefined;
    return {
      ok: true,
      lines: describeConnection(info, {
        toolMode: d.toolMode,
        remembered,
        contextOverride: d.contextSize,
      }),
    };
  }

  private async applyModel(): Promise<void> {
    if (!this.memory) return;
    try {
      await this.memory.useModel(
        this.settings.embeddingModel,
        proxy((p: { done: number; total: number }) => {
          this.reembed = p.done < p.total ? p : undefined;
        }),
      );
      this.activeModel = await this.memory.modelInfo();
    } catch (e) {
      this.modelNotice = `The embedding model could not be loaded: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      this.reembed = undefined;
    }
  }

  private handleModelProgress(p: EmbedderProgress): void {
    this.modelProgress = p.status === 'ready' ? undefined : p;
    if (p.status === 'fallback' && p.message) {
      const notice = parseFallbackNotice(p.message);
      this.fallback = isNoticeDismissed(notice.key) ? undefined : notice;
    }
  }

  private handleDismissFallback(): void {
    if (this.fallback) dismissNotice(this.fallback.key);
    this.fallback = undefined;
    this.mainContent?.focus();
  }

  private async updateStorage(): Promise<void> {
    const estimate = await navigator.storage?.estimate?.().catch(() => undefined);
    if (estimate?.usage !== undefined) this.storageUsed = formatBytes(estimate.usage);
  }

  private handleSelectPath(path: string): void {
    this.selectedPath = path;
    if (this.tab !== 'memory' && this.isNarrow()) this.tab = 'memory';
  }

  /** A context chunk's Source link: its conversation opens, scrolled to the message. */
  private async handleOpenMessage(conversationId: number, messageId: number): Promise<void> {
    if (!this.memory) return;
    this.conversationId = conversationId;
    this.tab = 'chat';
    await this.updateComplete;
    await this.chat?.scrollToMessage(messageId);
  }

  private async handleNewConversation(): Promise<void> {
    const id = await this.createConversation();
    if (id !== undefined) {
      this.conversationId = id;
      this.tab = 'chat';
    }
  }

  private handleSwitchConversation(id: number): void {
    this.conversationId = id;
    this.tab = 'chat';
  }

  private async handleDeleteConversation(id: number): Promise<void> {
    await this.memory?.deleteConversation(id);
    if (this.conversationId === id) {
      const rest = (await this.memory?.listConversations()) ?? [];
      this.conversationId = rest[0]?.id ?? (await this.createConversation());
    }
  }

  private async handleSaveSettings(next: AppSettings): Promise<void> {
    const before = this.settings;
    this.settings = normaliseSettings(next);
    this.settingsSaved = true;
    // Connect first: a message sent right after Save must go to the new endpoint.
    this.connect();
    await this.memory?.setSetting(SETTINGS_KEY, this.settings);
    if (before.embeddingModel !== this.settings.embeddingModel) void this.applyModel();
  }

  private isNarrow(): boolean {
    return window.matchMedia('(max-width: 999px)').matches;
  }

  private openSettings(focus?: 'endpoint'): void {
    void this.settingsDialog?.open({ focus });
  }

  private handleSkip(e: Event): void {
    e.preventDefault();
    this.mainContent?.focus();
  }

  /** Escape folds an open "Details" of a banner. */
  private handleDetailsKey(e: KeyboardEvent): void {
    const details = e.currentTarget as HTMLDetailsElement;
    if (e.key !== 'Escape' || !details.open) return;
    e.preventDefault();
    details.open = false;
    details.querySelector('summary')?.focus();
  }

  override render() {
    if (this.workerError) {
      return html`<div class="banner error" role="alert">
        The memory worker could not start: ${this.workerError}. Reload the page; if it keeps
        failing, your browser may not support module workers.
      </div>`;
    }
    const tabButton = (tab: Tab, label: string) =>
      html`<button role="tab" aria-selected=${this.tab === tab} @click=${() => (this.tab = tab)}>
        ${label}
      </button>`;
    return html`
      <header>
        <!-- A button, not a link: the target is inside this shadow root, out of a link's reach. -->
        <button class="skip" @click=${this.handleSkip}>Skip to main content</button>
        <h1>Structured Memory</h1>
        ${this.renderStats()}
        <div class="actions">
          <sm-data-menu .memory=${this.memory} .selectedPath=${this.selectedPath}></sm-data-menu>
          <button class="settings" @click=${() => this.openSettings()}>
            <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
              <path
                fill="currentColor"
                d="M19.4 13a7.6 7.6 0 0 0 0-2l2.1-1.6-2-3.5-2.5 1a7.4 7.4 0 0 0-1.7-1l-.4-2.6h-4l-.4 2.6a7.4 7.4 0 0 0-1.7 1l-2.5-1-2 3.5L4.6 11a7.6 7.6 0 0 0 0 2l-2.1 1.6 2 3.5 2.5-1a7.4 7.4 0 0 0 1.7 1l.4 2.6h4l.4-2.6a7.4 7.4 0 0 0 1.7-1l2.5 1 2-3.5zM12 15.5a3.5 3.5 0 1 1 0-7 3.5 3.5 0 0 1 0 7z"
              />
            </svg>
            <span class="label">Settings</span>
          </button>
        </div>
      </header>
      ${this.renderBanners()}
      <nav class="tabs" aria-label="Sections">
        <div class="tablist" role="tablist" aria-label="Sections">
          ${tabButton('chats', 'Chats')} ${tabButton('chat', 'Chat')}
          ${tabButton('memory', 'Memory')}
        </div>
      </nav>
      <main id="main" tabindex="-1">
        <section class="panel" aria-label="Conversations" ?data-hidden=${this.tab !== 'chats'}>
          <sm-conversations
            .conversations=${this.conversations.value ?? []}
            .activeId=${this.conversationId}
          ></sm-conversations>
        </section>
        <section class="panel" aria-label="Chat" ?data-hidden=${this.tab !== 'chat'}>
          <sm-chat
            .memory=${this.memory}
            .session=${this.session}
            .conversationId=${this.conversationId}
            .status=${this.status}
          ></sm-chat>
        </section>
        <section
          class="panel memory"
          aria-label="Memory explorer"
          ?data-hidden=${this.tab !== 'memory'}
        >
          <sm-explorer
            .memory=${this.memory}
            .selectedPath=${this.selectedPath}
            .recencyBias=${this.settings.recencyBias}
          ></sm-explorer>
          ${
            this.selectedPath !== undefined && this.selectedPath !== ''
              ? html`<sm-entry-detail
                  .memory=${this.memory}
                  .path=${this.selectedPath}
                ></sm-entry-detail>`
              : nothing
          }
        </section>
      </main>
      ${
        this.settingsLoaded
          ? html`<sm-settings
              .settings=${this.settings}
              .reembed=${this.reembed}
              .modelInUse=${this.modelInUse()}
            ></sm-settings>`
          : nothing
      }
      <sm-update-prompt></sm-update-prompt>
    `;
  }

  private modelInUse(): string | undefined {
    const m = this.activeModel;
    if (!m) return undefined;
    return m.bundled ? `the bundled offline model (${m.id})` : m.id;
  }

  /** Counts of what memory holds; on a phone only the counts, on one line. */
  private renderStats() {
    const stats = this.stats.value;
    const context = this.contextChunks.value?.total;
    if (!stats) return html`<p class="stats">Opening memory…</p>`;
    return html`<p class="stats">
      ${plural(stats.entries, 'entry', 'entries')} ·
      ${plural(context ?? 0, 'context chunk', 'context chunks')} ·
      ${plural(stats.chunks, 'chat sentence', 'chat sentences')}
      indexed${
        this.storageUsed ? html`<span class="extra"> · ${this.storageUsed} used</span>` : nothing
      }${
        this.activeModel
          ? html`<span class="extra" title=${this.activeModel.id}>
              · embeddings:
              ${this.activeModel.bundled ? 'bundled offline model' : this.activeModel.id}</span
            >`
          : nothing
      }
    </p>`;
  }

  private renderBanners() {
    const p = this.modelProgress;
    const loading = p && (p.status === 'download' || p.status === 'load');
    return html`
      ${this.renderConnectBanner()}
      ${
        loading
          ? html`<div class="banner" role="status">
              <span class="text"
                >${p.status === 'download' ? 'Downloading the embedding model' : 'Loading the embedding model'}…</span
              >
              <progress
                aria-label="Embedding model download"
                max="1"
                .value=${p.progress !== undefined ? Math.min(1, p.progress) : null}
              ></progress>
            </div>`
          : nothing
      }
      ${
        this.reembed
          ? html`<div class="banner" role="status">
              <span class="text"
                >Re-embedding memory with the new model: ${this.reembed.done} of
                ${this.reembed.total}</span
              >
              <progress
                aria-label="Re-embedding progress"
                max=${this.reembed.total}
                .value=${this.reembed.done}
              ></progress>
            </div>`
          : nothing
      }
      ${this.fallback ? this.renderFallback(this.fallback) : nothing}
      ${
        this.modelNotice
          ? html`<div class="banner" role="status">
              <span class="text">${this.modelNotice}</span>
              <button
                aria-label="Dismiss this notice"
                @click=${() => (this.modelNotice = undefined)}
              >
                Dismiss
              </button>
            </div>`
          : nothing
      }
    `;
  }

  /** The first run, or a server that does not answer: a way into Settings at its address. */
  private renderConnectBanner() {
    if (this.status.state !== 'error') return nothing;
    const first = !this.settingsSaved;
    return html`<div class="banner connect" role="region" aria-label="Model server">
      <span class="text"
        >${first ? 'No model server yet.' : 'Not connected to the model server.'}</span
      >
      <button class="primary" @click=${() => this.openSettings('endpoint')}>
        ${first ? 'Set up the model server' : 'Check the server address'}
      </button>
    </div>`;
  }

  private renderFallback(f: FallbackNotice) {
    const what = f.requested ? `${f.requested} could not be loaded` : 'the usual model failed';
    return html`<div class="banner notice" role="status">
      <span class="text">Search uses the bundled offline model: ${what}.</span>
      <details @keydown=${this.handleDetailsKey}>
        <summary>Details</summary>
        <p>
          ${f.requested ? `${f.requested} could not be loaded (${f.reason}).` : f.reason} Search by
          meaning works with the bundled model ${f.bundled ? `(${f.bundled})` : ''}, a little less
          well. The app tries the usual model again on each start; to stop that, choose the bundled
          model in Settings.
        </p>
      </details>
      <button aria-label="Dismiss the offline model notice" @click=${this.handleDismissFallback}>
        Dismiss
      </button>
    </div>`;
  }
}

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(0)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-app': SmApp;
  }
}
