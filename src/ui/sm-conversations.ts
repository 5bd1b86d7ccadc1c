// The list of conversations: start a new one, switch, rename in place, delete after a confirm
// step inside the list. It only emits events; the app does the work and passes the new list down.
// The list is one Tab stop: ↑ ↓ move between chats, → ← to a chat's Rename and Delete (docs/chat.md).
import { LitElement, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { Conversation } from '../memory/types';
import { emit } from './events';
import { base, tokens } from './styles';
import { conversationsStyles } from './sm-conversations.styles';
import { stepIndex, stepOf } from './roving';

export interface ConversationIdDetail {
  id: number;
}

export interface RenameConversationDetail {
  id: number;
  title: string;
}

declare module './events' {
  interface SmEvents {
    /** Start a new conversation. */
    'sm-new-conversation': undefined;
    /** Show another conversation. */
    'sm-switch-conversation': ConversationIdDetail;
    /** Give a conversation a new title (trimmed, not empty, changed). */
    'sm-rename-conversation': RenameConversationDetail;
    /** Delete a conversation (the user already confirmed). */
    'sm-delete-conversation': ConversationIdDetail;
  }
}

declare global {
  interface GlobalEventHandlersEventMap {
    'sm-new-conversation': CustomEvent<undefined>;
    'sm-switch-conversation': CustomEvent<ConversationIdDetail>;
    'sm-rename-conversation': CustomEvent<RenameConversationDetail>;
    'sm-delete-conversation': CustomEvent<ConversationIdDetail>;
  }
}

/**
 * `<sm-conversations>`: the conversation list, newest first.
 *
 * @fires sm-new-conversation - "New chat" was clicked.
 * @fires sm-switch-conversation - A conversation was chosen (`{ id }`).
 * @fires sm-rename-conversation - A new title was entered (`{ id, title }`).
 * @fires sm-delete-conversation - Deleting was confirmed (`{ id }`).
 */
@customElement('sm-conversations')
export class SmConversations extends LitElement {
  static override styles = [tokens, base, conversationsStyles];

  /** The chats, newest first; undefined until they are read (the app opening): no list yet. */
  @property({ attribute: false }) conversations?: Conversation[];

  /** The chats listed (none before they are read). */
  private get listed(): Conversation[] {
    return this.conversations ?? [];
  }

  /** The conversation shown in the chat. */
  @property({ type: Number }) activeId?: number;

  /** The conversation whose title is being edited. */
  @state() private editingId?: number;

  /** The conversation waiting for the delete confirmation. */
  @state() private confirmingId?: number;

  /** The chat last focused in the list: the list's Tab stop while it is there (else the open one). */
  @state() private stopId?: number;

  /** Where focus goes after the next render. */
  private focusAfter?: string;

  override updated(changed: PropertyValues<this>): void {
    if (changed.has('conversations')) {
      const ids = new Set(this.listed.map((c) => c.id));
      if (this.editingId !== undefined && !ids.has(this.editingId)) this.editingId = undefined;
      if (this.confirmingId !== undefined && !ids.has(this.confirmingId))
        this.confirmingId = undefined;
    }
    if (this.focusAfter) {
      const el = this.renderRoot.querySelector<HTMLElement>(this.focusAfter);
      this.focusAfter = undefined;
      el?.focus();
      if (el instanceof HTMLInputElement) el.select();
    }
  }

  override render() {
    return html`
      <div class="head">
        <h2 id="chats-heading">Chats</h2>
        <button class="new primary" type="button" @click=${this.handleNew}>New chat</button>
      </div>
      ${
        // Nothing while the chats are read (under a second as the app opens), rather than a
        // "No chats yet." that is not true.
        !this.conversations
          ? nothing
          : this.conversations.length
            ? html`<ul
                aria-labelledby="chats-heading"
                @focusin=${this.handleFocusIn}
                @keydown=${this.handleListKey}
              >
                ${this.conversations.map((c) => this.renderItem(c))}
              </ul>`
            : html`<p class="empty">No chats yet.</p>`
      }
    `;
  }

  private renderItem(c: Conversation) {
    const id = c.id;
    if (id === undefined) return nothing;
    const active = id === this.activeId;
    const title = c.title.trim() || 'Untitled chat';
    const stop = this.tabStop() === id ? 0 : -1;
    return html`<li class=${active ? 'active' : ''} data-id=${id}>
      ${
        this.editingId === id
          ? this.renderRename(id, c.title)
          : html`<div class="row">
              <button
                class="open"
                id="open-${id}"
                type="button"
                aria-current=${active ? 'true' : 'false'}
                title=${title}
                tabindex=${stop}
                @click=${() => this.handleSwitch(id)}
              >
                <span class="title">${title}</span>
                <span class="when">${relativeTime(c.modified)}</span>
              </button>
              <span class="actions">
                <button
                  class="icon"
                  id="rename-${id}"
                  type="button"
                  tabindex="-1"
                  aria-label="Rename chat: ${title}"
                  title="Rename"
                  @click=${() => this.handleStartRename(id)}
                >
                  <svg viewBox="0 0 16 16" aria-hidden="true">
                    <path d="M11 2.5l2.5 2.5L6 12.5H3.5V10z" />
                  </svg>
                </button>
                <button
                  class="icon"
                  id="delete-${id}"
                  type="button"
                  tabindex="-1"
                  aria-label="Delete chat: ${title}"
                  title="Delete"
                  @click=${() => this.handleAskDelete(id)}
                >
                  <svg viewBox="0 0 16 16" aria-hidden="true">
                    <path d="M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.7 8.5h5.6l.7-8.5" />
                  </svg>
                </button>
              </span>
            </div>`
      }
      ${this.confirmingId === id ? this.renderConfirm(id, title) : nothing}
    </li>`;
  }

  private renderRename(id: number, title: string) {
    return html`<form class="rename" @submit=${(e: SubmitEvent) => this.handleRenameSubmit(e, id)}>
      <input
        id="title-${id}"
        aria-label="Chat title"
        .value=${title}
        maxlength="200"
        @keydown=${(e: KeyboardEvent) => this.handleRenameKey(e, id)}
        @blur=${(e: FocusEvent) => this.handleRenameBlur(e, id)}
      />
    </form>`;
  }

  private renderConfirm(id: number, title: string) {
    return html`<div
      class="confirm"
      role="group"
      aria-label="Confirm deleting ${title}"
      @keydown=${(e: KeyboardEvent) => this.handleConfirmKey(e, id)}
    >
      <p>
        Delete “${title}” and its messages? Memories saved from it stay; its messages leave the
        search index.
      </p>
      <div class="buttons">
        <button
          class="danger"
          id="confirm-${id}"
          type="button"
          @click=${() => this.handleConfirmDelete(id)}
        >
          Confirm delete
        </button>
        <button type="button" id="cancel-${id}" @click=${() => this.handleCancelDelete(id)}>
          Cancel
        </button>
      </div>
    </div>`;
  }

  /** The chat whose button is the list's Tab stop: the one last focused, else the open one. */
  private tabStop(): number | undefined {
    const ids = this.listed.map((c) => c.id);
    if (this.stopId !== undefined && ids.includes(this.stopId)) return this.stopId;
    return ids.includes(this.activeId) ? this.activeId : ids[0];
  }

  private handleFocusIn(event: FocusEvent): void {
    const li = (event.target as HTMLElement).closest('li');
    const id = Number(li?.dataset.id);
    if (li && Number.isInteger(id)) this.stopId = id;
  }

  /**
   * On a chat: ↑ ↓ Home End another chat, → its Rename. On Rename or Delete: ← → along the row,
   * Escape back to the chat, ↑ ↓ another chat. The title field and the confirmation keep their keys.
   */
  private handleListKey(event: KeyboardEvent): void {
    const target = event.target as HTMLElement;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (!(target instanceof HTMLButtonElement) || target.closest('.confirm')) return;
    const li = target.closest('li');
    if (!li) return;
    const row = [...li.querySelectorAll<HTMLElement>('.row button')];
    const onChat = target.classList.contains('open');
    const vertical = event.key === 'ArrowUp' || event.key === 'ArrowDown';
    if (vertical || (onChat && (event.key === 'Home' || event.key === 'End'))) {
      const chats = [...this.renderRoot.querySelectorAll<HTMLElement>('li .row button.open')];
      const at = chats.indexOf(li.querySelector('button.open')!);
      const to = stepIndex(stepOf(event.key, 'vertical')!, at, chats.length);
      event.preventDefault();
      chats[to ?? at]?.focus();
      return;
    }
    if (event.key === 'Escape' && !onChat) {
      event.preventDefault();
      row[0]?.focus();
      return;
    }
    const step = stepOf(event.key, 'horizontal');
    if (!step) return;
    event.preventDefault();
    const to = stepIndex(step, row.indexOf(target), row.length);
    if (to !== undefined) row[to].focus();
  }

  private handleNew(): void {
    emit(this, 'sm-new-conversation', undefined);
  }

  private handleSwitch(id: number): void {
    this.confirmingId = undefined;
    emit(this, 'sm-switch-conversation', { id });
  }

  private handleStartRename(id: number): void {
    this.confirmingId = undefined;
    this.editingId = id;
    this.focusAfter = `#title-${id}`;
  }

  private handleRenameSubmit(event: SubmitEvent, id: number): void {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).querySelector('input');
    this.finishRename(id, input?.value ?? '');
  }

  private handleRenameKey(event: KeyboardEvent, id: number): void {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    this.editingId = undefined;
    this.focusAfter = `#rename-${id}`;
  }

  /** Leaving the field keeps what was typed, as Enter would. */
  private handleRenameBlur(event: FocusEvent, id: number): void {
    if (this.editingId !== id) return;
    this.finishRename(id, (event.target as HTMLInputElement).value, false);
  }

  private finishRename(id: number, value: string, refocus = true): void {
    if (this.editingId !== id) return;
    this.editingId = undefined;
    if (refocus) this.focusAfter = `#rename-${id}`;
    const title = value.trim();
    const before = this.listed.find((c) => c.id === id)?.title ?? '';
    if (title && title !== before) emit(this, 'sm-rename-conversation', { id, title });
  }

  private handleAskDelete(id: number): void {
    this.editingId = undefined;
    this.confirmingId = id;
    // The safe choice first: Enter or Space right away keeps the chat.
    this.focusAfter = `#cancel-${id}`;
  }

  /** Escape in the confirmation: as Cancel. */
  private handleConfirmKey(event: KeyboardEvent, id: number): void {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    this.handleCancelDelete(id);
  }

  private handleCancelDelete(id: number): void {
    this.confirmingId = undefined;
    this.focusAfter = `#delete-${id}`;
  }

  private handleConfirmDelete(id: number): void {
    this.confirmingId = undefined;
    this.focusAfter = '.new';
    emit(this, 'sm-delete-conversation', { id });
  }
}

const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "just now", "5 minutes ago", "yesterday", then a date. */
function relativeTime(date: Date | undefined, now = Date.now()): string {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) return '';
  const seconds = Math.round((date.getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return 'just now';
  if (abs < 3600) return RELATIVE.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return RELATIVE.format(Math.round(seconds / 3600), 'hour');
  if (abs < 7 * 86_400) return RELATIVE.format(Math.round(seconds / 86_400), 'day');
  return date.toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    year: new Date(now).getFullYear() === date.getFullYear() ? undefined : 'numeric',
  });
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-conversations': SmConversations;
  }
}
