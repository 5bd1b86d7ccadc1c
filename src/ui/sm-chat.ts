// The chat panel: the server status line, the messages of one conversation (stored ones from the
// database, plus the turn in progress as it streams), and the composer with Send and Stop.
// Stored messages reload whenever the messages table changes, in this tab or another. Tokens are
// shown once per animation frame however fast they come, and the log follows the newest content
// from a ResizeObserver (after layout), so a long reply never lays the page out once per token.
// Each stored message offers the chat controls (docs/chat.md): edit and resend, delete,
// regenerate with the alternatives ← n/m → (also ← → in the empty composer), continue.
// The messages are one Tab stop: ↑ ↓ Home End move between them (docs/chat.md, "Keyboard").
import { deepActiveElement, focusLost } from './focus';
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import type { ServerStatus } from '../app/app';
import type { ChatSession, SessionEvent, TurnResult } from '../chat/chat-session';
import { canContinue } from '../chat/continue';
import { recalledTurnsOf, type StoredRecalledTurn } from '../chat/recall';
import { undoKeeperCard, readKeeperCard, type KeeperCard } from '../chat/keeper-card';
import { altOf, isKeeperCard, replyGroups, type ReplyGroup } from '../memory/replies';
import type { Message } from '../memory/types';
import type { MemoryClient } from '../worker-client';
import { splitThinking, thinkingReader, type ThinkingPiece } from '../llm/thinking';
import { emit } from './events';
import { renderMarkdownBlocks } from './markdown';
import { MemoryWatch } from './memory-watch';
import { RememberController } from './remember-controller';
import { base, tokens } from './styles';
import './sm-message';
import './sm-tool-card';
import './sm-keeper-card';
import type { KeeperUndoDetail } from './sm-keeper-card';
import type {
  MessageAlternativeDetail,
  MessageActionDetail,
  LiveThought,
  MessageControls,
  MessageEditDetail,
  MessageState,
  MessageStepDetail,
  SmMessage,
  TextStream,
} from './sm-message';
import { chatStyles } from './sm-chat.styles';
import { stepIndex } from './roving';

/** What the status line shows about the model server (the app's `ServerStatus`). */
export type ChatStatus = ServerStatus;

declare module './events' {
  interface SmEvents {
    /** The composer's words changed (the memory keeper waits while the person writes). */
    'sm-composer-input': ComposerInputDetail;
    /** "Use it here too": the model in this browser is open in another tab; load it here. */
    'sm-use-model-here': undefined;
  }
}

export interface ComposerInputDetail {
  /** The composer holds words. */
  drafting: boolean;
}

declare global {
  interface GlobalEventHandlersEventMap {
    'sm-composer-input': CustomEvent<ComposerInputDetail>;
    'sm-use-model-here': CustomEvent<undefined>;
  }
}

/** A tool call of the turn in progress. */
interface LiveTool {
  id: string;
  name: string;
  args: unknown;
  result?: unknown;
  refused: boolean;
}

/** One model round of the turn in progress, until its stored message shows up. */
interface LiveSegment {
  /** Its key in the log, which the stored message takes over. */
  key: string;
  /**
   * Its text as it arrived, token by token, leading white space left out (as it will be stored):
   * only ever appended to, so the message reads on from the piece where it stopped rather than
   * being handed the whole reply again each frame.
   */
  pieces: string[];
  /** The thinking that starts it (`<think>…</think>`), apart from `pieces`, without its tags. */
  thought: string;
  /** Reads its tokens for thinking, as the stored reply's is read (`splitThinking`). */
  reader: ReturnType<typeof thinkingReader>;
  /** Any token arrived (white space included). */
  arrived: boolean;
  /** What its message was last handed (the same object while nothing more arrived). */
  stream?: TextStream;
  tools: LiveTool[];
  /** Waiting for the first token (KoboldCPP's tool path is silent until it is done). */
  thinking: boolean;
  /** Id of the stored message this round became. */
  storedId?: number;
  /** Stopped by the user before the session stored it. */
  stopped?: boolean;
}

/** The turn in progress. */
interface LiveTurn {
  /** Key of the user's message in the log (the stored one takes it over); the turn's other keys start with it. */
  key: string;
  conversationId: number;
  userText: string;
  /** Id of the stored user message, once stored. */
  userId?: number;
  segments: LiveSegment[];
  notices: string[];
  /** A regeneration: the alternative its reply is (shown instead of the stored one meanwhile). */
  alt?: number;
  /** Continuing this stored reply: what arrives is shown after `continueBase`, its text before. */
  continueId?: number;
  continueBase?: string;
  /** `continueBase` read for its thinking (`splitThinking`), once. */
  baseSplit?: { split: ReturnType<typeof splitThinking> };
}

/** One entry of the log, keyed so an element follows its message (see keyOf). */
interface LogItem {
  key: string;
  view: TemplateResult;
}

/** The entry paths a message's "Recalled:" note names, in its order. */
function recalledPathsIn(m: Message): string[] {
  const r = m.meta?.recalled;
  return Array.isArray(r) ? r.filter((p): p is string => typeof p === 'string') : [];
}

/** The entry paths that messages' "Recalled:" notes name, distinct, sorted. */
function recalledPathsOf(messages: readonly Message[]): string[] {
  return [...new Set(messages.flatMap(recalledPathsIn))].sort();
}

interface Loaded {
  conversationId: number | undefined;
  messages: Message[];
}

const KIND_LABELS: Record<string, string> = {
  koboldcpp: 'KoboldCPP',
  llamacpp: 'llama.cpp',
  ollama: 'Ollama',
  lmstudio: 'LM Studio',
  openai: 'OpenAI-compatible server',
  inpage: 'In this browser',
};

const NOTICES: Record<string, string> = {
  'round-limit':
    'The model kept calling memory tools without answering, so this turn was stopped. Ask again, or rephrase the request.',
};

/** A stored notice with no words or calls of its own: shown as the notice line alone. */
function bubbleless(m: Message): boolean {
  return (
    m.role === 'assistant' &&
    !m.text.trim() &&
    !m.toolCalls?.length &&
    typeof m.meta?.notice === 'string'
  );
}

/** How close to the bottom (px) still counts as "at the bottom" for auto-scroll. */
const STICK_PX = 48;

