// The LoCoMo conversations (Maharana et al., ACL 2024; CC BY-NC 4.0, read in place from
// ../shared/data/locomo-dev.json, never copied into the project) as the recall evals read them:
// sessions with their dates, evidence ids, a turn as a chat shows it.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_DATA = resolve(here, '../../../shared/data/locomo-dev.json');

export interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
export interface Qa {
  question: string;
  evidence?: string[];
  category: number;
}
export interface Sample {
  sample_id: string;
  conversation: Record<string, unknown> & { speaker_a: string; speaker_b: string };
  qa: Qa[];
}

const MONTHS =
  'january february march april may june july august september october november december'.split(
    ' ',
  );

/** `1:56 pm on 8 May, 2023` → ms (UTC). */
export function parseSessionDate(s: string): number {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(s);
  if (!m) throw new Error(`Unreadable session date: ${s}`);
  let hour = Number(m[1]) % 12;
  if (m[3].toLowerCase() === 'pm') hour += 12;
  const month = MONTHS.indexOf(m[5].toLowerCase());
  if (month < 0) throw new Error(`Unreadable month in session date: ${s}`);
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

/** Evidence ids as the data writes them (`D1:3`, `D:11:26`, `D30:05`, `D8:6; D9:17`) → `D1:3`. */
export function normaliseEvidence(ids: readonly string[], known: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const raw of ids) {
    for (const part of String(raw).split(/[;,\s]+/)) {
      const m = /^D:?(\d+):0*(\d+)$/.exec(part.trim());
      if (!m) continue;
      const id = `D${Number(m[1])}:${Number(m[2])}`;
      if (known.has(id)) out.add(id);
    }
  }
  return [...out];
}

export interface Session {
  index: number;
  date: number;
  turns: Turn[];
}

export function sessionsOf(sample: Sample): Session[] {
  const c = sample.conversation;
  const out: Session[] = [];
  for (const key of Object.keys(c)) {
    const m = /^session_(\d+)$/.exec(key);
    if (!m || !Array.isArray(c[key])) continue;
    const date = c[`${key}_date_time`];
    if (typeof date !== 'string') continue;
    out.push({ index: Number(m[1]), date: parseSessionDate(date), turns: c[key] as Turn[] });
  }
  return out.sort((a, b) => a.index - b.index);
}

/** What a chat shows of a turn: who said it, what they said, and the picture they shared. */
export function turnText(t: Turn): string {
  const caption = t.blip_caption ? ` [shares a photo: ${t.blip_caption}]` : '';
  return `${t.speaker}: ${t.text}${caption}`;
}

/** The conversations of `file`, or a sentence on why they cannot be read. */
export function readSamples(file: string): Sample[] {
  const samples = JSON.parse(readFileSync(file, 'utf8')) as Sample[];
  if (!Array.isArray(samples)) throw new Error('the file is not a list of conversations');
  return samples;
}
