// Which other tool's file a file is, and its parse (docs/import-export.md), pure.
import {
  isCharacterCard,
  isWorldInfo,
  parseCardPng,
  parseCharacterCard,
  parseWorldInfo,
} from './lorebook';
import { isKoboldSave, parseKoboldSave } from './kobold';
import { parseSillyTavernChat } from './sillytavern-chat';
import type { ParsedFile } from './types';

/** What the app can import from other tools, for messages that say what was expected. */
export const EXPECTED =
  'a SillyTavern chat (.jsonl), a SillyTavern lorebook or character card (.json or .png), or a KoboldAI Lite save (.json)';

const PNG = [0x89, 0x50, 0x4e, 0x47];

/** The file's content read, whichever of the supported formats it is; `now` dates undated chats. */
export function parseImportFile(name: string, data: string | Uint8Array, now: Date): ParsedFile {
  let text: string;
  if (typeof data !== 'string') {
    if (PNG.every((b, i) => data[i] === b)) return parseCardPng(data, name);
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(data);
    } catch {
      return {
        ok: false,
        message: `${name} is neither text nor a PNG image: expected ${EXPECTED}.`,
      };
    }
  } else text = data;
  text = text.replace(/^\uFEFF/, '');
  if (!text.trim()) return { ok: false, message: `${name} is empty: there is nothing to import.` };
  if (/\.jsonl$/i.test(name)) return parseSillyTavernChat(text, name, now);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not one JSON value: a chat (one per line) when its first line is one.
    const first = text.trimStart().split(/\r\n|\n|\r/, 1)[0];
    if (isJsonObjectText(first)) return parseSillyTavernChat(text, name, now);
    return {
      ok: false,
      message: `${name} is not JSON or JSON lines (it may be cut short): expected ${EXPECTED}.`,
    };
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    if (isWorldInfo(v)) return parseWorldInfo(v, name.replace(/\.[^.]*$/, ''));
    if (isCharacterCard(v)) return parseCharacterCard(v, name);
    if (isKoboldSave(v)) return parseKoboldSave(v, name, now);
    // One message or header alone on one line: a chat of one line.
    if ('mes' in v || 'user_name' in v || 'character_name' in v)
      return parseSillyTavernChat(text, name, now);
  }
  return {
    ok: false,
    message: `${name} is JSON but not a file this app knows: expected ${EXPECTED}.`,
  };
}

function isJsonObjectText(line: string): boolean {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}