/**
 * After Stop, how long the panel waits for the session to wind the turn up (store what arrived)
 * before it ends the turn itself: Stop always gives the composer back.
 */
const STOP_GRACE_MS = 2000;

/** The error box's first words when the model's answer failed. */
const MODEL_FAILED = 'The model could not answer.';

/**
 * `<sm-chat>`: one conversation with the model.
 *
 * @fires sm-select-path - A memory path on a tool card was clicked (`{ path }`, from sm-tool-card).
 * @fires sm-use-model-here - "Use it here too" (the in-page model is open in another tab).
 * @fires sm-new-conversation - "Start a chat" was clicked when no conversation is open.
 * @fires sm-composer-input - The composer's words changed (`{ drafting }`).
 * @fires sm-notice - Undo on a memory keeper card failed (`{ message, kind: 'error' }`).
 */
@customElement('sm-chat')
export class SmChat extends LitElement {
  static override styles = [tokens, base, chatStyles];

  /** The memory engine (worker proxy): messages are read from it. */
  @property({ attribute: false }) memory?: MemoryClient;

  /** The chat session that talks to the model; undefined while the app opens. */
  @property({ attribute: false }) session?: ChatSession;

  /** The conversation shown. */
  @property({ type: Number }) conversationId?: number;

  /** Server facts or the connection error, for the status line. */
  @property({ attribute: false }) status: ChatStatus = { state: 'connecting' };

  /** The context snapshot's budget when a person remembers a message (the settings' default). */
  @property({ type: Number }) contextTokens = 1000;

  /** The memory keeper is reading this conversation's exchanges (said in the status line). */
  @property({ type: Boolean }) keeping = false;

  @state() private draft = '';
  @state() private live?: LiveTurn;
  /** The last turn's failure: the connector's sentence with the fix. */
  @state() private errorText = '';
  /** The error box's first words: what failed (the model's answer, or the turn before it). */
  @state() private errorTitle = MODEL_FAILED;
  @state() private highlightId?: number;
  /** Memory keeper cards whose Undo is running. */
  @state() private undoing: ReadonlySet<number> = new Set();

  @query('.log') private log?: HTMLElement;
  @query('.messages') private list?: HTMLElement;
  @query('textarea') private textarea?: HTMLTextAreaElement;

  private controller?: AbortController;
  /** Follow new content down, unless the user scrolled up to read. */
  private stick = true;
  private lastScrollTop = 0;
  private pendingScroll?: number;
  private highlightTimer?: ReturnType<typeof setTimeout>;
  private resizeObserver?: ResizeObserver;
  /** The animation frame that shows the tokens received since the last one. */
  private tokenFrame?: number;
  /** Log keys that stored messages took over from the live turn (see keyOf). */
  private readonly liveKeys = new Map<number, string>();
  private turnCount = 0;
  /**
   * The message that is the log's Tab stop: the last one focused, else the newest (`chosen`
   * false: it follows the newest as messages come).
   */
  private roving: { at?: SmMessage; chosen: boolean } = { chosen: false };
  /** What layoutOf worked out for the messages last loaded. */
  private layout?: {
    messages: Message[];
    alt: number | undefined;
    groups: ReplyGroup[];
    controls: Map<number, MessageControls>;
    shown: Message[];
    cardsAfter: Map<number, Message[]>;
    /** The message of each group that shows its "Recalled:" note: its last shown reply. */
    notes: Set<number>;
  };

  /** "Remember this" on a message: its form, path proposal and save. */
  private readonly remember = new RememberController(this, () => ({
    memory: this.memory,
    conversationId: this.conversationId,
    contextTokens: this.contextTokens,
  }));

  private readonly watch = new MemoryWatch<Loaded>(this, {
    tables: ['messages'],
    load: async () => {
      const conversationId = this.conversationId;
      const memory = this.memory;
      if (conversationId === undefined || !memory) return { conversationId, messages: [] };
      return { conversationId, messages: await memory.getMessages(conversationId) };
    },
  });

  /**
   * Where each entry that a "Recalled:" note names is now, for those moved since (followed by
   * `resolvePath`): the notes name an entry where it is. Loaded again when the notes' paths, the
   * entries or their history change.
   */
  private readonly pathsNow = new MemoryWatch<ReadonlyMap<string, string>>(this, {
    tables: ['structured_memory', 'history'],
    load: async () => {
      const memory = this.memory;
      const paths = this.recalledKey ? this.recalledKey.split('\n') : [];
      const moved = new Map<string, string>();
      if (!memory || !paths.length) return moved;
      const found = await Promise.all(paths.map((p) => memory.resolvePath(p).catch(() => null)));
      found.forEach((where, i) => {
        if (where?.status === 'SUCCESS' && where.moves.length) moved.set(paths[i], where.path);
      });
      return moved;
    },
  });
  /**
   * Each chat's title now, for the notes' recalled turns (a chat renamed since is named as it is
   * now). Loaded when the notes name a chat, and again when chats change.
   */
  /**
   * The chats the notes name, as they are now: their titles, and which were looked for (`asked`,
   * the key they were loaded for): only a chat looked for and not found is gone. Before a load for
   * it, a chat is named as the note stored it, a link as before.
   */
  private readonly titlesNow = new MemoryWatch<{
    asked: ReadonlySet<number>;
    titles: ReadonlyMap<number, string>;
  }>(this, {
    tables: ['conversations'],
    load: async () => {
      const memory = this.memory;
      const key = this.turnChatsKey;
      const asked = new Set(key ? key.split(',').map(Number) : []);
      if (!memory || !asked.size) return { asked, titles: new Map() };
      const titles = new Map((await memory.listConversations()).map((c) => [c.id!, c.title]));
      return { asked, titles };
    },
  });
  /** The chats the notes' recalled turns name (sorted, comma-separated). */
  private turnChatsKey = '';
  /** The messages whose recalled paths `recalledKey` lists, and those paths (sorted, one a line). */
  private recalledFor?: Message[];
  private recalledKey = '';

