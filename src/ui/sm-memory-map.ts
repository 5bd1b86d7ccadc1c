// The memory map: a treemap of the whole tree (d3-hierarchy), area by content and context,
// colour by recency, drawn by Lit as SVG. Layout is memoised on the entries and the size. It
// takes the keyboard too: Tab reaches it, arrow keys move between blocks, Enter opens one.
import { hierarchy, treemap, treemapSquarify, type HierarchyRectangularNode } from 'd3-hierarchy';
import { LitElement, html, nothing, svg, type PropertyValues } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { guard } from 'lit/directives/guard.js';
import type { EntrySummary } from '../memory/types';
import { emit } from './events';
import { treeFor } from './memory-watch';
import { arrowDirection, nextInDirection } from './map-navigation';
import { tokens } from './styles';
import {
  buildTree,
  describeAge,
  formatStamp,
  needsLightText,
  recencyColor,
  recencyStrength,
  type MemoryNode,
  type MemoryTree,
} from './tree-model';
import { memoryMapStyles } from './sm-memory-map.styles';

/** A node as the treemap sees it; `self` stands for the content of an entry that also has children. */
interface MapDatum {
  node: MemoryNode;
  self?: boolean;
}

/** One drawn rectangle (what hover, click and labels work from). */
export interface MapCell {
  path: string;
  depth: number;
  /** `group`: a small heading drawn as one block because some entries in it are too small. */
  kind: 'heading' | 'group' | 'entry';
  x: number;
  y: number;
  w: number;
  h: number;
  fill: string;
  light: boolean;
  /** Text that fits, or '' for none. */
  label: string;
  /**
   * A heading's label runs down a strip at its left (`side`) where the block is too narrow for
   * one along its top; else it reads along the top.
   */
  labelSide?: 'top' | 'side';
  /** A second, smaller line for leaves with room (the count for headings goes in `label`). */
  note: string;
  node: MemoryNode;
}

/**
 * Rectangles of one fill and kind, drawn as a single `<path>`: thousands of `<rect>`s cost
 * Chromium far more in attribute parsing and style work than a few long paths.
 */
export interface MapLayer {
  key: string;
  kind: MapCell['kind'];
  fill: string;
  d: string;
}

export interface MapLayout {
  /** In pre-order: a heading before its children, so later cells lie on top. */
  cells: MapCell[];
  /** Paint order: frames by depth, then group blocks by depth, then entries. */
  layers: MapLayer[];
  /** Every node's rectangle by path (drawn or not), for the selection outline. */
  rects: Map<string, { x: number; y: number; w: number; h: number }>;
  /** Nodes too small to draw (their area shows in their parent). */
  hidden: number;
}

/** Below this width or height (px) a node is not drawn. */
const MIN_SIDE = 2;
/** Height of a heading's label strip (its width, where it runs down the side). */
const STRIP = 18;
/** Recency colour steps. */
const STEPS = 20;
/**
 * Rough widths of a character of the 12px label font, on the wide side so that a label stays
 * inside its block (measured in Chromium's system-ui: 6.6 px on average, 7.5 px bold, up to
 * 8.4 for a word of wide letters).
 */
const CHAR_W = 7.2;
const BOLD_CHAR_W = 8;

/** Weight of an entry: its content size and context chunks, never zero. */
export function entryValue(entry: EntrySummary): number {
  return 1 + entry.size / 200 + entry.chunks;
}

/** Cuts `text` to what fits `width` px, with an ellipsis; '' when not even 3 characters fit. */
export function fitLabel(text: string, width: number, charWidth = CHAR_W): string {
  const room = Math.floor((width - 8) / charWidth);
  if (room < 3) return '';
  return text.length <= room ? text : `${text.slice(0, room - 1)}…`;
}

