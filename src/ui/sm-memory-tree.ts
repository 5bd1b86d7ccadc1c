// The memory explorer's ARIA tree: headings and entries with counts and recency, keyboard
// navigable (WAI-ARIA tree pattern), rendering only expanded nodes and windowing long lists.
import { LitElement, html, noChange, nothing, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { Directive, PartType, directive, type ElementPart, type PartInfo } from 'lit/directive.js';
import { repeat } from 'lit/directives/repeat.js';
import type { EntrySummary } from '../memory/types';
import { emit } from './events';
import { treeFor } from './memory-watch';
import { base, tokens } from './styles';
import {
  ancestorsOf,
  buildTree,
  describeAge,
  expandedForFilter,
  filterTree,
  flattenVisible,
  formatAge,
  recencyColor,
  recencyStrength,
  type MemoryTree,
  type TreeRow,
} from './tree-model';
import { ROW_H, indentRules, memoryTreeStyles } from './sm-memory-tree.styles';

/** Below this many visible rows everything is rendered; above, only the rows in view. */
const WINDOW_MIN = 150;
/** Extra rows rendered above and below the viewport. */
const OVERSCAN = 12;

/**
 * Sets an element's height through the CSSOM. Lit's `styleMap` writes a `style` attribute on
 * its first render, which the app's CSP (`style-src 'self'`) blocks; CSSOM writes are allowed.
 */
class HeightDirective extends Directive {
  constructor(part: PartInfo) {
    super(part);
    if (part.type !== PartType.ELEMENT) throw new Error('heightPx() goes on an element');
  }
  render(_px: number) {
    return nothing;
  }
  override update(part: ElementPart, [px]: [number]) {
    (part.element as HTMLElement).style.height = `${px}px`;
    return noChange;
  }
}
const heightPx = directive(HeightDirective);

interface Reveal {
  path: string;
  focus: boolean;
  /** Centre it (a jump from outside) rather than scroll it just into view. */
  centre: boolean;
}

/**
 * `<sm-memory-tree>`: every memory heading and entry as an ARIA tree.
 *
 * The host is the scroll container: give it a height (or let a flex parent size it) and long
 * lists are windowed; unconstrained, it renders every visible row.
 *
 * @fires sm-select-path - A node was chosen (click, Enter or Space); `detail.path`.
 */
@customElement('sm-memory-tree')
export class SmMemoryTree extends LitElement {
  static override styles = [tokens, base, indentRules, memoryTreeStyles];

  /** Every entry (from `memoryIndex()`). */
  @property({ attribute: false }) entries: readonly EntrySummary[] = [];
  /** The selected path; changing it from outside expands its ancestors and scrolls to it. */
  @property({ attribute: 'selected-path' }) selectedPath: string | undefined;
  /** Path substring (case-insensitive): only matches and their ancestors are shown. */
  @property() filter = '';

  @state() private expanded: ReadonlySet<string> = new Set();
  /** The row holding the roving tabindex. */
  @state() private activePath: string | undefined;
  @state() private scrollPos = 0;
  @state() private viewHeight = 0;

  private tree: MemoryTree = buildTree([]);
  /** The entries `tree` shows: a list patched from them patches the tree. */
  private treeFrom: readonly EntrySummary[] | undefined;
  private keep: Set<string> | undefined;
  private rows: TreeRow[] = [];
  /** The inputs `rows` were flattened from. */
  private rowsFor: {
    tree?: MemoryTree;
    expanded?: ReadonlySet<string>;
    keep?: Set<string> | undefined;
  } = {};
  /** The user's expansions from before a filter was typed, restored when it is cleared. */
  private expandedBeforeFilter: ReadonlySet<string> | undefined;
  private reveal: Reveal | undefined;
  private typeahead = '';
  private typeaheadTimer: ReturnType<typeof setTimeout> | undefined;
  private scrollFrame = 0;
  private readonly resizeObserver = new ResizeObserver(() => {
    const height = this.clientHeight;
    // Shown again (a tab switch): bring the selection back into view.
    if (this.viewHeight === 0 && height > 0 && this.selectedPath) {
      this.reveal ??= { path: this.selectedPath, focus: false, centre: true };
    }
    this.viewHeight = height;
  });

  override connectedCallback(): void {
    super.connectedCallback();
    this.addEventListener('scroll', this.handleScroll, { passive: true });
    this.resizeObserver.observe(this);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.removeEventListener('scroll', this.handleScroll);
    this.resizeObserver.disconnect();
    cancelAnimationFrame(this.scrollFrame);
    clearTimeout(this.typeaheadTimer);
  }

  protected override willUpdate(changed: PropertyValues): void {
    if (changed.has('entries')) {
      const entries = this.entries ?? [];
      this.tree = treeFor(entries, this.tree, this.treeFrom);
      this.treeFrom = entries;
    }
    if (changed.has('entries') || changed.has('filter')) {
      const kept = this.keep;
      const hadFilter = kept !== undefined;
      this.keep = filterTree(this.tree, this.filter ?? '');
      if (this.keep) {
        if (!hadFilter) this.expandedBeforeFilter = this.expanded;
        // Reveal every match; while the filter stays, the user may collapse what they like.
        if (changed.has('filter') || !hadFilter) {
          this.expanded = expandedForFilter(this.tree, this.keep);
        } else {
          // A match that a write brought while the filter stays is revealed too.
          const added = new Set([...this.keep].filter((p) => !kept.has(p)));
          if (added.size > 0) {
            this.expanded = new Set([...this.expanded, ...expandedForFilter(this.tree, added)]);
          }
        }
      } else if (hadFilter) {
        const restored = new Set(this.expandedBeforeFilter ?? []);
        for (const a of ancestorsOf(this.selectedPath ?? '')) restored.add(a);
        this.expanded = restored;
        this.expandedBeforeFilter = undefined;
        if (this.selectedPath)
          this.reveal = { path: this.selectedPath, focus: false, centre: true };
      }
    }
    if (changed.has('selectedPath') && this.selectedPath) {
      const missing = ancestorsOf(this.selectedPath).filter((a) => !this.expanded.has(a));
      if (missing.length > 0) this.expanded = new Set([...this.expanded, ...missing]);
      this.activePath = this.selectedPath;
      this.reveal ??= { path: this.selectedPath, focus: false, centre: true };
    }
    // Scrolling and focus moves leave the rows as they are.
    if (
      this.rowsFor.tree !== this.tree ||
      this.rowsFor.expanded !== this.expanded ||
      this.rowsFor.keep !== this.keep
    ) {
      this.rows = flattenVisible(this.tree, this.expanded, this.keep);
      this.rowsFor = { tree: this.tree, expanded: this.expanded, keep: this.keep };
    }
    // A row to reveal that is windowed out: move the window there now, so this very render
    // draws it (updated() then scrolls the host to match).
    if (this.reveal && this.viewHeight > 0) {
      const path = this.reveal.path;
      const index = this.rows.findIndex((r) => r.node.path === path);
      const [first, last] = this.windowRange(this.rows.length);
      if (index >= 0 && (index < first || index >= last)) {
        this.scrollPos = Math.max(0, index * ROW_H - (this.viewHeight - ROW_H) / 2);
      }
    }
  }

  protected override updated(): void {
    const reveal = this.reveal;
    if (!reveal) return;
    const index = this.rows.findIndex((r) => r.node.path === reveal.path);
    if (index < 0) {
      // A path selected before the index has caught up (just saved): try again when it arrives.
      if (this.tree.byPath.has(reveal.path) || reveal.path !== this.selectedPath) {
        this.reveal = undefined;
      }
      return;
    }
    const el = this.rowElement(index);
    // Not drawn only while hidden or not yet measured: the resize observer brings it back.
    if (!el) return;
    this.reveal = undefined;
    this.scrollRowIntoView(el, reveal.centre);
    if (reveal.focus) el.focus({ preventScroll: true });
  }

  override render() {
    const rows = this.rows;
    if (rows.length === 0) {
      return html`<div role="tree" aria-label="Memory"></div>
        <p class="empty">
          ${
            this.keep
              ? `No path contains “${this.filter.trim()}”.`
              : 'No memories yet. What the model saves shows up here.'
          }
        </p>`;
    }
    const now = Date.now();
    const tabIndexRow = this.tabStop();
    return html`<div
      role="tree"
      aria-label="Memory"
      @keydown=${this.handleKeyDown}
      @click=${this.handleClick}
    >
      ${repeat(
        this.slots(rows.length, tabIndexRow),
        (slot) => (typeof slot === 'number' ? rows[slot].node.path : slot.key),
        (slot) =>
          typeof slot === 'number'
            ? this.renderRow(rows[slot], slot, now, tabIndexRow)
            : html`<div class="spacer" role="none" ${heightPx(slot.rows * ROW_H)}></div>`,
      )}
    </div>`;
  }

  /**
   * What to draw: row indices in the window, plus the row holding the tab stop even when it is
   * scrolled away (removing a focused element would drop keyboard focus), and spacers for the
   * rows in between.
   */
  private slots(count: number, keepIndex: number): (number | { key: string; rows: number })[] {
    const [first, last] = this.windowRange(count);
    const indices: number[] = [];
    if (keepIndex < first) indices.push(keepIndex);
    for (let i = first; i < last; i++) indices.push(i);
    if (keepIndex >= last && keepIndex < count) indices.push(keepIndex);
    const out: (number | { key: string; rows: number })[] = [];
    let next = 0;
    for (const i of indices) {
      if (i > next) out.push({ key: `gap${out.length}`, rows: i - next });
      out.push(i);
      next = i + 1;
    }
    if (next < count) out.push({ key: 'gap-end', rows: count - next });
    return out;
  }

  private renderRow(row: TreeRow, index: number, now: number, tabIndexRow: number) {
    const { node } = row;
    const selected = node.path === this.selectedPath;
    const strength = recencyStrength(node.newest, now);
    const descId = `d${index}`;
    const below = node.descendants;
    const description = [
      node.entry && row.hasChildren ? 'entry' : '',
      below > 0 ? `${below} ${below === 1 ? 'entry' : 'entries'} below` : '',
      `${row.hasChildren ? 'newest' : 'modified'} ${describeAge(node.newest, now)}`,
    ]
      .filter(Boolean)
      .join(', ');
    return html`<div
      role="treeitem"
      class="row ${node.entry ? '' : 'heading-only'}"
      data-i=${index}
      aria-level=${row.level}
      aria-setsize=${row.setSize}
      aria-posinset=${row.posInSet}
      aria-expanded=${row.hasChildren ? String(row.expanded) : nothing}
      aria-selected=${selected ? 'true' : 'false'}
      aria-describedby=${descId}
      tabindex=${index === tabIndexRow ? 0 : -1}
    >
      ${
        row.hasChildren
          ? html`<span class="twisty" aria-hidden="true" data-twisty></span>`
          : html`<span class="leaf" aria-hidden="true"></span>`
      }
      <span class="name" title=${node.path}>${node.heading}</span>
      <span class="meta" aria-hidden="true">
        ${below > 0 ? html`<span class="count">${below}</span>` : nothing}
        <span class="age"
          ><svg class="dot" viewBox="0 0 8 8">
            <circle cx="4" cy="4" r="4" fill=${recencyColor(strength)}></circle></svg
          >${formatAge(node.newest, now)}</span
        >
      </span>
      <span id=${descId} hidden>${description}</span>
    </div>`;
  }

  /** `[first, last)` of the rows to render. */
  private windowRange(count: number): [number, number] {
    if (count <= WINDOW_MIN) return [0, count];
    // Not measured yet, or hidden: a first screenful. An unconstrained host grows to the full
    // height (the spacer), and the next pass renders the rest.
    if (this.viewHeight === 0) return [0, Math.min(count, 2 * OVERSCAN + 40)];
    const first = Math.max(0, Math.floor(this.scrollPos / ROW_H) - OVERSCAN);
    const last = Math.min(count, Math.ceil((this.scrollPos + this.viewHeight) / ROW_H) + OVERSCAN);
    return [Math.min(first, last), last];
  }

  /** Index of the row that takes Tab: the active one, else the selected one, else the first. */
  private tabStop(): number {
    for (const path of [this.activePath, this.selectedPath]) {
      if (path === undefined) continue;
      const i = this.rows.findIndex((r) => r.node.path === path);
      if (i >= 0) return i;
    }
    return 0;
  }

  private rowElement(index: number): HTMLElement | null {
    return this.renderRoot.querySelector<HTMLElement>(`[role='treeitem'][data-i='${index}']`);
  }

  /** Scrolls the host so the row shows: just into view when moving by keys, centred on a jump. */
  private scrollRowIntoView(el: HTMLElement, centre: boolean): void {
    const view = this.clientHeight;
    if (this.scrollHeight <= view + 1) {
      // The host does not scroll (unconstrained height): let the page bring it into view.
      el.scrollIntoView({ block: 'nearest' });
      return;
    }
    const host = this.getBoundingClientRect();
    const box = el.getBoundingClientRect();
    const top = box.top - host.top - this.clientTop + this.scrollTop;
    const bottom = top + box.height;
    if (top >= this.scrollTop && bottom <= this.scrollTop + view) return;
    if (centre) this.scrollTop = Math.max(0, top - (view - box.height) / 2);
    else if (top < this.scrollTop) this.scrollTop = top;
    else this.scrollTop = bottom - view;
  }

  private setExpanded(path: string, open: boolean): void {
    if (this.expanded.has(path) === open) return;
    const next = new Set(this.expanded);
    if (open) next.add(path);
    else next.delete(path);
    this.expanded = next;
  }

  private select(path: string): void {
    this.activePath = path;
    if (this.selectedPath !== path) {
      this.selectedPath = path;
      // Already in view where it was clicked; no scroll jump.
      this.reveal = { path, focus: false, centre: false };
    }
    emit(this, 'sm-select-path', { path });
  }

  private moveTo(index: number): void {
    const row = this.rows[Math.max(0, Math.min(this.rows.length - 1, index))];
    if (!row) return;
    this.activePath = row.node.path;
    this.reveal = { path: row.node.path, focus: true, centre: false };
    this.requestUpdate();
  }

  private handleClick(event: MouseEvent): void {
    const target = event.target as Element;
    const item = target.closest<HTMLElement>("[role='treeitem']");
    if (!item) return;
    const row = this.rows[Number(item.dataset.i)];
    if (!row) return;
    if (target.closest('[data-twisty]')) {
      this.activePath = row.node.path;
      this.setExpanded(row.node.path, !row.expanded);
      return;
    }
    // A plain heading opens as it is chosen; collapsing is the twisty's job.
    if (!row.node.entry && row.hasChildren) this.setExpanded(row.node.path, true);
    this.select(row.node.path);
  }

  private handleKeyDown(event: KeyboardEvent): void {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const index = this.tabStop();
    const row = this.rows[index];
    if (!row) return;
    let handled = true;
    switch (event.key) {
      case 'ArrowDown':
        this.moveTo(index + 1);
        break;
      case 'ArrowUp':
        this.moveTo(index - 1);
        break;
      case 'Home':
        this.moveTo(0);
        break;
      case 'PageDown':
        this.moveTo(index + Math.max(1, Math.floor(this.clientHeight / ROW_H) - 1));
        break;
      case 'PageUp':
        this.moveTo(index - Math.max(1, Math.floor(this.clientHeight / ROW_H) - 1));
        break;
      case 'End':
        this.moveTo(this.rows.length - 1);
        break;
      case 'ArrowRight':
        if (row.hasChildren && !row.expanded) {
          this.activePath = row.node.path;
          this.setExpanded(row.node.path, true);
        } else if (row.expanded) {
          this.moveTo(index + 1);
        }
        break;
      case 'ArrowLeft':
        if (row.expanded) {
          this.activePath = row.node.path;
          this.setExpanded(row.node.path, false);
        } else if (row.level > 1) {
          const parent = row.node.parent?.path;
          this.moveTo(this.rows.findIndex((r) => r.node.path === parent));
        }
        break;
      case 'Enter':
      case ' ':
        this.select(row.node.path);
        break;
      case '*':
        this.expandSiblings(row);
        break;
      default:
        handled = event.key.length === 1 && this.typeAhead(event.key, index);
    }
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
    }
  }

  private expandSiblings(row: TreeRow): void {
    const siblings = row.node.parent?.children ?? [];
    const next = new Set(this.expanded);
    for (const s of siblings) {
      if (s.children.length > 0 && (!this.keep || this.keep.has(s.path))) next.add(s.path);
    }
    this.activePath = row.node.path;
    this.expanded = next;
  }

  /** Moves to the next row whose heading starts with the typed characters. */
  private typeAhead(char: string, index: number): boolean {
    if (char === ' ' && this.typeahead === '') return false;
    clearTimeout(this.typeaheadTimer);
    this.typeahead += char.toLowerCase();
    this.typeaheadTimer = setTimeout(() => (this.typeahead = ''), 700);
    const n = this.rows.length;
    const start = this.typeahead.length === 1 ? index + 1 : index;
    for (let k = 0; k < n; k++) {
      const i = (start + k) % n;
      if (this.rows[i].node.heading.toLowerCase().startsWith(this.typeahead)) {
        this.moveTo(i);
        return true;
      }
    }
    return true;
  }

  private readonly handleScroll = () => {
    if (this.scrollFrame) return;
    this.scrollFrame = requestAnimationFrame(() => {
      this.scrollFrame = 0;
      this.scrollPos = this.scrollTop;
    });
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-memory-tree': SmMemoryTree;
  }
}
