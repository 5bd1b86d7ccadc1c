// Markdown export and import of memory entries (docs/design.md, "Markdown export and import"):
// a file a person can read, and that imports back to exactly the same entries (paths, content,
// chunks, versions and dates).
//
// Layout of a file:
//
//   # Structured Memory export                          ← title, skipped on import
//
//   <!-- structured-memory-export {"format":2,…} -->    ← marks the file and its format version
//   Exported … One heading per entry …                  ← preamble, skipped on import
//
//   # HaloWeave                                         ← a heading that is not an entry (folder)
//   <!-- structured-memory-heading {"path":"HaloWeave"} -->
//
//   ## Goals                                            ← an entry: level = depth, capped at 6
//   <!-- structured-memory {"path":"HaloWeave/Goals","version":2,"created":…} -->
//
//   Ship phase one by March.                            ← content as plain text, or a ```json block
//
//   > - **user** (similarity 0.83): We need phase one by March. <!-- chunk {"turn_id":3,…} -->
//
//   <!-- structured-memory-end -->                      ← the last line (format 2): a file without
//                                                          it was cut short and is refused (format 1
//                                                          files had none and need none)
//
// The comments are authoritative: the heading text is only for people (the exact path comes from
// the comment), and each chunk's comment holds its exact numbers and role. A chunk's visible text
// is its exact text unless the comment carries a `text` field (used when the text could not be
// written safely on one line); then the visible text is only a preview.
//
// Import never guesses: a heading without a structured-memory comment under it is an error naming
// its line (inferring a path from heading nesting would also need invented versions and dates,
// and a typo in a heading level would silently move an entry). The only heading allowed without a
// comment is the document title: the first line of the file.

import { parsePath } from './paths';
import type { JsonValue, Role } from './types';
import {
  MAX_CONTENT_BYTES,
  chunkProblems,
  dateProblem,
  utf8Length,
  versionProblem,
} from './validate';

/** A context chunk as it travels in an export: everything but the vector (re-embedded on import). */
export interface PortableChunk {
  turn_id: number;
  sentence_id: number;
  role: Role;
  text: string;
  similarity: number;
  tokenCount: number;
}

/** An entry as it travels in an export. */
export interface PortableEntry {
  path: string;
  content: JsonValue;
  contextChunks: PortableChunk[];
  version: number;
  created: Date;
  modified: Date;
  accessed: Date;
}

export type MarkdownParseResult =
  { ok: true; entries: PortableEntry[] } | { ok: false; errors: string[] };

const FORMAT_VERSION = 2;
/**
 * The last line of an export from format 2 on: a file that lacks it was cut short (a download or
 * a copy that stopped), and importing it would overwrite entries with the part that came.
 */
const END_LINE = '<!-- structured-memory-end -->';
const DEFAULT_TITLE = 'Structured Memory export';
const MAX_ERRORS = 50;
const MAX_HEADING_LEVEL = 6;
const BAD_COMMENT =
  'a structured-memory comment must be one line ending with -->, like ' +
  '<!-- structured-memory {"path":"A/B",…} -->';

// Characters that editors may treat as line breaks or hide: C0/C1 controls, DEL, the Unicode
// line/paragraph separators and the BOM. Never written raw.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;
// The same, minus tab and newline, which plain-text content may hold.
// eslint-disable-next-line no-control-regex
const INVISIBLE_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// What a Markdown viewer could turn into HTML, a link, an image or another character: a `<` (raw
// HTML, autolinks), brackets (links, images, link definitions), a backslash escape and a
// character reference. Text holding any of these is never written raw, only in a JSON block or a
// comment, and shown escaped: an export opened in a viewer that allows HTML runs nothing of it.
const MARKUP = /[<[\]\\]|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/;

// ---------------------------------------------------------------------------------------------
// Writing

/**
 * Writes entries as Markdown. Entries are ordered segment by segment (so every entry sits under
 * its ancestors); a path that is only a heading gets a heading of its own. `exported` defaults to
 * now. Content must be JSON (as the engine guarantees): a BigInt or a cycle throws a TypeError.
 */