/** Lays the tree out in `width × height` and lists the rectangles worth drawing. */
export function layoutMap(tree: MemoryTree, width: number, height: number, now: number): MapLayout {
  const cells: MapCell[] = [];
  const rects = new Map<string, { x: number; y: number; w: number; h: number }>();
  if (tree.entries === 0 || width < 10 || height < 10) {
    return { cells, layers: [], rects, hidden: 0 };
  }
  // Recency in 20 steps: few distinct fills (so few layers), and no visible banding.
  const fills = Array.from({ length: STEPS + 1 }, (_, i) => recencyColor(i / STEPS));
  const step = (time: number) => Math.round(recencyStrength(time, now) * STEPS);
  const root = hierarchy<MapDatum>({ node: tree.root }, (d) => {
    const { node } = d;
    if (d.self || node.children.length === 0) return undefined;
    const kids: MapDatum[] = node.children.map((c) => ({ node: c }));
    if (node.entry) kids.unshift({ node, self: true });
    return kids;
  })
    .sum((d) =>
      d.node.entry && (d.self || d.node.children.length === 0) ? entryValue(d.node.entry) : 0,
    )
    .sort((a, b) => (b.value ?? 0) - (a.value ?? 0));
  const laid = treemap<MapDatum>()
    .tile(treemapSquarify)
    .size([width, height])
    // Frames and gaps only where there is room: on thousands of small headings, fixed padding
    // would eat the whole area and leave the entries invisible.
    .paddingInner((n) => (n.depth === 0 ? 3 : roomy(n) ? 1 : 0))
    .paddingTop((n) => (n.depth === 0 ? 0 : labelPlace(n) === 'top' ? STRIP : roomy(n) ? 2 : 0))
    .paddingRight(frame)
    .paddingBottom(frame)
    .paddingLeft((n) => (n.depth > 0 && labelPlace(n) === 'side' ? STRIP : frame(n)))(root);

  let hidden = 0;
  const stack: HierarchyRectangularNode<MapDatum>[] = [...(laid.children ?? [])].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    const { node, self } = n.data;
    const w = n.x1 - n.x0;
    const h = n.y1 - n.y0;
    if (!self) rects.set(node.path, { x: n.x0, y: n.y0, w, h });
    if (w < MIN_SIDE || h < MIN_SIDE) {
      hidden += self ? 1 : node.descendants + (node.entry ? 1 : 0);
      continue;
    }
    if (n.children) {
      if (roomy(n)) {
        let label = '';
        let note = '';
        const place = labelPlace(n);
        const side = place === 'side';
        if (place) {
          const length = side ? h : w;
          const count = String(node.descendants);
          const both = `${node.heading}  ${count}`;
          if (fitLabel(both, length, BOLD_CHAR_W) === both) [label, note] = [node.heading, count];
          else label = fitLabel(node.heading, length, BOLD_CHAR_W);
        }
        cells.push({
          path: node.path,
          depth: n.depth,
          kind: 'heading',
          x: n.x0,
          y: n.y0,
          w,
          h,
          fill: n.depth % 2 === 1 ? '#e9edf3' : '#f7f8fa',
          light: false,
          label,
          note,
          labelSide: side ? 'side' : 'top',
          node,
        });
      } else if (n.children.some((c) => c.x1 - c.x0 < MIN_SIDE || c.y1 - c.y0 < MIN_SIDE)) {
        // Unframed and with entries too small to draw: one block, coloured by its newest.
        const k = step(node.newest);
        cells.push({
          path: node.path,
          depth: n.depth,
          kind: 'group',
          x: n.x0,
          y: n.y0,
          w,
          h,
          fill: fills[k],
          light: needsLightText(k / STEPS),
          label: '',
          note: '',
          node,
        });
      }
      // Otherwise its children cover it exactly: nothing to draw for the heading itself.
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
    } else {
      const entry = node.entry!;
      const k = step(entry.modified);
      const label = w >= 24 && h >= 16 ? fitLabel(node.heading, w) : '';
      cells.push({
        path: node.path,
        depth: n.depth,
        kind: 'entry',
        x: n.x0,
        y: n.y0,
        w,
        h,
        fill: fills[k],
        light: needsLightText(k / STEPS),
        label,
        note: '',
        node,
      });
    }
  }
  return { cells, layers: layersOf(cells), rects, hidden };
}

const KIND_ORDER: Record<MapCell['kind'], number> = { heading: 0, group: 1, entry: 2 };