  /** Scrolls to a stored message and highlights it briefly (once it is loaded, if it is not yet). */
  scrollToMessage(id: number): void {
    const el = this.renderRoot.querySelector<SmMessage>(`#msg-${id}`);
    if (!el) {
      this.pendingScroll = id;
      return;
    }
    this.pendingScroll = undefined;
    this.stick = false;
    clearTimeout(this.highlightTimer);
    this.highlightId = id;
    this.highlightTimer = setTimeout(() => (this.highlightId = undefined), 2000);
    // After the message (and those above it) have rendered their content, so the position holds.
    void el.updateComplete.then(() =>
      requestAnimationFrame(() => el.scrollIntoView({ block: 'center' })),
    );
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.resizeObserver = new ResizeObserver(() => this.followBottom());
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resizeObserver?.disconnect();
    clearTimeout(this.highlightTimer);
    if (this.tokenFrame !== undefined) cancelAnimationFrame(this.tokenFrame);
    this.tokenFrame = undefined;
  }

  override firstUpdated(): void {
    // Ready the markdown renderer (sanitiser, parser) while idle, so that the first frame of
    // the first reply does not pay for it.
    const idle = globalThis.requestIdleCallback ?? ((fn: () => void) => setTimeout(fn, 500));
    idle(() => renderMarkdownBlocks(['*ready* `now`'], false));
    // Content grows after this element renders (markdown, tool cards), so follow sizes, not renders.
    if (this.list) this.resizeObserver?.observe(this.list);
    if (this.log) this.resizeObserver?.observe(this.log);
  }

