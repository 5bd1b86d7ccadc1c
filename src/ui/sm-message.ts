// One chat message: the user's words as text, the model's as sanitised markdown, or a notice.
// Streaming-friendly: set `text` again on every token; the markdown is re-rendered only when
// the text changes.
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { unsafeHTML } from 'lit/directives/unsafe-html.js';
import { renderMarkdown } from './markdown';
import { base, tokens } from './styles';

export type MessageKind = 'user' | 'assistant' | 'notice';

/** Where a message stands: still streaming, complete, stopped by the user, or cut off by an error. */
export type MessageState = 'done' | 'streaming' | 'stopped' | 'partial';

/**
 * `<sm-message>`: one message bubble.
 *
 * @slot - Below the text: the tool cards of an assistant message.
 */
@customElement('sm-message')
export class SmMessage extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        display: flex;
        flex-direction: column;
        align-items: flex-start;
        scroll-margin: 24px;
      }
      :host([kind='user']) {
        align-items: flex-end;
      }
      .bubble {
        max-width: min(46rem, 100%);
        min-width: 0;
        padding: 8px 12px;
        border-radius: 10px;
        line-height: 1.5;
        overflow-wrap: anywhere;
        transition: box-shadow 0.3s;
      }
      :host([kind='user']) .bubble {
        max-width: min(36rem, 88%);
        background: #e6ecfb;
        border-bottom-right-radius: 3px;
      }
      .text {
        white-space: pre-wrap;
      }
      :host([kind='assistant']) .bubble {
        background: var(--sm-surface);
        border: 1px solid var(--sm-border);
        border-bottom-left-radius: 3px;
      }
      :host([kind='assistant']) .bubble.empty {
        display: none;
      }
      :host([highlighted]) .bubble,
      :host([highlighted]) .bubble.empty + .tools {
        box-shadow: 0 0 0 3px #f2c94c;
        border-radius: 10px;
      }
      :host([kind='notice']) {
        align-items: center;
      }
      .notice {
        max-width: 40rem;
        font-size: 0.85rem;
        color: var(--sm-muted);
        text-align: center;
        white-space: pre-wrap;
      }
      .notice::before {
        content: 'ℹ︎ ';
      }
      .who {
        position: absolute;
        width: 1px;
        height: 1px;
        overflow: hidden;
        clip-path: inset(50%);
        white-space: nowrap;
      }
      .md > :first-child {
        margin-top: 0;
      }
      .md > :last-child {
        margin-bottom: 0;
      }
      .md p,
      .md ul,
      .md ol,
      .md pre,
      .md blockquote,
      .md table {
        margin: 0 0 0.6em;
      }
      .md h1,
      .md h2,
      .md h3,
      .md h4,
      .md h5,
      .md h6 {
        margin: 0.8em 0 0.4em;
        font-size: 1em;
        line-height: 1.3;
      }
      .md h1 {
        font-size: 1.2em;
      }
      .md h2 {
        font-size: 1.1em;
      }
      .md ul,
      .md ol {
        padding-left: 1.4em;
      }
      .md li + li {
        margin-top: 0.15em;
      }
      .md code {
        background: var(--sm-surface-2);
        padding: 0.1em 0.3em;
        border-radius: 3px;
      }
      .md pre {
        background: var(--sm-surface-2);
        padding: 8px 10px;
        border-radius: var(--sm-radius);
        overflow-x: auto;
        white-space: pre;
        overflow-wrap: normal;
      }
      .md pre code {
        background: none;
        padding: 0;
      }
      .md blockquote {
        padding-left: 10px;
        border-left: 3px solid var(--sm-border);
        color: var(--sm-muted);
      }
      .md a[href] {
        color: var(--sm-accent);
      }
      .md table {
        border-collapse: collapse;
        display: block;
        overflow-x: auto;
      }
      .md th,
      .md td {
        border: 1px solid var(--sm-border);
        padding: 3px 8px;
      }
      .md hr {
        border: 0;
        border-top: 1px solid var(--sm-border);
      }
      .caret,
      :host([state='streaming']) .md > :last-child::after {
        content: '';
        display: inline-block;
        width: 0.5em;
        height: 1em;
        margin-left: 2px;
        vertical-align: text-bottom;
        background: var(--sm-muted);
        animation: blink 1s steps(2) infinite;
      }
      @keyframes blink {
        to {
          visibility: hidden;
        }
      }
      .mark {
        margin-top: 3px;
        font-size: 0.78rem;
        color: var(--sm-muted);
      }
      .mark.partial {
        color: var(--sm-warn);
      }
      .tools {
        display: flex;
        flex-direction: column;
        gap: 6px;
        width: min(46rem, 100%);
      }
      .tools.some {
        margin-top: 6px;
      }
      .bubble.empty + .tools.some {
        margin-top: 0;
      }
      @media (prefers-reduced-motion: reduce) {
        .caret,
        :host([state='streaming']) .md > :last-child::after {
          animation: none;
        }
      }
    `,
  ];

  /** Who speaks: `user` (plain text), `assistant` (markdown) or `notice` (a muted info line). */
  @property({ reflect: true }) kind: MessageKind = 'assistant';

  /** The message text; for the assistant, markdown. */
  @property() text = '';

  /** Streaming (a caret at the end), done, stopped by the user, or partial (cut off by an error). */
  @property({ reflect: true }) state: MessageState = 'done';

  /** When it was written (shown as a tooltip). */
  @property({ attribute: false }) time?: Date;

  /** Briefly set when a link leads here, to draw the eye. */
  @property({ type: Boolean, reflect: true }) highlighted = false;

  @state() private hasTools = false;

  /** The sanitised markdown of `text`; recomputed only when the text changes. */
  private html = '';

  override willUpdate(changed: PropertyValues<this>): void {
    if ((changed.has('text') || changed.has('kind')) && this.kind === 'assistant') {
      this.html = this.text.trim() ? renderMarkdown(this.text) : '';
    }
  }

  override render() {
    if (this.kind === 'notice') {
      return html`<div class="notice" role="note">${this.text}</div>`;
    }
    const title = this.time ? this.time.toLocaleString() : undefined;
    return html`
      ${this.kind === 'user' ? this.renderUser(title) : this.renderAssistant(title)}
      <div class="tools ${this.hasTools ? 'some' : ''}">
        <slot @slotchange=${this.handleSlotChange}></slot>
      </div>
      ${this.renderMark()}
    `;
  }

  private handleSlotChange(event: Event): void {
    this.hasTools = (event.target as HTMLSlotElement).assignedElements().length > 0;
  }

  private renderUser(title: string | undefined) {
    // No whitespace around the text: the bubble keeps the user's line breaks (pre-wrap).
    return html`<div class="bubble" title=${title ?? nothing}>
      <span class="who">You: </span><span class="text">${this.text}</span>
    </div>`;
  }

  private renderAssistant(title: string | undefined) {
    const streaming = this.state === 'streaming';
    const empty = !this.html && !streaming;
    return html`<div
      class="bubble ${empty ? 'empty' : ''}"
      title=${title ?? nothing}
      aria-busy=${streaming ? 'true' : 'false'}
    >
      <span class="who">Assistant: </span>
      <div class="md">${unsafeHTML(this.html)}</div>
      ${streaming && !this.html ? html`<span class="caret" aria-hidden="true"></span>` : nothing}
    </div>`;
  }

  private renderMark() {
    if (this.state === 'stopped') return html`<div class="mark stopped">Stopped</div>`;
    if (this.state === 'partial') {
      return html`<div class="mark partial">Incomplete: the answer was cut off by an error</div>`;
    }
    return nothing;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-message': SmMessage;
  }
}