function layersOf(cells: readonly MapCell[]): MapLayer[] {
  const byKey = new Map<string, { cell: MapCell; parts: string[] }>();
  const r = (v: number) => Math.round(v * 10) / 10;
  for (const c of cells) {
    // Frames and groups nest, so their layers are per depth; entries never overlap.
    const key = `${KIND_ORDER[c.kind]}:${c.kind === 'entry' ? 0 : c.depth}:${c.fill}`;
    let layer = byKey.get(key);
    if (!layer) byKey.set(key, (layer = { cell: c, parts: [] }));
    layer.parts.push(`M${r(c.x)} ${r(c.y)}h${r(c.w)}v${r(c.h)}h${-r(c.w)}z`);
  }
  return [...byKey.entries()]
    .sort(
      ([, a], [, b]) =>
        KIND_ORDER[a.cell.kind] - KIND_ORDER[b.cell.kind] ||
        (a.cell.kind === 'entry' ? 0 : a.cell.depth - b.cell.depth),
    )
    .map(([key, { cell, parts }]) => ({
      key,
      kind: cell.kind,
      fill: cell.fill,
      d: parts.join(''),
    }));
}

/** The topmost cell at a point: the deepest, since cells are in pre-order. */
export function cellAt(cells: readonly MapCell[], x: number, y: number): number {
  for (let i = cells.length - 1; i >= 0; i--) {
    const c = cells[i];
    if (x >= c.x && x < c.x + c.w && y >= c.y && y < c.y + c.h) return i;
  }
  return -1;
}

/** Big enough for a 1–2 px frame around its children. */
function roomy(n: HierarchyRectangularNode<MapDatum>): boolean {
  return n.x1 - n.x0 >= 18 && n.y1 - n.y0 >= 18;
}

function frame(n: HierarchyRectangularNode<MapDatum>): number {
  return n.depth === 0 ? 0 : labelPlace(n) === 'top' ? 2 : roomy(n) ? 1 : 0;
}

/**
 * Where a heading's label goes: along its top where the block is wide enough; down its left side
 * (as on a book's spine) where the block is tall and too narrow for the whole name along the top
 * but has room for more of it down the side; nowhere in a block too small for a word (its name
 * is then in the tooltip and the caption, as every block's path is).
 */
function labelPlace(n: HierarchyRectangularNode<MapDatum>): 'top' | 'side' | undefined {
  const w = n.x1 - n.x0;
  const h = n.y1 - n.y0;
  const name = n.data.node.heading;
  const top = w >= 44 && h >= 40 ? fitLabel(name, w, BOLD_CHAR_W) : '';
  if (top === name) return 'top';
  const side = w >= 30 && h >= 56 ? fitLabel(name, h, BOLD_CHAR_W) : '';
  if (side.length > top.length) return 'side';
  return top ? 'top' : undefined;
}

/**
 * `<sm-memory-map>`: a treemap of every memory heading and entry.
 *
 * Area is content size plus context chunks; colour is how recently an entry was modified
 * (darker = newer). Hover shows the full path and dates; a click selects. The host fills the
 * height it is given (at least 120 px).
 *
 * Keyboard: the map is one tab stop (`role="application"`, so a screen reader passes the arrow
 * keys on; the drawing inside it is an image); the arrow keys move an outlined block to the nearest block that way (entries, and
 * small headings drawn as one block), Home and End to the first and last, Enter or Space opens
 * it. The caption shows the block, and a polite live region reads it out. The tree remains the
 * structured way through the same data.
 *
 * @fires sm-select-path - A node was clicked, or opened with Enter; `detail.path`.
 */
@customElement('sm-memory-map')
export class SmMemoryMap extends LitElement {
  // No shared `base` sheet: its `* { box-sizing: inherit }` makes style recalc of thousands of
  // SVG nodes take seconds in Chromium, and the map has no form controls to style.
  static override styles = [tokens, memoryMapStyles];

  /** Every entry (from `memoryIndex()`). */
  @property({ attribute: false }) entries: readonly EntrySummary[] = [];
  /** The selected path, outlined on the map. */
  @property({ attribute: 'selected-path' }) selectedPath: string | undefined;

  @state() private width = 0;
  @state() private height = 0;
  /** Index of the cell under the pointer, or -1. */
  @state() private hover = -1;
  /** Path of the block the arrow keys are on. */
  @state() private active: string | undefined;
  /** Whether the map has the keyboard focus. */
  @state() private focused = false;
  /** What the live region reads: the block the keys moved to. */
  @state() private announcement = '';

  /** Time the last layout took, in ms (for benchmarks and the harness). */
  lastLayoutMs = 0;

  /** How many nodes the map draws now (for tests and benchmarks). */
  get cellCount(): number {
    return this.layout.cells.length;
  }

