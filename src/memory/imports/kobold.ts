// KoboldAI Lite saves (.json), pure (docs/import-export.md): `prompt` and `actions` (the story's
// text in pieces), `memory`, `authorsnote`, `worldinfo` (entries with comma-separated `key`), and
// `savedsettings` (the mode: `opmode` 3 is chat, with `chatname` and `chatopponent`; 4 is
// instruct, with its start and end tags). A save carries no dates: its messages are dated now.
import type { Role } from '../types';
import { keyList, loreContent, LOREBOOK_HEADING } from './lorebook';
import { segmentOf } from './names';
import { dayOf } from './sillytavern-chat';
import type { ImportedMessage, ParsedFile, PlannedEntry, SkippedItem } from './types';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export const KOBOLD_HEADING = 'KoboldAI Lite';

/** True when `data` is a KoboldAI Lite save. */
export function isKoboldSave(data: Json): boolean {
  return Array.isArray(data.actions) && ('gamestarted' in data || 'prompt' in data);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Chat mode: the text split at each line that starts with a speaker's name and a colon. */
function chatTurns(text: string, user: string, others: string[], now: Date): ImportedMessage[] {
  const names = [user, ...others].filter(Boolean).map(escape).join('|');
  const at = new RegExp(`(?:^|\\n)(${names}):[ \\t]?`, 'g');
  const out: ImportedMessage[] = [];
  const marks = [...text.matchAll(at)];
  const lead = text.slice(0, marks[0]?.index ?? text.length).trim();
  if (lead) out.push({ role: 'system', text: lead, time: now });
  marks.forEach((m, i) => {
    const end = marks[i + 1]?.index ?? text.length;
    const said = text.slice(m.index + m[0].length, end).trim();
    if (said) {
      const role: Role = m[1] === user ? 'user' : 'assistant';
      out.push({ role, text: said, time: now, speaker: m[1] });
    }
  });
  return out;
}

/**
 * Instruct mode: the text split at its turn markers. Lite writes its own placeholders into the
 * story (`{{[INPUT]}}`, `{{[OUTPUT]}}`, `{{[SYSTEM]}}` and their `_END` forms) whatever tags the
 * instruct preset names, and those tags instead when set to write raw tags: both are read. A
 * tag as Lite stores it writes a newline as `\n`.
 */
function instructTurns(text: string, settings: Json, now: Date): ImportedMessage[] {
  const marks = new Map<string, Role | undefined>();
  const mark = (tag: string, role: Role | undefined) => {
    const t = tag.replace(/\\n/g, '\n').trim();
    if (t && !marks.has(t)) marks.set(t, role);
  };
  mark('{{[INPUT]}}', 'user');
  mark('{{[OUTPUT]}}', 'assistant');
  mark('{{[SYSTEM]}}', 'system');
  for (const end of ['{{[INPUT_END]}}', '{{[OUTPUT_END]}}', '{{[SYSTEM_END]}}'])
    mark(end, undefined);
  mark(str(settings.instruct_starttag), 'user');
  mark(str(settings.instruct_endtag), 'assistant');
  mark(str(settings.instruct_systag), 'system');
  for (const end of ['instruct_starttag_end', 'instruct_endtag_end', 'instruct_systag_end']) {
    mark(str(settings[end]), undefined);
  }
  // Longest first: a tag that holds another is matched whole.
  const tags = [...marks.keys()].sort((a, b) => b.length - a.length);
  const out: ImportedMessage[] = [];
  let role: Role = 'system';
  for (const part of text.split(new RegExp(`(${tags.map(escape).join('|')})`))) {
    if (marks.has(part)) {
      // An end marker closes a turn; the next marker says whose comes.
      role = marks.get(part) ?? role;
    } else if (part.trim()) out.push({ role, text: part.trim(), time: now });
  }
  return out;
}

/** Reads a KoboldAI Lite save: its turns as one chat, memory, author's note and world info as entries. */
export function parseKoboldSave(data: Json, fileName: string, now: Date): ParsedFile {
  const name = segmentOf(fileName.replace(/\.[^.]*$/, ''), 'Story');
  const settings = isObject(data.savedsettings) ? data.savedsettings : {};
  const pieces = [str(data.prompt), ...(data.actions as unknown[]).map(str)];
  // Images and their hashes are kept in the text as markers: not words.
  const text = pieces.join('').replace(/\[<\|[ph]\|.+?\|[ph]\|>\]/g, '');
  let messages: ImportedMessage[];
  const opponent = str(settings.chatopponent)
    .split('||$||')
    .map((s) => s.trim())
    .filter(Boolean);
  if (settings.opmode === 3) {
    messages = chatTurns(
      text,
      str(settings.chatname) || 'User',
      opponent.length ? opponent : ['KoboldAI'],
      now,
    );
  } else if (settings.opmode === 4) {
    messages = instructTurns(text, settings, now);
  } else {
    // Story or adventure: the prompt is the person's, every action after it a continuation.
    messages = pieces
      .map((p, i) => ({
        role: (i === 0 ? 'user' : 'assistant') as Role,
        text: p.trim(),
        time: now,
      }))
      .filter((m) => m.text);
  }
  const entries: PlannedEntry[] = [];
  const heading = `${KOBOLD_HEADING}/${name}`;
  if (str(data.memory).trim()) entries.push({ heading, name: 'Memory', content: str(data.memory) });
  if (str(data.authorsnote).trim())
    entries.push({ heading, name: "Author's note", content: str(data.authorsnote) });
  const skipped: SkippedItem[] = [];
  const wi = Array.isArray(data.worldinfo) ? data.worldinfo : [];
  wi.forEach((w: unknown, i) => {
    const item = isObject(w) ? w : {};
    const content = str(item.content);
    if (!content.trim()) {
      skipped.push({ where: `world info entry ${i + 1}`, reason: 'left out (it has no content)' });
      return;
    }
    const keys = keyList(item.key);
    entries.push({
      heading: `${LOREBOOK_HEADING}/${name}`,
      name: segmentOf(str(item.comment).trim() || keys[0], `Entry ${i + 1}`),
      content: loreContent(content, keys, {
        secondary: keyList(item.keysecondary),
        constant: item.constant === true,
        disabled: item.widisabled === true,
      }) as unknown as PlannedEntry['content'],
    });
  });
  if (!messages.length && !entries.length) {
    return {
      ok: false,
      message: `The KoboldAI Lite save ${fileName} has no story, memory or world info: there is nothing to import.`,
    };
  }
  const who = opponent[0] ?? (settings.opmode === 3 ? 'KoboldAI' : name);
  const chats = messages.length
    ? [{ title: `${who} · ${dayOf(now)}`, created: now, messages }]
    : [];
  return { ok: true, kind: 'kobold', chats, entries, skipped };
}
