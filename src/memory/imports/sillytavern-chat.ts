// SillyTavern chat files (.jsonl), pure (docs/import-export.md): a header line (`user_name`,
// `character_name`, `create_date`, `chat_metadata`), then one message per line (`name`,
// `is_user`, `is_system`, `send_date`, `mes`, `swipes`, `swipe_id`, `swipe_info`, `extra`).
import type { Role } from '../types';
import { dateInRange } from '../validate';
import type { ImportedChat, ImportedMessage, ParsedFile, SkippedItem } from './types';

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/**
 * A date as SillyTavern writes it, or undefined: milliseconds since 1970 (a number or digits),
 * "June 19, 2023 2:20pm", "2024-7-12@01h31m37s", "2024-6-5 @14h 56m 50s 682ms", or ISO 8601.
 * The worded and `@` forms carry no zone: SillyTavern writes them from the local clock, so they
 * are read as local time.
 */
export function parseSillyTavernDate(value: unknown): Date | undefined {
  // Years 0000 to 9999 only: a number in another unit (microseconds) is no date of a chat.
  const valid = (d: Date) => (dateInRange(d) ? d : undefined);
  if (typeof value === 'number') return value >= 0 ? valid(new Date(value)) : undefined;
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  if (/^\d+$/.test(s)) return valid(new Date(Number(s)));
  const worded = /^([a-z]+)\s+(\d{1,2}),\s*(\d{4})\s+(\d{1,2}):(\d{1,2})\s*(am|pm)$/i.exec(s);
  if (worded) {
    const month = MONTHS.indexOf(worded[1].toLowerCase());
    if (month < 0) return undefined;
    const hour = (Number(worded[4]) % 12) + (worded[6].toLowerCase() === 'pm' ? 12 : 0);
    return local(Number(worded[3]), month, Number(worded[2]), hour, Number(worded[5]), 0, 0);
  }
  const humanized =
    /^(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s(?:\s*(\d{1,3})ms)?$/.exec(
      s,
    );
  if (humanized) {
    const [, y, mo, d, h, mi, se, ms] = humanized;
    return local(+y, +mo - 1, +d, +h, +mi, +se, ms ? +ms : 0);
  }
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s))
    return valid(new Date(s));
  return undefined;
}

