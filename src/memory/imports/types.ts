// What the importers of other tools' files (docs/import-export.md) hand to the engine: chats and
// entries as plain data, parsed by pure functions and written by src/memory/tools/foreign.ts.
import type { JsonValue, Role } from '../types';

/** One message of an imported chat. */
export interface ImportedMessage {
  role: Role;
  text: string;
  time: Date;
  /** Who said it, as the other tool named them. */
  speaker?: string;
  /**
   * Every alternative of a reply (SillyTavern's swipes), `text` among them at `shown`; absent
   * when there was one.
   */
  alternatives?: { text: string; time: Date }[];
  shown?: number;
}

/** One imported chat: its messages oldest first. */
export interface ImportedChat {
  title: string;
  created: Date;
  messages: ImportedMessage[];
}

/**
 * An entry to write: under `heading`, named `name` (both already valid path parts; the writer
 * numbers the name when the path is taken by other content), or at `path` exactly (a file this
 * app exported).
 */
export type PlannedEntry =
  { heading: string; name: string; content: JsonValue } | { path: string; content: JsonValue };

/** A line or item left out of an import, with why. */
export interface SkippedItem {
  /** 1-based line of a line-based file, or the item's place. */
  where: string;
  reason: string;
}

export type ForeignKind = 'sillytavern-chat' | 'lorebook' | 'character' | 'kobold';

/** A file read: what it holds, or why it cannot be imported (`message`, a plain sentence). */
export type ParsedFile =
  | {
      ok: true;
      kind: ForeignKind;
      chats: ImportedChat[];
      entries: PlannedEntry[];
      skipped: SkippedItem[];
    }
  | { ok: false; message: string };
