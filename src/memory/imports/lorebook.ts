// SillyTavern World Info (lorebooks) and character cards (V1, V2, V3; as JSON or inside a PNG),
// pure (docs/import-export.md): each lorebook entry becomes an entry under
// `Lorebook/<book>/<comment, else first key>` with its keys kept beside its text; a card's
// fields become entries under `Characters/<name>/…`.
import { parsePath } from '../paths';
import type { JsonValue } from '../types';
import { validateContent } from '../validate';
import { segmentOf } from './names';
import { decodeBase64Utf8, pngTextChunks } from './png-text';
import type { ParsedFile, PlannedEntry, SkippedItem } from './types';

export const LOREBOOK_HEADING = 'Lorebook';
export const CHARACTERS_HEADING = 'Characters';

/** What a lorebook entry is stored as: its text, and the words that call it up in SillyTavern. */
export interface LoreContent {
  content: string;
  keys: string[];
  secondaryKeys?: string[];
  constant?: true;
  disabled?: true;
}

/** Per-entry field of a lorebook this app exported: where the entry was and what it held. */
export interface ExportMark {
  path: string;
  content: JsonValue;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys as a list of words: SillyTavern stores a list; older files a comma-separated string. */
export function keyList(v: unknown): string[] {
  const items = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
  return items.filter((k): k is string => typeof k === 'string' && !!k.trim()).map((k) => k.trim());
}

/** The stored content of a lorebook entry (a small object: text and keys). */
export function loreContent(
  text: string,
  keys: string[],
  extra: { secondary?: string[]; constant?: boolean; disabled?: boolean } = {},
): LoreContent {
  const out: LoreContent = { content: text, keys };
  if (extra.secondary?.length) out.secondaryKeys = extra.secondary;
  if (extra.constant) out.constant = true;
  if (extra.disabled) out.disabled = true;
  return out;
}

/** One lorebook entry, in SillyTavern's World Info or a card's `character_book` form. */
interface LoreItem {
  name: unknown;
  text: unknown;
  keys: string[];
  secondary: string[];
  constant: boolean;
  disabled: boolean;
  mark?: unknown;
}

function lorePlan(
  book: string,
  items: LoreItem[],
  skipped: SkippedItem[],
  label: (i: number) => string,
): PlannedEntry[] {
  const heading = `${LOREBOOK_HEADING}/${segmentOf(book, 'Lorebook')}`;
  const out: PlannedEntry[] = [];
  items.forEach((item, i) => {
    const back = exportedBack(item);
    if (back) {
      out.push(back);
      return;
    }
    if (typeof item.text !== 'string' || !item.text.trim()) {
      skipped.push({ where: label(i), reason: 'left out (it has no content)' });
      return;
    }
    const name = segmentOf(
      typeof item.name === 'string' && item.name.trim() ? item.name : item.keys[0],
      `Entry ${i + 1}`,
    );
    const content = loreContent(item.text, item.keys, {
      secondary: item.secondary,
      constant: item.constant,
      disabled: item.disabled,
    });
    out.push({ heading, name, content: content as unknown as JsonValue });
  });
  return out;
}

/**
 * An entry of a lorebook this app exported, put back where it was: at its path, with the content
 * it had, unless it was changed since in SillyTavern: its text, or, for a lorebook entry, its
 * keys, secondary keys, constant or disabled flag (then the entry as it is now, with its keys).
 * An entry that was not a lorebook entry was exported with keys made from its words: a change to
 * those is not told apart from them, but its flags and secondary keys are (it exported none).
 */
function exportedBack(item: LoreItem): PlannedEntry | undefined {
  if (!isObject(item.mark) || typeof item.mark.path !== 'string') return undefined;
  const path = parsePath(item.mark.path);
  if (!path.ok || path.path !== item.mark.path) return undefined;
  const stored = validateContent(item.mark.content);
  if ('status' in stored) return undefined;
  const lore = isLore(stored.value) ? stored.value : undefined;
  const sameList = (a: readonly string[], b: readonly string[]) =>
    a.length === b.length && a.every((k, i) => k === b[i]);
  const asExported =
    (!lore || sameList(item.keys, lore.keys)) &&
    sameList(item.secondary, lore?.secondaryKeys ?? []) &&
    item.constant === (lore?.constant === true) &&
    item.disabled === (lore?.disabled === true);
  if (asExported && typeof item.text === 'string' && item.text === readableText(stored.value))
    return { path: path.path, content: stored.value };
  if (typeof item.text !== 'string' || !item.text.trim()) return undefined;
  return {
    path: path.path,
    content: loreContent(item.text, item.keys, {
      secondary: item.secondary,
      constant: item.constant,
      disabled: item.disabled,
    }) as unknown as JsonValue,
  };
}

/**
 * An entry's content as text a person (and SillyTavern) reads: a string as it is, a lorebook
 * entry's text, anything else as indented `key: value` lines.
 */
export function readableText(content: JsonValue): string {
  if (typeof content === 'string') return content;
  if (isLore(content)) return content.content;
  return lines(content, '').join('\n');
}

export function isLore(content: JsonValue): content is JsonValue & LoreContent {
  return (
    isObject(content) &&
    typeof content.content === 'string' &&
    Array.isArray(content.keys) &&
    content.keys.every((k) => typeof k === 'string')
  );
}

function lines(v: JsonValue, indent: string): string[] {
  if (v === null || typeof v !== 'object') return [`${indent}${String(v)}`];
  if (Array.isArray(v))
    return v.flatMap((x) =>
      x !== null && typeof x === 'object'
        ? [`${indent}-`, ...lines(x, indent + '  ')]
        : [`${indent}- ${String(x)}`],
    );
  return Object.entries(v).flatMap(([k, x]) =>
    x !== null && typeof x === 'object'
      ? [`${indent}${k}:`, ...lines(x, indent + '  ')]
      : [`${indent}${k}: ${String(x)}`],
  );
}

/** True when `data` is a SillyTavern World Info file (`entries` keyed by uid). */
export function isWorldInfo(data: unknown): data is { entries: Json } {
  return isObject(data) && isObject(data.entries);
}

/** Reads a World Info file; `fallbackName` (the file's name) names a book without a name. */
export function parseWorldInfo(data: { entries: Json } & Json, fallbackName: string): ParsedFile {
  const skipped: SkippedItem[] = [];
  const raw = Object.entries(data.entries);
  const order = (e: unknown, key: string) =>
    isObject(e) && typeof e.displayIndex === 'number'
      ? e.displayIndex
      : isObject(e) && typeof e.uid === 'number'
        ? e.uid
        : Number(key) || 0;
  raw.sort((a, b) => order(a[1], a[0]) - order(b[1], b[0]));
  const items: LoreItem[] = [];
  const labels: string[] = [];
  for (const [key, e] of raw) {
    if (!isObject(e)) {
      skipped.push({ where: `entry ${key}`, reason: 'left out (it is not an entry)' });
      continue;
    }
    labels.push(`entry ${key}`);
    items.push({
      name: e.comment,
      text: e.content,
      keys: keyList(e.key),
      secondary: keyList(e.keysecondary),
      constant: e.constant === true,
      disabled: e.disable === true,
      mark: e.structuredMemory,
    });
  }
  const book = typeof data.name === 'string' && data.name.trim() ? data.name : fallbackName;
  const entries = lorePlan(book, items, skipped, (i) => labels[i]);
  if (!entries.length) {
    return {
      ok: false,
      message: `The lorebook ${fallbackName} has no entry with content: there is nothing to import.`,
    };
  }
  return { ok: true, kind: 'lorebook', chats: [], entries, skipped };
}

/** The card's fields: V2 and V3 keep them under `data`, V1 at the top. */
function cardData(v: unknown): Json | undefined {
  if (!isObject(v)) return undefined;
  const d = isObject(v.data) && typeof v.data.name === 'string' ? v.data : v;
  if (typeof d.name !== 'string') return undefined;
  const looksLikeCard =
    typeof v.spec === 'string' ||
    'first_mes' in d ||
    'description' in d ||
    'personality' in d ||
    'scenario' in d;
  return looksLikeCard ? d : undefined;
}

/** True when `data` is a character card (V1, V2 or V3). */
export function isCharacterCard(data: unknown): boolean {
  return cardData(data) !== undefined;
}

const CARD_FIELDS: [string, string][] = [
  ['description', 'Description'],
  ['personality', 'Personality'],
  ['scenario', 'Scenario'],
  ['first_mes', 'First message'],
  ['mes_example', 'Example messages'],
];

/** Reads a character card (its parsed JSON), with the lorebook it carries. */
export function parseCharacterCard(data: unknown, fileName: string): ParsedFile {
  const d = cardData(data);
  if (!d) return { ok: false, message: `${fileName} is not a character card.` };
  const name = segmentOf(d.name, fileName.replace(/\.[^.]*$/, ''));
  const heading = `${CHARACTERS_HEADING}/${name}`;
  const entries: PlannedEntry[] = [];
  for (const [field, label] of CARD_FIELDS) {
    const v = d[field];
    if (typeof v === 'string' && v.trim()) entries.push({ heading, name: label, content: v });
  }
  const greetings = keyList(d.alternate_greetings);
  if (Array.isArray(d.alternate_greetings) && greetings.length)
    entries.push({
      heading,
      name: 'Alternate greetings',
      content: d.alternate_greetings.filter((g) => typeof g === 'string') as string[],
    });
  const skipped: SkippedItem[] = [];
  const book = d.character_book;
  if (isObject(book) && Array.isArray(book.entries)) {
    const items: LoreItem[] = book.entries.map((e: unknown) => {
      const x = isObject(e) ? e : {};
      return {
        name: typeof x.comment === 'string' && x.comment.trim() ? x.comment : x.name,
        text: x.content,
        keys: keyList(x.keys),
        secondary: keyList(x.secondary_keys),
        constant: x.constant === true,
        disabled: x.enabled === false,
      };
    });
    const bookName = typeof book.name === 'string' && book.name.trim() ? book.name : d.name;
    entries.push(...lorePlan(String(bookName), items, skipped, (i) => `lorebook entry ${i + 1}`));
  }
  if (!entries.length) {
    return {
      ok: false,
      message: `The character card ${fileName} has no description, personality, scenario, first message or lorebook: there is nothing to import.`,
    };
  }
  return { ok: true, kind: 'character', chats: [], entries, skipped };
}

/** Reads a character card inside a PNG (`ccv3` or `chara` text chunk, base64 JSON). */
export function parseCardPng(bytes: Uint8Array, fileName: string): ParsedFile {
  const chunks = pngTextChunks(bytes);
  if (!chunks.ok) return { ok: false, message: `${fileName} cannot be read: ${chunks.message}.` };
  const encoded = chunks.text.get('ccv3') ?? chunks.text.get('chara');
  if (encoded === undefined) {
    return {
      ok: false,
      message: `${fileName} is an image without a character card in it: there is nothing to import.`,
    };
  }
  const json = decodeBase64Utf8(encoded);
  let data: unknown;
  try {
    data = json === undefined ? undefined : JSON.parse(json);
  } catch {
    data = undefined;
  }
  if (data === undefined)
    return {
      ok: false,
      message: `The character card in ${fileName} is damaged: it cannot be read.`,
    };
  return parseCharacterCard(data, fileName);
}
