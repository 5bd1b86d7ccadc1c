// One chat message: the user's words as text, the model's as sanitised markdown, or a notice.
// Streaming-friendly: a reply that arrives is handed over as `stream`, a list of pieces that only
// grows, and the message reads on from the piece where it stopped (MarkdownFeed), so a frame's
// work is in proportion to what arrived, never to the length of the reply. The model's markdown
// is rendered block by block: a block is rendered once, only the block still arriving is rendered
// again, and a long text is put in over several frames, so no frame costs more than a bounded
// amount whatever the length of the reply.
// Below a stored message: its controls (edit and resend, delete with a confirmation, regenerate,
// the alternatives ← n/m →, continue) and the memories auto-recall put into its prompt, as
// links (docs/chat.md). The panel decides which controls a message offers and does the work.
// A message is one Tab stop (when `current`): the arrow keys reach what is in it, and ↑ ↓ ask the
// panel for the message before or after (docs/chat.md, "Keyboard").
import { LitElement, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { turnLabels, type StoredRecalledTurn } from '../chat/recall';
import { splitThinking, withoutThinking } from '../llm/thinking';
import type { FollowPathDetail } from './sm-tool-card';
import { emit } from './events';
import { MarkdownFeed, renderMarkdownBlocks } from './markdown';
import { base, tokens } from './styles';
import { messageStyles } from './sm-message.styles';
import { selectionWithin } from './selection';
import { focusablesIn, stepIndex, stepOf, type Step } from './roving';

export type MessageKind = 'user' | 'assistant' | 'notice';

/** Where a message stands: still streaming, complete, stopped by the user, or cut off by an error. */
export type MessageState = 'done' | 'streaming' | 'stopped' | 'partial';

/**
 * Text that grows by appending (a reply as it streams): `pieces.slice(0, count)` joined. The
 * owner only ever appends to `pieces`, and hands a new object with the new count when it grew.
 */
export interface TextStream {
  readonly pieces: readonly string[];
  readonly count: number;
}

/** The controls a stored message offers (the panel decides; none while a turn runs). */
export interface MessageControls {
  /** Edit and resend (a user message): how many messages after it sending drops. */
  edit?: { dropping: number };
  /** Delete, with a confirmation; `tools`: the tool results that go with it. */
  delete?: { tools: number };
  /** Answer the last user message again (another alternative). */
  regenerate?: boolean;
  /** Ask the model to go on with this reply. */
  continue?: boolean;
  /** This reply's alternatives: the one shown (1-based) of how many. */
  alternatives?: { shown: number; count: number };
  /** "Remember this": save the message, or the words selected in it, to memory. */
  remember?: boolean;
}

/** A streaming reply's thinking so far, shown apart from its answer; `open` while it thinks. */
export interface LiveThought {
  readonly text: string;
  readonly open: boolean;
}

export interface MessageActionDetail {
  id: number;
}

export interface MessageEditDetail {
  id: number;
  text: string;
}

export interface MessageRememberDetail {
  id: number;
  /** The words selected in the message, else the whole message. */
  text: string;
  /** `text` is a selection. */
  selected: boolean;
}

export interface MessageStepDetail {
  /** The message to go to, from this one: the one before or after, the first or the last. */
  step: Step;
}

export interface MessageAlternativeDetail {
  id: number;
  /** -1: the previous alternative, +1: the next. */
  step: -1 | 1;
}

declare module './events' {
  interface SmEvents {
    /** Edit and resend a user message with new text. */
    'sm-message-edit': MessageEditDetail;
    /** Delete a message (confirmed). */
    'sm-message-delete': MessageActionDetail;
    /** Answer the last user message again. */
    'sm-message-regenerate': MessageActionDetail;
    /** Continue the last reply. */
    'sm-message-continue': MessageActionDetail;
    /** Show another alternative of this reply. */
    'sm-message-alternative': MessageAlternativeDetail;
    /** Remember this message, or the words selected in it. */
    'sm-message-remember': MessageRememberDetail;
    /** ↑ ↓ Home End on a message: focus the message before or after it, the first or the last. */
    'sm-message-step': MessageStepDetail;
  }
}

declare global {
  interface GlobalEventHandlersEventMap {
    'sm-message-edit': CustomEvent<MessageEditDetail>;
    'sm-message-delete': CustomEvent<MessageActionDetail>;
    'sm-message-regenerate': CustomEvent<MessageActionDetail>;
    'sm-message-continue': CustomEvent<MessageActionDetail>;
    'sm-message-alternative': CustomEvent<MessageAlternativeDetail>;
    'sm-message-remember': CustomEvent<MessageRememberDetail>;
    'sm-message-step': CustomEvent<MessageStepDetail>;
  }
}

const ICONS = {
  edit: 'M11 2.5l2.5 2.5L6 12.5H3.5V10z',
  delete: 'M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.7 8.5h5.6l.7-8.5',
  regenerate: 'M13 8a5 5 0 1 1-1.5-3.5M13 2.5v2.5h-2.5',
  prev: 'M10 3.5L5.5 8l4.5 4.5',
  next: 'M6 3.5l4.5 4.5L6 12.5',
  remember: 'M4.5 2.5h7v11L8 10.5l-3.5 3z',
};

const icon = (d: string) => html`<svg viewBox="0 0 16 16" aria-hidden="true"><path d=${d} /></svg>`;

/**
 * `<sm-message>`: one message bubble.
 *
 * @slot - Below the text: the tool cards of an assistant message.
 * @fires sm-message-edit - Edit and resend was sent (`{ id, text }`).
 * @fires sm-message-delete - Deleting was confirmed (`{ id }`).
 * @fires sm-message-regenerate - Regenerate was clicked (`{ id }`).
 * @fires sm-message-continue - Continue was clicked (`{ id }`).
 * @fires sm-message-alternative - ← or → of the alternatives (`{ id, step }`).
 * @fires sm-message-remember - Remember this, or Remember selection (`{ id, text, selected }`).
 * @fires sm-select-path - A recalled memory was clicked (`{ path, followMoves: true }`).
 * @fires sm-open-message - A recalled past message was clicked (`{ conversationId, messageId }`).
 * @fires sm-message-step - ↑ ↓ Home or End on the message (`{ step }`): the panel moves focus.
 */
@customElement('sm-message')
export class SmMessage extends LitElement {
  static override styles = [tokens, base, messageStyles];

  /** Who speaks: `user` (plain text), `assistant` (markdown) or `notice` (a muted info line). */
  @property({ reflect: true }) kind: MessageKind = 'assistant';

  /** Who said it, where a chat names its speakers (an imported group chat): shown above it. */
  @property() speaker = '';

  /** The message text; for the assistant, markdown. */
  @property() text = '';

  /**
   * For the assistant: what arrived so far of a reply that streams, shown after `text`. Its
   * pieces are read once each: while it grows, the message reads on from where it stopped.
   */
  @property({ attribute: false }) stream?: TextStream;
  /** A streaming reply's thinking (its stored text holds it as `<think>…</think>`). */
  @property({ attribute: false }) liveThought?: LiveThought;

  /** Streaming (a caret at the end), done, stopped by the user, or partial (cut off by an error). */
  @property({ reflect: true }) state: MessageState = 'done';

  /** When it was written (shown as a tooltip). */
  @property({ attribute: false }) time?: Date;

  /** Briefly set when a link leads here, to draw the eye. */
  @property({ type: Boolean, reflect: true }) highlighted = false;

  /** The stored message's id (the controls' events carry it). */
  @property({ type: Number }) messageId?: number;

  /** The controls offered (none when undefined). */
  @property({ attribute: false }) controls?: MessageControls;

  /** The controls show but do nothing (a turn is running). */
  @property({ type: Boolean }) busy = false;

  /** Cut by the length limit ("Continue" goes on). */
  @property({ type: Boolean }) cut = false;

  /**
   * The message is the list's Tab stop (the panel sets it on one message): its own box takes
   * focus by Tab; what is in it (links, tool cards, controls) only by the arrow keys.
   */
  @property({ type: Boolean }) current = false;

  /** Paths of the memories auto-recall put into this reply's prompt. */
  @property({ attribute: false }) recalled: string[] = [];

  /** The past messages (of any chat) auto-recall put into this reply's prompt. */
  @property({ attribute: false }) recalledTurns: StoredRecalledTurn[] = [];

  @state() private hasTools = false;
  /** The edit form is open. */
  @state() private editing = false;
  /** The delete confirmation is open. */
  @state() private confirming = false;
  /** Words selected in this message: "Remember selection" shows by them. */
  @state() private picked?: { text: string; top: number; left: number };
  /** Where focus goes after the next render (a selector in this shadow root). */
  private focusAfter?: string;
  /** The words selected when Remember this was pressed (a click may clear them first). */
  private pressedWith?: string;

  @query('.md') private md?: HTMLElement;
  @query('.item') private item?: HTMLElement;

  /**
   * What is in `.md`: what it was split from (`text`, then `count` pieces of the stream `pieces`),
   * the blocks in place and the markdown of those still to put in.
   */
  private shown?: {
    host: HTMLElement;
    feed: MarkdownFeed;
    text: string;
    pieces?: readonly string[];
    count: number;
    final: boolean;
    waiting: string[];
    /** The nodes of the block still arriving (replaced as it grows). */
    tail: Node[];
  };
  /**
   * The element the streaming caret follows (class `caret-after`). A class on that one element,
   * not a host-attribute selector: changing `state` then restyles one element, where
   * `:host([state]) .md … :last-child` restyled every block of the reply when the turn ended.
   */
  private caretAt?: Element;
  /** How far streamSeen looked in which stream, and whether it found more than white space. */
  private seen?: { pieces: readonly string[]; count: number; found: boolean };
  /** Blocks are to be put in (a frame, then a task after it, or a task alone): its cancel. */
  private frame?: () => void;
  /** The frame (its time) in which blocks were last put in. */
  private putAt?: CSSNumberish | null;

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.frame?.();
    this.frame = undefined;
    this.removeEventListener('pointerup', this.handleSelectEnd);
    this.removeEventListener('keyup', this.handleSelectEnd);
    document.removeEventListener('selectionchange', this.handleSelectionChange);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.shown?.waiting.length) this.scheduleBlocks();
    this.addEventListener('pointerup', this.handleSelectEnd);
    this.addEventListener('keyup', this.handleSelectEnd);
  }

  override updated(changed: PropertyValues<this>): void {
    if (['text', 'stream', 'kind', 'state'].some((k) => changed.has(k as keyof SmMessage))) {
      this.syncMarkdown();
    }
    const pick = this.renderRoot.querySelector<HTMLElement>('.pick');
    if (pick && this.picked) {
      // Placed through the CSSOM: the CSP allows no style attribute.
      pick.style.top = `${this.picked.top}px`;
      pick.style.left = `${this.picked.left}px`;
    }
    if (this.focusAfter) {
      const el = this.renderRoot.querySelector<HTMLElement>(this.focusAfter);
      this.focusAfter = undefined;
      el?.focus();
    }
  }

  /** Focus on this message's Remember this (a remember form under it closed). */
  focusRemember(): void {
    this.renderRoot.querySelector<HTMLElement>('.controls .remember')?.focus();
  }

  /** Focus on the message itself (its box, the list's Tab stop). */
  focusMessage(): void {
    this.item?.focus();
  }

  /** Focus on this message's first control (after a change elsewhere took focus away). */
  focusControls(): void {
    this.renderRoot.querySelector<HTMLElement>('.controls button:not(:disabled)')?.focus();
  }

  override render() {
    if (this.kind === 'notice') {
      return html`<div class="notice" role="note">${this.text}</div>`;
    }
    const title = this.time ? this.time.toLocaleString() : undefined;
    return html`
      <div
        class="item"
        role="article"
        aria-label=${this.kind === 'user' ? 'Your message' : 'Reply'}
        aria-describedby=${this.editing ? nothing : 'words'}
        tabindex=${this.current ? 0 : -1}
        @keydown=${this.handleKey}
      >
        ${
          this.editing
            ? this.renderEdit()
            : this.kind === 'user'
              ? this.renderUser(title)
              : this.renderAssistant(title)
        }
        <div class="tools ${this.hasTools ? 'some' : ''}">
          <slot @slotchange=${this.handleSlotChange}></slot>
        </div>
        ${this.renderMark()} ${this.renderRecalled()}
        ${this.confirming ? this.renderConfirm() : this.editing ? nothing : this.renderControls()}
      </div>
      ${this.renderPick()}
    `;
  }

  private renderRecalled() {
    if (this.kind !== 'assistant' || (!this.recalled.length && !this.recalledTurns.length))
      return nothing;
    // Links (inline, so a long one wraps with the note's text, on a phone too).
    const entries = this.recalled.map(
      (path) =>
        html`<a
          href="#"
          class="path"
          tabindex="-1"
          title="Show in the memory tree"
          @click=${(e: Event) => {
            e.preventDefault();
            this.handleRecalled(path);
          }}
          >${path}</a
        >`,
    );
    const labels = turnLabels(this.recalledTurns);
    const turns = this.recalledTurns.map((t, i) => {
      const label = labels[i];
      if (t.gone) return html`<span class="turn gone">${label}</span>`;
      return html`<a
        href="#"
        class="turn"
        tabindex="-1"
        title="Open this message in its chat"
        @click=${(e: Event) => {
          e.preventDefault();
          emit(this, 'sm-open-message', { conversationId: t.conversationId, messageId: t.turnId });
        }}
        >${label}</a
      >`;
    });
    return html`<div class="recalled">
      Recalled: ${[...entries, ...turns].map((b, i) => html`${i ? ', ' : ''}${b}`)}
    </div>`;
  }

  private renderControls() {
    const c = this.controls;
    if (!c || this.messageId === undefined) return nothing;
    const who = this.kind === 'user' ? 'your message' : 'reply';
    const alts = c.alternatives && c.alternatives.count > 1 ? c.alternatives : undefined;
    // Continue after a cut stands out; the rest shows on hover or focus (in a row kept for them
    // under the message, so they never cover its words).
    const goOn = !!c.continue && (this.cut || this.state !== 'done');
    return html`<div class="controls" role="group" aria-label="Message actions">
      ${
        alts
          ? html`<span class="alts" role="group" aria-label="Alternatives of this reply">
              <button
                type="button"
                class="prev"
                tabindex="-1"
                aria-label="Previous alternative"
                title="Previous alternative (←)"
                ?disabled=${this.busy || alts.shown <= 1}
                @click=${() => this.handleAlternative(-1)}
              >
                ${icon(ICONS.prev)}
              </button>
              <span aria-live="polite">${alts.shown}/${alts.count}</span>
              <button
                type="button"
                class="next"
                tabindex="-1"
                aria-label="Next alternative"
                title="Next alternative (→)"
                ?disabled=${this.busy || alts.shown >= alts.count}
                @click=${() => this.handleAlternative(1)}
              >
                ${icon(ICONS.next)}
              </button>
            </span>`
          : nothing
      }
      ${
        c.continue
          ? html`<button
              type="button"
              class="continue ${goOn ? 'outlined' : 'quiet'}"
              tabindex="-1"
              ?disabled=${this.busy}
              @click=${() => this.fire('sm-message-continue')}
            >
              Continue
            </button>`
          : nothing
      }
      ${
        c.regenerate
          ? html`<button
              type="button"
              class="regenerate ${alts ? '' : 'quiet'}"
              tabindex="-1"
              aria-label=${this.kind === 'user' ? 'Answer again' : 'Regenerate reply'}
              title=${this.kind === 'user' ? 'Answer again' : 'Regenerate (keeps this one)'}
              ?disabled=${this.busy}
              @click=${() => this.fire('sm-message-regenerate')}
            >
              ${icon(ICONS.regenerate)}
            </button>`
          : nothing
      }
      ${
        c.remember
          ? html`<button
              type="button"
              class="remember quiet"
              tabindex="-1"
              aria-label="Remember this"
              title="Remember this (the selected words, if any)"
              @pointerdown=${this.handleRememberPress}
              @click=${this.handleRemember}
            >
              ${icon(ICONS.remember)}
            </button>`
          : nothing
      }
      ${
        c.edit
          ? html`<button
              type="button"
              class="edit quiet"
              tabindex="-1"
              aria-label="Edit ${who}"
              title="Edit and resend"
              ?disabled=${this.busy}
              @click=${this.handleStartEdit}
            >
              ${icon(ICONS.edit)}
            </button>`
          : nothing
      }
      ${
        c.delete
          ? html`<button
              type="button"
              class="delete quiet"
              tabindex="-1"
              aria-label="Delete ${who}"
              title="Delete"
              ?disabled=${this.busy}
              @click=${this.handleAskDelete}
            >
              ${icon(ICONS.delete)}
            </button>`
          : nothing
      }
    </div>`;
  }

  private renderConfirm() {
    const tools = this.controls?.delete?.tools ?? 0;
    const what =
      this.kind === 'user'
        ? 'Delete your message? Its reply stays. This cannot be undone.'
        : `Delete this reply${tools ? ` and its ${tools === 1 ? 'tool result' : `${tools} tool results`}` : ''}? This cannot be undone.`;
    return html`<div
      class="confirm"
      role="group"
      aria-label="Confirm deleting"
      @keydown=${this.handleConfirmKey}
    >
      <p>${what} Memories saved from it stay.</p>
      <div class="row">
        <button class="cancel" type="button" @click=${this.handleCancelDelete}>Cancel</button>
        <button class="danger" type="button" @click=${this.handleConfirmDelete}>Delete</button>
      </div>
    </div>`;
  }

  private renderEdit() {
    const dropping = this.controls?.edit?.dropping ?? 0;
    return html`<form class="edit" @submit=${this.handleEditSubmit}>
      <textarea
        aria-label="Edit your message"
        aria-describedby="edit-note"
        .value=${this.text}
        @keydown=${this.handleEditKey}
      ></textarea>
      <p id="edit-note">
        ${
          dropping
            ? `Sending deletes the ${dropping === 1 ? 'message' : `${dropping} messages`} after this one (the reply and anything later; memories stay) and asks again.`
            : 'Sending asks the model again.'
        }
      </p>
      <div class="row">
        <button class="cancel" type="button" @click=${this.handleCancelEdit}>Cancel</button>
        <button class="primary" type="submit">Send</button>
      </div>
    </form>`;
  }

  /** "Remember selection", by the words selected in this message. */
  private renderPick() {
    if (!this.picked || !this.controls?.remember) return nothing;
    return html`<button
      type="button"
      class="pick"
      @mousedown=${this.handlePickPress}
      @click=${this.handlePick}
    >
      ${icon(ICONS.remember)} Remember selection
    </button>`;
  }

  /** The words selected in this message's text, if the selection lies wholly inside it. */
  private selectedWords() {
    const words = this.renderRoot.querySelector('.bubble .text, .bubble .md');
    return words && selectionWithin(this.renderRoot as ShadowRoot, words);
  }

  /** A selection made in the message (mouse or keys): offer Remember selection by its end. */
  private readonly handleSelectEnd = (): void => {
    if (!this.controls?.remember) return;
    const words = this.selectedWords();
    if (!words) return;
    const box = this.getBoundingClientRect();
    this.picked = {
      text: words.text,
      top: Math.round(words.rect.bottom - box.top + 4),
      // Room for the button (about 170 px) inside the message.
      left: Math.round(Math.max(0, Math.min(words.rect.right - box.left - 80, box.width - 170))),
    };
    document.addEventListener('selectionchange', this.handleSelectionChange);
  };

  /** The selection left the message (or was cleared): the button goes. */
  private readonly handleSelectionChange = (): void => {
    const words = this.selectedWords();
    if (words) {
      if (this.picked) this.picked = { ...this.picked, text: words.text };
      return;
    }
    this.picked = undefined;
    document.removeEventListener('selectionchange', this.handleSelectionChange);
  };

  /** Keeps the selection (and focus) where they are: the button acts on them. */
  private handlePickPress(event: MouseEvent): void {
    event.preventDefault();
  }

  private handlePick(): void {
    const text = this.picked?.text;
    if (!text || this.messageId === undefined) return;
    this.picked = undefined;
    document.removeEventListener('selectionchange', this.handleSelectionChange);
    emit(this, 'sm-message-remember', { id: this.messageId, text, selected: true });
  }

  private handleRememberPress(): void {
    this.pressedWith = this.selectedWords()?.text;
  }

  /** Remember this: the words selected in the message, else all of it. */
  private handleRemember(): void {
    const picked = this.pressedWith ?? this.selectedWords()?.text;
    this.pressedWith = undefined;
    this.picked = undefined;
    document.removeEventListener('selectionchange', this.handleSelectionChange);
    if (this.messageId === undefined) return;
    const text =
      picked ?? (this.kind === 'assistant' ? withoutThinking(this.text) : this.text).trim();
    if (!text) return;
    emit(this, 'sm-message-remember', { id: this.messageId, text, selected: !!picked });
  }

  private fire(name: 'sm-message-continue' | 'sm-message-regenerate' | 'sm-message-delete'): void {
    if (this.messageId === undefined || this.busy) return;
    emit(this, name, { id: this.messageId });
  }

  private handleRecalled(path: string): void {
    const detail: FollowPathDetail = { path, followMoves: true };
    emit(this, 'sm-select-path', detail);
  }

  private handleAlternative(step: -1 | 1): void {
    if (this.messageId === undefined || this.busy) return;
    emit(this, 'sm-message-alternative', { id: this.messageId, step });
  }

  /**
   * The keys of a message (docs/chat.md, "Keyboard"). On the message: ↑ ↓ Home End go to another
   * message (the panel does it), Enter or → to the first thing in it. On something in it (a link,
   * a tool card, a control): ← → the one before or after (← from the first: the message), Home
   * End the first or last, Escape the message, ↑ ↓ another message. Fields and the delete
   * confirmation keep their keys.
   */
  private handleKey(event: KeyboardEvent): void {
    const item = this.item;
    const target = event.composedPath()[0];
    if (!item || !(target instanceof HTMLElement)) return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (target.matches('input, textarea, select') || target.closest('.confirm, form.edit')) return;
    const onMessage = target === item;
    const vertical = event.key === 'ArrowUp' || event.key === 'ArrowDown';
    if (vertical || (onMessage && (event.key === 'Home' || event.key === 'End'))) {
      event.preventDefault();
      emit(this, 'sm-message-step', { step: stepOf(event.key, 'vertical')! });
      return;
    }
    const items = focusablesIn(item);
    if (onMessage) {
      if ((event.key === 'Enter' || event.key === 'ArrowRight') && items.length) {
        event.preventDefault();
        items[0].focus();
      }
      return;
    }
    if (event.key === 'Escape') {
      event.preventDefault();
      item.focus();
      return;
    }
    const step = stepOf(event.key, 'horizontal');
    if (!step) return;
    event.preventDefault();
    const to = stepIndex(step, items.indexOf(target), items.length);
    if (to !== undefined) items[to].focus();
    else if (step === 'previous') item.focus();
  }

  private handleStartEdit(): void {
    if (this.busy) return;
    this.confirming = false;
    this.editing = true;
    this.focusAfter = 'form.edit textarea';
  }

  private handleCancelEdit(): void {
    this.editing = false;
    this.focusAfter = '.controls .edit';
  }

  private handleEditKey(event: KeyboardEvent): void {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      this.handleCancelEdit();
    } else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      (event.currentTarget as HTMLTextAreaElement).form?.requestSubmit();
    }
  }

  private handleEditSubmit(event: SubmitEvent): void {
    event.preventDefault();
    const box = (event.currentTarget as HTMLFormElement).querySelector('textarea');
    const text = box?.value.trim() ?? '';
    if (!text || this.messageId === undefined || this.busy) return;
    this.editing = false;
    emit(this, 'sm-message-edit', { id: this.messageId, text });
  }

  private handleAskDelete(): void {
    if (this.busy) return;
    this.confirming = true;
    // The safe choice first: Enter or Space right away keeps the message.
    this.focusAfter = '.confirm .cancel';
  }

  private handleConfirmKey(event: KeyboardEvent): void {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    event.stopPropagation();
    this.handleCancelDelete();
  }

  private handleCancelDelete(): void {
    this.confirming = false;
    this.focusAfter = '.controls .delete';
  }

  private handleConfirmDelete(): void {
    this.confirming = false;
    this.fire('sm-message-delete');
  }

  private handleSlotChange(event: Event): void {
    const cards = (event.target as HTMLSlotElement).assignedElements();
    this.hasTools = cards.length > 0;
    // A host with a negative tabindex takes its shadow tree out of the Tab order: a tool card's
    // links are reached with the arrow keys, as the rest of the message.
    for (const card of cards) if (card instanceof HTMLElement) card.tabIndex = -1;
  }

  private renderUser(title: string | undefined) {
    // No whitespace around the text: the bubble keeps the user's line breaks (pre-wrap).
    return html`<div class="bubble" title=${title ?? nothing}>
      ${this.renderWho('You')}<span class="text" id="words">${this.text}</span>
    </div>`;
  }

  /** Who said it: a named speaker shown, else read only ("You: ", "Assistant: "). */
  private renderWho(role: string) {
    return this.speaker
      ? html`<span class="speaker">${this.speaker}<span class="who">: </span></span>`
      : html`<span class="who">${role}: </span>`;
  }

  private renderAssistant(title: string | undefined) {
    const streaming = this.state === 'streaming';
    const blank = !/\S/.test(this.text) && !this.streamSeen();
    // `.md` has no bindings: its content is put in by syncMarkdown, block by block.
    return html`<div
      class="bubble ${blank && !streaming ? 'empty' : ''}"
      title=${title ?? nothing}
      aria-busy=${streaming ? 'true' : 'false'}
    >
      ${this.renderWho('Assistant')} ${this.renderThought()}
      <div class="md" id="words"></div>
      ${streaming && blank ? html`<span class="caret" aria-hidden="true"></span>` : nothing}
    </div>`;
  }

  /**
   * A reply's thinking (`<think>…</think>` at its start): folded away above the answer, as plain
   * text (docs/chat.md, "Tool calls written as text"). While the reply streams, the thinking so far, open until
   * the answer begins; one template for both, so a fold the person opened stays open.
   */
  private renderThought() {
    const live = this.stream || this.state === 'streaming';
    const thought = live ? this.liveThought?.text : splitThinking(this.text)?.thought;
    if (!thought) return nothing;
    const thinking = live && !!this.liveThought?.open;
    return html`<details class="thought" ?open=${thinking}>
      <summary>${thinking ? 'Thinking…' : 'Thought'}</summary>
      <div class="thought-text">${thought}</div>
    </details>`;
  }

  /** Whether the stream has more than white space (read on from where it last looked). */
  private streamSeen(): boolean {
    const stream = this.stream;
    if (!stream) return false;
    const seen = this.seen;
    if (seen?.pieces === stream.pieces && (seen.found || seen.count >= stream.count)) {
      return seen.found;
    }
    let at = seen?.pieces === stream.pieces ? seen.count : 0;
    while (at < stream.count && !/\S/.test(stream.pieces[at])) at++;
    this.seen = { pieces: stream.pieces, count: at, found: at < stream.count };
    return this.seen.found;
  }

  /**
   * Brings `.md` up to `text` and `stream`. While the stream grows, only its new pieces are
   * read, and new blocks are put in, the block still arriving rendered again. Another text that
   * differs only from the open block's start on (it grew, or lost trailing space as it was
   * stored) goes on from there too; any other change starts afresh.
   */
  private syncMarkdown(): void {
    const host = this.kind === 'assistant' ? this.md : undefined;
    if (!host) {
      this.shown = undefined;
      return;
    }
    const { text, stream } = this;
    const pieces = stream?.pieces;
    const count = stream?.count ?? 0;
    const final = this.state !== 'streaming';
    let shown = this.shown;
    const same = shown?.text === text && shown.pieces === pieces;
    // Done, stopped or cut off: the same finished text needs nothing more.
    if (shown?.host === host && shown.final && final && same && shown.count === count) return;
    if (shown?.host === host && !shown.final && same && pieces && count >= shown.count) {
      // The stream grew: read what arrived, nothing before it.
      if (count > shown.count) shown.feed.append(pieces.slice(shown.count, count).join(''));
    } else {
      // A stored reply's thinking is shown apart (renderThought); the markdown is its answer.
      const whole = pieces
        ? text + pieces.slice(0, count).join('')
        : final
          ? (splitThinking(text)?.answer ?? text)
          : text;
      // The streamed reply, finished, now handed over as its stored text: nothing changed.
      if (shown?.host === host && shown.final && final && whole === shown.feed.all) {
        Object.assign(shown, { text, pieces, count });
        return;
      }
      if (!shown || shown.host !== host || shown.final || !shown.feed.restart(whole)) {
        host.replaceChildren();
        const feed = new MarkdownFeed();
        feed.append(whole);
        shown = this.shown = { host, feed, text, count, final, waiting: [], tail: [] };
      }
    }
    shown.text = text;
    shown.pieces = pieces;
    shown.count = count;
    shown.final = final;
    if (final) this.moveCaret(undefined);
    shown.waiting.push(...shown.feed.split(final));
    // With blocks still waiting, the put already asked for puts these in after them. Blocks
    // closed while the reply streams go in in a task of their own right after this frame, laid
    // out there, so that a frame holds only the block still arriving: style, layout and paint
    // of what was put in made frames of about 30 ms CPU on a 1 MB reply (bench/README.md,
    // Streaming). A text shown whole (stored, or the stream's end) goes in at once, as before.
    if (this.frame !== undefined) return;
    if (!final && shown.waiting.length) this.scheduleBlocks(false);
    else this.putBlocks(false);
  }

  /**
   * Puts waiting blocks in, up to the budget, then the block still arriving; asks for another
   * put after the next frame for the rest. `layoutNow` (a put in a task of its own): what was put
   * in is laid out in this task, not in the next frame's.
   */
  private putBlocks(layoutNow: boolean): void {
    const shown = this.shown;
    if (!shown) return;
    // In a frame, blocks once: the chat's update and this element's own can both come in one.
    const frameTime = document.timeline.currentTime;
    if (!layoutNow && shown.waiting.length && frameTime !== null && frameTime === this.putAt) {
      this.scheduleBlocks(true);
      return;
    }
    if (!layoutNow && shown.waiting.length) this.putAt = frameTime;
    const { host } = shown;
    for (const n of shown.tail) n.parentNode?.removeChild(n);
    shown.tail = [];
    let offered = 0;
    let chars = 0;
    while (offered < shown.waiting.length && (offered === 0 || chars < OFFER_CHARS)) {
      chars += shown.waiting[offered++].length;
    }
    if (offered) {
      const { nodes, taken } = renderMarkdownBlocks(
        shown.waiting.slice(0, offered),
        true,
        layoutNow ? TASK_PARSE_MS : PARSE_MS,
      );
      untab(nodes);
      shown.waiting.splice(0, taken);
      // In boxes of CHUNK_NODES: a box of finished blocks is laid out once, so each frame's
      // layout does not walk every block of a long reply.
      while (nodes.firstChild) {
        let chunk = host.lastElementChild;
        if (!chunk || chunk.childNodes.length >= CHUNK_NODES) {
          chunk = document.createElement('div');
          chunk.className = 'chunk';
          host.append(chunk);
        }
        const room = CHUNK_NODES - chunk.childNodes.length;
        for (let i = 0; i < room && nodes.firstChild; i++) chunk.append(nodes.firstChild);
      }
    }
    if (shown.waiting.length) {
      // Small puts, several between two frames while the frame's share lasts: a task's layout
      // grows with what it put in.
      const sinceFrame = typeof frameTime === 'number' ? performance.now() - frameTime : Infinity;
      this.scheduleBlocks(!layoutNow || !(sinceFrame < TASKS_MS));
    } else {
      const open = shown.final ? '' : shown.feed.openSource();
      if (open) {
        const { nodes } = renderMarkdownBlocks([open], false);
        untab(nodes);
        shown.tail = [...nodes.childNodes];
        host.append(nodes);
      }
    }
    if (!shown.final) this.caretAtEnd(host);
    // Reading a size lays out what changed now, in this task.
    if (layoutNow && offered) void host.offsetHeight;
  }

  /** The caret after the last block shown. */
  private caretAtEnd(host: HTMLElement): void {
    const last = host.lastElementChild;
    this.moveCaret(last?.classList.contains('chunk') ? last.lastElementChild : last);
  }

  private moveCaret(to: Element | null | undefined): void {
    if (this.caretAt === to) return;
    this.caretAt?.classList.remove('caret-after');
    to?.classList.add('caret-after');
    this.caretAt = to ?? undefined;
  }

  /** A put of waiting blocks in a task of its own: after the next frame, or as soon as can be. */
  private scheduleBlocks(afterFrame = true): void {
    if (this.frame !== undefined || !this.isConnected) return;
    let cancelTask: (() => void) | undefined;
    const put = () => {
      cancelTask = postTask(() => {
        this.frame = undefined;
        this.putBlocks(true);
      });
    };
    if (!afterFrame) {
      put();
      this.frame = () => cancelTask?.();
      return;
    }
    const raf = requestAnimationFrame(put);
    this.frame = () => {
      cancelAnimationFrame(raf);
      cancelTask?.();
    };
  }

  private renderMark() {
    if (this.state === 'stopped') return html`<div class="mark stopped">Stopped</div>`;
    if (this.cut && this.state === 'done') {
      return html`<div class="mark partial">Cut off at the length limit</div>`;
    }
    if (this.state === 'partial') {
      return html`<div class="mark partial">Incomplete: the answer was cut off by an error</div>`;
    }
    return nothing;
  }
}

