// Semantic search within one heading: runs queryMemoryHeading and lists the scored children,
// their content preview and the context chunks that matched.
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type {
  ChunkView,
  HeadingChild,
  HeadingChildHeading,
  HeadingResult,
  JsonValue,
} from '../memory/types';
import type { MemoryClient } from '../worker-client';
import { emit } from './events';
import { base, tokens } from './styles';

/** Characters of content shown per result. */
const PREVIEW_CHARS = 220;

/** Content as one line of text: strings as they are, anything else as compact JSON. */
export function previewOf(content: JsonValue, max = PREVIEW_CHARS): string {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** A path with line-break opportunities after each `/`, so long paths wrap between segments. */
function breakable(path: string) {
  return path.split('/').map((seg, i) => (i === 0 ? seg : html`/<wbr />${seg}`));
}

function round(n: number | undefined): string {
  return n === undefined ? '–' : n.toFixed(2);
}

interface Shown {
  /** The heading searched ('' = root). */
  scope: string;
  query: string;
  result: HeadingResult;
}

/**
 * `<sm-memory-search>`: a search box scoped to one heading, and its ranked results.
 *
 * @fires sm-select-path - A result's path was chosen; `detail.path`.
 */
@customElement('sm-memory-search')
export class SmMemorySearch extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        display: block;
        font-size: 0.875rem;
      }
      form {
        display: grid;
        grid-template-columns: 1fr auto;
        gap: 4px 6px;
        align-items: end;
        /* Stays in reach while a long result list scrolls under it. */
        position: sticky;
        top: 0;
        z-index: 1;
        padding-bottom: 2px;
        background: var(--sm-search-bg, var(--sm-surface));
      }
      .summary {
        display: flex;
        align-items: baseline;
        justify-content: space-between;
        gap: 8px;
      }
      button.link {
        flex: none;
        padding: 2px 4px;
        border: none;
        background: none;
        color: var(--sm-accent);
        font-size: 0.8125rem;
      }
      .caption {
        grid-column: 1 / -1;
        display: flex;
        gap: 6px;
        align-items: baseline;
        min-width: 0;
        font-size: 0.8125rem;
      }
      label {
        flex: none;
        font-weight: 600;
      }
      .scope {
        min-width: 0;
        color: var(--sm-muted);
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
      }
      .scope b {
        color: var(--sm-text);
        font-weight: 500;
      }
      input {
        min-width: 0;
        width: 100%;
      }
      .status {
        margin: 8px 0 0;
        color: var(--sm-muted);
      }
      .status.error {
        color: var(--sm-danger);
      }
      ol {
        list-style: none;
        margin: 8px 0 0;
        padding: 0;
        display: grid;
        gap: 6px;
      }
      li {
        padding: 8px 10px;
        border: 1px solid var(--sm-border);
        border-radius: var(--sm-radius);
        background: var(--sm-surface);
        min-width: 0;
      }
      .head {
        display: flex;
        flex-wrap: wrap;
        align-items: baseline;
        gap: 2px 10px;
        min-width: 0;
      }
      button.path {
        padding: 0;
        border: none;
        background: none;
        color: var(--sm-accent);
        font-weight: 600;
        text-align: start;
        overflow-wrap: break-word;
        min-width: 0;
      }
      button.path:hover {
        text-decoration: underline;
      }
      .scores {
        margin-left: auto;
        flex: none;
        display: flex;
        gap: 8px;
        color: var(--sm-muted);
        font-size: 0.75rem;
        font-variant-numeric: tabular-nums;
      }
      .scores b {
        color: var(--sm-text);
      }
      .kind {
        flex: none;
        font-size: 0.75rem;
        color: var(--sm-muted);
      }
      .preview {
        margin: 4px 0 0;
        color: var(--sm-text);
        overflow-wrap: anywhere;
        display: -webkit-box;
        -webkit-box-orient: vertical;
        -webkit-line-clamp: 3;
        overflow: hidden;
      }
      .best {
        margin: 4px 0 0;
        color: var(--sm-muted);
      }
      ul.chunks {
        list-style: none;
        margin: 6px 0 0;
        padding: 0 0 0 8px;
        border-left: 2px solid var(--sm-surface-2);
        display: grid;
        gap: 2px;
        font-size: 0.8125rem;
        color: var(--sm-muted);
      }
      ul.chunks li {
        padding: 0;
        border: none;
        background: none;
        overflow-wrap: anywhere;
      }
      .role {
        font-weight: 600;
        color: var(--sm-text);
      }
    `,
  ];

  /** The memory engine (worker proxy). */
  @property({ attribute: false }) memory: MemoryClient | undefined;
  /** The heading searched; '' is the root. */
  @property() path = '';

  @state() private query = '';
  @state() private busy = false;
  @state() private shown: Shown | undefined;
  @state() private message: { text: string; error: boolean } | undefined;

  /** Identifies the latest search, so a slow earlier answer cannot overwrite it. */
  private ticket = 0;

  override render() {
    const scope = this.path || 'all memory';
    return html`<form @submit=${this.handleSubmit}>
        <div class="caption">
          <label for="q">Search memory</label>
          <span id="scope" class="scope">in <b>${scope}</b></span>
        </div>
        <input
          id="q"
          type="search"
          aria-describedby="scope"
          placeholder="What are you looking for?"
          autocomplete="off"
          .value=${this.query}
          @input=${this.handleInput}
        />
        <button type="submit" class="primary" ?disabled=${this.busy || !this.memory}>Search</button>
      </form>
      ${this.busy ? html`<p class="status" role="status">Searching…</p>` : nothing}
      ${
        this.message
          ? html`<p class="status ${this.message.error ? 'error' : ''}" role="status">
              ${this.message.text}
            </p>`
          : nothing
      }
      ${this.shown ? this.renderResults(this.shown) : nothing}`;
  }

  private renderResults({ scope, query, result }: Shown) {
    const where = scope || 'all memory';
    const n = result.children.length;
    const count =
      n < result.totalChildren
        ? `Top ${n} of ${result.totalChildren}`
        : `${n} ${n === 1 ? 'result' : 'results'}`;
    return html`<div class="summary">
        <p class="status" role="status">${count} in ${where} for “${query}”</p>
        <button type="button" class="link" @click=${this.handleClear}>Clear</button>
      </div>
      <ol aria-label="Search results">
        ${result.children.map((c) => this.renderChild(c))}
      </ol>`;
  }

  private renderChild(child: HeadingChild) {
    const heading = 'isHeading' in child;
    return html`<li>
      <div class="head">
        <button type="button" class="path" @click=${() => this.choose(child.path)}>
          ${breakable(child.path)}
        </button>
        ${
          heading
            ? html`<span class="kind">${child.descendants} below</span>`
            : child.descendants
              ? html`<span class="kind">+${child.descendants} below</span>`
              : nothing
        }
        <span class="scores">
          <span>score <b>${round(child.score)}</b></span>
          <span>similarity ${round(child.similarity)}</span>
          <span>recency ${round(child.recency)}</span>
        </span>
      </div>
      ${
        heading
          ? this.renderBest(child.bestMatch)
          : html`<p class="preview">${previewOf(child.content)}</p>
              ${this.renderChunks(child.relevantChunks)}`
      }
    </li>`;
  }

  private renderBest(best: HeadingChildHeading['bestMatch']) {
    if (!best) return nothing;
    return html`<p class="best">
        best match:
        <button type="button" class="path" @click=${() => this.choose(best.path)}>
          ${breakable(best.path)}
        </button>
      </p>
      <p class="preview">${previewOf(best.content)}</p>
      ${this.renderChunks(best.relevantChunks)}`;
  }

  private renderChunks(chunks: ChunkView[] | undefined) {
    if (!chunks || chunks.length === 0) return nothing;
    return html`<ul class="chunks" aria-label="Relevant context">
      ${chunks.map(
        (c) =>
          html`<li>
            <span class="role">${c.role}:</span> ${c.text}
            <span class="muted">(${round(c.similarity)})</span>
          </li>`,
      )}
    </ul>`;
  }

  private choose(path: string): void {
    emit(this, 'sm-select-path', { path });
  }

  private handleClear(): void {
    this.ticket++;
    this.busy = false;
    this.shown = undefined;
    this.message = undefined;
  }

  private handleInput(event: InputEvent): void {
    this.query = (event.target as HTMLInputElement).value;
  }

  private async handleSubmit(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const query = this.query.trim();
    const memory = this.memory;
    if (!memory) return;
    if (query === '') {
      this.message = { text: 'Type what you are looking for, then search.', error: false };
      return;
    }
    const scope = this.path;
    const ticket = ++this.ticket;
    this.busy = true;
    this.message = undefined;
    try {
      const result = await memory.queryMemoryHeading(scope, query);
      if (ticket !== this.ticket) return;
      if (result.status === 'SUCCESS') {
        this.shown = { scope, query, result };
        if (result.children.length === 0) {
          this.message = { text: 'Nothing matched.', error: false };
        }
      } else if (result.status === 'NOT_FOUND') {
        this.shown = undefined;
        this.message = {
          text: scope
            ? `Nothing is stored under “${scope}” yet, so there is nothing to search.`
            : 'Memory is empty, so there is nothing to search yet.',
          error: false,
        };
      } else {
        this.shown = undefined;
        this.message = { text: `The search failed: ${result.message}`, error: true };
      }
    } catch (e) {
      if (ticket !== this.ticket) return;
      this.shown = undefined;
      const why = e instanceof Error ? e.message : String(e);
      this.message = {
        text: `The search failed: ${why}. Reload the page if it keeps happening.`,
        error: true,
      };
    } finally {
      if (ticket === this.ticket) this.busy = false;
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-memory-search': SmMemorySearch;
  }
}
