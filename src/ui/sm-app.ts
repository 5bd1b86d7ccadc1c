// The app shell: conversations, chat and the memory explorer side by side (tabs on a narrow
// screen), the header with memory stats, Settings and Export/Import, and the banners (model
// progress, the offline-model fallback, the way into Settings when no server answers). It
// renders the state of the app's composition (`App`, src/app/app.ts: the connector, the chat
// session, the settings) and turns its children's events into calls to it; the only state of
// its own is what the page shows where (the tab, the selected path, the storage used).
import { focusLost } from './focus';
import {
  LitElement,
  html,
  nothing,
  type PropertyValues,
  type ReactiveController,
  type TemplateResult,
} from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { IDLE_STATE, type App, type AppState } from '../app/app';
import type { Backups } from '../app/backups';
import type { FallbackNotice } from '../app/settings';
import type { Conversation, EntrySummary, MemoryStats } from '../memory/types';
import type { MemoryClient } from '../worker-client';
import { MemoryWatch, RELOAD, patchConversations, patchEntries } from './memory-watch';
import { base, tokens } from './styles';
import type { SmChat } from './sm-chat';
import type { SmSettings } from './sm-settings';
import './sm-chat';
import './sm-conversations';
import './sm-explorer';
import './sm-entry-detail';
import './sm-settings';
import './sm-data-menu';
import './sm-update-prompt';
import './sm-backup-reminder';
import { BackupsController } from './backups-controller';
import './sm-toast';
import type { SmToast, ToastRequest } from './sm-toast';
import { appStyles } from './sm-app.styles';

type Tab = 'chats' | 'chat' | 'memory';
/** What a banner's line ends with: the "N more" button, on the first one. */
type Extra = TemplateResult | typeof nothing;

/** Renders the host again after each change of the app's state, while both are connected. */
class AppStateController implements ReactiveController {
  private app: App | undefined;
  private unsubscribe: (() => void) | undefined;
  private connected = false;

  constructor(private readonly host: SmApp) {
    host.addController(this);
  }

  /** Follows `app` from now on (the host calls it when its `app` property changes). */
  follow(app: App | undefined): void {
    this.app = app;
    this.listen();
  }

  hostConnected(): void {
    this.connected = true;
    this.listen();
  }

  hostDisconnected(): void {
    this.connected = false;
    this.listen();
  }

  private listen(): void {
    this.unsubscribe?.();
    this.unsubscribe =
      this.connected && this.app ? this.app.subscribe(() => this.host.requestUpdate()) : undefined;
  }
}

/** A banner line for work under way: what it does, and a bar of `done` of `total`. */
function progressBanner(
  text: TemplateResult,
  label: string,
  { done, total }: { done: number; total: number },
  more: Extra,
): TemplateResult {
  return html`<div class="banner" role="status">
    <span class="text">${text}</span>
    <progress aria-label=${label} max=${total} .value=${done}></progress>
    ${more}
  </div>`;
}

/**
 * `<sm-app>`: the root element of Structured Memory.
 *
 * @property app - the app's composition (set by main.ts)
 */
@customElement('sm-app')
export class SmApp extends LitElement {
  static override styles = [tokens, base, appStyles];

  /** The app's composition: memory, settings, connector and chat session (src/app/app.ts). */
  @property({ attribute: false }) app: App | undefined;
  /** The backups and storage (src/app/backups.ts; set by main.ts). */
  @property({ attribute: false }) backups: Backups | undefined;
  /** Set when the worker itself failed to start. */
  @property({ attribute: false }) workerError: string | undefined;

  @state() private selectedPath: string | undefined;
  @state() private tab: Tab = 'chat';
  @state() private storageUsed: string | undefined;
  /** Whether the banners waiting behind the first are shown too. */
  @state() private moreBanners = false;
  /**
   * Settings was asked for before the stored settings were read (the dialog waits for them, so
   * that Save cannot write the defaults over them): it opens as soon as they are.
   */
  private settingsAsked: { focus?: 'endpoint' | 'data' } | undefined;

  @query('sm-chat') private chat!: SmChat;
  @query('sm-settings') private settingsDialog!: SmSettings;
  @query('main') private mainContent!: HTMLElement;
  @query('sm-toast') private toast!: SmToast | null;
  @query('#chat') private chatPane!: HTMLElement;
  @query('#memory') private memoryPane!: HTMLElement;

  private readonly appState = new AppStateController(this);
  /** Renders again when the backup reminder comes or goes (one banner line at a time). */
  protected readonly backupsState = new BackupsController(this, () => this.backups);

  /** The memory worker's proxy (the app's); tests reach the worker through it. */
  get memory(): MemoryClient | undefined {
    return this.app?.memory;
  }