  override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('conversationId') && changed.get('conversationId') !== this.conversationId) {
      this.errorText = '';
      this.stick = true;
    }
  }

  override updated(changed: PropertyValues<this>): void {
    if (
      (changed.has('memory') && changed.get('memory') !== this.memory) ||
      (changed.has('conversationId') && changed.get('conversationId') !== this.conversationId)
    ) {
      void this.watch.reload();
    }
    const messages = this.watch.value?.messages;
    if (messages !== this.recalledFor) {
      this.recalledFor = messages;
      const key = recalledPathsOf(messages ?? []).join('\n');
      if (key !== this.recalledKey) {
        this.recalledKey = key;
        void this.pathsNow.reload();
      }
      const chats = [
        ...new Set(
          (messages ?? []).flatMap((m) =>
            recalledTurnsOf(m.meta ?? {}).map((t) => t.conversationId),
          ),
        ),
      ]
        .sort((a, b) => a - b)
        .join(',');
      if (chats !== this.turnChatsKey) {
        this.turnChatsKey = chats;
        void this.titlesNow.reload();
      }
    }
    if (this.pendingScroll !== undefined) this.scrollToMessage(this.pendingScroll);
    this.keepTabStop();
    // No followBottom() here: reading the scroll height now would lay the page out on every
    // render; the ResizeObserver follows the content once per frame, after layout.
  }

  override render() {
    return html`
      ${this.renderStatus()}
      <div
        class="log"
        role="log"
        aria-label="Messages"
        aria-busy=${this.generating ? 'true' : 'false'}
        @scroll=${this.handleScroll}
      >
        <div
          class="messages"
          @sm-message-edit=${this.handleEdit}
          @sm-message-delete=${this.handleDelete}
          @sm-message-regenerate=${this.handleRegenerate}
          @sm-message-continue=${this.handleContinue}
          @sm-message-alternative=${this.handleAlternative}
          @sm-message-remember=${this.remember.open}
          @sm-keeper-undo=${this.handleKeeperUndo}
          @sm-message-step=${this.handleMessageStep}
          @focusin=${this.handleMessagesFocus}
        >
          ${this.renderMessages()}
        </div>
      </div>
      <div class="bottom">
        <div class="bottom-inner">
          ${this.renderError()} ${this.renderOpening()}
          <form @submit=${this.handleSubmit}>
            <label class="visually-hidden" for="message">Message</label>
            <textarea
              id="message"
              rows="1"
              .value=${this.draft}
              placeholder=${
                this.conversationId === undefined
                  ? 'Start a chat to write a message'
                  : 'Write a message…'
              }
              aria-describedby="hint"
              @input=${this.handleInput}
              @keydown=${this.handleKeyDown}
            ></textarea>
            <div class="buttons">
              <button
                class="primary"
                type="submit"
                ?disabled=${!this.canSend || !this.draft.trim()}
              >
                Send
              </button>
              <button type="button" ?disabled=${!this.generating} @click=${this.handleStop}>
                Stop
              </button>
            </div>
          </form>
          <p class="hint" id="hint">Enter sends · Shift+Enter starts a new line</p>
        </div>
      </div>
    `;
  }

  /** A turn is in progress (anywhere: switching conversations does not stop it). */
  private get generating(): boolean {
    return this.controller !== undefined;
  }

  private get canSend(): boolean {
    return !!this.session && this.conversationId !== undefined && !this.generating;
  }

  private renderStatus() {
    const s = this.status;
    if (s.state === 'error') {
      return html`<div class="status error" role="status">
        <span class="dot" aria-hidden="true"></span>
        <span class="text">${s.message || 'The model server cannot be reached.'}</span>
      </div>`;
    }
    if (s.state === 'connecting') {
      // The in-page model's load: how much is read, or that another tab has it open.
      return html`<div class="status connecting" role="status">
        <span class="dot" aria-hidden="true"></span>
        <span class="text">${s.message || 'Connecting to the model server…'}</span>
        ${
          s.progress
            ? html`<progress
                aria-label="Model loading"
                max=${s.progress.total}
                .value=${s.progress.done}
              ></progress>`
            : nothing
        }
        ${
          s.otherTab
            ? html`<button type="button" @click=${() => emit(this, 'sm-use-model-here', undefined)}>
                Use it here too
              </button>`
            : nothing
        }
      </div>`;
    }
    const parts = [
      s.model ? html`<strong>${s.model}</strong>` : undefined,
      s.contextSize ? `${s.contextSize.toLocaleString('en-US')} tokens context` : undefined,
      s.toolMode ? `${s.toolMode} tools` : undefined,
      this.keeping ? html`<span class="keeping">keeping memory…</span>` : undefined,
    ].filter((p) => p !== undefined);
    return html`<div class="status connected" role="status">
      <span class="dot" aria-hidden="true"></span>
      <span class="text"
        >${KIND_LABELS[s.kind ?? ''] ?? s.kind ?? 'Connected'}${parts.map(
          (p) => html`<span class="sep" aria-hidden="true"> · </span>${p}`,
        )}</span
      >
    </div>`;
  }

  private renderMessages() {
    // While the app opens (no session yet) the chat it opens is not known: nothing, rather
    // than a "No chat open" for most of a second.
    if (this.conversationId === undefined && !this.session) return nothing;
    if (this.conversationId === undefined) {
      return html`<div class="placeholder">
        <h2>No chat open</h2>
        <p>Pick a chat from the list, or start a new one.</p>
        <button type="button" class="primary" @click=${this.handleNewConversation}>
          Start a chat
        </button>
      </div>`;
    }
    const loaded = this.watch.value;
    const messages =
      loaded && loaded.conversationId === this.conversationId ? loaded.messages : undefined;
    const live = this.live?.conversationId === this.conversationId ? this.live : undefined;
    if (this.watch.error && !messages) {
      return html`<div class="placeholder" role="alert">
        <p>The messages could not be loaded: ${errorMessage(this.watch.error)}</p>
      </div>`;
    }
    if (!messages) return html`<div class="placeholder">Loading…</div>`;
    const ids = new Set(messages.map((m) => m.id));
    const { shown, controls, cardsAfter, notes } = this.layoutOf(messages, live?.alt);
    if (!shown.length && !live) {
      return html`<div class="placeholder">
        <h2>Nothing here yet</h2>
        <p>
          Ask anything. The model keeps what matters in its memory and recalls it in later chats;
          you can browse and edit that memory at any time.
        </p>
      </div>`;
    }
    const items: LogItem[] = shown.flatMap((m) => [
      {
        key: this.keyOf(m.id!),
        view: this.renderStored(m, controls.get(m.id!), notes.has(m.id!)),
      },
      ...this.renderCards(cardsAfter.get(m.id!)),
    ]);
    if (live) items.push(...this.renderLive(live, ids));
    return repeat(
      items,
      (i) => i.key,
      (i) => i.view,
    );
  }

  /**
   * A stored message's key in the log: the key it had while it streamed, if it did, so that its
   * element, with the markdown it has rendered, stays (a long reply is not rendered again).
   */
  private keyOf(id: number): string {
    return this.liveKeys.get(id) ?? `m${id}`;
  }

  /**
   * Groups and controls of the loaded messages, and the memory keeper's cards (no part of any
   * group), worked out once per load (not per token frame).
   */
  private layoutOf(
    messages: Message[],
    alt: number | undefined,
  ): {
    shown: Message[];
    controls: Map<number, MessageControls>;
    cardsAfter: Map<number, Message[]>;
    notes: Set<number>;
  } {
    const cached = this.layout;
    if (cached?.messages === messages && cached.alt === alt) return cached;
    const said = messages.filter((m) => !isKeeperCard(m));
    const groups = replyGroups(said, alt);
    const shown = groups
      .flatMap((g) => [...(g.user ? [g.user] : []), ...g.members.filter((m) => altOfShown(m, g))])
      .filter((m) => m.role !== 'tool');
    // Every reply message of a turn carries what it recalled: the note shows once, on the last.
    const notes = new Set(
      groups.flatMap((g) => {
        const last = g.members.findLast((m) => m.role === 'assistant' && altOfShown(m, g));
        return last ? [last.id!] : [];
      }),
    );
    this.layout = {
      messages,
      alt,
      groups,
      controls: this.controlsFor(said, groups),
      shown,
      cardsAfter: cardsAfter(shown, messages),
      notes,
    };
    return this.layout;
  }

  /** The memory keeper's cards as log items (one readable card each). */
  private renderCards(cards: Message[] | undefined): LogItem[] {
    return (cards ?? []).flatMap((m) => {
      const card = readKeeperCard(m);
      return card ? [{ key: `k${m.id!}`, view: entry(this.keeperCard(m.id!, card), nothing) }] : [];
    });
  }

  private keeperCard(id: number, card: KeeperCard) {
    return html`<sm-keeper-card
      .card=${card}
      .messageId=${id}
      ?undoing=${this.undoing.has(id)}
    ></sm-keeper-card>`;
  }

  /**
   * The controls of each shown message: edit (user), delete, and on a group's last reply its
   * alternatives; regenerate on the last group, continue on the last reply with words.
   */
  private controlsFor(all: Message[], groups: ReplyGroup[]): Map<number, MessageControls> {
    const out = new Map<number, MessageControls>();
    // How many messages (not tool results) come after each: what editing it drops.
    const said = all
      .filter((m) => m.role !== 'tool')
      .map((m) => m.id!)
      .sort((a, b) => a - b);
    const place = new Map(said.map((id, i) => [id, i]));
    const after = (id: number) => said.length - 1 - (place.get(id) ?? said.length - 1);
    const toolsOf = (m: Message) => m.toolCalls?.length ?? 0;
    const worded = (m: Message) => m.role === 'assistant' && !!m.text.trim();
    groups.forEach((g, i) => {
      const last = i === groups.length - 1;
      const shown = g.members.filter((m) => altOfShown(m, g) && m.role !== 'tool');
      // A notice with no words (the round limit's) shows no bubble to carry the reply's controls.
      const reply = shown.findLast((m) => m.role === 'assistant' && !bubbleless(m));
      if (g.user) {
        out.set(g.user.id!, {
          remember: !!g.user.text.trim(),
          edit: { dropping: after(g.user.id!) },
          delete: { tools: 0 },
          // A question left without a reply (its turn failed) can be answered again from here.
          regenerate: last && !reply,
          // Its shown reply has no bubble (a regeneration that answered with nothing, or stopped
          // at the round limit): the other replies are reached from the question.
          ...(!reply && g.alternatives.length > 1
            ? {
                alternatives: {
                  shown: g.alternatives.indexOf(g.shown) + 1,
                  count: g.alternatives.length,
                },
              }
            : {}),
        });
      }
      for (const m of shown) out.set(m.id!, { delete: { tools: toolsOf(m) }, remember: worded(m) });
      if (reply) {
        const isLast = last && shown.at(-1) === reply;
        out.set(reply.id!, {
          delete: { tools: toolsOf(reply) },
          remember: worded(reply),
          regenerate: last && !!g.user,
          continue: isLast && canContinue(reply),
          alternatives: {
            shown: g.alternatives.indexOf(g.shown) + 1,
            count: g.alternatives.length,
          },
        });
      }
    });
    return out;
  }

  private renderStored(m: Message, controls?: MessageControls, note = false) {
    const meta = m.meta ?? {};
    const notice = typeof meta.notice === 'string' ? (NOTICES[meta.notice] ?? meta.notice) : '';
    const state: MessageState = meta.aborted ? 'stopped' : meta.error ? 'partial' : 'done';
    const live = this.live;
    const seg = live?.continueId === m.id ? live?.segments[0] : undefined;
    // Continuing: what arrives shows after the stored text, until the stored text has it.
    if (seg && live?.continueBase === m.text && (seg.arrived || this.generating)) {
      // Its thinking stays folded above, as stored; the new words go on from its answer. Read
      // once for the continuation, not again each frame the reply streams.
      live.baseSplit ??= { split: splitThinking(m.text) };
      const { split } = live.baseSplit;
      return entry(
        bubble({
          id: m.id,
          kind: 'assistant',
          text: split ? split.answer : m.text,
          stream: streamOf(seg),
          state: this.generating ? 'streaming' : 'stopped',
          time: m.time,
          thought: split?.thought ? { text: split.thought, open: false } : undefined,
        }),
        nothing,
      );
    }
    // Each entry named where it is now (moved since: followed), once.
    const moved = this.pathsNow.value;
    const recalled = note ? [...new Set(recalledPathsIn(m).map((p) => moved?.get(p) ?? p))] : [];
    const chats = this.titlesNow.value;
    const recalledTurns = note
      ? recalledTurnsOf(meta).map((t) => {
          const now = chats?.titles.get(t.conversationId);
          // A chat deleted since is named, not linked: there is nothing to open.
          if (now === undefined && chats?.asked.has(t.conversationId)) return { ...t, gone: true };
          return { ...t, chat: now ?? t.chat };
        })
      : [];
    if (m.role === 'system') {
      return entry(bubble({ id: m.id, kind: 'notice', text: m.text }), nothing);
    }
    const showBubble = !bubbleless(m) || !notice;
    return entry(
      showBubble
        ? bubble({
            id: m.id,
            kind: m.role === 'user' ? 'user' : 'assistant',
            text: m.text,
            state,
            time: m.time,
            highlighted: this.highlightId === m.id,
            tools: (m.toolCalls ?? []).map((c) =>
              toolCard(c.name, c.arguments, c.result, isRefused(c.result)),
            ),
            controls,
            busy: this.generating,
            cut: meta.cut === 'length',
            recalled,
            recalledTurns,
            speaker: typeof meta.speaker === 'string' ? meta.speaker : undefined,
          })
        : nothing,
      notice
        ? bubble({ id: showBubble ? undefined : m.id, kind: 'notice', text: notice })
        : nothing,
      this.remember.formFor(m.id),
    );
  }

  /** The turn in progress, as log items (the parts already stored and loaded are left out). */
  private renderLive(live: LiveTurn, stored: Set<number | undefined>) {
    const items: LogItem[] = [];
    const userShown = live.userId !== undefined && stored.has(live.userId);
    if (!userShown && live.userText) {
      items.push({
        key: live.key,
        view: entry(bubble({ kind: 'user', text: live.userText }), nothing),
      });
    }
    for (const s of live.segments) {
      if (live.continueId !== undefined) break;
      if (s.storedId === undefined || !stored.has(s.storedId)) {
        items.push({ key: s.key, view: entry(this.renderSegment(s), nothing) });
      }
    }
    live.notices.forEach((n, i) => {
      items.push({
        key: `${live.key}-n${i}`,
        view: entry(bubble({ kind: 'notice', text: n }), nothing),
      });
    });
    return items;
  }

  private renderSegment(s: LiveSegment) {
    const streaming = s.storedId === undefined && this.generating;
    if (s.thinking && streaming && !s.arrived && !s.tools.length) {
      return html`<div class="thinking" role="status">
        <span class="dots" aria-hidden="true"><span></span><span></span><span></span></span>
        Model is thinking…
      </div>`;
    }
    return bubble({
      kind: 'assistant',
      // As it will be stored (trimmed): the element goes on from what it rendered.
      text: '',
      stream: streamOf(s),
      // Open while the model thinks, folded once its answer begins.
      thought: s.thought ? { text: s.thought, open: streaming && !s.pieces.length } : undefined,
      state: s.stopped ? 'stopped' : streaming && !s.tools.length ? 'streaming' : 'done',
      tools: s.tools.map((t) => toolCard(t.name, t.args, t.result, t.refused)),
    });
  }

  private renderError() {
    if (!this.errorText) return nothing;
    return html`<div class="alert" role="alert">
      <p><strong>${this.errorTitle}</strong> ${this.errorText}</p>
      <button type="button" @click=${this.handleDismissError}>Dismiss</button>
    </div>`;
  }

  private renderOpening() {
    // The app hands the chat its session once it has opened the memory and read the settings
    // (under a second); until then a message waits in the composer.
    if (this.session) return nothing;
    return html`<p class="opening" role="status">Opening your chats and memory…</p>`;
  }

  private handleInput(event: InputEvent): void {
    this.draft = (event.target as HTMLTextAreaElement).value;
    emit(this, 'sm-composer-input', { drafting: !!this.draft.trim() });
  }

  /** Undo on a memory keeper card: what it kept is reversed, and the card (stored) says so. */
  private async handleKeeperUndo(event: CustomEvent<KeeperUndoDetail>): Promise<void> {
    const { id } = event.detail;
    const memory = this.memory;
    const message = this.loaded?.find((m) => m.id === id);
    if (!memory || !message || this.undoing.has(id)) return;
    this.undoing = new Set([...this.undoing, id]);
    try {
      await undoKeeperCard(memory, message);
      await this.watch.reload();
    } catch (e) {
      emit(this, 'sm-notice', {
        message: `What the memory keeper saved could not be undone: ${errorMessage(e)}`,
        kind: 'error',
      });
    } finally {
      this.undoing = new Set([...this.undoing].filter((x) => x !== id));
    }
  }

  private handleKeyDown(event: KeyboardEvent): void {
    // ← → in the empty composer switch the last reply's alternatives.
    if ((event.key === 'ArrowLeft' || event.key === 'ArrowRight') && !this.draft) {
      const step = event.key === 'ArrowLeft' ? -1 : 1;
      if (this.switchLastAlternative(step)) event.preventDefault();
      return;
    }
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    void this.send();
  }

  private handleSubmit(event: SubmitEvent): void {
    event.preventDefault();
    void this.send();
  }

  private handleStop(): void {
    this.controller?.abort();
  }

  private handleDismissError(): void {
    this.errorText = '';
    this.textarea?.focus();
  }

  private handleNewConversation(): void {
    emit(this, 'sm-new-conversation', undefined);
  }

  /**
   * Focus on a message's controls (an edit form opening, a confirmation): the log stops following
   * the bottom, so what has focus stays in view as it grows. The next turn follows again.
   */
  private handleMessagesFocus(event: FocusEvent): void {
    if (!this.generating) this.stick = false;
    const message = event
      .composedPath()
      .find((el): el is SmMessage => el instanceof HTMLElement && el.localName === 'sm-message');
    if (message && message.parentElement === this.list && message.kind !== 'notice') {
      this.setTabStop(message, true);
    }
  }

  /** The messages a person moves between (not the notices), in order. */
  private navigable(): SmMessage[] {
    return [...(this.list?.querySelectorAll<SmMessage>(':scope > sm-message') ?? [])].filter(
      (m) => m.kind !== 'notice',
    );
  }

  /** ↑ ↓ Home End on a message: focus the one before or after it, the first or the last. */
  private handleMessageStep(event: CustomEvent<MessageStepDetail>): void {
    const all = this.navigable();
    const to = stepIndex(event.detail.step, all.indexOf(event.target as SmMessage), all.length);
    if (to === undefined) return;
    this.setTabStop(all[to], true);
    all[to].focusMessage();
  }

  private setTabStop(message: SmMessage | undefined, chosen: boolean): void {
    const before = this.roving.at;
    if (before !== message && before) before.current = false;
    if (message) message.current = true;
    this.roving = { at: message, chosen: chosen || (this.roving.chosen && message === before) };
  }

  /**
   * One message is the log's Tab stop: the one chosen while it is shown, else the newest. Cheap
   * on a token frame (the chosen one still shown: no walk over the messages).
   */
  private keepTabStop(): void {
    const { at, chosen } = this.roving;
    if (chosen && at?.parentElement === this.list) return;
    let last = this.list?.lastElementChild;
    while (last && !(last.localName === 'sm-message' && (last as SmMessage).kind !== 'notice')) {
      last = last.previousElementSibling;
    }
    this.setTabStop((last as SmMessage | null) ?? undefined, false);
  }

  private handleScroll(): void {
    const log = this.log;
    if (!log) return;
    const distance = log.scrollHeight - log.scrollTop - log.clientHeight;
    // Only a move up lets go: content growing under a programmatic scroll is not the user.
    if (distance < STICK_PX) this.stick = true;
    else if (log.scrollTop < this.lastScrollTop - 1) this.stick = false;
    this.lastScrollTop = log.scrollTop;
  }

  /** Keeps the newest content in view while the user has not scrolled up (from the ResizeObserver). */
  private followBottom(): void {
    const log = this.log;
    if (this.stick && log) log.scrollTop = log.scrollHeight;
  }

  /** One turn, from the composer to the stored answer. */
  private async send(): Promise<void> {
    const session = this.session;
    const conversationId = this.conversationId;
    const text = this.draft.trim();
    if (!session || conversationId === undefined || this.generating || !text) return;
    this.draft = '';
    emit(this, 'sm-composer-input', { drafting: false });
    await this.runLive(
      { conversationId, userText: text },
      (signal, onEvent) => session.send(conversationId, text, signal, onEvent),
      text,
    );
  }

  /** The panel's messages, loaded, of the conversation shown. */
  private get loaded(): Message[] | undefined {
    const v = this.watch.value;
    return v && v.conversationId === this.conversationId ? v.messages : undefined;
  }

  private handleEdit(event: CustomEvent<MessageEditDetail>): void {
    const { id, text } = event.detail;
    const session = this.session;
    const conversationId = this.conversationId;
    if (!session || conversationId === undefined || this.generating) return;
    void this.runLive({ conversationId, userText: '', userId: id }, (signal, onEvent) =>
      session.resend(conversationId, id, text, signal, onEvent),
    );
  }

  private handleRegenerate(): void {
    const session = this.session;
    const conversationId = this.conversationId;
    if (!session || conversationId === undefined || this.generating) return;
    const user = replyGroups(this.loaded ?? []).at(-1)?.user;
    void this.runLive({ conversationId, userText: '', userId: user?.id }, (signal, onEvent) =>
      session.regenerate(conversationId, signal, onEvent),
    );
  }

  private handleContinue(event: CustomEvent<MessageActionDetail>): void {
    const { id } = event.detail;
    const session = this.session;
    const conversationId = this.conversationId;
    const target = this.loaded?.find((m) => m.id === id);
    if (!session || conversationId === undefined || this.generating || !target) return;
    void this.runLive(
      { conversationId, userText: '', continueId: id, continueBase: target.text },
      (signal, onEvent) => session.continueReply(conversationId, id, signal, onEvent),
    );
  }

  private async handleDelete(event: CustomEvent<MessageActionDetail>): Promise<void> {
    const memory = this.memory;
    if (!memory || this.generating) return;
    const r = await memory.deleteMessage(event.detail.id);
    if (r.status !== 'SUCCESS') {
      this.errorTitle = 'Not done.';
      this.errorText = `The message could not be deleted: ${r.message}`;
    }
    // Its element is gone: the composer is the next place to be.
    this.textarea?.focus();
  }

  private handleAlternative(event: CustomEvent<MessageAlternativeDetail>): void {
    const { id, step } = event.detail;
    const group = replyGroups(this.loaded ?? []).find(
      (g) => g.user?.id === id || g.members.some((m) => m.id === id),
    );
    if (group) void this.showAlternative(group, step, id);
  }

  /** ← / → for the last reply; false when it has no other alternative that way. */
  private switchLastAlternative(step: -1 | 1): boolean {
    const group = replyGroups(this.loaded ?? []).at(-1);
    if (!group?.user || this.generating) return false;
    const at = group.alternatives.indexOf(group.shown) + step;
    if (at < 0 || at >= group.alternatives.length) return false;
    void this.showAlternative(group, step);
    return true;
  }

  private async showAlternative(group: ReplyGroup, step: -1 | 1, focusId?: number): Promise<void> {
    const memory = this.memory;
    const user = group.user;
    if (!memory || !user || this.generating) return;
    const alt = group.alternatives[group.alternatives.indexOf(group.shown) + step];
    if (alt === undefined) return;
    const r = await memory.selectAlternative(user.id, alt);
    if (r.status !== 'SUCCESS') {
      this.errorTitle = 'Not done.';
      this.errorText = `The reply could not be switched: ${r.message}`;
      return;
    }
    await this.watch.reload();
    if (focusId === undefined) return;
    // The reply shown now has the controls: keep focus on them.
    await this.updateComplete;
    const shown = replyGroups(this.loaded ?? []).find((g) => g.user?.id === user.id);
    const reply = shown?.members
      .filter((m) => altOfShown(m, shown) && m.role === 'assistant')
      .at(-1);
    const el = reply && this.renderRoot.querySelector<SmMessage>(`#msg-${reply.id}`);
    if (el) {
      await el.updateComplete;
      el.focusControls();
    }
  }

  /**
   * Runs a turn with its live view, from the start to what was stored. A top-level handler: it
   * catches. `words`: the composer's words, given back if the turn stored nothing.
   */
  private async runLive(
    start: Pick<LiveTurn, 'conversationId' | 'userText' | 'userId' | 'continueId' | 'continueBase'>,
    run: (signal: AbortSignal, onEvent: (event: SessionEvent) => void) => Promise<TurnResult>,
    words?: string,
  ): Promise<void> {
    if (this.generating) return;
    const { conversationId } = start;
    // Started from the keyboard (its control shows focus): focus is looked after at the end. A tap
    // is not followed by a jump to the message box (a phone would open its keyboard).
    const byKeyboard = deepActiveElement()?.matches(':focus-visible') ?? false;
    const controller = new AbortController();
    // Thinking from the start: the first token can take a while.
    const key = `t${++this.turnCount}`;
    const live: LiveTurn = {
      ...start,
      key,
      segments: [newSegment(`${key}-0`, true)],
      notices: [],
    };
    this.controller = controller;
    this.live = live;
    this.errorText = '';
    this.stick = true;
    let failure = '';
    let title = MODEL_FAILED;
    let said = '';
    let unfinished = false;
    const turn = run(controller.signal, (event) => this.handleSessionEvent(live, event));
    try {
      const result = await Promise.race([turn, stopGrace(controller.signal)]);
      if (result === undefined) {
        // Stopped, and the session has not wound up: the turn ends here all the same. What it
        // stores later still shows (the messages reload); what arrived stays on screen now.
        unfinished = true;
        turn.catch(() => undefined);
      } else {
        if (result.status === 'error') {
          failure = result.error?.message || result.text || 'The model server reported an error.';
          title = result.notSent ? 'Not sent.' : MODEL_FAILED;
        }
        if (result.status === 'round-limit') said = result.text;
      }
    } catch (e) {
      failure = `Something went wrong: ${errorMessage(e)}`;
    }
    if (this.tokenFrame !== undefined) cancelAnimationFrame(this.tokenFrame);
    this.tokenFrame = undefined;
    this.controller = undefined;
    this.requestUpdate();
    if (this.conversationId === conversationId) {
      this.errorText = failure;
      this.errorTitle = title;
    }
    await this.watch.reload();
    // The error box says it, a round-limit notice is stored with the message, and so is a notice
    // the session stored: once is enough.
    const loaded =
      this.watch.value?.conversationId === conversationId ? this.watch.value : undefined;
    const stored = new Set(loaded?.messages.map((m) => m.meta?.notice));
    live.notices = live.notices.filter((n) => n !== failure && n !== said && !stored.has(n));
    // Nothing was stored (the server could not be reached first): give the words back.
    if (words !== undefined && live.userId === undefined && !unfinished) {
      live.userText = '';
      if (!this.draft) {
        this.draft = words;
        emit(this, 'sm-composer-input', { drafting: true });
      }
    }
    // What was stored now shows as stored; tool calls that ran but were never stored stay, and so
    // does the text of a turn stopped before the session could store it.
    live.segments = live.segments.filter(
      (seg) => seg.storedId === undefined && (seg.tools.length || (unfinished && seg.arrived)),
    );
    if (unfinished) {
      for (const seg of live.segments) {
        seg.stopped = true;
        take(seg, seg.reader.end(), live.continueId !== undefined);
      }
    }
    if (live.continueId !== undefined && !unfinished) live.segments = [];
    if (this.live === live && !live.segments.length && !live.notices.length) this.live = undefined;
    this.requestUpdate();
    // The control the turn was started from (Regenerate, Continue, an edit's Send) went with the
    // reply it sat on: the keyboard's focus goes to the message box, not the page.
    await this.updateComplete;
    if (byKeyboard && this.conversationId === conversationId && focusLost()) this.textarea?.focus();
  }

  private handleSessionEvent(live: LiveTurn, event: SessionEvent): void {
    const segment = (thinking: boolean): LiveSegment => {
      const fresh = newSegment(`${live.key}-${live.segments.length}`, thinking);
      live.segments.push(fresh);
      return fresh;
    };
    /** The round in progress (a new one once the previous is stored). */
    const current = (): LiveSegment => {
      const last = live.segments.at(-1);
      return last && last.storedId === undefined ? last : segment(false);
    };
    switch (event.type) {
      case 'thinking': {
        const seg = current();
        if (seg.arrived || seg.tools.length) segment(true);
        else seg.thinking = true;
        break;
      }
      case 'token': {
        const seg = current();
        // A continuation goes on from the stored text as it came; a new reply's thinking is
        // shown apart, and its answer starts trimmed.
        const continued = live.continueId !== undefined;
        take(
          seg,
          continued ? { thought: '', answer: event.text } : seg.reader.read(event.text),
          continued,
        );
        if (event.text) seg.arrived = true;
        seg.thinking = false;
        // Shown with the next frame, with every other token that arrives before it.
        this.tokenFrame ??= requestAnimationFrame(() => {
          this.tokenFrame = undefined;
          this.requestUpdate();
        });
        return;
      }
      case 'tool-call': {
        const seg = current();
        seg.tools.push({ id: event.id, name: event.name, args: event.args, refused: false });
        seg.thinking = false;
        break;
      }
      case 'tool-result': {
        const seg = current();
        const tool = seg.tools.find((t) => t.id === event.id);
        if (tool) {
          tool.result = event.result;
          tool.refused = event.refused;
        } else {
          seg.tools.push({
            id: event.id,
            name: event.name,
            args: undefined,
            result: event.result,
            refused: event.refused,
          });
        }
        break;
      }
      case 'notice':
        live.notices.push(event.message);
        break;
      case 'alternative':
        live.alt = event.alt;
        break;
      case 'message':
        if (event.role === 'user') {
          live.userId = event.id;
          // A new message takes over the live bubble's key (an edited one keeps its own).
          if (live.userText) this.liveKeys.set(event.id, live.key);
        } else if (event.role === 'assistant' && live.continueId !== undefined) {
          live.segments[0].storedId = event.id;
        } else if (event.role === 'assistant') {
          const seg = current();
          seg.storedId = event.id;
          this.liveKeys.set(event.id, seg.key);
        }
        // Show the stored form as soon as it is there (the watch would, a little later).
        if (event.role !== 'tool') void this.watch.reload();
        break;
    }
    this.requestUpdate();
  }
}

