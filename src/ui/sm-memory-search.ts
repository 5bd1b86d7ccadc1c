// Search of the memory, by words and meaning: runs queryMemoryHeading over the selected heading
// or all memory and lists the hits in the engine's order, each saying why it matched (the
// query's words marked, its strength in words, the relevance and recency parts of its score),
// with the hits below the relevance cut-off folded away until asked for.
import { LitElement, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { guard } from 'lit/directives/guard.js';
import { queryTerms } from '../memory/lexical/tokenize';
import { DEFAULT_RECENCY_BIAS } from '../memory/ranking';
import type { ChunkView, HeadingChild, HeadingChildHeading, HeadingResult } from '../memory/types';
import type { MemoryClient } from '../worker-client';
import { previewText } from './diff';
import { emit } from './events';
import { excerpt, highlight, scoreParts, splitAtCutoff, strengthOf } from './search-why';
import { base, tokens } from './styles';
import { describeAge, formatAge } from './tree-model';
import { memorySearchStyles } from './sm-memory-search.styles';

/** Characters of content shown per result. */
const PREVIEW_CHARS = 220;
/** Characters of a matching context sentence shown. */
const CHUNK_CHARS = 180;
/** Hits asked of the engine: enough that the cut-off, not the limit, decides what is shown. */
const RESULT_LIMIT = 50;

/** `text` with the words in `terms` as <mark>s; every piece a text node, never markup. */
function marked(text: string, terms: ReadonlySet<string>) {
  return highlight(text, terms).map((s) => (s.match ? html`<mark>${s.text}</mark>` : s.text));
}

/** A path with its matched words marked and a line-break opportunity after each `/`. */
function markedPath(path: string, terms: ReadonlySet<string>) {
  return path
    .split('/')
    .map((seg, i) => html`${i === 0 ? nothing : html`/<wbr />`}${marked(seg, terms)}`);
}

function fixed(n: number | undefined): string {
  return n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(2);
}

const STRENGTH_WORDS = { strong: 'Strong match', good: 'Good match', weak: 'Weak match' } as const;

export interface SearchResultsDetail {
  /** Whether results (or a "nothing matches" answer) are shown below the box. */
  shown: boolean;
}

declare module './events' {
  interface SmEvents {
    /** The search showed results, or cleared them (the explorer gives them room). */
    'sm-search-results': SearchResultsDetail;
  }
}

declare global {
  interface GlobalEventHandlersEventMap {
    'sm-search-results': CustomEvent<SearchResultsDetail>;
  }
}

interface Shown {
  /** The heading searched ('' = all memory). */
  scope: string;
  query: string;
  /** The recency blend the search ran with. */
  bias: number;
  result: HeadingResult;
  /** When the answer came, for the ages shown. */
  at: number;
}

/**
 * `<sm-memory-search>`: a search box over all memory or the selected heading (one click
 * switches), and its hits with why each matched.
 *
 * It searches all memory until "in <heading>" is chosen; then the scope follows the selected
 * heading, and results on screen are searched again when it changes, so what is listed always
 * matches the scope shown.
 *
 * @fires sm-select-path - A result's path was chosen; `detail.path`.
 * @fires sm-search-results - Results were shown or cleared; `detail.shown`.
 */
@customElement('sm-memory-search')
export class SmMemorySearch extends LitElement {
  static override styles = [tokens, base, memorySearchStyles];

  /** The memory engine (worker proxy). */
  @property({ attribute: false }) memory: MemoryClient | undefined;
  /** The selected heading, offered as the search's scope; '' is the root. */
  @property() path = '';
  /** The recency blend of the search (0..1); unset, the tools' default, so the order is theirs. */
  @property({ type: Number, attribute: 'recency-bias' }) recencyBias: number | undefined;

  @state() private query = '';
  @state() private busy = false;
  @state() private shown: Shown | undefined;
  @state() private message: { text: string; error: boolean } | undefined;
  /** Search all memory rather than the selected heading (the default: no silent narrowing). */
  @state() private everywhere = true;
  /** Show the hits below the relevance cut-off too. */
  @state() private showWeaker = false;

  /** Identifies the latest search, so a slow earlier answer cannot overwrite it. */
  private ticket = 0;

  /** The heading the next search runs on ('' = all memory). */
  private get scope(): string {
    return this.everywhere ? '' : this.path;
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has('shown') && !!changed.get('shown') !== !!this.shown) {
      emit(this, 'sm-search-results', { shown: !!this.shown });
    }
    // Searching under the selected heading, and it changed: the results follow it.
    if (
      changed.has('path') &&
      changed.get('path') !== undefined &&
      !this.everywhere &&
      this.shown &&
      this.shown.scope !== this.scope
    ) {
      void this.search(this.shown.query);
    }
  }

  override render() {
    const scope = this.scope;
    return html`<form @submit=${this.handleSubmit}>
        <div class="caption">
          <label for="q">Search memory</label>
          ${
            this.path
              ? html`<div class="scopes" role="group" aria-label="Search in">
                  <button
                    type="button"
                    class="all"
                    aria-pressed=${this.everywhere ? 'true' : 'false'}
                    title="Search every memory"
                    @click=${() => this.setScope(true)}
                  >
                    all memory
                  </button>
                  <button
                    type="button"
                    class="heading"
                    aria-pressed=${this.everywhere ? 'false' : 'true'}
                    title="Search only under ${this.path}"
                    @click=${() => this.setScope(false)}
                  >
                    in ${this.path}
                  </button>
                </div>`
              : html`<span
                  class="scope"
                  title="Select a heading in the tree to search only under it"
                  aria-hidden="true"
                  >in <b>all memory</b></span
                >`
          }
          <span id="scope" class="hidden">Searches ${scope || 'all memory'}</span>
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
      ${
        // Marking words in fifty hits is not free: only again when the results change, not
        // on every keystroke in the box.
        guard([this.shown, this.showWeaker], () =>
          this.shown ? this.renderResults(this.shown) : nothing,
        )
      }`;
  }

  private renderResults(shown: Shown) {
    const { scope, query, result } = shown;
    const where = scope || 'all memory';
    const hits = result.children;
    const { relevant, weaker } = splitAtCutoff(hits);
    const listed = this.showWeaker ? hits : relevant;
    const n = relevant.length;
    const summary =
      n > 0
        ? `${n} ${n === 1 ? 'match' : 'matches'} in ${where} for “${query}”`
        : weaker.length > 0
          ? `No close match in ${where} for “${query}”`
          : `Nothing in ${where} matches “${query}”`;
    const unlisted = Math.max(0, (result.matched ?? hits.length) - hits.length);
    const terms = new Set(queryTerms(query));
    return html`<div class="summary">
        <p class="status" role="status">${summary}</p>
        <button type="button" class="link" @click=${this.handleClear}>Clear</button>
      </div>
      ${
        result.signals === 'lexical'
          ? html`<p class="why">Matched by words only: the embedding model is not ready.</p>`
          : nothing
      }
      ${
        listed.length
          ? html`<ol aria-label="Search results">
              ${listed.map((c) => this.renderHit(c, shown, terms))}
            </ol>`
          : nothing
      }
      ${
        weaker.length || (unlisted && (this.showWeaker || weaker.length === 0))
          ? html`<p class="more">
              ${
                weaker.length
                  ? html`<button
                      type="button"
                      class="link"
                      aria-expanded=${this.showWeaker ? 'true' : 'false'}
                      @click=${this.handleToggleWeaker}
                    >
                      ${
                        this.showWeaker
                          ? 'Hide weaker matches'
                          : `Show ${weaker.length} weaker ${weaker.length === 1 ? 'match' : 'matches'}`
                      }
                    </button>`
                  : nothing
              }
              ${
                unlisted && (this.showWeaker || weaker.length === 0)
                  ? html`<span
                      >${unlisted.toLocaleString()} more scored lower and are not listed; a more
                      specific search brings them up.</span
                    >`
                  : nothing
              }
            </p>`
          : nothing
      }`;
  }

  private renderHit(child: HeadingChild, shown: Shown, queryWords: ReadonlySet<string>) {
    const heading = 'isHeading' in child;
    const terms = child.why ? new Set(child.why.terms) : queryWords;
    const strength = strengthOf(child.relevance);
    return html`<li class="hit ${strength}">
      <div class="head">
        <button type="button" class="path" @click=${() => this.choose(child.path)}>
          ${markedPath(child.path, terms)}
        </button>
        ${
          heading
            ? html`<span class="kind">${child.descendants} below</span>`
            : child.descendants
              ? html`<span class="kind">+${child.descendants} below</span>`
              : nothing
        }
        ${this.renderStrength(child, shown)}
      </div>
      ${
        heading
          ? this.renderBest(child.bestMatch, terms)
          : html`<p class="preview">
                ${marked(excerpt(previewText(child.content), terms, PREVIEW_CHARS), terms)}
              </p>
              ${this.renderWhy(child)} ${this.renderChunks(child.relevantChunks, terms)}`
      }
    </li>`;
  }

  /** The strength in words and a bar of the score's two parts; the numbers on hover. */
  private renderStrength(child: HeadingChild, shown: Shown) {
    if (child.score === undefined) return nothing;
    const strength = strengthOf(child.relevance);
    const parts = scoreParts(child, shown.bias);
    const modified = child.modified.getTime();
    const why = child.why;
    const title = [
      `Relevance ${fixed(child.relevance)}` +
        (why ? ` (words ${fixed(why.lexical)}, meaning ${fixed(why.semantic)})` : ''),
      `Recency ${fixed(child.recency)} (changed ${describeAge(modified, shown.at)})`,
      `Score ${fixed(child.score)} = ${fixed(1 - shown.bias)} × relevance + ${fixed(shown.bias)} × recency`,
    ].join('\n');
    const rel = parts.relevance * 100;
    return html`<span class="match" title=${title}>
      <svg class="bar" viewBox="0 0 100 6" preserveAspectRatio="none" aria-hidden="true">
        <rect class="rel" x="0" y="0" width=${rel} height="6"></rect>
        <rect class="rec" x=${rel} y="0" width=${parts.recency * 100} height="6"></rect>
      </svg>
      <span class="word">${STRENGTH_WORDS[strength]}</span>
      <span aria-hidden="true">· ${formatAge(modified, shown.at)}</span>
      <span class="hidden">, changed ${describeAge(modified, shown.at)}</span>
    </span>`;
  }

  /** Where the match came from, when the marked words alone do not say. */
  private renderWhy(child: HeadingChild) {
    const why = child.why;
    if (!why) return nothing;
    const notes: string[] = [];
    if (why.fromSnapshot) notes.push('Matched in the conversation it was saved from');
    if (why.terms.length === 0 && why.semantic > 0)
      notes.push('similar in meaning, no words in common');
    if (!notes.length) return nothing;
    const text = notes.join('; ');
    return html`<p class="why">${text[0].toUpperCase()}${text.slice(1)}.</p>`;
  }

  private renderBest(best: HeadingChildHeading['bestMatch'], terms: ReadonlySet<string>) {
    if (!best) return nothing;
    return html`<p class="best">
        best match:
        <button type="button" class="path" @click=${() => this.choose(best.path)}>
          ${markedPath(best.path, terms)}
        </button>
      </p>
      <p class="preview">
        ${marked(excerpt(previewText(best.content), terms, PREVIEW_CHARS), terms)}
      </p>
      ${this.renderChunks(best.relevantChunks, terms)}`;
  }

  private renderChunks(chunks: ChunkView[] | undefined, terms: ReadonlySet<string>) {
    if (!chunks || chunks.length === 0) return nothing;
    return html`<ul class="chunks" aria-label="From its conversation">
      ${chunks.map(
        (c) =>
          html`<li title=${c.relevance === undefined ? nothing : `Relevance ${fixed(c.relevance)}`}>
            <span class="role">${c.role}:</span>
            ${marked(excerpt(c.text, terms, CHUNK_CHARS), terms)}
          </li>`,
      )}
    </ul>`;
  }

  private choose(path: string): void {
    emit(this, 'sm-select-path', { path });
  }

  private setScope(everywhere: boolean): void {
    if (this.everywhere === everywhere) return;
    this.everywhere = everywhere;
    // One click changes what is shown: the results on screen follow the scope.
    if (this.shown) void this.search(this.shown.query);
  }

  private handleToggleWeaker(): void {
    this.showWeaker = !this.showWeaker;
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

  private handleSubmit(event: SubmitEvent): void {
    event.preventDefault();
    const query = this.query.trim();
    if (!this.memory) return;
    if (query === '') {
      this.message = { text: 'Type what you are looking for, then search.', error: false };
      return;
    }
    void this.search(query);
  }

  private async search(query: string): Promise<void> {
    const memory = this.memory;
    if (!memory) return;
    const scope = this.scope;
    const bias = this.recencyBias ?? DEFAULT_RECENCY_BIAS;
    const ticket = ++this.ticket;
    this.busy = true;
    this.message = undefined;
    try {
      const result = await memory.queryMemoryHeading(scope, query, this.recencyBias, {
        limit: RESULT_LIMIT,
      });
      if (ticket !== this.ticket) return;
      if (result.status === 'SUCCESS') {
        this.shown = { scope, query, bias, result, at: Date.now() };
        this.showWeaker = false;
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
