// Memory as a SillyTavern World Info file (docs/import-export.md), pure: one entry per memory
// entry with every field SillyTavern's world-info loader reads, at its default where memory has
// nothing to say; the content as readable text; keys from the path and the entry's most
// distinctive words (or the keys it was imported with); comment = the path. Each entry also
// carries `structuredMemory: { path, content }` (ignored by SillyTavern), so importing the file
// back gives the same entries.
import type { JsonValue } from '../types';
import { isLore, readableText, type ExportMark } from './lorebook';

/** Distinctive words added to the path's segments as keys. */
const WORD_KEYS = 3;

/** Words too common to call up an entry. */
const STOP = new Set(
  'about above after again against also because been before being below between both could does doing during each from further have having here into itself just more most other ought over same should some such than that their theirs them then there these they this those through under until very were what when where which while whom with would your yours'.split(
    ' ',
  ),
);

/** One World Info entry as SillyTavern stores it (the fields of its entry template). */
export interface WorldInfoEntry {
  uid: number;
  key: string[];
  keysecondary: string[];
  comment: string;
  content: string;
  constant: boolean;
  vectorized: boolean;
  selective: boolean;
  selectiveLogic: number;
  addMemo: boolean;
  order: number;
  position: number;
  disable: boolean;
  excludeRecursion: boolean;
  preventRecursion: boolean;
  delayUntilRecursion: number;
  probability: number;
  useProbability: boolean;
  depth: number;
  group: string;
  groupOverride: boolean;
  groupWeight: number;
  scanDepth: number | null;
  caseSensitive: boolean | null;
  matchWholeWords: boolean | null;
  useGroupScoring: boolean | null;
  automationId: string;
  role: number;
  sticky: number | null;
  cooldown: number | null;
  delay: number | null;
  displayIndex: number;
  structuredMemory: ExportMark;
}

const words = (text: string): string[] =>
  (text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? []).filter(
    (w) => w.length >= 4 && !STOP.has(w) && !/^\d+$/.test(w),
  );

/**
 * The keys of each entry: its imported keys when it has them, else its path's segments and its
 * WORD_KEYS most distinctive words (frequent in it, rare in the others).
 */
export function entryKeys(entries: readonly { path: string; content: JsonValue }[]): string[][] {
  const docs = entries.map((e) => words(readableText(e.content)));
  const df = new Map<string, number>();
  for (const d of docs) for (const w of new Set(d)) df.set(w, (df.get(w) ?? 0) + 1);
  const n = entries.length;
  return entries.map((e, i) => {
    if (isLore(e.content) && e.content.keys.length) return [...e.content.keys];
    const tf = new Map<string, number>();
    for (const w of docs[i]) tf.set(w, (tf.get(w) ?? 0) + 1);
    const ranked = [...tf]
      .map(([w, c]) => [w, c * Math.log(1 + n / (df.get(w) ?? 1))] as const)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([w]) => w);
    const segments = e.path.split('/');
    const seen = new Set(segments.map((s) => s.toLowerCase()));
    return [...segments, ...ranked.filter((w) => !seen.has(w)).slice(0, WORD_KEYS)];
  });
}

/** The World Info file of these entries (sorted by path), as SillyTavern loads it. */
export function toWorldInfo(entries: readonly { path: string; content: JsonValue }[]): {
  entries: Record<string, WorldInfoEntry>;
} {
  const keys = entryKeys(entries);
  const out: Record<string, WorldInfoEntry> = {};
  entries.forEach((e, uid) => {
    const lore = isLore(e.content) ? e.content : undefined;
    out[String(uid)] = {
      uid,
      key: keys[uid],
      keysecondary: lore?.secondaryKeys ? [...lore.secondaryKeys] : [],
      comment: e.path,
      content: readableText(e.content),
      constant: lore?.constant === true,
      vectorized: false,
      selective: true,
      selectiveLogic: 0,
      addMemo: true,
      order: 100,
      position: 0,
      disable: lore?.disabled === true,
      excludeRecursion: false,
      preventRecursion: false,
      delayUntilRecursion: 0,
      probability: 100,
      useProbability: true,
      depth: 4,
      group: '',
      groupOverride: false,
      groupWeight: 100,
      scanDepth: null,
      caseSensitive: null,
      matchWholeWords: null,
      useGroupScoring: null,
      automationId: '',
      role: 0,
      sticky: null,
      cooldown: null,
      delay: null,
      displayIndex: uid,
      structuredMemory: { path: e.path, content: e.content },
    };
  });
  return { entries: out };
}
