// Pure helpers for the entry detail: a line diff (LCS) between two versions of an entry, the
// text form those versions are compared in, the RFC 7396 merge patch between two objects, and
// the choice an edit makes between a merge patch (keeps context chunks) and a whole replace.
// Every key is an ordinary key, `__proto__` included, as in the engine (validate.ts).
import type { JsonValue } from '../memory/types';
import { isLore } from '../memory/imports/lorebook';
import { getOwn, mergePatch, setOwn } from '../memory/validate';

/** One line of a diff: kept (' '), only in the old text ('-'), or only in the new one ('+'). */
export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/**
 * Past this many cells (old lines × new lines, after trimming the common head and tail) the
 * LCS table is not built and the middle shows as removed-then-added. Content is capped at
 * 32 KB, so real diffs stay far below it; the cap only bounds memory on pathological input.
 */
export const MAX_DIFF_CELLS = 4_000_000;

/** Line diff of `a` → `b` by longest common subsequence; removals come before additions. */
export function diffLines(a: readonly string[], b: readonly string[]): DiffLine[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: ' ', text }));
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  out.push(...diffMiddle(midA, midB));
  for (const text of a.slice(a.length - tail)) out.push({ op: ' ', text });
  return out;
}

function diffMiddle(a: readonly string[], b: readonly string[]): DiffLine[] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_DIFF_CELLS || n === 0 || m === 0) {
    return [
      ...a.map((text): DiffLine => ({ op: '-', text })),
      ...b.map((text): DiffLine => ({ op: '+', text })),
    ];
  }
  // lcs[i * (m + 1) + j] = LCS length of a[i..] and b[j..].
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] =
        a[i] === b[j]
          ? lcs[(i + 1) * w + j + 1] + 1
          : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: ' ', text: a[i] });
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
      out.push({ op: '-', text: a[i++] });
    } else {
      out.push({ op: '+', text: b[j++] });
    }
  }
  while (i < n) out.push({ op: '-', text: a[i++] });
  while (j < m) out.push({ op: '+', text: b[j++] });
  return out;
}

/** How an entry's content is shown and compared: text as it is, anything else as pretty JSON. */
export function contentText(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/**
 * A content in one line for lists and search results: text as it is, a lorebook entry's text
 * (an import's `{ content, keys }`: what a person wrote, not its JSON), anything else as compact
 * JSON.
 */
export function previewText(value: JsonValue): string {
  if (typeof value === 'string') return value;
  if (isLore(value)) return value.content;
  return JSON.stringify(value);
}

/** The line diff between two contents, in their display form. */
export function diffContent(from: JsonValue, to: JsonValue): DiffLine[] {
  return diffLines(contentText(from).split('\n'), contentText(to).split('\n'));
}

/** Counts of added and removed lines. */
export function diffStats(lines: readonly DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.op === '+') added++;
    else if (l.op === '-') removed++;
  }
  return { added, removed };
}

export type JsonObject = { [key: string]: JsonValue };

export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep equality of JSON values (key order ignored). */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length &&
      ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]))
    );
  }
  return false;
}

/** RFC 7396: applies a merge patch (null removes a key; non-objects replace), as the engine does. */
export const applyMergePatch: (target: JsonValue, patch: JsonValue) => JsonValue = mergePatch;

/**
 * The merge patch that turns object `from` into object `to`, or `undefined` when no merge patch
 * can: RFC 7396 reads `null` as "remove", so a `null` value inside `to` cannot be written by one.
 */
export function createMergePatch(from: JsonObject, to: JsonObject): JsonObject | undefined {
  const patch: JsonObject = {};
  for (const k of Object.keys(from)) if (!Object.hasOwn(to, k)) setOwn(patch, k, null);
  for (const [k, v] of Object.entries(to)) {
    const old = getOwn(from, k);
    if (old !== undefined && jsonEqual(old, v)) continue;
    if (isJsonObject(old) && isJsonObject(v)) {
      const inner = createMergePatch(old, v);
      if (!inner) return undefined;
      setOwn<JsonValue>(patch, k, inner);
    } else {
      setOwn(patch, k, v);
    }
  }
  return jsonEqual(applyMergePatch(from, patch), to) ? patch : undefined;
}

/** How the edit box is read: JSON (parsed) or plain text (saved as a string). */
export type ContentFormat = 'json' | 'text';

/** What saving an edit does: nothing, a merge patch (keeps the context chunks), or a replace. */
export type SavePlan =
  | { kind: 'invalid'; message: string }
  | { kind: 'unchanged' }
  | { kind: 'patch'; patch: JsonObject }
  | { kind: 'replace'; value: JsonValue };

/** Parses the edit box and decides how to save it against `old`. */
export function planSave(old: JsonValue, draft: string, format: ContentFormat): SavePlan {
  let value: JsonValue;
  if (format === 'json') {
    try {
      value = JSON.parse(draft) as JsonValue;
    } catch (e) {
      return {
        kind: 'invalid',
        message: `This is not valid JSON (${e instanceof Error ? e.message : String(e)}). Fix it, or switch to Text to save it as plain text.`,
      };
    }
  } else {
    value = draft;
  }
  if (jsonEqual(old, value)) return { kind: 'unchanged' };
  if (isJsonObject(old) && isJsonObject(value)) {
    const patch = createMergePatch(old, value);
    if (patch) return { kind: 'patch', patch };
  }
  return { kind: 'replace', value };
}