  private tree: MemoryTree = buildTree([]);
  /** The entries `tree` shows: a list patched from them patches the tree. */
  private treeFrom: readonly EntrySummary[] | undefined;
  private layout: MapLayout = { cells: [], layers: [], rects: new Map(), hidden: 0 };
  private titles = new Map<string, string>();
  /** Indices (in `layout.cells`) of the blocks the arrow keys visit; per layout. */
  private navigable: { layout: MapLayout; cells: number[] } | undefined;
  /** Entries changed while hidden. */
  private stale = true;
  private resizeTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly resizeObserver = new ResizeObserver((records) => {
    const box = records[records.length - 1].contentRect;
    // Whole pixels: sub-pixel jitter would redo the layout for nothing.
    const w = Math.floor(box.width);
    const h = Math.floor(box.height);
    clearTimeout(this.resizeTimer);
    if (w === this.width && h === this.height) return;
    const apply = () => {
      this.width = w;
      this.height = h;
    };
    // While a window is dragged, the drawn map stretches (viewBox) and is laid out again
    // once the size settles; the first size and a hidden ↔ shown change apply at once.
    if (this.width === 0 || this.height === 0 || w === 0 || h === 0) apply();
    else this.resizeTimer = setTimeout(apply, 120);
  });

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.resizeObserver.disconnect();
    clearTimeout(this.resizeTimer);
  }

  protected override firstUpdated(): void {
    const frame = this.renderRoot.querySelector('.frame');
    if (frame) this.resizeObserver.observe(frame);
  }

  protected override willUpdate(changed: PropertyValues): void {
    // Hidden (no size): the tree and layout wait until the map is shown.
    if (this.width === 0 || this.height === 0) {
      if (changed.has('entries')) this.stale = true;
      return;
    }
    const entriesChanged = changed.has('entries') || this.stale;
    if (entriesChanged) {
      const entries = this.entries ?? [];
      this.tree = treeFor(entries, this.tree, this.treeFrom);
      this.treeFrom = entries;
      this.titles = new Map();
      this.stale = false;
    }
    if (entriesChanged || changed.has('width') || changed.has('height')) {
      const start = performance.now();
      this.layout = layoutMap(this.tree, this.width, this.height, Date.now());
      this.hover = -1;
      this.lastLayoutMs = performance.now() - start;
    }
  }

  override render() {
    const { cells, layers, rects } = this.layout;
    const selected = this.selectedPath !== undefined ? rects.get(this.selectedPath) : undefined;
    const hovered = cells[this.hover];
    const empty = (this.entries ?? []).length === 0;
    const active = this.focused ? this.activeCell() : undefined;
    return html`<div
        class="frame"
        role=${empty ? nothing : 'application'}
        aria-label=${empty ? nothing : 'Memory map'}
        aria-describedby=${empty ? nothing : 'map-keys'}
        tabindex=${empty ? nothing : '0'}
        @keydown=${this.handleKeyDown}
        @focus=${this.handleFocus}
        @blur=${this.handleBlur}
      >
        ${
          empty
            ? html`<p class="empty">Nothing to map yet.</p>`
            : html`<svg
                class="map"
                role="img"
                aria-label="Memory map: a block per entry, its area its size, its colour its age"
                viewBox="0 0 ${this.width} ${this.height}"
                preserveAspectRatio="none"
                @click=${this.handleClick}
                @pointermove=${this.handlePointerMove}
                @pointerleave=${this.handlePointerLeave}
              >
                ${guard([layers], () =>
                  layers.map((l) => svg`<path class=${l.kind} fill=${l.fill} d=${l.d}></path>`),
                )}
                ${guard([cells], () => cells.filter((c) => c.label).map((c) => this.renderLabel(c)))}
                ${hovered ? this.renderHover(hovered) : nothing}
                ${selected ? this.renderOutline(selected) : nothing}
                ${active ? this.renderActive(active) : nothing}
              </svg>`
        }
      </div>
      <span id="map-keys" class="hidden"
        >Arrow keys move between blocks, Enter opens the block. The tree lists the same
        memory.</span
      >
      <p class="hidden" aria-live="polite">${this.announcement}</p>
      ${this.renderCaption()} ${this.renderLegend()}`;
  }

  /** The outline of the block the arrow keys are on. */
  private renderActive(c: MapCell) {
    const x = c.x + 1.5;
    const y = c.y + 1.5;
    const w = Math.max(3, c.w - 3);
    const h = Math.max(3, c.h - 3);
    return svg`<rect class="active-halo active" x=${x} y=${y} width=${w} height=${h}></rect>
      <rect class="active" data-path=${c.path} x=${x} y=${y} width=${w} height=${h}></rect>`;
  }

  private renderLabel(c: MapCell) {
    const note = c.note ? svg`<tspan class="note" dx="5">${c.note}</tspan>` : nothing;
    if (c.kind === 'heading' && c.labelSide === 'side') {
      // Turned a quarter clockwise: it reads downwards from the block's top, its letters facing
      // into the block.
      return svg`<text class="heading" data-path=${c.path}
        transform="translate(${c.x + 6} ${c.y + 4}) rotate(90)">${c.label}${note}</text
      >`;
    }
    if (c.kind === 'heading') {
      return svg`<text class="heading" data-path=${c.path} x=${c.x + 4} y=${c.y + 13}
        >${c.label}${note}</text
      >`;
    }
    return svg`<text class=${c.light ? 'light' : ''} data-path=${c.path} x=${c.x + 4} y=${c.y + 13}
      >${c.label}</text
    >`;
  }

  /**
   * The hovered node, on top: its outline, and the one <title> of the map (the native tooltip
   * needs the element under the pointer to carry it).
   */
  private renderHover(c: MapCell) {
    return svg`<rect class="hover" data-path=${c.path} x=${c.x + 0.5} y=${c.y + 0.5}
      width=${Math.max(0, c.w - 1)} height=${Math.max(0, c.h - 1)}
      ><title>${this.titleOf(c.node)}</title></rect
    >`;
  }

  private renderOutline(r: { x: number; y: number; w: number; h: number }) {
    // Tiny nodes still get a findable mark.
    const w = Math.max(r.w, 6);
    const h = Math.max(r.h, 6);
    const x = Math.max(1.5, Math.min(r.x - (w - r.w) / 2, this.width - w - 1.5));
    const y = Math.max(1.5, Math.min(r.y - (h - r.h) / 2, this.height - h - 1.5));
    return svg`<rect class="halo" x=${x} y=${y} width=${w} height=${h} rx="2"></rect>
      <rect class="outline" x=${x} y=${y} width=${w} height=${h} rx="2"></rect>`;
  }

  /**
   * One line about the hovered node, else the block the keys are on, else the selected one:
   * touch screens have no tooltips.
   */
  private renderCaption() {
    if ((this.entries ?? []).length === 0) return nothing;
    const node =
      this.layout.cells[this.hover]?.node ??
      (this.focused ? this.activeCell()?.node : undefined) ??
      (this.selectedPath !== undefined ? this.tree.byPath.get(this.selectedPath) : undefined);
    if (!node || node === this.tree.root) {
      return html`<p class="caption muted">
        Point at a block for its path; click to select it. Arrow keys and Enter work too.
      </p>`;
    }
    return html`<p class="caption"><b>${node.path}</b> · ${this.about(node)}</p>`;
  }

  /** The node's age (an entry) or size and newest entry (a heading), in words. */
  private about(node: MemoryNode): string {
    const now = Date.now();
    return node.entry
      ? `modified ${describeAge(node.entry.modified, now)}`
      : `${node.descendants} ${node.descendants === 1 ? 'entry' : 'entries'}, newest ${describeAge(node.newest, now)}`;
  }

  private renderLegend() {
    if ((this.entries ?? []).length === 0) return nothing;
    const steps = [1, 0.75, 0.5, 0.25, 0];
    const { hidden } = this.layout;
    return html`<div class="legend">
      <span class="scale"
        >newer
        <svg class="swatches" aria-hidden="true" width="70" height="10" viewBox="0 0 70 10">
          ${steps.map(
            (s, i) => svg`<rect x=${i * 14} width="14" height="10" fill=${recencyColor(s)}></rect>`,
          )}
        </svg>
        older</span
      >
      <span>area: content + context</span>
      ${hidden > 0 ? html`<span>${hidden} too small to show alone</span>` : nothing}
    </div>`;
  }

  private titleOf(node: MemoryNode): string {
    let title = this.titles.get(node.path);
    if (title !== undefined) return title;
    const lines = [node.path];
    if (node.descendants > 0) {
      lines.push(
        `${node.descendants} ${node.descendants === 1 ? 'entry' : 'entries'} below, newest ${formatStamp(node.newest)}`,
      );
    }
    if (node.entry) {
      lines.push(
        `modified ${formatStamp(node.entry.modified)}`,
        `created ${formatStamp(node.entry.created)}`,
        `${node.entry.size} characters, ${node.entry.chunks} context ${node.entry.chunks === 1 ? 'chunk' : 'chunks'}`,
      );
    }
    title = lines.join('\n');
    this.titles.set(node.path, title);
    return title;
  }

  /** The index of the cell under a pointer event, or -1. */
  private cellIndexAt(event: MouseEvent): number {
    const box = (event.currentTarget as Element).getBoundingClientRect();
    if (box.width === 0 || box.height === 0) return -1;
    // In layout units: the drawing may be stretched while a resize settles.
    const x = ((event.clientX - box.left) * this.width) / box.width;
    const y = ((event.clientY - box.top) * this.height) / box.height;
    return cellAt(this.layout.cells, x, y);
  }

  private handlePointerMove(event: PointerEvent): void {
    const i = this.cellIndexAt(event);
    if (i !== this.hover) this.hover = i;
  }

  private handlePointerLeave(): void {
    this.hover = -1;
  }

  private handleClick(event: MouseEvent): void {
    const cell = this.layout.cells[this.cellIndexAt(event)];
    if (!cell) return;
    this.active = cell.kind === 'heading' ? this.active : cell.path;
    emit(this, 'sm-select-path', { path: cell.path });
  }

  /** Indices of the blocks the keys visit: entries and small headings drawn as one block. */
  private navCells(): number[] {
    if (this.navigable?.layout === this.layout) return this.navigable.cells;
    const cells: number[] = [];
    this.layout.cells.forEach((c, i) => {
      if (c.kind !== 'heading') cells.push(i);
    });
    this.navigable = { layout: this.layout, cells };
    return cells;
  }

  /**
   * The block the keys are on: the one last moved to, else the selected node's (or the first
   * block inside or around it), else the first block.
   */
  private activeCell(): MapCell | undefined {
    const { cells, rects } = this.layout;
    const nav = this.navCells();
    if (nav.length === 0) return undefined;
    for (const path of [this.active, this.selectedPath]) {
      if (path === undefined) continue;
      const own = nav.find((i) => cells[i].path === path);
      if (own !== undefined) return cells[own];
      const r = rects.get(path);
      if (!r) continue;
      // A heading: its first block; an entry too small to draw: the block that holds it.
      const inside = nav.find((i) => {
        const c = cells[i];
        return c.x >= r.x && c.y >= r.y && c.x + c.w <= r.x + r.w && c.y + c.h <= r.y + r.h;
      });
      if (inside !== undefined) return cells[inside];
      const around = cellAt(
        nav.map((i) => cells[i]),
        r.x + r.w / 2,
        r.y + r.h / 2,
      );
      if (around >= 0) return cells[nav[around]];
    }
    return cells[nav[0]];
  }

  private moveActive(cell: MapCell | undefined): void {
    if (!cell) return;
    this.active = cell.path;
    this.announcement = `${cell.path}, ${this.about(cell.node)}`;
  }

  private handleFocus(): void {
    this.focused = true;
    this.moveActive(this.activeCell());
  }

  private handleBlur(): void {
    this.focused = false;
  }

  private handleKeyDown(event: KeyboardEvent): void {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const current = this.activeCell();
    if (!current) return;
    const nav = this.navCells();
    const cells = this.layout.cells;
    const direction = arrowDirection(event.key);
    if (direction) {
      const boxes = nav.map((i) => cells[i]);
      const at = boxes.indexOf(current);
      const next = nextInDirection(boxes, at, direction);
      if (next >= 0) this.moveActive(boxes[next]);
    } else if (event.key === 'Home') {
      this.moveActive(cells[nav[0]]);
    } else if (event.key === 'End') {
      this.moveActive(cells[nav[nav.length - 1]]);
    } else if (event.key === 'Enter' || event.key === ' ') {
      this.active = current.path;
      emit(this, 'sm-select-path', { path: current.path });
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'sm-memory-map': SmMemoryMap;
  }
}
