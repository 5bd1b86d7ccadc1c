// The app shell: conversations, chat and the memory explorer side by side (tabs on a narrow
// screen), the header with memory stats, Settings and Export/Import, and the wiring between
// the worker, the connector and the chat session. Leaf components get data by properties and
// report by events; this element is where those events turn into calls.
import { proxy } from 'comlink';
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { createChatSession, type ChatSession, type ToolModeMemory } from '../chat/chat-session';
import type { EmbedderProgress, ModelInfo } from '../embeddings/types';
import { createConnector } from '../llm/connector';
import type { ToolMode } from '../llm/types';
import type { Conversation, MemoryStats } from '../memory/types';
import {
  DEFAULT_SETTINGS,
  SETTINGS_KEY,
  normaliseSettings,
  type AppSettings,
} from '../app/settings';
import type { MemoryClient } from '../worker-client';
import type { MemoryApi } from '../memory/types';
import { MemoryWatch, followMemoryChanges } from './memory-watch';
import { base, tokens } from './styles';
import type { SmChat, ChatStatus } from './sm-chat';
import type { SmSettings } from './sm-settings';
import './sm-chat';
import './sm-conversations';
import './sm-explorer';
import './sm-entry-detail';
import './sm-settings';
import './sm-data-menu';
import './sm-update-prompt';

type Tab = 'chats' | 'chat' | 'memory';

