// Model output as safe HTML: markdown through `marked`, then DOMPurify with a short allow-list.
// Raw HTML in the text is shown as text (never parsed), images become links (no remote loads),
// and every link opens in a new tab without an opener or referrer. This module is the one source
// of HTML in the UI; its output is the only string a template may pass to `unsafeHTML`.
import createDOMPurify from 'dompurify';
import type { DOMPurify } from 'dompurify';
import { Marked, type Tokens } from 'marked';

/** Tags markdown can produce that are worth keeping; anything else is dropped. */
export const ALLOWED_TAGS = [
  'a',
  'blockquote',
  'br',
  'code',
  'del',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'li',
  'ol',
  'p',
  'pre',
  'strong',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'tr',
  'ul',
];

const ALLOWED_ATTR = ['href', 'title', 'start', 'align'];

/** A link may only go to the web or an email address (no `javascript:`, `data:`, relative URLs). */
const ALLOWED_URI_REGEXP = /^(?:https?:|mailto:)/i;

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

const markdown = new Marked({
  gfm: true,
  // Chat models use single newlines as line breaks.
  breaks: true,
  renderer: {
    // Raw HTML is data: show it as the model wrote it.
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    // No remote image loads (privacy, CSP): a link to the image instead.
    image({ href, title, text }: Tokens.Image): string {
      const label = escapeHtml(text || href);
      const tip = title ? ` title="${escapeHtml(title)}"` : '';
      return `<a href="${escapeHtml(href)}"${tip}>${label}</a>`;
    },
    // Task lists as plain text marks rather than form controls.
    checkbox({ checked }: Tokens.Checkbox): string {
      return checked ? '☑ ' : '☐ ';
    },
  },
});

/**
 * A DOMPurify instance with our allow-lists and hooks (the shared instance stays untouched); it
 * needs a DOM, so it is made on first use. The configuration is set once: sanitize() would
 * otherwise read it all again on every call. `fragment`: it returns nodes instead of a string.
 */
