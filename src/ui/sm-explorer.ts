// The memory explorer panel: a path filter, the tree or the map of every entry, the trash, and a
// search of all memory or of the selected heading. Reloads by itself when memory changes in any
// tab. Two dividers, remembered per device, share its room: the tree or map against the search
// results, and the explorer against the entry detail below it. It also follows a tool card's
// link through moves to where the entry is now.
import { LitElement, html, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import type { EntrySummary } from '../memory/types';
import type { MemoryClient } from '../worker-client';
import { emit, type SelectPathDetail } from './events';
import { MemoryWatch, applyEntryDelta, entryPatchOf, patchEntries } from './memory-watch';
import { base, tokens } from './styles';
import './sm-memory-map';
import './sm-memory-search';
import './sm-memory-tree';
import type { SearchResultsDetail } from './sm-memory-search';
import type { FollowPathDetail } from './sm-tool-card';
import { requestToast } from './sm-toast';
import './sm-trash';
import {
  DEFAULT_SPLIT,
  MIN_HEIGHT,
  clampShare,
  loadSplit,
  saveSplit,
  shareForKey,
  type SplitSizes,
} from './split-layout';
import { searchScope } from './tree-model';
import { explorerStyles } from './sm-explorer.styles';

type View = 'tree' | 'map' | 'trash';
/**
 * The dividers: tree or map | search results, and explorer | entry detail, whose share is
 * `searching` while search results are shown (the detail yields them room) and `explorer` else.
 */
type Divider = 'views' | 'explorer' | 'searching';

/** Pause in typing before the filter applies. */
const FILTER_DELAY_MS = 120;

/** localStorage, where the page may use it (absent in a sandboxed frame or some private modes). */
function deviceStorage(): Storage | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}

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
 * Room: while search results are shown, a divider between the views and the results moves with
 * the pointer or the arrow keys; while an element follows it in its parent (the app's entry
 * detail), the explorer sets its own height to its share of the parent's and draws a divider at
 * its foot. That share is larger while search results are shown (the results are what was asked
 * for; the detail keeps its title and actions in view), and each is remembered per device
 * (`split-layout.ts`).
 *
 * Beside its own subtree it listens on the root it lives in (the app's shadow root, shared with
 * the entry detail and the chat): an `sm-select-path` that asks to follow moves (a tool card's
 * link) is answered with the path's entry where it is now.
 *
 * @fires sm-select-path - (bubbled from the tree, map, trash or search) a node was chosen;
 *   `detail.path`. Also for a followed tool card link, with the path after its moves.
 */
@customElement('sm-explorer')
export class SmExplorer extends LitElement {
  static override styles = [tokens, base, explorerStyles];

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
  /** The divider shares (remembered per device). */
  @state() private split: SplitSizes = loadSplit(deviceStorage());
  /** Whether the search shows results (its divider appears). */
  @state() private searchShown = false;
  /** Whether an element follows this one in its parent (the entry detail) to share its height. */
  @state() private below = false;
  /** The divider being dragged, if any. */
  @state() private dragging: Divider | undefined;

  private readonly index = new MemoryWatch<readonly EntrySummary[] | undefined>(this, {
    tables: ['structured_memory'],
    load: () => this.load(),
    // Patched from the worker's reports: no write reads the whole index again.
    patch: (entries, change) => (entries ? patchEntries(entries, change) : entries),
  });
  private filterTimer: ReturnType<typeof setTimeout> | undefined;
  /** The client the latest load used: a new one means loading again. */
  private loadedWith: MemoryClient | undefined;
  private filtered:
    { entries: readonly EntrySummary[]; filter: string; out: readonly EntrySummary[] } | undefined;
  /** Where the follow listener is (the root this element was connected in). */
  private listeningOn: Node | undefined;
  /** The parent's height, measured: the explorer's share of it is its height. */
  private parentHeight = 0;
  private readonly parentSize = new ResizeObserver((records) => {
    const h = Math.round(records[records.length - 1].contentRect.height);
    if (h !== this.parentHeight) {
      this.parentHeight = h;
      this.applyHeight();
    }
  });
  private readonly siblings = new MutationObserver(() => this.checkBelow());