function local(
  y: number,
  month: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  ms: number,
): Date | undefined {
  if (month < 0 || month > 11 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return undefined;
  const date = new Date(y, month, d, h, mi, s, ms);
  return Number.isFinite(date.getTime()) ? date : undefined;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A header line: it names the chat's people or carries its metadata, and has no message. */
function isHeader(v: Json): boolean {
  return (
    typeof v.mes !== 'string' &&
    ('user_name' in v || 'character_name' in v || 'chat_metadata' in v || 'create_date' in v)
  );
}

/** Local date as YYYY-MM-DD, for titles. */
export function dayOf(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/**
 * Reads a SillyTavern chat. Lines that are not messages are skipped with their reason; a file
 * with no message at all, or that is not a SillyTavern chat, is refused. `now` dates messages
 * that carry no readable date and follow none that does.
 */
export function parseSillyTavernChat(text: string, fileName: string, now: Date): ParsedFile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  const skipped: SkippedItem[] = [];
  let header: Json | undefined;
  const messages: ImportedMessage[] = [];
  let lastTime: Date | undefined;
  let firstLine = true;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const where = `line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (firstLine) return notAChat(fileName, 'its first line is not JSON');
      skipped.push({ where, reason: 'left out (it is not JSON; the file may be cut short)' });
      continue;
    }
    if (firstLine && isObject(value) && isHeader(value)) {
      header = value;
      firstLine = false;
      continue;
    }
    if (!isObject(value) || typeof value.mes !== 'string') {
      if (firstLine) return notAChat(fileName, 'its first line is neither a header nor a message');
      skipped.push({ where, reason: 'left out (it is not a message: it has no "mes" text)' });
      continue;
    }
    firstLine = false;
    const message = messageOf(value, lastTime);
    if (!message) {
      skipped.push({ where, reason: 'left out (the message is empty)' });
      continue;
    }
    lastTime = message.time;
    messages.push(message);
  }
  if (firstLine) return { ok: false, message: `${fileName} is empty: there is nothing to import.` };
  if (!messages.length) {
    return {
      ok: false,
      message: `${fileName} is a SillyTavern chat without any message: there is nothing to import.`,
    };
  }
  // Messages before the first dated one take the first date; none dated at all: now.
  const firstDated = messages.find((m) => m.time.getTime() > 0)?.time;
  const created = parseSillyTavernDate(header?.create_date) ?? firstDated ?? now;
  for (const m of messages) if (m.time.getTime() === 0) m.time = firstDated ?? created;
  // Recent SillyTavern writes "unused" as the header's names (a group chat's too): the
  // characters are then the replies' speakers.
  const named = typeof header?.character_name === 'string' ? header.character_name.trim() : '';
  const speakers = [
    ...new Set(messages.flatMap((m) => (m.role === 'assistant' && m.speaker ? [m.speaker] : []))),
  ];
  const character =
    (named && named !== 'unused' ? named : '') ||
    (speakers.length > 3 ? `${speakers.slice(0, 3).join(', ')}…` : speakers.join(', ')) ||
    fileName.replace(/\.[^.]*$/, '');
  const chat: ImportedChat = { title: `${character} · ${dayOf(created)}`, created, messages };
  return { ok: true, kind: 'sillytavern-chat', chats: [chat], entries: [], skipped };
}

function notAChat(fileName: string, why: string): ParsedFile {
  return {
    ok: false,
    message: `${fileName} is not a SillyTavern chat (${why}). A chat file has one JSON object per line: a header, then the messages.`,
  };
}

/** A message line as a message; undefined when it says nothing. */
function messageOf(v: Json, lastTime: Date | undefined): ImportedMessage | undefined {
  const extra = isObject(v.extra) ? v.extra : {};
  // A hidden message (`/hide`: `is_system`, the person's too) and the narrator's (`/sys`:
  // `extra.type` "narrator") are notes in the chat, not anyone's turn.
  const role: Role =
    v.is_system === true || extra.type === 'narrator'
      ? 'system'
      : v.is_user === true
        ? 'user'
        : 'assistant';
  let text = v.mes as string;
  // Shown instead of `mes` by SillyTavern (a translation, a command's output).
  if (!text.trim() && typeof extra.display_text === 'string') text = extra.display_text;
  // A picture sent without words is still a turn: the reply to it answers it.
  if (!text.trim() && typeof extra.image === 'string' && extra.image) {
    const title = typeof extra.title === 'string' ? extra.title.trim() : '';
    text = title ? `[image: ${title}]` : '[image]';
  }
  const time = parseSillyTavernDate(v.send_date) ?? lastTime ?? new Date(0);
  const message: ImportedMessage = { role, text, time };
  if (typeof v.name === 'string' && v.name.trim()) message.speaker = v.name.trim();
  const swipes = Array.isArray(v.swipes) ? v.swipes : [];
  if (role === 'assistant' && swipes.length > 1 && swipes.every((s) => typeof s === 'string')) {
    const id = Number.isInteger(v.swipe_id) ? (v.swipe_id as number) : 0;
    const shown = Math.max(0, Math.min(swipes.length - 1, id));
    const info = Array.isArray(v.swipe_info) ? v.swipe_info : [];
    message.alternatives = (swipes as string[]).map((s, i) => ({
      // The shown one is `mes` itself (edited after the swipe, it differs from the swipe).
      text: i === shown ? text : s,
      time: (isObject(info[i]) ? parseSillyTavernDate(info[i].send_date) : undefined) ?? time,
    }));
    message.shown = shown;
  }
  if (!text.trim() && !message.alternatives) return undefined;
  return message;
}