/** Resolves (with nothing) STOP_GRACE_MS after `signal` aborts; never before. */
function stopGrace(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    const later = () => setTimeout(() => resolve(undefined), STOP_GRACE_MS);
    if (signal.aborted) later();
    else signal.addEventListener('abort', later, { once: true });
  });
}

/** One item of the log. Every item has this outer template, so an item keeps its elements. */
function entry(
  main: TemplateResult | typeof nothing,
  after: TemplateResult | typeof nothing,
  form: unknown = nothing,
) {
  return html`${main}${after}${form}`;
}

/** A model round's segment, before anything arrived. */
function newSegment(key: string, thinking: boolean): LiveSegment {
  return {
    key,
    pieces: [],
    thought: '',
    reader: thinkingReader(),
    arrived: false,
    tools: [],
    thinking,
  };
}

/**
 * Adds what a token brought to a live segment: thinking to its thought, words to its answer (a
 * new reply's answer starts trimmed). Where the answer so far turns out to have been thinking
 * (a `</think>` it never opened), it moves to the thought, and the answer starts afresh.
 */
function take(seg: LiveSegment, part: ThinkingPiece, continued: boolean): void {
  if (part.wasThinking) {
    seg.thought = seg.pieces.join('');
    seg.pieces = [];
  }
  if (part.thought)
    seg.thought = seg.thought ? seg.thought + part.thought : part.thought.trimStart();
  const piece = seg.pieces.length || continued ? part.answer : part.answer.trimStart();
  if (piece) seg.pieces.push(piece);
}