export function entriesToMarkdown(
  entries: readonly PortableEntry[],
  options: { title?: string; exported?: Date } = {},
): string {
  const title = escapeInline(options.title ?? '') || DEFAULT_TITLE;
  const exported = isoDate(options.exported ?? new Date());
  const count = entries.length === 1 ? '1 entry' : `${entries.length} entries`;
  const out: string[] = [
    `# ${title}`,
    '',
    `<!-- structured-memory-export ${commentJson({ format: FORMAT_VERSION, exported })} -->`,
    `Exported ${exported ?? 'at an unknown time'}: ${count}. Each heading below is a memory entry ` +
      '(or a heading that groups entries); the comment under it keeps the exact path, version and ' +
      'dates, so this file can be imported again.',
  ];

  const sorted = entries
    .map((entry) => ({ entry, segments: entry.path.split('/') }))
    .sort((a, b) => compareSegments(a.segments, b.segments));
  const written = new Set<string>();
  for (const { entry, segments } of sorted) {
    for (let depth = 1; depth < segments.length; depth++) {
      const ancestor = segments.slice(0, depth);
      const path = ancestor.join('/');
      if (written.has(path)) continue;
      written.add(path);
      out.push('', headingLine(ancestor));
      out.push(`<!-- structured-memory-heading ${commentJson({ path })} -->`);
    }
    written.add(entry.path);
    out.push('', headingLine(segments));
    const meta = {
      path: entry.path,
      version: entry.version,
      created: isoDate(entry.created),
      modified: isoDate(entry.modified),
      accessed: isoDate(entry.accessed),
    };
    out.push(`<!-- structured-memory ${commentJson(meta)} -->`, '');
    out.push(...contentLines(entry.content));
    if (entry.contextChunks.length > 0) {
      out.push('');
      for (const chunk of entry.contextChunks) out.push(chunkLine(chunk));
    }
  }
  out.push('', END_LINE);
  return out.join('\n') + '\n';
}

