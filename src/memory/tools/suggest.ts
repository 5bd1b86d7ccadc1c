// Where a person's "Remember this" goes (docs/chat.md): under the heading whose entries the text
// matches best (by the one ranking function, at or above MIN_RELEVANCE), else under Notes, with a
// short name made from the text that no entry or heading holds yet. The tool reads the entry
// index; the choices are the pure functions below.
import { ENGLISH_STOP_WORDS } from '../lexical/stop-words';
import { parentOf, parsePath } from '../paths';
import { MIN_RELEVANCE } from '../ranking';
import { titleFromMessage } from '../replies';
import { searchEntries, type EntryQuery } from '../search';
import type { StoreContext } from '../store';
import type { SuggestResult, ToolError } from '../types';
import { isToolError, short, toolError } from '../validate';

/** Where a text goes when no heading's entries match it. */
export const DEFAULT_HEADING = 'Notes';
/** The name given when the text has no words at all. */
export const DEFAULT_NAME = 'Note';
/** Words a proposed name keeps at most. */
export const NAME_WORDS = 4;
/** Characters a proposed name keeps at most (before a number is added). */
export const NAME_CHARS = 40;
/** Text the match is measured on: the start of a long message says what it is about. */
const QUERY_CHARS = 2000;
/** Numbers tried (`name 2`, `name 3`…) before a heading is given up. */
const MAX_NUMBER = 10_000;

export function suggestTools(ctx: StoreContext) {
  const { now, embed, entries, guard } = ctx;

  /** A path for `text`: `{ path, heading, basis }`, `basis` saying whether a match chose it. */
  async function suggestMemoryPath(textIn: unknown): Promise<SuggestResult | ToolError> {
    return guard(async () => {
      if (typeof textIn !== 'string' || !textIn.trim()) {
        return toolError(
          'INVALID_ARGUMENT',
          `text must be the words to remember, got ${short(textIn)}`,
        );
      }
      const text = textIn.trim().slice(0, QUERY_CHARS);
      const emb = await embed([text]);
      // Without a model the words alone still find a heading.
      const q: EntryQuery = isToolError(emb)
        ? { text, signals: 'lexical' }
        : { text, vector: emb.vectors[0], info: emb.info };
      const idx = await entries({ waitForModel: !isToolError(emb) });
      const hits = searchEntries(idx, idx.subtree(''), q, now(), 0);
      // An entry counts by its own match; its heading's evidence then ranks the headings.
      const matches = headingMatches(
        hits
          .filter((h) => h.ownMatch >= MIN_RELEVANCE)
          .map((h) => ({ path: h.ref.path, match: h.match })),
      );
      return suggestPath(matches, text, (path) => idx.exists(path));
    });
  }

  return { suggestMemoryPath };
}

/** A heading and the match of its best entry. */
export interface HeadingMatch {
  heading: string;
  match: number;
}

/**
 * The headings of the entries that match at or above `min`, each with its best entry's match,
 * best first. An entry at the top level has no heading (the root is not one to save under).
 */
export function headingMatches(
  hits: readonly { path: string; match: number }[],
  min = MIN_RELEVANCE,
): HeadingMatch[] {
  const best = new Map<string, number>();
  for (const { path, match } of hits) {
    const heading = parentOf(path);
    if (heading === '' || !(match >= min)) continue;
    const before = best.get(heading);
    if (before === undefined || match > before) best.set(heading, match);
  }
  return [...best]
    .map(([heading, match]) => ({ heading, match }))
    .sort((a, b) => b.match - a.match || a.heading.localeCompare(b.heading));
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;

/**
 * A short name for `text`: the meaningful words of its first line with words (stop words, and
 * words the heading's path already says, left out; all its words if none is left), at most
 * NAME_WORDS and about NAME_CHARS characters, each starting with a capital. Letters and digits
 * only, so it is always one valid path segment. DEFAULT_NAME when the text has no words.
 */
export function memoryName(text: string, heading = ''): string {
  const words = titleFromMessage(text).match(WORD) ?? [];
  if (!words.length) return DEFAULT_NAME;
  const key = (w: string) => w.toLowerCase().replace(/’/g, "'");
  const said = new Set((heading.match(WORD) ?? []).map(key));
  const meaningful = words.filter((w) => !ENGLISH_STOP_WORDS.has(key(w)) && !said.has(key(w)));
  const picked: string[] = [];
  let chars = 0;
  for (const w of meaningful.length ? meaningful : words) {
    if (picked.length === NAME_WORDS) break;
    const word = capitalise(w).slice(0, NAME_CHARS);
    if (picked.length && chars + 1 + word.length > NAME_CHARS) break;
    picked.push(word);
    chars += (picked.length > 1 ? 1 : 0) + word.length;
  }
  return picked.join(' ');
}

function capitalise(word: string): string {
  const [first = '', ...rest] = word;
  return first.toLocaleUpperCase() + rest.join('');
}

/**
 * `heading/name`, or `heading/name 2`, `name 3`… when `taken` says a path is an entry or a
 * heading already. Undefined when no valid path can be made there (the heading is as deep or as
 * long as a path may be).
 */
export function freePath(
  heading: string,
  name: string,
  taken: (path: string) => boolean,
): string | undefined {
  for (let n = 1; n <= MAX_NUMBER; n++) {
    const parsed = parsePath(`${heading}/${n === 1 ? name : `${name} ${n}`}`, { naming: true });
    if (!parsed.ok) return undefined;
    if (!taken(parsed.path)) return parsed.path;
  }
  return undefined;
}

/**
 * The proposal: a free path under the best matching heading that can take one, else under
 * DEFAULT_HEADING.
 */
export function suggestPath(
  matches: readonly HeadingMatch[],
  text: string,
  taken: (path: string) => boolean,
): SuggestResult {
  for (const { heading } of matches) {
    const path = freePath(heading, memoryName(text, heading), taken);
    if (path !== undefined) return { status: 'SUCCESS', path, heading, basis: 'match' };
  }
  const name = memoryName(text, DEFAULT_HEADING);
  return {
    status: 'SUCCESS',
    // Ten thousand notes of one name: the person sees the path and can change it.
    path: freePath(DEFAULT_HEADING, name, taken) ?? `${DEFAULT_HEADING}/${name}`,
    heading: DEFAULT_HEADING,
    basis: 'default',
  };
}