/** What arrived of a live segment, for its message (a new object whenever more arrived). */
function streamOf(seg: LiveSegment): TextStream {
  const stream = seg.stream;
  if (stream?.pieces === seg.pieces && stream.count === seg.pieces.length) return stream;
  return (seg.stream = { pieces: seg.pieces, count: seg.pieces.length });
}

/** A message bubble: one template for stored and live messages alike, so the element is reused. */
function bubble(m: {
  id?: number;
  kind: 'user' | 'assistant' | 'notice';
  text: string;
  stream?: TextStream;
  state?: MessageState;
  time?: Date;
  highlighted?: boolean;
  tools?: TemplateResult[];
  controls?: MessageControls;
  busy?: boolean;
  cut?: boolean;
  recalled?: string[];
  recalledTurns?: StoredRecalledTurn[];
  speaker?: string;
  thought?: LiveThought;
}) {
  return html`<sm-message
    id=${m.id === undefined ? nothing : `msg-${m.id}`}
    kind=${m.kind}
    .text=${m.text}
    .stream=${m.stream}
    .state=${m.state ?? 'done'}
    .time=${m.time}
    .messageId=${m.id}
    .controls=${m.controls}
    .busy=${!!m.busy}
    .cut=${!!m.cut}
    .recalled=${m.recalled ?? []}
    .recalledTurns=${m.recalledTurns ?? []}
    .speaker=${m.speaker ?? ''}
    .liveThought=${m.thought}
    ?highlighted=${!!m.highlighted}
    >${m.tools ?? nothing}</sm-message
  >`;
}

