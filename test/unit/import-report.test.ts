// The import dialog's words for files of other tools (src/ui/sm-data-menu.ts): which files are
// this app's own backup, and the report line of each file.
import { describe, expect, it } from 'vitest';
import {
  exportFileName,
  fileReport,
  isBackupText,
  isMarkdownFile,
} from '../../src/ui/sm-data-menu';
import {
  MAX_FOREIGN_FILE_BYTES,
  MAX_OWN_FILE_BYTES,
  fileSizeRefusal,
} from '../../src/memory/imports/limits';

describe('the import dialog', () => {
  it('knows this app’s backup by its format field, and sends other JSON to the importers', () => {
    expect(isBackupText('{\n "format": "structured-memory-backup",\n "version": 1')).toBe(true);
    expect(isBackupText('\uFEFF{"format":"structured-memory-backup"}')).toBe(true);
    // Its keys sorted by a tool (jq -S): the format comes after the entries.
    const sorted =
      '{"conversations":[],"entries":[],"format":"structured-memory-backup","version":1}';
    expect(isBackupText(sorted)).toBe(true);
    expect(isBackupText(`\uFEFF${sorted}`)).toBe(true);
    // The words in another tool's file, not as its format: not a backup.
    expect(isBackupText('{"mes":"my structured-memory-backup","format":"other"}')).toBe(false);
    expect(isBackupText('{"notes":{"format":"structured-memory-backup"}}')).toBe(false);
    expect(isBackupText('{"entries":{"0":{"uid":0}}}')).toBe(false);
    expect(isBackupText('{"user_name":"Mira"}\n{"mes":"hi"}')).toBe(false);
    expect(isMarkdownFile('chat.jsonl', '', 'not json at all')).toBe(false);
    expect(isMarkdownFile('notes.md', '', '{')).toBe(true);
  });

  it('refuses a file over its kind’s limit before reading it, in a sentence with both sizes', () => {
    const GB = 1024 * 1024 * 1024;
    expect(fileSizeRefusal('backup.json', MAX_OWN_FILE_BYTES, true)).toBeUndefined();
    expect(fileSizeRefusal('backup.json', 3 * GB, true)).toBe(
      'Nothing was imported; nothing changed. backup.json is 3072 MB: a backup or Markdown file of this app is imported up to 64 MB at a time, as much as a browser tab can hold while it reads and indexes it. Split it into smaller files (in a backup, each chat with its messages) and import them one after the other.',
    );
    // Another tool's file keeps its own, lower limit.
    expect(fileSizeRefusal('chat.jsonl', MAX_FOREIGN_FILE_BYTES, false)).toBeUndefined();
    expect(fileSizeRefusal('chat.jsonl', MAX_FOREIGN_FILE_BYTES + 1, false)).toMatch(
      /^Nothing was imported; nothing changed\. chat\.jsonl is 32 MB: a file from another tool is imported up to 32 MB/,
    );
  });

  it('reports a chat, entries, what was there already and what was left out', () => {
    expect(
      fileReport('a.jsonl', {
        status: 'SUCCESS',
        kind: 'sillytavern-chat',
        chats: [{ id: 3, title: 'Seraphina · 2024-07-12', messages: 1 }],
        entries: [],
        unchanged: 0,
        skipped: [
          { where: 'line 3', reason: 'left out (it is not JSON; the file may be cut short)' },
        ],
      }),
    ).toEqual({
      file: 'a.jsonl',
      ok: true,
      text: 'Imported the chat “Seraphina · 2024-07-12” (1 message).',
      chats: [{ id: 3, title: 'Seraphina · 2024-07-12' }],
      details: ['Line 3: left out (it is not JSON; the file may be cut short)'],
    });
    const book = { status: 'SUCCESS' as const, kind: 'lorebook' as const, chats: [], skipped: [] };
    expect(fileReport('w.json', { ...book, entries: ['A/B'], unchanged: 2 }).text).toBe(
      'Imported 1 entry; 2 entries were there already.',
    );
    expect(fileReport('w.json', { ...book, entries: [], unchanged: 2 }).text).toBe(
      'Nothing new: 2 entries were there already.',
    );
    expect(
      fileReport('a.jsonl', { ...book, entries: [], unchanged: 0, duplicate: true }).text,
    ).toBe('Imported before: nothing was added.');
    expect(
      fileReport('x.png', { status: 'ERROR', code: 'INVALID_CONTENT', message: 'No card.' }),
    ).toEqual({ file: 'x.png', ok: false, text: 'No card.', details: [] });
  });

  it('names a lorebook export so that SillyTavern calls the world after it', () => {
    const day = new Date(2026, 0, 2);
    expect(exportFileName('json', day, undefined, true)).toBe(
      'structured-memory-lorebook-2026-01-02.json',
    );
    expect(exportFileName('json', day, 'Lorebook/Eldoria', true)).toBe(
      'structured-memory-lorebook-Lorebook-Eldoria-2026-01-02.json',
    );
  });
});
