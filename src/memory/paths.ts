// Memory paths (docs/design.md, "Paths"): parsing, validation and segment-aware prefix ranges.

export const MAX_SEGMENT_CHARS = 128;
export const MAX_DEPTH = 12;
export const MAX_PATH_CHARS = 512;

export type PathResult =
  { ok: true; path: string; segments: string[] } | { ok: false; message: string };

// C0 and C1 controls, DEL, and the Unicode line/paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

// Characters that show as nothing, so that two paths that look the same are different entries:
// zero-width space, word joiner, zero-width no-break space (the BOM; `trim` takes it off the ends).
const INVISIBLE = /[\u200b\u2060\ufeff]/;
// The bidirectional controls (Unicode's Bidi_Control: marks, embeddings, overrides, isolates),
// which can show a path's characters in another order than they are stored in.
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// The zero-width non-joiner and joiner belong inside Persian and Indic words and emoji sequences
// (👩‍💻); anywhere else (next to ASCII, Latin or a space, or at a segment's end) they only hide.
const STRAY_JOINER =
  /(?<![^\p{ASCII}\p{Script=Latin}\s\u200c\u200d])[\u200c\u200d]|[\u200c\u200d](?![^\p{ASCII}\p{Script=Latin}\s\u200c\u200d])/u;

/** Why a segment's invisible or reordering characters are refused, or null when it has none. */
export function hiddenCharacterProblem(segment: string): string | null {
  const hidden = INVISIBLE.exec(segment) ?? STRAY_JOINER.exec(segment);
  if (hidden) {
    return `path contains an invisible character (${codePoint(hidden[0])}) that makes it look like another path; remove it`;
  }
  const bidi = BIDI.exec(segment);
  if (bidi) {
    return `path contains a bidirectional control character (${codePoint(bidi[0])}) that can show it in another order; remove it`;
  }
  return null;
}

/** `text` without the characters `hiddenCharacterProblem` refuses: for names made anew. */
export function withoutHiddenCharacters(text: string): string {
  let out = text
    .replace(new RegExp(INVISIBLE.source, 'g'), '')
    .replace(new RegExp(BIDI.source, 'g'), '');
  while (STRAY_JOINER.test(out)) out = out.replace(STRAY_JOINER, '');
  return out;
}

function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Normalises a path: segments split on `/`, trimmed and NFC-normalised; one leading or
 * trailing `/` is ignored. `allowRoot` accepts `''` (the root heading). `naming`: the path names
 * an entry anew (a save, a move's destination, a name made for another tool's item), so
 * characters that hide or reorder (`hiddenCharacterProblem`) are refused too; a path that names
 * one already stored (read, delete, move it away, a backup or sync of it) may hold them, so that
 * an entry saved before they were refused can still be read, fixed and removed.
 */
export function parsePath(input: unknown, { allowRoot = false, naming = false } = {}): PathResult {
  if (typeof input !== 'string') {
    return {
      ok: false,
      message: `path must be a string like "Project/Goals/Phase1", got ${describe(input)}`,
    };
  }
  if (input.length > MAX_PATH_CHARS * 4) {
    return { ok: false, message: `path is longer than ${MAX_PATH_CHARS} characters` };
  }
  let raw = input.trim();
  if (raw.startsWith('/')) raw = raw.slice(1);
  if (raw.endsWith('/')) raw = raw.slice(0, -1);
  if (raw === '') {
    return allowRoot
      ? { ok: true, path: '', segments: [] }
      : { ok: false, message: 'path is empty; give a path like "Project/Goals/Phase1"' };
  }
  const segments = raw.split('/').map((s) => s.trim().normalize('NFC'));
  if (segments.length > MAX_DEPTH) {
    return {
      ok: false,
      message: `path has ${segments.length} levels; at most ${MAX_DEPTH} are allowed`,
    };
  }
  for (const seg of segments) {
    if (seg === '') return { ok: false, message: `path "${input}" has an empty segment (//)` };
    if (seg === '.' || seg === '..')
      return { ok: false, message: `path segments "." and ".." are not allowed` };
    if (CONTROL.test(seg)) return { ok: false, message: 'path contains a control character' };
    const hidden = naming ? hiddenCharacterProblem(seg) : null;
    if (hidden) return { ok: false, message: hidden };
    if (seg.length > MAX_SEGMENT_CHARS) {
      return {
        ok: false,
        message: `a path segment is longer than ${MAX_SEGMENT_CHARS} characters`,
      };
    }
  }
  const path = segments.join('/');
  if (path.length > MAX_PATH_CHARS) {
    return { ok: false, message: `path is longer than ${MAX_PATH_CHARS} characters` };
  }
  return { ok: true, path, segments };
}

/** The fields of an entry row that its path decides: the path, its heading and its parent. */
export function placedAt(path: string): { path: string; heading: string; parent_path: string } {
  return { path, heading: headingOf(path), parent_path: parentOf(path) };
}

/** Last segment of a normalised path (`''` for the root). */
export function headingOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

/** All but the last segment (`''` at top level). */
export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/**
 * Index range `[lower, upper)` of every strict descendant of `path` (segment-aware): use with
 * `between(lower, upper, true, false)`. The upper bound is `path + '0'` because `'0'` is the code
 * unit right after `'/'`, so the range holds exactly the strings starting with `path + '/'`, even
 * ones containing U+FFFF, and never `User/Preferences` for `User/Pref`.
 */
export function descendantRange(path: string): [string, string] {
  return path === '' ? ['', '\uffff\uffff'] : [path + '/', path + '0'];
}

/** True when `candidate` is `path` itself or lies below it, segment-aware. */
export function isSelfOrDescendant(candidate: string, path: string): boolean {
  return path === '' || candidate === path || candidate.startsWith(path + '/');
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}