function compareSegments(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

/** `## Heading`; past level 6 the text also names the levels the capped level hides. */
function headingLine(segments: readonly string[]): string {
  const level = Math.min(segments.length, MAX_HEADING_LEVEL);
  const shown = segments.slice(level - 1).map(escapeInline);
  return `${'#'.repeat(level)} ${shown.join(' / ')}`;
}

/**
 * Escapes Markdown and HTML punctuation in text meant only for display (the title, headings and
 * chunk previews), so a segment like `<img …>` or `*x*` renders literally. `_` inside a word is
 * left alone (it is no emphasis).
 */
function escapeInline(text: string): string {
  return displayText(text).replace(
    /[\\`*[\]<>&#|~]|_(?![\p{L}\p{N}])|(?<![\p{L}\p{N}])_/gu,
    (c) => '\\' + c,
  );
}

/** One line of well-formed text: whitespace and invisible characters collapsed. */
function displayText(text: string): string {
  return toWellFormed(text)
    .replace(new RegExp(INVISIBLE.source, 'g'), ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function toWellFormed(text: string): string {
  return text.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\ufffd');
}

function isoDate(date: Date): string | null {
  return date instanceof Date && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}

/**
 * Content as plain text when that reads back exactly (see isPlainText), else a fenced ```json
 * block with pretty JSON; the fence is longer than any run of backticks inside.
 */
function contentLines(content: JsonValue): string[] {
  if (typeof content === 'string' && isPlainText(content)) return [content];
  const json = escapeInvisible(writeJson(content, '  '));
  const longestRun = Math.max(0, ...(json.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  return [fence + 'json', json, fence];
}

/**
 * A string is written as plain text only when every line reads back unchanged and cannot be taken
 * for structure: it is non-empty; it has no leading or trailing whitespace and no line with any;
 * it holds no `\r` or other invisible characters, no unpaired surrogate, no `<!--` or `-->`; and
 * no line is a heading (`#`, `# x`), a quote (`>`), a code fence (``` or ~~~) or a setext
 * underline (`---`, `===`), which would change how the document is structured or rendered.
 * Blank lines (paragraph breaks) are fine. Everything else goes in a JSON block.
 */
function isPlainText(text: string): boolean {
  if (text === '' || /^\s|\s$/.test(text)) return false;
  if (INVISIBLE_IN_TEXT.test(text) || LONE_SURROGATE.test(text) || MARKUP.test(text)) return false;
  if (text.includes('<!--') || text.includes('-->')) return false;
  return text
    .split('\n')
    .every(
      (line) =>
        line === '' ||
        !(
          /^\s|\s$/.test(line) ||
          /^#+(\s|$)/.test(line) ||
          line.startsWith('>') ||
          line.startsWith('```') ||
          line.startsWith('~~~') ||
          /^(=+|-+)$/.test(line)
        ),
    );
}

/**
 * Chunk text shown as is: one line, no edge whitespace, nothing that could end the line early,
 * no markup (MARKUP).
 */
function isInlineText(text: string): boolean {
  return (
    text !== '' &&
    !/^\s|\s$/.test(text) &&
    !INVISIBLE.test(text) &&
    !LONE_SURROGATE.test(text) &&
    !MARKUP.test(text) &&
    !text.includes('<!--') &&
    !text.includes('-->')
  );
}

function chunkLine(chunk: PortableChunk): string {
  const meta: Record<string, unknown> = {
    turn_id: chunk.turn_id,
    sentence_id: chunk.sentence_id,
    role: chunk.role,
    similarity: chunk.similarity,
    tokenCount: chunk.tokenCount,
  };
  let shown = chunk.text;
  if (!isInlineText(chunk.text)) {
    meta.text = chunk.text;
    shown = preview(chunk.text);
  }
  const similarity = Number.isFinite(chunk.similarity)
    ? chunk.similarity.toFixed(2)
    : String(chunk.similarity);
  const role = escapeInline(String(chunk.role).replace(/\*/g, ''));
  return `> - **${role}** (similarity ${similarity}): ${shown} <!-- chunk ${commentJson(meta)} -->`;
}

/**
 * A one-line stand-in for a chunk text kept exactly in its comment: escaped, and with no `<!--`
 * or `-->`, so the line's only comment is its chunk comment.
 */
function preview(text: string): string {
  const line = escapeInline(text).replace(/<!--/g, '<!-\u200b-').replace(/-->/g, '-\u200b->');
  return line === '' ? '(empty)' : line;
}

/** JSON for an HTML comment: `<` and `>` escaped so no value can close the comment. */
function commentJson(value: unknown): string {
  return escapeInvisible(writeJson(value, '')).replace(/[<>]/g, (c) =>
    c === '<' ? '\\u003c' : '\\u003e',
  );
}

/**
 * Escapes characters an editor could take for a line break or hide. JSON text holds non-ASCII
 * characters only inside string literals, where `\uXXXX` means the same character.
 */
function escapeInvisible(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u2028\u2029\ufeff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
}

/**
 * `JSON.stringify(value, null, step)`, except that `-0` is written `-0` (JSON.parse reads it back
 * as -0, so content round-trips exactly).
 */
function writeJson(value: unknown, step: string): string {
  const ancestors = new Set<object>();
  const colon = step === '' ? ':' : ': ';
  const write = (v: unknown, indent: string): string | undefined => {
    if (
      v !== null &&
      typeof v === 'object' &&
      typeof (v as { toJSON?: unknown }).toJSON === 'function'
    ) {
      v = (v as { toJSON: () => unknown }).toJSON();
    }
    if (v === null) return 'null';
    switch (typeof v) {
      case 'string':
        return JSON.stringify(v);
      case 'boolean':
        return v ? 'true' : 'false';
      case 'number':
        return Object.is(v, -0) ? '-0' : Number.isFinite(v) ? String(v) : 'null';
      case 'bigint':
        throw new TypeError('content holds a BigInt, which is not JSON');
      case 'object':
        break;
      default:
        return undefined;
    }
    const obj = v as object;
    if (ancestors.has(obj)) throw new TypeError('content holds a cycle, which is not JSON');
    ancestors.add(obj);
    const inner = indent + step;
    const open = step === '' ? '' : '\n' + inner;
    const sep = step === '' ? ',' : ',\n' + inner;
    const close = step === '' ? '' : '\n' + indent;
    let result: string;
    if (Array.isArray(obj)) {
      const items = obj.map((item: unknown) => write(item, inner) ?? 'null');
      result = items.length === 0 ? '[]' : '[' + open + items.join(sep) + close + ']';
    } else {
      const items: string[] = [];
      for (const key of Object.keys(obj)) {
        const item = write((obj as Record<string, unknown>)[key], inner);
        if (item !== undefined) items.push(JSON.stringify(key) + colon + item);
      }
      result = items.length === 0 ? '{}' : '{' + open + items.join(sep) + close + '}';
    }
    ancestors.delete(obj);
    return result;
  };
  return write(value, '') ?? 'null';
}

// ---------------------------------------------------------------------------------------------
// Reading

type Line =
  | { kind: 'blank' }
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'comment'; tag: 'entry' | 'heading' | 'export'; json: string }
  | { kind: 'badComment' }
  | { kind: 'fence'; char: '`' | '~'; length: number; info: string }
  | { kind: 'quote' }
  | { kind: 'text' };

/**
 * Reads a Markdown export back into entries, validating everything first: it returns either all
 * entries or every problem found (each a sentence starting with its line number, at most 50).
 * Tolerates CRLF or CR line endings, a BOM and trailing spaces or tabs. Never throws.
 */
export function parseMarkdown(text: string): MarkdownParseResult {
  if (typeof text !== 'string') return { ok: false, errors: ['the file is not text'] };
  try {
    return new Reader(text).read();
  } catch (error) {
    // A safety net only: the reader reports problems as errors rather than throwing.
    return { ok: false, errors: [`the file could not be read: ${String(error)}`] };
  }
}

class Reader {
  private readonly lines: string[];
  private readonly kinds: Line[];
  private readonly errors: string[] = [];
  private dropped = 0;
  private readonly entries: PortableEntry[] = [];
  private readonly firstLineOfPath = new Map<string, number>();
  private sawExportMarker = false;
  /** Where the export marker asks for END_LINE (format 2 on): the marker's line. */
  private endWanted = -1;
  /** Whether the file holds END_LINE (read as a blank line). */
  private readonly ended: boolean;
  private i = 0;

  constructor(text: string) {
    const body = text.startsWith('\ufeff') ? text.slice(1) : text;
    const lines = body.split(/\r\n|\r|\n/).map(trimEndBlanks);
    // Read as a blank line wherever it is: entries added below it by hand, or two exports put
    // together, still import (the app writes no content line of that form).
    this.ended = lines.includes(END_LINE);
    this.lines = this.ended ? lines.map((l) => (l === END_LINE ? '' : l)) : lines;
    this.kinds = this.lines.map(classify);
  }

  read(): MarkdownParseResult {
    this.readPreamble();
    while (this.i < this.lines.length) this.readSection();
    if (this.endWanted >= 0 && !this.ended) {
      this.error(
        this.lines.length - 1,
        `the file ends early: an export ends with the line ${END_LINE}, and this one stops ` +
          'before it (cut short by a download or a copy?); export again, or use the whole file',
      );
    }
    if (this.entries.length === 0 && !this.sawExportMarker && this.errors.length === 0) {
      this.error(
        0,
        'no Structured Memory entries were found; expected headings each followed by a ' +
          '<!-- structured-memory {"path":…} --> comment, as written by the Markdown export',
      );
    }
    if (this.errors.length > 0) {
      const errors = [...this.errors];
      if (this.dropped > 0) errors.push(`…and ${this.dropped} more problem(s)`);
      return { ok: false, errors };
    }
    return { ok: true, entries: this.entries };
  }

  private error(lineIndex: number, message: string): void {
    if (this.errors.length < MAX_ERRORS) this.errors.push(`line ${lineIndex + 1}: ${message}`);
    else this.dropped++;
  }

  private kind(index: number): Line | undefined {
    return this.kinds[index];
  }

  private nextNonBlank(from: number): number {
    let j = from;
    while (j < this.lines.length && this.kinds[j].kind === 'blank') j++;
    return j;
  }

  /** Title (the first line, when it is a heading with no comment under it) and free text. */
  private readPreamble(): void {
    const first = this.nextNonBlank(0);
    const firstKind = this.kind(first);
    if (firstKind?.kind === 'heading' && !this.isSectionComment(this.nextNonBlank(first + 1))) {
      this.i = first + 1;
    }
    this.skipToHeading(true);
  }

  private isSectionComment(index: number): boolean {
    const k = this.kind(index);
    return k?.kind === 'comment' && (k.tag === 'entry' || k.tag === 'heading');
  }

  /**
   * Moves to the next heading outside code blocks. Lines passed are free text (preamble) or, after
   * a bad heading, the body of that heading; structure-bearing comments among them are reported.
   */
  private skipToHeading(preamble: boolean): void {
    while (this.i < this.lines.length) {
      const k = this.kinds[this.i];
      if (k.kind === 'heading') return;
      if (k.kind === 'fence') {
        const close = this.findFenceClose(this.i, k);
        this.i = close < 0 ? this.lines.length : close + 1;
        continue;
      }
      if (preamble && k.kind === 'comment' && k.tag === 'export')
        this.readExportMarker(this.i, k.json);
      else if (preamble) this.reportStrayComment(this.i, k);
      this.i++;
    }
  }

  private readExportMarker(index: number, json: string): void {
    this.sawExportMarker = true;
    const value = parseJson(json);
    if (!value.ok) return; // The marker is informative only.
    const format = isObject(value.value) ? value.value.format : undefined;
    if (typeof format === 'number' && format >= 2) this.endWanted = index;
    if (typeof format === 'number' && format > FORMAT_VERSION) {
      this.error(
        index,
        `this file uses export format ${format}, newer than this app reads (${FORMAT_VERSION}); ` +
          'update the app to import it',
      );
    }
  }

  /** A heading and what lies under it, up to the next heading. */
  private readSection(): void {
    const headingIndex = this.i;
    const heading = this.kinds[headingIndex] as Extract<Line, { kind: 'heading' }>;
    const at = this.nextNonBlank(headingIndex + 1);
    const k = this.kind(at);
    if (k?.kind === 'comment' && k.tag === 'heading') {
      this.i = at + 1;
      this.readHeadingOnlyBody(headingIndex);
      return;
    }
    if (k?.kind === 'badComment') {
      this.error(at, BAD_COMMENT);
      this.i = at + 1;
      this.skipToHeading(false);
      return;
    }
    if (k?.kind !== 'comment' || k.tag !== 'entry') {
      this.error(
        headingIndex,
        `heading ${quote(heading.text)} has no <!-- structured-memory {"path":…} --> comment under ` +
          'it, so its path is unknown; add the comment or remove the heading',
      );
      this.i = headingIndex + 1;
      this.skipToHeading(false);
      return;
    }
    this.i = at + 1;
    const meta = this.readEntryMeta(at, k.json);
    const body = this.readEntryBody(headingIndex, meta?.path);
    if (!meta || !body) return;
    const first = this.firstLineOfPath.get(meta.path);
    if (first !== undefined) {
      this.error(at, `duplicate path ${quote(meta.path)} (first at line ${first + 1})`);
      return;
    }
    this.firstLineOfPath.set(meta.path, at);
    this.entries.push({ ...meta, content: body.content, contextChunks: body.chunks });
  }

  /** A heading that is not an entry may hold nothing: text there would be lost on import. */
  private readHeadingOnlyBody(headingIndex: number): void {
    const at = this.nextNonBlank(this.i);
    if (at < this.lines.length && this.kinds[at].kind !== 'heading') {
      this.error(
        at,
        `text under heading ${quote((this.kinds[headingIndex] as { text: string }).text)}, which is ` +
          'not an entry, would be lost; remove it, or make the heading an entry with a ' +
          '<!-- structured-memory {…} --> comment',
      );
    }
    this.i = headingIndex + 1;
    this.skipToHeading(false);
  }

  private readEntryMeta(
    index: number,
    json: string,
  ): Pick<PortableEntry, 'path' | 'version' | 'created' | 'modified' | 'accessed'> | null {
    const parsed = parseJson(json);
    if (!parsed.ok) {
      this.error(index, `the structured-memory comment is not valid JSON: ${parsed.message}`);
      return null;
    }
    const meta = parsed.value;
    if (!isObject(meta)) {
      this.error(
        index,
        'the structured-memory comment must hold a JSON object like {"path":"A/B",…}',
      );
      return null;
    }
    let ok = true;
    const path = parsePath(meta.path);
    if (!path.ok) {
      const shown = typeof meta.path === 'string' ? ` ${quote(meta.path)}` : '';
      this.error(index, `invalid path${shown}: ${path.message}`);
      ok = false;
    }
    // Values follow the rules every way in shares (validate.ts), so that whatever is imported
    // here can be exported as a JSON backup and restored.
    const version = meta.version;
    const versionBad = versionProblem(version, '"version"');
    if (versionBad) {
      this.error(index, versionBad);
      ok = false;
    }
    const dates: Record<string, Date> = {};
    for (const field of ['created', 'modified', 'accessed'] as const) {
      const raw = meta[field];
      // `accessed` is optional for hand-written comments (docs/design.md, "Markdown export and
      // import": path, version, created and modified are required); it then defaults to
      // `modified`.
      if (field === 'accessed' && raw === undefined) {
        if (dates.modified) dates.accessed = new Date(dates.modified.getTime());
        continue;
      }
      const date = parseIsoDate(raw);
      const outOfRange = date && dateProblem(date, `"${field}"`);
      if (!date) {
        this.error(
          index,
          `"${field}" must be an ISO date like "2024-05-01T12:00:00.000Z", got ${describe(raw)}`,
        );
        ok = false;
      } else if (outOfRange) {
        this.error(index, outOfRange);
        ok = false;
      } else dates[field] = date;
    }
    if (!ok || !path.ok) return null;
    return {
      path: path.path,
      version: version as number,
      created: dates.created,
      modified: dates.modified,
      accessed: dates.accessed,
    };
  }

  /**
   * Content (plain text or one JSON block), then the chunk quote list, then nothing but blank
   * lines up to the next heading. Returns null after reporting when something is wrong.
   */
  private readEntryBody(
    headingIndex: number,
    path: string | undefined,
  ): { content: JsonValue; chunks: PortableChunk[] } | null {
    const name = path === undefined ? 'this entry' : `entry ${quote(path)}`;
    let ok = true;
    let content: JsonValue | undefined;
    this.i = this.nextNonBlank(this.i);
    const start = this.kind(this.i);

    if (start === undefined || start.kind === 'heading' || start.kind === 'quote') {
      this.error(
        start === undefined || start.kind === 'heading' ? headingIndex : this.i,
        `${name} has no content; write it as text or as a \`\`\`json block under its comment`,
      );
      ok = false;
    } else if (start.kind === 'fence') {
      const fenceIndex = this.i;
      const close = this.findFenceClose(fenceIndex, start);
      if (close < 0) {
        this.error(fenceIndex, 'this code block is never closed (add a closing ``` line)');
        this.i = this.lines.length;
        return null;
      }
      this.i = close + 1;
      if (start.info !== '' && start.info.toLowerCase() !== 'json') {
        this.error(
          fenceIndex,
          `the content block must be marked \`\`\`json, not ${quote(start.info)}`,
        );
        ok = false;
      } else {
        const parsed = parseJson(this.lines.slice(fenceIndex + 1, close).join('\n'));
        if (parsed.ok) content = parsed.value;
        else {
          this.error(
            fenceIndex,
            `the JSON content of ${name} is not valid JSON: ${parsed.message}`,
          );
          ok = false;
        }
      }
    } else {
      const text: string[] = [];
      while (this.i < this.lines.length) {
        const k = this.kinds[this.i];
        if (k.kind === 'heading' || k.kind === 'quote') break;
        if (k.kind === 'fence') {
          this.error(
            this.i,
            `${name} has text and then a code block; content is either text or one \`\`\`json block`,
          );
          ok = false;
          const close = this.findFenceClose(this.i, k);
          this.i = close < 0 ? this.lines.length : close + 1;
          continue;
        }
        if (k.kind === 'comment' || k.kind === 'badComment') {
          this.reportStrayComment(this.i, k);
          ok = false;
        }
        text.push(this.lines[this.i]);
        this.i++;
      }
      while (text.length > 0 && text[text.length - 1] === '') text.pop();
      content = text.join('\n');
    }

    if (content !== undefined) {
      const bytes = utf8Length(JSON.stringify(content));
      if (bytes > MAX_CONTENT_BYTES) {
        this.error(
          headingIndex,
          `the content of ${name} is ${bytes} bytes as JSON; at most ${MAX_CONTENT_BYTES} are allowed`,
        );
        ok = false;
      }
    }

    const chunks: PortableChunk[] = [];
    this.i = this.nextNonBlank(this.i);
    while (this.i < this.lines.length) {
      const k = this.kinds[this.i];
      if (k.kind === 'heading') break;
      if (k.kind === 'quote') {
        const chunk = this.readChunk(this.i);
        if (chunk === null) ok = false;
        else if (chunk !== 'blank') chunks.push(chunk);
        this.i++;
      } else if (k.kind === 'blank') {
        this.i++;
      } else {
        this.error(
          this.i,
          `unexpected text after the ${chunks.length > 0 ? 'context chunks' : 'content'} of ` +
            `${name}; only context chunks (lines starting with "> - ") may follow the content`,
        );
        ok = false;
        if (k.kind === 'fence') {
          const close = this.findFenceClose(this.i, k);
          this.i = close < 0 ? this.lines.length : close + 1;
        } else this.i++;
      }
    }
    return ok && content !== undefined ? { content, chunks } : null;
  }

  private reportStrayComment(index: number, k: Line): void {
    if (k.kind === 'comment') {
      this.error(index, 'this structured-memory comment is not right under a heading');
    } else if (k.kind === 'badComment') {
      this.error(index, BAD_COMMENT);
    }
  }

  /** `> - **role** (similarity 0.83): text <!-- chunk {…} -->`; a bare `>` is a blank quote line. */
  private readChunk(index: number): PortableChunk | 'blank' | null {
    const expected =
      'a context chunk line must look like "> - **user** (similarity 0.83): text <!-- chunk {…} -->"';
    let rest = trimStartBlanks(this.lines[index].slice(1));
    if (rest === '') return 'blank';
    if (!rest.startsWith('-') && !rest.startsWith('*')) {
      this.error(index, expected);
      return null;
    }
    rest = trimStartBlanks(rest.slice(1));
    const open = rest.indexOf('<!--');
    const comment =
      open < 0 ? null : /^<!--[ \t]*chunk[ \t]+(\{.*\})[ \t]*-->$/.exec(rest.slice(open));
    if (!comment) {
      this.error(
        index,
        `${expected}; the <!-- chunk {…} --> comment at the end is missing or broken`,
      );
      return null;
    }
    const parsed = parseJson(comment[1]);
    if (!parsed.ok || !isObject(parsed.value)) {
      this.error(
        index,
        `the chunk comment is not a JSON object${parsed.ok ? '' : `: ${parsed.message}`}`,
      );
      return null;
    }
    const meta = parsed.value;
    let text: unknown = meta.text;
    if (text === undefined) {
      const visible = /^\*\*[^*]*\*\*[ \t]*\([^)]*\):[ \t]?/.exec(rest.slice(0, open));
      const shown = visible ? trimEndBlanks(rest.slice(visible[0].length, open)) : '';
      if (shown === '') {
        this.error(index, `${expected}; the chunk text is missing`);
        return null;
      }
      text = shown;
    }
    const chunk: Record<string, unknown> = { ...meta, text };
    const problems = chunkProblems(chunk);
    for (const problem of problems) this.error(index, problem);
    if (problems.length > 0) return null;
    return {
      turn_id: chunk.turn_id as number,
      sentence_id: chunk.sentence_id as number,
      role: chunk.role as Role,
      text: text as string,
      similarity: chunk.similarity as number,
      tokenCount: chunk.tokenCount as number,
    };
  }

  /** Index of the line closing the fence opened at `index`, or -1 when none does. */
  private findFenceClose(index: number, open: Extract<Line, { kind: 'fence' }>): number {
    for (let j = index + 1; j < this.lines.length; j++) {
      const k = this.kinds[j];
      if (k.kind === 'fence' && k.char === open.char && k.length >= open.length && k.info === '') {
        return j;
      }
    }
    return -1;
  }
}

/**
 * A heading's text without its closing run of `#` after a space or tab (`## Notes ##`), found
 * from the end in one pass: the regular expression for it took time quadratic in a line of many
 * spaces and `#` (an 80 KB line: 4 s of the worker's time).
 */
function withoutClosingHashes(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end--;
  let start = end;
  while (start > 0 && (text[start - 1] === ' ' || text[start - 1] === '\t')) start--;
  return end < text.length && start < end ? text.slice(0, start) : text;
}

function classify(line: string): Line {
  if (line === '') return { kind: 'blank' };
  const c = line[0];
  if (c === '#') {
    const m = /^(#{1,6})(?:[ \t]+(.*))?$/.exec(line);
    if (m) return { kind: 'heading', level: m[1].length, text: withoutClosingHashes(m[2] ?? '') };
    return { kind: 'text' };
  }
  if (c === '>') return { kind: 'quote' };
  if (c === '`' || c === '~') {
    const m = /^(`{3,}|~{3,})[ \t]*(.*)$/.exec(line);
    if (m && !(c === '`' && m[2].includes('`'))) {
      return { kind: 'fence', char: c, length: m[1].length, info: m[2] };
    }
    return { kind: 'text' };
  }
  if (c === '<' && line.startsWith('<!--')) {
    const m = /^<!--[ \t]*structured-memory(-heading|-export)?(?=[ \t]|$)/.exec(line);
    if (!m) return { kind: 'text' };
    const rest = line.slice(m[0].length);
    const json = rest.endsWith('-->') ? rest.slice(0, -3).trim() : null;
    if (json === null) return { kind: 'badComment' };
    const tag = m[1] === '-heading' ? 'heading' : m[1] === '-export' ? 'export' : 'entry';
    return { kind: 'comment', tag, json };
  }
  return { kind: 'text' };
}

function trimEndBlanks(line: string): string {
  let end = line.length;
  while (end > 0 && (line.charCodeAt(end - 1) === 32 || line.charCodeAt(end - 1) === 9)) end--;
  return end === line.length ? line : line.slice(0, end);
}

function trimStartBlanks(line: string): string {
  let start = 0;
  while (start < line.length && (line.charCodeAt(start) === 32 || line.charCodeAt(start) === 9))
    start++;
  return line.slice(start);
}

function parseJson(text: string): { ok: true; value: JsonValue } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as JsonValue };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const ISO_DATE =
  /^[+-]?\d{4,6}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

function parseIsoDate(value: unknown): Date | null {
  if (typeof value !== 'string' || !ISO_DATE.test(value)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

function quote(text: string): string {
  const shown = text.length > 80 ? text.slice(0, 77) + '…' : text;
  return JSON.stringify(shown);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null)
    return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}