/**
 * Where the memory keeper's cards show: under the reply they kept (by id), or, when that reply is
 * gone (deleted), in their own place, after the last shown message before them. A card whose
 * reply is a hidden alternative is hidden with it.
 */
function cardsAfter(shown: readonly Message[], all: readonly Message[]): Map<number, Message[]> {
  const out = new Map<number, Message[]>();
  const stored = new Set(all.map((m) => m.id));
  const put = (at: number, card: Message) => out.set(at, [...(out.get(at) ?? []), card]);
  for (const card of all) {
    if (!isKeeperCard(card)) continue;
    const replyId = readKeeperCard(card)?.replyId;
    if (replyId !== undefined && stored.has(replyId)) put(replyId, card);
    else {
      const before = shown.findLast((m) => m.id! < card.id!);
      if (before) put(before.id!, card);
    }
  }
  return out;
}

/** The message belongs to the alternative its group shows. */
function altOfShown(m: Message, g: ReplyGroup): boolean {
  return altOf(m) === g.shown;
}

/** A stored tool result that says the call was refused before it ran. */
function isRefused(result: unknown): boolean {
  const r = result as { status?: unknown; code?: unknown } | null;
  return r?.status === 'ERROR' && r.code === 'INVALID_ARGUMENT';
}

function toolCard(name: string, args: unknown, result: unknown, refused: boolean) {
  return html`<sm-tool-card
    .name=${name}
    .args=${args}
    .result=${result}
    ?refused=${refused}
  ></sm-tool-card>`;
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-chat': SmChat;
  }
}