const TOOL_MODES_KEY = 'toolModes';

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
        font-size: 0.85rem;
        color: var(--sm-muted);
        min-width: 8rem;
      }
      .actions {
        display: flex;
        gap: 8px;
        align-items: center;
      }
      .banner {
        padding: 6px 16px;
        font-size: 0.85rem;
        background: var(--sm-surface-2);
        border-bottom: 1px solid var(--sm-border);
        display: flex;
        gap: 10px;
        align-items: center;
      }
      .banner progress {
        width: 12rem;
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
    `,
  ];

  /** The memory worker's proxy. */
  @property({ attribute: false }) memory: MemoryClient | undefined;
  /** Set when the worker itself failed to start. */
  @property({ attribute: false }) workerError: string | undefined;

  @state() private settings: AppSettings = DEFAULT_SETTINGS;
  @state() private settingsLoaded = false;
  @state() private session: ChatSession | undefined;
  @state() private status: ChatStatus = { state: 'connecting' };
  @state() private conversationId: number | undefined;
  @state() private selectedPath: string | undefined;
  @state() private tab: Tab = 'chat';
  @state() private modelProgress: EmbedderProgress | undefined;
  @state() private modelNotice: string | undefined;
  @state() private reembed: { done: number; total: number } | undefined;
  @state() private storageUsed: string | undefined;
  @state() private activeModel: ModelInfo | undefined;

  @query('sm-chat') private chat!: SmChat;
  @query('sm-settings') private settingsDialog!: SmSettings;

  private readonly conversations = new MemoryWatch<Conversation[]>(this, {
    tables: ['conversations'],
    load: async () => (this.memory ? this.memory.listConversations() : []),
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
    this.addEventListener('sm-open-settings', () => this.openSettings());
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
    this.settings = normaliseSettings(await memory.getSetting(SETTINGS_KEY));
    this.settingsLoaded = true;
    void this.conversations.reload();
    void this.stats.reload();
    const convs = await memory.listConversations();
    this.conversationId = convs[0]?.id ?? (await this.createConversation());
    void this.applyModel();
    this.connect();
  }

  private async createConversation(): Promise<number | undefined> {
    const r = await this.memory?.createConversation('New chat');
    return r && r.status === 'SUCCESS' ? r.id : undefined;
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
    const toolModes: ToolModeMemory = {
      get: async (key) =>
        ((await memory.getSetting(TOOL_MODES_KEY)) as Record<string, ToolMode> | undefined)?.[key],
      set: async (key, mode) => {
        const all =
          ((await memory.getSetting(TOOL_MODES_KEY)) as Record<string, ToolMode> | undefined) ?? {};
        await memory.setSetting(TOOL_MODES_KEY, { ...all, [key]: mode });
      },
    };
    const session = createChatSession({
      // The proxy has every MemoryApi method, each async, as the session expects.
      memory: memory as unknown as MemoryApi,
      connector,
      settings: s,
      toolModes,
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
    if (p.status === 'fallback') this.modelNotice = p.message;
  }

  private async updateStorage(): Promise<void> {
    const estimate = await navigator.storage?.estimate?.().catch(() => undefined);
    if (estimate?.usage !== undefined) this.storageUsed = formatBytes(estimate.usage);
  }

  private handleSelectPath(path: string): void {
    this.selectedPath = path;
    if (this.tab !== 'memory' && this.isNarrow()) this.tab = 'memory';
  }

  private async handleOpenMessage(conversationId: number, messageId: number): Promise<void> {
    const memory = this.memory;
    if (!memory) return;
    let conv = conversationId >= 0 ? conversationId : undefined;
    if (conv === undefined) {
      // Context chunks know their message (turn) id; find its conversation.
      for (const c of await memory.listConversations()) {
        if ((await memory.getMessages(c.id!)).some((m) => m.id === messageId)) {
          conv = c.id;
          break;
        }
      }
    }
    if (conv === undefined) {
      this.modelNotice =
        'The source message of that chunk no longer exists (its conversation was deleted).';
      return;
    }
    this.conversationId = conv;
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
    // Connect first: a message sent right after Save must go to the new endpoint.
    this.connect();
    await this.memory?.setSetting(SETTINGS_KEY, this.settings);
    if (before.embeddingModel !== this.settings.embeddingModel) void this.applyModel();
  }

  private isNarrow(): boolean {
    return window.matchMedia('(max-width: 999px)').matches;
  }

  private openSettings(): void {
    this.settingsDialog?.open();
  }

  override render() {
    if (this.workerError) {
      return html`<div class="banner error" role="alert">
        The memory worker could not start: ${this.workerError}. Reload the page; if it keeps
        failing, your browser may not support module workers.
      </div>`;
    }
    const stats = this.stats.value;
    const tabButton = (tab: Tab, label: string) =>
      html`<button role="tab" aria-selected=${this.tab === tab} @click=${() => (this.tab = tab)}>
        ${label}
      </button>`;
    return html`
      <header>
        <h1>Structured Memory</h1>
        <div class="stats" aria-live="polite">
          ${
            stats
              ? html`${plural(stats.entries, 'entry', 'entries')} ·
                ${plural(stats.chunks, 'chunk', 'chunks')} indexed
                ${this.storageUsed ? html` · ${this.storageUsed} used` : nothing}`
              : 'Opening memory…'
          }
          ${
            this.activeModel
              ? html` ·
                  <span title=${this.activeModel.id}
                    >embeddings:
                    ${
                      this.activeModel.bundled ? 'bundled offline model' : this.activeModel.id
                    }</span
                  >`
              : nothing
          }
        </div>
        <div class="actions">
          <sm-data-menu .memory=${this.memory} .selectedPath=${this.selectedPath}></sm-data-menu>
          <button @click=${this.openSettings}>Settings</button>
        </div>
      </header>
      ${this.renderBanners()}
      <nav class="tabs" role="tablist" aria-label="Sections">
        ${tabButton('chats', 'Chats')} ${tabButton('chat', 'Chat')} ${tabButton('memory', 'Memory')}
      </nav>
      <main>
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
          ? html`<sm-settings .settings=${this.settings} .reembed=${this.reembed}></sm-settings>`
          : nothing
      }
      <sm-update-prompt></sm-update-prompt>
    `;
  }

  private renderBanners() {
    const p = this.modelProgress;
    const loading = p && (p.status === 'download' || p.status === 'load');
    return html`
      ${
        loading
          ? html`<div class="banner" role="status">
              <span
                >${p.status === 'download' ? 'Downloading the embedding model' : 'Loading the embedding model'}…</span
              >
              <progress
                aria-label="Embedding model"
                max="1"
                .value=${p.progress !== undefined ? Math.min(1, p.progress) : null}
              ></progress>
            </div>`
          : nothing
      }
      ${
        this.reembed
          ? html`<div class="banner" role="status">
              <span
                >Re-embedding memory with the new model: ${this.reembed.done} of
                ${this.reembed.total}</span
              >
              <progress
                aria-label="Re-embedding"
                max=${this.reembed.total}
                .value=${this.reembed.done}
              ></progress>
            </div>`
          : nothing
      }
      ${
        this.modelNotice
          ? html`<div class="banner" role="status">
              <span>${this.modelNotice}</span>
              <button @click=${() => (this.modelNotice = undefined)}>Dismiss</button>
            </div>`
          : nothing
      }
    `;
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
