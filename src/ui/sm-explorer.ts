// The memory explorer panel: a path filter, the tree or the map of every entry, the trash, and a
// semantic search scoped to the selected heading. Reloads by itself when memory changes in any
// tab. It also hosts the memory panel's toast (Undo), and follows a tool card's link through
// moves to where the entry is now.
import { LitElement, css, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, query, state } from 'lit/decorators.js';
import type { EntrySummary } from '../memory/types';
import type { MemoryClient } from '../worker-client';
import { emit, type SelectPathDetail } from './events';
import { MemoryWatch } from './memory-watch';
import { base, tokens } from './styles';
import './sm-memory-map';
import './sm-memory-search';
import './sm-memory-tree';
import type { FollowPathDetail } from './sm-tool-card';
import { requestToast, type SmToast, type ToastRequest } from './sm-toast';
import './sm-toast';
import './sm-trash';
import { searchScope } from './tree-model';

type View = 'tree' | 'map' | 'trash';

/** Pause in typing before the filter applies. */
const FILTER_DELAY_MS = 120;

const VIEWS: readonly { id: View; label: string }[] = [
  { id: 'tree', label: 'Tree' },
  { id: 'map', label: 'Map' },
  { id: 'trash', label: 'Trash' },
];

/**
 * `<sm-explorer>`: browse, filter and search the memory.
 *
 * Fills the height it is given (a flex column): the tree, map or trash scrolls, the search sits
 * below. Selections made inside update `selectedPath` and bubble on as `sm-select-path`.
 *
 * Beside its own subtree it listens on the root it lives in (the app's shadow root, shared with
 * the entry detail and the chat): `sm-toast` requests show in its `<sm-toast>`, and an
 * `sm-select-path` that asks to follow moves (a tool card's link) is answered with the path's
 * entry where it is now.
 *
 * @fires sm-select-path - (bubbled from the tree, map, trash or search) a node was chosen;
 *   `detail.path`. Also for a followed tool card link, with the path after its moves.
 */
@customElement('sm-explorer')
export class SmExplorer extends LitElement {
  static override styles = [
    tokens,
    base,
    css`
      :host {
        display: flex;
        flex-direction: column;
        gap: 8px;
        height: 100%;
        min-height: 0;
        font-size: 0.875rem;
      }
      .bar {
        display: flex;
        gap: 8px;
        align-items: center;
        flex-wrap: wrap;
      }
      .bar input {
        flex: 1 1 10rem;
        min-width: 0;
      }
      [role='tablist'] {
        display: inline-flex;
        flex: none;
        padding: 2px;
        border: 1px solid var(--sm-border);
        border-radius: var(--sm-radius);
        background: var(--sm-surface-2);
      }
      [role='tab'] {
        padding: 4px 14px;
        border: none;
        border-radius: 4px;
        background: none;
        color: var(--sm-muted);
      }
      [role='tab'][aria-selected='true'] {
        background: var(--sm-surface);
        color: var(--sm-text);
        box-shadow: 0 1px 2px rgb(0 0 0 / 0.12);
      }
      .summary {
        margin: -2px 0 0;
        font-size: 0.75rem;
        color: var(--sm-muted);
      }
      .views {
        position: relative;
        /* Basis 0: the tree's content height must not squeeze the search below. */
        flex: 1 1 0;
        min-height: 220px;
        display: flex;
        flex-direction: column;
        border: 1px solid var(--sm-border);
        border-radius: var(--sm-radius);
        background: var(--sm-surface);
        overflow: hidden;
      }
      [role='tabpanel'] {
        flex: 1 1 auto;
        min-height: 0;
        display: flex;
        flex-direction: column;
      }
      [role='tabpanel'][hidden] {
        display: none;
      }
      sm-memory-tree {
        flex: 1 1 auto;
        min-height: 0;
      }
      sm-memory-map {
        flex: 1 1 auto;
        min-height: 0;
        padding: 6px;
      }
      sm-trash {
        flex: 1 1 auto;
        min-height: 0;
      }
      .search {
        flex: none;
        max-height: 45%;
        overflow: auto;
        overscroll-behavior: contain;
      }
      .status {
        margin: 0;
        padding: 12px;
        color: var(--sm-muted);
      }
      .status.error {
        color: var(--sm-danger);
      }
    `,
  ];

