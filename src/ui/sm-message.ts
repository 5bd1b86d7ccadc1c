// One chat message: the user's words as text, the model's as sanitised markdown, or a notice.
// Streaming-friendly: set `text` again as it grows. The model's markdown is rendered block by
// block (splitMarkdown): a block is rendered once, only the block still arriving is rendered
// again, and a long text is put in over several frames, so no frame costs more than a bounded
// amount whatever the length of the reply.
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import {
  blockSource,
  renderMarkdownBlocks,
  splitMarkdown,
  type MarkdownBlock,
  type SplitPoint,
} from './markdown';
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
      /* Finished blocks sit in .chunk boxes (see putBlocks), the block arriving after them. */
      .md > :first-child,
      .md > .chunk:first-child > :first-child {
        margin-top: 0;
      }
      .md > :last-child,
      .md > .chunk:last-child > :last-child {
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
      :host([state='streaming']) .md > :last-child:not(.chunk)::after,
      :host([state='streaming']) .md > .chunk:last-child > :last-child::after {
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
        :host([state='streaming']) .md > :last-child:not(.chunk)::after,
        :host([state='streaming']) .md > .chunk:last-child > :last-child::after {
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

  @query('.md') private md?: HTMLElement;

  /** What is in `.md`: the text it was split from, the blocks in place and those still to put in. */
  private shown?: {
    host: HTMLElement;
    text: string;
    next: SplitPoint;
    final: boolean;
    waiting: MarkdownBlock[];
    /** The nodes of the block still arriving (replaced as it grows). */
    tail: Node[];
  };
  private frame?: number;
  /** Markdown put in per frame: it is laid out in that frame too, so it follows the frame time. */
  private budget = BUDGET_CHARS.start;
  private lastFrame = 0;

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    if (this.frame !== undefined) cancelAnimationFrame(this.frame);
    this.frame = undefined;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.shown?.waiting.length) this.scheduleBlocks();
  }

  override updated(changed: PropertyValues<this>): void {
    if (changed.has('text') || changed.has('kind') || changed.has('state')) this.syncMarkdown();
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
    const blank = !/\S/.test(this.text);
    // `.md` has no bindings: its content is put in by syncMarkdown, block by block.
    return html`<div
      class="bubble ${blank && !streaming ? 'empty' : ''}"
      title=${title ?? nothing}
      aria-busy=${streaming ? 'true' : 'false'}
    >
      <span class="who">Assistant: </span>
      <div class="md"></div>
      ${streaming && blank ? html`<span class="caret" aria-hidden="true"></span>` : nothing}
    </div>`;
  }

  /**
   * Brings `.md` up to `text`. While the blocks already split off are unchanged (the text grew,
   * or lost trailing space as it was stored), splitting goes on from where it stopped: new
   * blocks are put in, the block still arriving is rendered again. Any other change starts
   * afresh.
   */
  private syncMarkdown(): void {
    const host = this.kind === 'assistant' ? this.md : undefined;
    if (!host) {
      this.shown = undefined;
      return;
    }
    const text = this.text;
    const final = this.state !== 'streaming';
    let shown = this.shown;
    // Done, stopped or cut off: the same finished text needs nothing more.
    if (shown?.host === host && shown.final && final && shown.text === text) return;
    if (
      !shown ||
      shown.host !== host ||
      shown.final ||
      !text.startsWith(shown.text.slice(0, shown.next.start))
    ) {
      host.replaceChildren();
      shown = this.shown = { host, text, next: { start: 0 }, final, waiting: [], tail: [] };
    }
    shown.text = text;
    shown.final = final;
    const { blocks, rest } = splitMarkdown(text, shown.next, final);
    shown.next = rest;
    shown.waiting.push(...blocks);
    // With blocks still waiting, the frame already asked for puts these in after them.
    if (this.frame === undefined) this.putBlocks();
  }

  /**
   * Puts waiting blocks in, up to the budget (what it puts in is laid out in the same frame),
   * then the block still arriving; asks for a frame for the rest.
   */
  private putBlocks(): void {
    const shown = this.shown;
    if (!shown) return;
    const { host, text } = shown;
    for (const n of shown.tail) n.parentNode?.removeChild(n);
    shown.tail = [];
    let done = 0;
    let chars = 0;
    while (done < shown.waiting.length && (done === 0 || chars < this.budget)) {
      const block = shown.waiting[done++];
      chars += block.end - block.start;
    }
    if (done) {
      const sources = shown.waiting.splice(0, done).map((b) => blockSource(text, b));
      const nodes = renderMarkdownBlocks(sources, true);
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
      this.scheduleBlocks();
      return;
    }
    const open = { start: shown.next.start, end: text.length, fence: shown.next.fence };
    if (!shown.final && open.end > open.start) {
      const nodes = renderMarkdownBlocks([blockSource(text, open)], false);
      shown.tail = [...nodes.childNodes];
      host.append(nodes);
    }
  }

  private scheduleBlocks(): void {
    if (this.frame !== undefined || !this.isConnected) return;
    this.frame = requestAnimationFrame((time) => {
      this.frame = undefined;
      // Frames one after the other that took long: put in less; quick ones: more.
      const gap = time - this.lastFrame;
      this.lastFrame = time;
      if (gap < 100) {
        if (gap > 40) this.budget = Math.max(BUDGET_CHARS.min, this.budget / 2);
        else if (gap < 24) this.budget = Math.min(BUDGET_CHARS.max, this.budget * 1.25);
      }
      this.putBlocks();
    });
  }

  private renderMark() {
    if (this.state === 'stopped') return html`<div class="mark stopped">Stopped</div>`;
    if (this.state === 'partial') {
      return html`<div class="mark partial">Incomplete: the answer was cut off by an error</div>`;
    }
    return nothing;
  }
}

/**
 * Markdown a message puts in per frame (at least one block), as it starts and its bounds: it is
 * parsed, sanitised and laid out in that frame; the rest waits for the next.
 */
const BUDGET_CHARS = { start: 8 * 1024, min: 2 * 1024, max: 64 * 1024 };

/** Top-level nodes of finished blocks per box (a plain div: margins collapse across it). */
const CHUNK_NODES = 64;

declare global {
  interface HTMLElementTagNameMap {
    'sm-message': SmMessage;
  }
}
