// Names from other tools made into path segments (src/memory/paths.ts rules): no slashes, no
// controls, no characters that hide or reorder, not "." or "..", at most MAX_SEGMENT_CHARS
// characters.
import { MAX_SEGMENT_CHARS, withoutHiddenCharacters } from '../paths';

// C0 and C1 controls, DEL, and the Unicode line/paragraph separators (as paths.ts refuses).
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/** `text` as one path segment, or `fallback` when nothing of it is left. */
export function segmentOf(text: unknown, fallback: string): string {
  const clean = withoutHiddenCharacters((typeof text === 'string' ? text : '').normalize('NFC'))
    .replace(CONTROLS, ' ')
    .replace(/[/\\]+/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
  // Cut by whole characters (a surrogate pair is never split) within MAX_SEGMENT_CHARS units.
  let cut = '';
  for (const ch of clean) {
    if (cut.length + ch.length > MAX_SEGMENT_CHARS) break;
    cut += ch;
  }
  cut = cut.trim();
  if (!cut || /^\.+$/.test(cut)) return fallback;
  return cut;
}