  private get state(): Readonly<AppState> {
    return this.app?.state ?? IDLE_STATE;
  }

  /** The chat list last looked at for the open chat (`updated`). */
  private chatsSeen: Conversation[] | undefined;

  private readonly conversations = new MemoryWatch<Conversation[]>(this, {
    tables: ['conversations'],
    load: async () => (this.memory ? this.memory.listConversations() : []),
    // Patched from the worker's reports (docs/design.md, "Change notifications").
    patch: patchConversations,
  });

  /**
   * The chats for the list, or undefined while there is none to show yet: the app opening, or
   * the list not yet caught up with the chat it opened (the app always has one open), where an
   * empty list would say "No chats yet." for a moment at every open.
   */
  private listedChats(): Conversation[] | undefined {
    const chats = this.conversations.value;
    if (!this.state.session) return undefined;
    return chats?.length || this.state.conversationId === undefined ? chats : undefined;
  }

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
      (e) => void this.app?.renameConversation(e.detail.id, e.detail.title),
    );
    this.addEventListener(
      'sm-delete-conversation',
      (e) => void this.app?.deleteConversation(e.detail.id),
    );
    this.addEventListener(
      'sm-save-settings',
      (e) => void this.app?.saveSettings(e.detail.settings),
    );
    this.addEventListener('sm-test-connection', (e) => {
      e.detail.reply = this.app?.testConnection(e.detail);
    });
    this.addEventListener('sm-open-backups', () => this.openSettings('data'));
    // Settings closed after what opened it went (the banner, once connected): its button.
    this.addEventListener('sm-focus-lost', () => {
      void this.updateComplete.then(() =>
        this.renderRoot.querySelector<HTMLElement>('button.settings')?.focus(),
      );
    });
    this.addEventListener('sm-notice', (e) => this.app?.showNotice(e.detail.message));
    this.addEventListener('sm-composer-input', (e) => this.app?.noteTyping(e.detail.drafting));
    this.addEventListener('sm-use-model-here', () => this.app?.useModelHere());
    this.addEventListener('sm-in-page-model-deleted', (e) =>
      this.app?.inPageModelDeleted(e.detail.name),
    );
    this.addEventListener('sm-toast', (e) => this.handleToast(e));
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('app')) {
      this.appState.follow(this.app);
      void this.conversations.reload();
      void this.stats.reload();
      void this.contextChunks.reload();
    }
  }

  /** A toast (Undo) asked for by the memory's panes: at the foot of the memory column. */
  private handleToast(event: CustomEvent<ToastRequest>): void {
    const request = event.detail;
    if (!request || typeof request.message !== 'string') return;
    event.stopPropagation();
    this.toast?.show(request);
  }

  protected override updated(): void {
    // The chat list changed and lacks the open chat: deleted here, or elsewhere (the app tells).
    const chats = this.conversations.value;
    if (chats !== this.chatsSeen) {
      this.chatsSeen = chats;
      const open = this.state.conversationId;
      if (chats && open !== undefined && !chats.some((c) => c.id === open))
        void this.app?.openChatMaybeGone();
    }
    const asked = this.settingsAsked;
    if (asked && this.settingsDialog) {
      this.settingsAsked = undefined;
      void this.settingsDialog.open(asked);
    }
  }

  private handleDismissFallback(): void {
    this.app?.dismissFallback();
    this.mainContent?.focus();
  }

  private async updateStorage(): Promise<void> {
    const estimate = await navigator.storage?.estimate?.().catch(() => undefined);
    if (estimate?.usage !== undefined) this.storageUsed = formatBytes(estimate.usage);
  }

  private handleSelectPath(path: string): void {
    this.selectedPath = path;
    if (this.tab !== 'memory' && this.isNarrow()) {
      this.tab = 'memory';
      void this.keepFocusIn('memory');
    }
  }

  /**
   * After a tab switched on a phone (a link in one pane opened something in the other), focus
   * goes to the pane shown when the control that had it is hidden now.
   */
  private async keepFocusIn(to: 'chat' | 'memory'): Promise<void> {
    await this.updateComplete;
    if (focusLost()) (to === 'chat' ? this.chatPane : this.memoryPane)?.focus();
  }

  /** A Source or "Recalled:" link: its conversation opens, scrolled to the message if still there. */
  private async handleOpenMessage(conversationId: number, messageId: number): Promise<void> {
    if (!this.app) return;
    const there = await this.app.openMessage(conversationId, messageId);
    if (this.app.state.conversationId !== conversationId) return;
    this.tab = 'chat';
    void this.keepFocusIn('chat');
    if (!there) return;
    await this.updateComplete;
    await this.chat?.scrollToMessage(messageId);
  }

  private async handleNewConversation(): Promise<void> {
    const id = await this.app?.newConversation();
    if (id !== undefined) this.tab = 'chat';
  }

  private handleSwitchConversation(id: number): void {
    this.app?.openConversation(id);
    this.tab = 'chat';
    void this.keepFocusIn('chat');
  }

  private isNarrow(): boolean {
    return window.matchMedia('(max-width: 999px)').matches;
  }

  private openSettings(focus?: 'endpoint' | 'data'): void {
    if (this.settingsDialog) void this.settingsDialog.open({ focus });
    else this.settingsAsked = { focus };
  }

  /** A skip link: focus on the pane's landmark (its tab first, on a narrow screen). */
  private async handleSkip(to: 'chat' | 'memory'): Promise<void> {
    if (this.isNarrow()) this.tab = to;
    await this.updateComplete;
    (to === 'chat' ? this.chatPane : this.memoryPane)?.focus();
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
        <!-- Buttons, not links: the targets are inside this shadow root, out of a link's reach. -->
        <button class="skip" @click=${() => this.handleSkip('chat')}>Skip to chat</button>
        <button class="skip" @click=${() => this.handleSkip('memory')}>Skip to memory</button>
        <h1>Structured Memory</h1>
        ${this.renderStats()}
        <div class="actions">
          <sm-data-menu
            .memory=${this.memory}
            .selectedPath=${this.selectedPath}
            .backups=${this.backups}
          ></sm-data-menu>
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
      <!-- Landmarks: the chats (nav), the chat and memory (regions); docs/chat.md, "Keyboard". -->
      <main id="main" tabindex="-1">
        <nav class="panel" aria-label="Chats" ?data-hidden=${this.tab !== 'chats'}>
          <sm-conversations
            .conversations=${this.listedChats()}
            .activeId=${this.state.conversationId}
          ></sm-conversations>
        </nav>
        <section
          id="chat"
          class="panel"
          aria-label="Chat"
          tabindex="-1"
          ?data-hidden=${this.tab !== 'chat'}
        >
          <sm-chat
            .memory=${this.memory}
            .session=${this.state.session}
            .conversationId=${this.state.conversationId}
            .status=${this.state.status}
            .contextTokens=${this.state.settings.contextTokens}
            ?keeping=${this.state.keeping !== undefined && this.state.keeping === this.state.conversationId}
          ></sm-chat>
        </section>
        <section
          id="memory"
          class="panel memory"
          aria-label="Memory"
          tabindex="-1"
          ?data-hidden=${this.tab !== 'memory'}
        >
          <sm-explorer
            .memory=${this.memory}
            .selectedPath=${this.selectedPath}
            .recencyBias=${this.state.settings.recencyBias}
          ></sm-explorer>
          ${
            this.selectedPath !== undefined && this.selectedPath !== ''
              ? html`<sm-entry-detail
                  .memory=${this.memory}
                  .path=${this.selectedPath}
                ></sm-entry-detail>`
              : nothing
          }
          <sm-toast></sm-toast>
        </section>
      </main>
      ${
        this.state.settingsLoaded
          ? html`<sm-settings
              .settings=${this.state.settings}
              .reembed=${this.state.reembed}
              .modelInUse=${this.modelInUse()}
              .syncClient=${this.memory}
              .backups=${this.backups}
            ></sm-settings>`
          : nothing
      }
      <sm-update-prompt></sm-update-prompt>
    `;
  }

  private modelInUse(): string | undefined {
    const m = this.state.activeModel;
    if (!m) return undefined;
    return m.bundled ? `the bundled offline model (${m.id})` : m.id;
  }

  /**
   * Counts of what memory holds, on one line: the counts (the entries, the chat sentences they
   * quote as their context when there are any, the chat sentences indexed) and the storage used whole, then the
   * model, cut short (its full name in a tooltip) where the line has no room for it all; on a
   * phone only the counts.
   */
  private renderStats() {
    const stats = this.stats.value;
    const context = this.contextChunks.value?.total;
    // Counted from the entry list that is patched from each change report in the frame the tree
    // takes it in, so the two never disagree; the counts above load again only after a pause in
    // the writes, which a sync arrival (and the embedding after it) keeps pushing back.
    const entries = this.contextChunks.value?.entries.length ?? stats?.entries ?? 0;
    const model = this.state.activeModel;
    if (!stats) return html`<p class="stats">Opening memory…</p>`;
    const used = this.storageUsed ? `${this.storageUsed} used` : undefined;
    const embeddings = model
      ? `embeddings: ${model.bundled ? 'bundled offline model' : model.id}`
      : undefined;
    // The chat sentences the entries keep as their context (an entry's detail quotes them).
    const quoted = context
      ? `${plural(context, 'quoted chat sentence', 'quoted chat sentences')} · `
      : '';
    return html`<p class="stats">
      <span class="counts"
        >${plural(entries, 'entry', 'entries')} ·
        ${quoted}${plural(stats.chunks, 'chat sentence', 'chat sentences')} indexed</span
      >${used ? html`<span class="extra" title=${used}>&nbsp;· ${used}</span>` : nothing}${
        embeddings
          ? html`<span
              class="extra"
              title=${model!.bundled ? `${embeddings} (${model!.id})` : embeddings}
              >&nbsp;· ${embeddings}</span
            >`
          : nothing
      }
    </p>`;
  }

  /**
   * The banners, one line at a time: the one that matters most shows, the others wait behind
   * "N more" (first open can have the server, the model's progress and a notice at once).
   * Most first: what needs doing, what went wrong, then what is only under way.
   */
  private renderBanners() {
    const { modelProgress: p, reembed, indexing, fallback, notice } = this.state;
    const loading = p && (p.status === 'download' || p.status === 'load');
    const banners: ((more: Extra) => TemplateResult)[] = [];
    if (this.state.status.state === 'error') banners.push((more) => this.renderConnectBanner(more));
    if (fallback) banners.push((more) => this.renderFallback(fallback, more));
    if (notice) {
      banners.push(
        (more) =>
          html`<div class="banner" role="status">
            <span class="text">${notice}</span>
            <button aria-label="Dismiss this notice" @click=${() => this.app?.dismissNotice()}>
              Dismiss
            </button>
            ${more}
          </div>`,
      );
    }
    if (reembed) {
      banners.push((more) =>
        progressBanner(
          html`Re-embedding memory with the new model: ${reembed.done} of ${reembed.total}`,
          'Re-embedding progress',
          reembed,
          more,
        ),
      );
    }
    if (indexing) {
      banners.push((more) =>
        progressBanner(
          html`<span
            title="Updating the search index of your chats: a search waits until it is done"
            >Updating search: ${indexing.done.toLocaleString('en-US')} of
            ${indexing.total.toLocaleString('en-US')} chat sentences</span
          >`,
          'Search index update',
          indexing,
          more,
        ),
      );
    }
    if (loading) {
      banners.push(
        (more) =>
          html`<div class="banner" role="status">
            <span class="text"
              >${p.status === 'download' ? 'Downloading the embedding model' : 'Loading the embedding model'}…</span
            >
            <progress
              aria-label="Embedding model download"
              max="1"
              .value=${p.progress !== undefined ? Math.min(1, p.progress) : null}
            ></progress>
            ${more}
          </div>`,
      );
    }
    // The backup reminder, when due (it renders nothing otherwise): the least urgent line.
    const b = this.backups?.state;
    if (b && (b.reminder || b.waitingForFolder || b.autoFailed)) {
      banners.push(
        (more) => html`<sm-backup-reminder .backups=${this.backups}>${more}</sm-backup-reminder>`,
      );
    }
    if (banners.length === 0) return nothing;
    const [first, ...rest] = banners;
    const open = this.moreBanners && rest.length > 0;
    const more = rest.length
      ? html`<button
          class="more"
          aria-expanded=${open ? 'true' : 'false'}
          aria-controls=${open ? 'more-banners' : nothing}
          title=${open ? 'Show only the first notice' : 'Show the other notices'}
          @click=${() => (this.moreBanners = !open)}
        >
          ${rest.length} more
        </button>`
      : nothing;
    return html`${first(more)}${
      open ? html`<div id="more-banners">${rest.map((b) => b(nothing))}</div>` : nothing
    }`;
  }

  /**
   * The first run, or a server that does not answer: a way into Settings at its address; for the
   * model in this browser, a way to its settings.
   */
  private renderConnectBanner(more: Extra) {
    const first = !this.state.settingsSaved;
    const inPage = !first && this.state.settings.modelSource === 'inpage';
    const text = first
      ? 'No model server yet.'
      : inPage
        ? 'The model in this browser is not running.'
        : 'Not connected to the model server.';
    const action = first
      ? 'Set up the model server'
      : inPage
        ? 'Check the model in Settings'
        : 'Check the server address';
    return html`<div
      class="banner connect"
      role="region"
      aria-label=${inPage ? 'Model in this browser' : 'Model server'}
    >
      <span class="text">${text}</span>
      <button class="primary" @click=${() => this.openSettings(inPage ? undefined : 'endpoint')}>
        ${action}
      </button>
      ${more}
    </div>`;
  }

  private renderFallback(f: FallbackNotice, more: Extra) {
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
      ${more}
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