  /** The memory engine (worker proxy). */
  @property({ attribute: false }) memory: MemoryClient | undefined;
  /** The selected path (entry or heading); set from outside to reveal it. */
  @property({ attribute: 'selected-path' }) selectedPath: string | undefined;
  /** The settings' default recency bias, so the search orders as the model's tools do. */
  @property({ type: Number, attribute: false }) recencyBias: number | undefined;

  /** What is typed in the filter box. */
  @state() private filterText = '';
  /** The filter applied to the tree and map: `filterText`, once typing pauses. */
  @state() private filter = '';
  @state() private view: View = 'tree';

  private readonly index = new MemoryWatch<EntrySummary[] | undefined>(this, {
    tables: ['structured_memory'],
    load: () => this.load(),
  });
  private filterTimer: ReturnType<typeof setTimeout> | undefined;
  /** The client the latest load used: a new one means loading again. */
  private loadedWith: MemoryClient | undefined;
  private filtered: { entries: EntrySummary[]; filter: string; out: EntrySummary[] } | undefined;
  /** Where the toast and follow listeners are (the root this element was connected in). */
  private listeningOn: Node | undefined;

  @query('sm-toast') private toast!: SmToast | null;

  override connectedCallback(): void {
    super.connectedCallback();
    this.listeningOn = this.getRootNode();
    this.listeningOn.addEventListener('sm-toast', this.handleToast);
    this.listeningOn.addEventListener('sm-select-path', this.handleFollow);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.filterTimer);
    this.listeningOn?.removeEventListener('sm-toast', this.handleToast);
    this.listeningOn?.removeEventListener('sm-select-path', this.handleFollow);
    this.listeningOn = undefined;
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('memory') && this.memory && this.memory !== this.loadedWith) {
      void this.index.reload();
    }
  }

  override render() {
    const entries = this.index.value;
    const mapEntries = entries ? this.filterEntries(entries) : [];
    return html`<div class="bar">
        <input
          type="search"
          aria-label="Filter paths"
          placeholder="Filter paths"
          autocomplete="off"
          spellcheck="false"
          .value=${this.filterText}
          @input=${this.handleFilter}
        />
        <div role="tablist" aria-label="View" @keydown=${this.handleTabKey}>
          ${VIEWS.map(
            (v) =>
              html`<button
                type="button"
                role="tab"
                id="tab-${v.id}"
                aria-selected=${this.view === v.id ? 'true' : 'false'}
                aria-controls="panel-${v.id}"
                tabindex=${this.view === v.id ? 0 : -1}
                @click=${() => (this.view = v.id)}
              >
                ${v.label}
              </button>`,
          )}
        </div>
      </div>
      ${entries ? this.renderSummary(entries.length, mapEntries.length) : nothing}
      <div class="views" @sm-select-path=${this.handleSelect}>
        ${
          this.index.error !== undefined && !entries
            ? html`<p class="status error" role="alert">
                The memory index could not be loaded: ${describe(this.index.error)}. Reload the page
                to try again.
              </p>`
            : !entries
              ? html`<p class="status">Loading memory…</p>`
              : html`<div
                    role="tabpanel"
                    id="panel-tree"
                    aria-labelledby="tab-tree"
                    ?hidden=${this.view !== 'tree'}
                  >
                    <sm-memory-tree
                      .entries=${entries}
                      .selectedPath=${this.selectedPath}
                      .filter=${this.filter}
                    ></sm-memory-tree>
                  </div>
                  <div
                    role="tabpanel"
                    id="panel-map"
                    aria-labelledby="tab-map"
                    ?hidden=${this.view !== 'map'}
                  >
                    <sm-memory-map
                      .entries=${mapEntries}
                      .selectedPath=${this.selectedPath}
                    ></sm-memory-map>
                  </div>
                  <div
                    role="tabpanel"
                    id="panel-trash"
                    aria-labelledby="tab-trash"
                    ?hidden=${this.view !== 'trash'}
                  >
                    <sm-trash
                      .memory=${this.memory}
                      .filter=${this.filter}
                      .active=${this.view === 'trash'}
                    ></sm-trash>
                  </div>`
        }
      </div>
      <div class="search" @sm-select-path=${this.handleSelect}>
        <sm-memory-search
          .memory=${this.memory}
          .path=${entries ? searchScope(entries, this.selectedPath) : ''}
          .recencyBias=${this.recencyBias}
        ></sm-memory-search>
      </div>
      <sm-toast></sm-toast>`;
  }

  private renderSummary(total: number, shown: number) {
    const entries = `${total.toLocaleString()} ${total === 1 ? 'entry' : 'entries'}`;
    return html`<p class="summary" aria-live="polite">
      ${
        this.filter.trim()
          ? `${shown.toLocaleString()} of ${entries} match “${this.filter.trim()}”`
          : entries
      }
    </p>`;
  }

  private load(): Promise<EntrySummary[] | undefined> {
    this.loadedWith = this.memory;
    return this.memory ? this.memory.memoryIndex() : Promise.resolve(undefined);
  }

  /** Entries whose path contains the filter (the map shows only these); memoised. */
  private filterEntries(entries: EntrySummary[]): EntrySummary[] {
    const filter = this.filter.trim().toLowerCase();
    const memo = this.filtered;
    if (memo && memo.entries === entries && memo.filter === filter) return memo.out;
    const out = filter ? entries.filter((e) => e.path.toLowerCase().includes(filter)) : entries;
    this.filtered = { entries, filter, out };
    return out;
  }

  private handleFilter(event: InputEvent): void {
    const text = (event.target as HTMLInputElement).value;
    this.filterText = text;
    clearTimeout(this.filterTimer);
    // Filtering thousands of paths per keystroke would make typing lag; clearing is instant.
    if (text.trim() === '') this.filter = text;
    else this.filterTimer = setTimeout(() => (this.filter = text), FILTER_DELAY_MS);
  }

  private handleSelect(event: CustomEvent<SelectPathDetail>): void {
    // Let it bubble on to the app (entry detail); keep our own copy for the children.
    this.selectedPath = event.detail.path;
  }

  private readonly handleToast = (event: Event): void => {
    const request = (event as CustomEvent<ToastRequest>).detail;
    if (!request || typeof request.message !== 'string') return;
    event.stopPropagation();
    this.toast?.show(request);
  };

  /** A tool card's link: select where its path's entry is now (moves followed). */
  private readonly handleFollow = (event: Event): void => {
    const detail = (event as CustomEvent<Partial<FollowPathDetail>>).detail;
    const memory = this.memory;
    if (!detail?.followMoves || typeof detail.path !== 'string' || !memory) return;
    // Answered below with the path it leads to; the app must not select the old one first.
    event.stopPropagation();
    void this.follow(memory, detail.path);
  };

  private async follow(memory: MemoryClient, path: string): Promise<void> {
    let target = path;
    try {
      const where = path === '' ? undefined : await memory.resolvePath(path);
      if (where?.status === 'SUCCESS' && where.moves.length) target = where.path;
    } catch {
      // The worker did not answer: show the path as it was.
    }
    emit(this, 'sm-select-path', { path: target });
    if (target !== path) {
      requestToast(this, { message: `“${path}” was moved to “${target}”; showing it there.` });
    }
  }

  private handleTabKey(event: KeyboardEvent): void {
    const i = VIEWS.findIndex((v) => v.id === this.view);
    let next: number;
    if (event.key === 'ArrowRight') next = (i + 1) % VIEWS.length;
    else if (event.key === 'ArrowLeft') next = (i + VIEWS.length - 1) % VIEWS.length;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = VIEWS.length - 1;
    else return;
    event.preventDefault();
    this.view = VIEWS[next].id;
    void this.updateComplete.then(() =>
      this.renderRoot.querySelector<HTMLElement>(`#tab-${this.view}`)?.focus(),
    );
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-explorer': SmExplorer;
  }
}