/**
 * Runs `fn` in a task of its own, ahead of the stream reader's (which yields with
 * `scheduler.yield()`, whose continuations would otherwise come first); returns its cancel.
 */
function postTask(fn: () => void): () => void {
  const scheduler = (
    globalThis as {
      scheduler?: {
        postTask?: (
          f: () => void,
          o: { priority: 'user-blocking'; signal: AbortSignal },
        ) => Promise<unknown>;
      };
    }
  ).scheduler;
  if (typeof scheduler?.postTask === 'function') {
    const abort = new AbortController();
    scheduler.postTask(fn, { priority: 'user-blocking', signal: abort.signal }).catch(() => {
      // Aborted: the message left the page or started afresh.
    });
    return () => abort.abort();
  }
  const timer = setTimeout(fn, 0);
  return () => clearTimeout(timer);
}

/** Links in the model's words are reached with the arrow keys, not Tab (the message is one stop). */
function untab(nodes: ParentNode): void {
  for (const a of nodes.querySelectorAll<HTMLElement>('a[href]')) a.tabIndex = -1;
}

/**
 * Milliseconds of markdown parsing a frame may spend on finished blocks (at least one block);
 * sanitising and laying out what it parsed cost about as much again, and the rest waits for the
 * next frame. Time, not characters: under load a fixed size took a long task of its own
 * (bench/README.md, Streaming).
 */
const PARSE_MS = 1.5;

/**
 * The same for a put in a task of its own (blocks closed while the reply streams), which lays out
 * what it put in as well: smaller, so that such a task stays short (bench/README.md, Streaming).
 */
const TASK_PARSE_MS = 1;

/** Milliseconds after a frame's start in which more puts may follow one another. */
const TASKS_MS = 20;

/** Markdown offered to one frame's parse at most (its time budget decides what is taken). */
const OFFER_CHARS = 64 * 1024;

/** Top-level nodes of finished blocks per box (a plain div: margins collapse across it). */
const CHUNK_NODES = 64;

declare global {
  interface HTMLElementTagNameMap {
    'sm-message': SmMessage;
  }
}