/** Blocks of prose (not code) that take the direction of their own text. */
const TEXT_BLOCKS = new Set(['P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'TD', 'TH']);
/** Blocks that hold blocks: they go the way of their first words (`auto` would skip them). */
const CONTAINERS = new Set(['UL', 'OL', 'BLOCKQUOTE']);

const FIRST_LETTER = /\p{L}/u;
const RIGHT_TO_LEFT =
  /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;

function makePurifier(fragment: boolean): () => DOMPurify | null {
  let instance: DOMPurify | null | undefined;
  return () => {
    if (instance !== undefined) return instance;
    const made = typeof window === 'undefined' ? null : createDOMPurify(window);
    instance = made?.isSupported ? made : null;
    instance?.setConfig({
      ALLOWED_TAGS,
      ALLOWED_ATTR,
      ALLOWED_URI_REGEXP,
      ALLOW_DATA_ATTR: false,
      ALLOW_ARIA_ATTR: false,
      RETURN_TRUSTED_TYPE: false,
      RETURN_DOM_FRAGMENT: fragment,
    });
    instance?.addHook('afterSanitizeAttributes', (node) => {
      if (node.nodeName === 'A') {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
      // Each paragraph takes its direction from its own words: Hebrew or Arabic reads right to
      // left, its punctuation at the left end, beside English that reads left to right.
      if (TEXT_BLOCKS.has(node.nodeName)) node.setAttribute('dir', 'auto');
      // A list or a quote takes its first words' direction, a list's items with it, so every
      // marker (and a quote's bar) is on the side its room is on (an item's own words keep their
      // order: unicode-bidi plaintext in the message styles).
      if (CONTAINERS.has(node.nodeName)) {
        const first = FIRST_LETTER.exec(node.textContent ?? '')?.[0];
        node.setAttribute('dir', first && RIGHT_TO_LEFT.test(first) ? 'rtl' : 'ltr');
      }
    });
    return instance;
  };
}

const purifier = makePurifier(false);
const fragmentPurifier = makePurifier(true);

/**
 * Markdown → sanitised HTML (a string for Lit's `unsafeHTML`). Without a DOM to sanitise with
 * (Node), it fails closed: the text comes back escaped, in one paragraph.
 */
export function renderMarkdown(text: string): string {
  const purify = purifier();
  if (!purify) return `<p>${escapeHtml(text)}</p>`;
  const html = markdown.parse(text, { async: false });
  // The configuration (the allow-lists above) was set on this instance when it was made.
  return purify.sanitize(html);
}

// ---------------------------------------------------------------------------------------------
// Block by block: a long reply is rendered as independent top-level blocks, each once, so a
// streamed reply costs time in proportion to what arrived rather than to its whole length.

/**
 * Characters of one block at most. A longer stretch without a block break is cut (at a line
 * end where there is one), so re-rendering the block still arriving costs a bounded time.
 */
export const MAX_BLOCK_CHARS = 16 * 1024;

/** A top-level piece of markdown that renders the same alone as in its place. */
export interface MarkdownBlock {
  /** Offsets in the text: `text.slice(start, end)`. */
  start: number;
  end: number;
  /** The opening fence line of a code block this piece continues (it was cut inside one). */
  fence?: string;
}

/** Where splitting goes on from: the start of the block still open, inside a fence or not. */
export interface SplitPoint {
  start: number;
  fence?: string;
}

/** Blocks closed so far, and where the open one starts. */
export interface SplitResult {
  blocks: MarkdownBlock[];
  rest: SplitPoint;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const LIST_ITEM = /^(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)/;

interface Fence {
  line: string;
  char: string;
  length: number;
}

function openFence(line: string): Fence | undefined {
  const m = FENCE_OPEN.exec(line);
  if (!m || (m[1][0] === '`' && m[2].includes('`'))) return undefined;
  return { line, char: m[1][0], length: m[1].length };
}

function closesFence(line: string, fence: Fence): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
  return !!m && m[1][0] === fence.char && m[1].length >= fence.length;
}

/** The last place in (from, to] to cut a block that has no break: a line end, a space, or `to`. */
function cutPoint(text: string, from: number, to: number): number {
  const line = text.lastIndexOf('\n', to - 1);
  if (line >= from) return line + 1;
  for (let i = to - 1; i > from; i--) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9) return i + 1;
  }
  // Not between the halves of a surrogate pair.
  const c = text.charCodeAt(to - 1);
  return c >= 0xd800 && c <= 0xdbff ? to - 1 : to;
}

/**
 * Splits markdown into top-level blocks, going on from `from` (where an earlier call stopped).
 * A block ends before a line that starts in the first column after a blank line, outside fenced
 * code, unless that line is the next item of a list in the block (a loose list stays one); and after
 * `maxChars` (MAX_BLOCK_CHARS) at the latest, at a line end where it can. With `final` false the
 * text may still grow: the block still open is left out, and a line not yet ended is not read.
 * The split is the same however the text arrived, and a call reads only the open block and what
 * follows it.
 */
export function splitMarkdown(
  text: string,
  from: SplitPoint = { start: 0 },
  final = false,
  maxChars = MAX_BLOCK_CHARS,
): SplitResult {
  const blocks: MarkdownBlock[] = [];
  let start = from.start;
  let startFence = from.fence;

  /** The fence open at `at`, read from the block start (a cut inside a line: where it starts). */
  const fenceAt = (at: number): Fence | undefined => {
    const stop = text.charCodeAt(at - 1) === 10 ? at : text.lastIndexOf('\n', at - 1) + 1;
    let f = startFence === undefined ? undefined : openFence(startFence);
    for (let pos = start; pos < stop;) {
      const end = text.indexOf('\n', pos);
      const line = text.slice(pos, end);
      f = f ? (closesFence(line, f) ? undefined : f) : openFence(line);
      pos = end + 1;
    }
    return f;
  };
  const close = (at: number, next: Fence | undefined) => {
    blocks.push({ start, end: at, ...(startFence === undefined ? {} : { fence: startFence }) });
    start = at;
    startFence = next?.line;
  };
  /** Cuts the open block at its size limit while more than that of it is known. */
  const cutLong = (known: number): boolean => {
    const before = start;
    while (known - start > maxChars) {
      const at = cutPoint(text, start, start + maxChars);
      close(at, fenceAt(at));
    }
    return start !== before;
  };

  // Lines from the open block's start; after a cut, again from the new start.
  scan: for (;;) {
    let fence = startFence === undefined ? undefined : openFence(startFence);
    let blank = false;
    /** A list started in this block: its next item after a blank line is no break. */
    let list = false;
    for (let pos = start; pos < text.length;) {
      let end = text.indexOf('\n', pos);
      if (end === -1) {
        if (!final) break;
        end = text.length;
      }
      const line = text.slice(pos, end);
      if (fence) {
        if (closesFence(line, fence)) fence = undefined;
      } else if (/^[ \t]*$/.test(line)) {
        blank = true;
      } else {
        const item = LIST_ITEM.test(line);
        if (blank && pos > start && !/^[ \t]/.test(line) && !(item && list)) {
          // Past the size limit the cut comes first, as it did while the text arrived.
          if (cutLong(pos)) continue scan;
          close(pos, undefined);
          list = false;
        }
        if (item) list = true;
        blank = false;
        fence = openFence(line);
      }
      if (end < text.length && cutLong(end + 1)) continue scan;
      pos = end + 1;
    }
    break;
  }
  cutLong(text.length);
  if (final && start < text.length) close(text.length, undefined);
  return { blocks, rest: { start, ...(startFence === undefined ? {} : { fence: startFence }) } };
}

/** Characters of block markdown whose parse is kept for the next render of the same block. */
const BLOCK_CACHE_CHARS = 4 * 2 ** 20;

/** Markdown blocks rendered, and how many of those asked for they are (see renderMarkdownBlocks). */
export interface RenderedBlocks {
  nodes: DocumentFragment;
  taken: number;
}

/**
 * Blocks of a message (blockSource) as sanitised nodes, ready to insert: each block parsed on
 * its own, the HTML of them all sanitised in one go (one DOMPurify pass, not one per block).
 * With `keep`, the parse of each block is kept a while (up to BLOCK_CACHE_CHARS of markdown, the
 * oldest dropped first), so a message shown again parses only what it did not share. Parsing
 * stops, after the first block, once it has taken `parseMs` (a frame's share: sanitising and
 * laying out what was parsed cost about as much again); `taken` says how many blocks were done.
 * Needs a DOM (it is the browser's half of renderMarkdown).
 */
export const renderMarkdownBlocks = (() => {
  // Unsanitised marked output: it never leaves this closure without going through DOMPurify.
  const kept = new Map<string, string>();
  let chars = 0;
  const parse = (source: string, keep: boolean): string => {
    const hit = kept.get(source);
    if (hit !== undefined) return hit;
    const html = /\S/.test(source) ? markdown.parse(source, { async: false }) : '';
    if (keep && source.length <= BLOCK_CACHE_CHARS) {
      kept.set(source, html);
      chars += source.length;
      for (const [old] of kept) {
        if (chars <= BLOCK_CACHE_CHARS) break;
        kept.delete(old);
        chars -= old.length;
      }
    }
    return html;
  };
  return (sources: readonly string[], keep: boolean, parseMs = Infinity): RenderedBlocks => {
    const purify = fragmentPurifier();
    if (!purify) throw new Error('Rendering markdown into nodes needs a DOM.');
    const started = performance.now();
    const html: string[] = [];
    for (const source of sources) {
      if (html.length > 0 && performance.now() - started >= parseMs) break;
      html.push(parse(source, keep));
    }
    // Configured with RETURN_DOM_FRAGMENT (the typings know only the call's own configuration).
    const out: unknown = purify.sanitize(html.join(''));
    if (!(out instanceof DocumentFragment)) throw new Error('DOMPurify returned no fragment.');
    return { nodes: out, taken: html.length };
  };
})();

/** A block's markdown: its text, after the fence it continues if it was cut inside one. */
export function blockSource(text: string, block: MarkdownBlock): string {
  const body = text.slice(block.start, block.end);
  return block.fence === undefined ? body : `${block.fence}\n${body}`;
}

/**
 * Markdown that grows by appending (a reply as it streams), split into blocks as it comes: each
 * call reads only the block still open and what was appended since, never the text before it,
 * so the work of a frame is in proportion to what arrived, not to the length of the reply.
 * Splits as splitMarkdown does the whole text (the split does not depend on how it arrived).
 */
export class MarkdownFeed {
  /** Everything fed so far: built by appending, read whole only to compare with another text. */
  all = '';
  /** Where in `all` the block still open starts. */
  base = 0;
  /** Characters read by split and restart, in all: a measure of the work done (for tests). */
  read = 0;
  /** The block still open and what follows it: `all.slice(base)`. */
  private open = '';
  /** The opening fence line of a code block the open block continues. */
  private fence?: string;

  /** `maxChars`: a block's size limit (splitMarkdown's). */
  constructor(private readonly maxChars = MAX_BLOCK_CHARS) {}

  /** Appends what arrived. */
  append(part: string): void {
    this.all += part;
    this.open += part;
  }

  /**
   * Takes `text` as the whole text when it differs from what was fed only from the open block's
   * start on (it grew, or lost trailing space as it was stored): the blocks closed stay closed.
   * False, and nothing changed, when it differs before that.
   */
  restart(text: string): boolean {
    if (text !== this.all) {
      this.read += this.base;
      if (!text.startsWith(this.all.slice(0, this.base))) return false;
    }
    this.all = text;
    this.open = text.slice(this.base);
    return true;
  }

  /** The markdown of the blocks closed by what was fed (with `final`, of the whole rest). */
  split(final: boolean): string[] {
    const open = this.open;
    this.read += open.length;
    const from: SplitPoint =
      this.fence === undefined ? { start: 0 } : { start: 0, fence: this.fence };
    const { blocks, rest } = splitMarkdown(open, from, final, this.maxChars);
    const sources = blocks.map((b) => blockSource(open, b));
    this.base += rest.start;
    this.open = open.slice(rest.start);
    this.fence = rest.fence;
    return sources;
  }

  /** The markdown of the block still open (shown, rendered again, while it grows); '' if none. */
  openSource(): string {
    if (!this.open || this.fence === undefined) return this.open;
    return `${this.fence}\n${this.open}`;
  }
}