  override connectedCallback(): void {
    super.connectedCallback();
    this.listeningOn = this.getRootNode();
    this.listeningOn.addEventListener('sm-select-path', this.handleFollow);
    const parent = this.parentElement;
    if (parent) {
      this.parentSize.observe(parent);
      this.siblings.observe(parent, { childList: true });
    }
    this.checkBelow();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.filterTimer);
    this.listeningOn?.removeEventListener('sm-select-path', this.handleFollow);
    this.listeningOn = undefined;
    this.parentSize.disconnect();
    this.siblings.disconnect();
  }

  protected override updated(changed: PropertyValues): void {
    if (changed.has('memory') && this.memory && this.memory !== this.loadedWith) {
      void this.index.reload();
    }
    if (changed.has('split')) {
      // The host's own CSSOM style: the CSP forbids style attributes, not this.
      this.style.setProperty('--sm-views-share', String(this.split.views));
    }
    if (changed.has('split') || changed.has('below') || changed.has('searchShown')) {
      this.applyHeight();
    }
  }

  /** The foot divider's share: a separate one while search results are shown. */
  private get footDivider(): 'explorer' | 'searching' {
    return this.searchShown ? 'searching' : 'explorer';
  }

  /**
   * Notes whether something (the entry detail) now follows this element in its parent; a toast
   * at the column's foot (`sm-toast`, in the page's flow) takes no share.
   */
  private checkBelow(): void {
    const next = this.nextElementSibling;
    this.below = next !== null && next.localName !== 'sm-toast';
  }

  /**
   * With the detail below, the explorer's height is its share of the parent's; without, the
   * parent's own rules size it (it fills the column).
   */
  private applyHeight(): void {
    if (!this.below || this.parentHeight <= 0) {
      this.style.removeProperty('height');
      this.style.removeProperty('min-height');
      return;
    }
    const total = this.parentHeight;
    const share = clampShare(
      this.split[this.footDivider],
      total,
      MIN_HEIGHT.explorer,
      MIN_HEIGHT.detail,
    );
    this.style.height = `${Math.round(share * total)}px`;
    this.style.minHeight = `${Math.min(MIN_HEIGHT.explorer, total)}px`;
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
      <div class="split ${this.searchShown ? 'results' : ''}">
        <div class="views" @sm-select-path=${this.handleSelect}>
          ${
            this.index.error !== undefined && !entries
              ? html`<p class="status error" role="alert">
                  The memory index could not be loaded: ${describe(this.index.error)}. Reload the
                  page to try again.
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
        ${this.searchShown ? this.renderDivider('views') : nothing}
        <div
          class="search"
          @sm-select-path=${this.handleSelect}
          @sm-search-results=${this.handleSearchResults}
        >
          <sm-memory-search
            .memory=${this.memory}
            .path=${entries ? searchScope(entries, this.selectedPath) : ''}
            .recencyBias=${this.recencyBias}
          ></sm-memory-search>
        </div>
      </div>
      ${this.below ? this.renderDivider(this.footDivider) : nothing}`;
  }

  /** A divider (WAI-ARIA window splitter): drag it, or focus it and use the arrow keys. */
  private renderDivider(which: Divider) {
    const share = this.split[which];
    const label =
      which === 'views'
        ? 'Resize the tree and the search results'
        : 'Resize the explorer and the entry detail';
    return html`<div
      role="separator"
      class="${which !== 'views' ? 'foot' : ''} ${this.dragging === which ? 'dragging' : ''}"
      data-divider=${which}
      tabindex="0"
      aria-orientation="horizontal"
      aria-label=${label}
      aria-valuemin="0"
      aria-valuemax="100"
      aria-valuenow=${Math.round(share * 100)}
      title="Drag to resize; double-click for the default"
      @pointerdown=${(e: PointerEvent) => this.handleDividerDown(e, which)}
      @keydown=${(e: KeyboardEvent) => this.handleDividerKey(e, which)}
      @dblclick=${() => this.setShare(which, DEFAULT_SPLIT[which], true)}
    ></div>`;
  }

  /** The height (px) a divider shares, and each side's minimum. */
  private room(which: Divider): { height: number; min: [number, number] } {
    if (which !== 'views') {
      const height = this.parentHeight || this.parentElement?.clientHeight || 0;
      return { height, min: [MIN_HEIGHT.explorer, MIN_HEIGHT.detail] };
    }
    const box = this.renderRoot.querySelector('.split')?.getBoundingClientRect();
    // Less the divider itself and the gaps around it.
    return { height: (box?.height ?? 0) - 16, min: [MIN_HEIGHT.views, MIN_HEIGHT.search] };
  }

  private setShare(which: Divider, share: number, remember: boolean): void {
    const { height, min } = this.room(which);
    const next = clampShare(share, height, min[0], min[1]);
    if (next !== this.split[which]) this.split = { ...this.split, [which]: next };
    if (remember) saveSplit(deviceStorage(), this.split);
  }

  private handleDividerKey(event: KeyboardEvent, which: Divider): void {
    const next = shareForKey(event.key, this.split[which]);
    if (next === undefined) return;
    event.preventDefault();
    this.setShare(which, next, true);
  }

  private handleDividerDown(event: PointerEvent, which: Divider): void {
    if (event.button !== 0) return;
    const handle = event.currentTarget as HTMLElement;
    event.preventDefault();
    handle.focus();
    handle.setPointerCapture(event.pointerId);
    this.dragging = which;
    const { height } = this.room(which);
    // Relative to where it was grabbed, so the divider does not jump to the pointer.
    const from = { y: event.clientY, share: this.split[which] };
    const move = (e: PointerEvent) => {
      if (height > 0) this.setShare(which, from.share + (e.clientY - from.y) / height, false);
    };
    const end = () => {
      handle.removeEventListener('pointermove', move);
      handle.removeEventListener('pointerup', end);
      handle.removeEventListener('pointercancel', end);
      this.dragging = undefined;
      saveSplit(deviceStorage(), this.split);
    };
    handle.addEventListener('pointermove', move);
    handle.addEventListener('pointerup', end);
    handle.addEventListener('pointercancel', end);
  }

  private handleSearchResults(event: CustomEvent<SearchResultsDetail>): void {
    this.searchShown = event.detail.shown;
  }

  private renderSummary(total: number, shown: number) {
    const entries = `${total.toLocaleString()} ${total === 1 ? 'entry' : 'entries'}`;
    const filter = this.filter.trim();
    return html`<p class="summary ${filter ? '' : 'quiet'}" aria-live="polite">
      ${filter ? `${shown.toLocaleString()} of ${entries} match “${filter}”` : entries}
    </p>`;
  }

  private load(): Promise<EntrySummary[] | undefined> {
    this.loadedWith = this.memory;
    return this.memory ? this.memory.memoryIndex() : Promise.resolve(undefined);
  }

  /** Entries whose path contains the filter (the map shows only these); memoised. */
  private filterEntries(entries: readonly EntrySummary[]): readonly EntrySummary[] {
    const filter = this.filter.trim().toLowerCase();
    const memo = this.filtered;
    if (memo && memo.entries === entries && memo.filter === filter) return memo.out;
    const matches = (e: EntrySummary) => e.path.toLowerCase().includes(filter);
    const patch = entryPatchOf(entries);
    let out: readonly EntrySummary[];
    if (filter && memo && memo.filter === filter && patch && patch.base === memo.entries) {
      // Patched in turn, so the map patches its tree too (docs/design.md, "Change notifications").
      out = applyEntryDelta(memo.out, {
        upserted: patch.upserted.filter(matches),
        removed: [
          ...patch.removed,
          ...patch.upserted.filter((e) => !matches(e)).map((e) => e.path),
        ],
      });
    } else out = filter ? entries.filter(matches) : entries;
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
