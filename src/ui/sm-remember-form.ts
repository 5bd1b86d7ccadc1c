// "Remember this" (docs/chat.md): a small form under a chat message with the words to remember
// and the path to save them at, both editable; the path is filled in when the engine's proposal
// arrives. Save and Cancel go up as events (the chat saves); once saved, it says where, as a
// link into the explorer.
import { LitElement, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import { emit } from './events';
import type { FollowPathDetail } from './sm-tool-card';
import { base, tokens } from './styles';
import { rememberFormStyles } from './sm-remember-form.styles';

export interface RememberSaveDetail {
  text: string;
  path: string;
}

/** Where the engine proposed to save the words, and why there. */
export interface RememberSuggestion {
  path: string;
  heading: string;
  /** `match`: entries under the heading match the words; `default`: none did. */
  basis: 'match' | 'default';
}

declare module './events' {
  interface SmEvents {
    /** Save the words at the path (the form stays open until told how it went). */
    'sm-remember-save': RememberSaveDetail;
    /** Close the form (Cancel, Escape, or Close after saving). */
    'sm-remember-close': undefined;
  }
}

declare global {
  interface GlobalEventHandlersEventMap {
    'sm-remember-save': CustomEvent<RememberSaveDetail>;
    'sm-remember-close': CustomEvent<undefined>;
  }
  interface HTMLElementTagNameMap {
    'sm-remember-form': SmRememberForm;
  }
}

/**
 * `<sm-remember-form>`: what to remember and where, then where it was saved.
 *
 * @fires sm-remember-save - Save was pressed with words and a path (`{ text, path }`).
 * @fires sm-remember-close - Cancel, Escape, or Close after saving.
 * @fires sm-select-path - The saved path was clicked (`{ path, followMoves: true }`).
 */
@customElement('sm-remember-form')
export class SmRememberForm extends LitElement {
  static override styles = [tokens, base, rememberFormStyles];

  /** Whose message it remembers: the form lines up with it (a user's on the right). */
  @property({ reflect: true }) kind: 'user' | 'assistant' = 'assistant';

  /** The words to remember, as the form opens (the person may change them). */
  @property() text = '';

  /** The words are a selection from the message (not the whole of it). */
  @property({ type: Boolean }) selected = false;

  /** The engine's proposal; undefined while it is asked for. */
  @property({ attribute: false }) suggestion?: RememberSuggestion;

  /** Why no path was proposed, as a sentence. */
  @property() suggestError = '';

  /** The save is on its way. */
  @property({ type: Boolean }) saving = false;

  /** Why the last save failed (the engine's sentence); the words and path stay as they were. */
  @property() error = '';

  /** The path the words were saved at: the form gives way to the confirmation. */
  @property() saved = '';

  @state() private draftText = '';
  @state() private draftPath = '';
  /** What the form itself says is wrong before anything is sent. */
  @state() private problem = '';
  /** The person typed a path: a proposal arriving later does not replace it. */
  private pathTouched = false;

  @query('textarea') private textBox?: HTMLTextAreaElement;
  @query('.saved .path') private savedLink?: HTMLButtonElement;

  override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('text')) this.draftText = this.text;
    if (changed.has('suggestion') && this.suggestion && !this.pathTouched) {
      this.draftPath = this.suggestion.path;
    }
  }

  override firstUpdated(): void {
    this.textBox?.focus();
  }

  override updated(changed: PropertyValues<this>): void {
    // The form's fields are gone: the confirmation's link takes the focus.
    if (changed.has('saved') && this.saved) this.savedLink?.focus();
  }

  override render() {
    return this.saved ? this.renderSaved() : this.renderForm();
  }

  private renderForm() {
    const waiting = !this.suggestion && !this.suggestError && !this.pathTouched;
    return html`<form
      aria-labelledby="title"
      @submit=${this.handleSubmit}
      @keydown=${this.handleKey}
    >
      <p class="title" id="title">
        ${this.selected ? 'Remember the selected words' : 'Remember this message'}
      </p>
      <label for="text">Words to remember</label>
      <textarea
        id="text"
        .value=${this.draftText}
        @input=${this.handleTextInput}
        @keydown=${this.handleTextKey}
      ></textarea>
      <label for="path">Save at</label>
      <input
        id="path"
        type="text"
        spellcheck="false"
        autocomplete="off"
        placeholder=${waiting ? 'Finding a place…' : 'Heading/Name'}
        aria-describedby="path-note"
        .value=${this.draftPath}
        @input=${this.handlePathInput}
      />
      <p id="path-note" class="note ${this.suggestError ? 'warn' : ''}">${this.pathNote()}</p>
      ${
        this.problem || this.error
          ? html`<p class="problem" role="alert">${this.problem || this.error}</p>`
          : nothing
      }
      <div class="row">
        <button class="cancel" type="button" @click=${this.handleCancel}>Cancel</button>
        <button class="primary" type="submit" ?disabled=${this.saving}>
          ${this.saving ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>`;
  }

  private renderSaved() {
    return html`<div class="saved" role="status" @keydown=${this.handleKey}>
      <span
        >Remembered at
        <button
          class="path"
          type="button"
          title="Show in the memory tree"
          @click=${this.handleOpenSaved}
        >
          ${this.saved}
        </button></span
      >
      <button class="close" type="button" @click=${this.handleCancel}>Close</button>
    </div>`;
  }

  /** Under the path: how it was proposed, or why it was not. */
  private pathNote(): string {
    if (this.suggestError) return this.suggestError;
    const s = this.suggestion;
    if (!s) return this.pathTouched ? '' : 'Looking for the heading it belongs under…';
    if (this.pathTouched && this.draftPath !== s.path) return `Proposed: ${s.path}`;
    return s.basis === 'match'
      ? `Under ${s.heading}, where the memories most like it are.`
      : `Nothing like it in memory yet, so under ${s.heading}.`;
  }

  private handleTextInput(event: InputEvent): void {
    this.draftText = (event.target as HTMLTextAreaElement).value;
    this.problem = '';
  }

  private handlePathInput(event: InputEvent): void {
    this.draftPath = (event.target as HTMLInputElement).value;
    this.pathTouched = true;
    this.problem = '';
  }

  /** Ctrl+Enter (⌘+Enter) saves from the words too; Enter alone starts a new line. */
  private handleTextKey(event: KeyboardEvent): void {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !event.isComposing) {
      event.preventDefault();
      (event.currentTarget as HTMLTextAreaElement).form?.requestSubmit();
    }
  }

  private handleKey(event: KeyboardEvent): void {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    event.stopPropagation();
    this.handleCancel();
  }

  private handleSubmit(event: SubmitEvent): void {
    event.preventDefault();
    if (this.saving) return;
    const text = this.draftText.trim();
    const path = this.draftPath.trim();
    if (!text) this.problem = 'Write the words to remember.';
    else if (!path) this.problem = 'Give a path to save them at, like Notes/Budget.';
    else emit(this, 'sm-remember-save', { text, path });
  }

  private handleCancel(): void {
    emit(this, 'sm-remember-close', undefined);
  }

  private handleOpenSaved(): void {
    const detail: FollowPathDetail = { path: this.saved, followMoves: true };
    emit(this, 'sm-select-path', detail);
  }
}
