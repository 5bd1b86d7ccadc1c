// The import dialog's words for files of other tools (src/ui/sm-data-menu.ts): which files are
// this app's own backup, and the report line of each file.
import { describe, expect, it } from 'vitest';
import {
  exportFileName,
  fileReport,
  isBackupText,
  isMarkdownFile,
} from '../../src/ui/sm-data-menu';

describe('the import dialog', () => {
  it('knows this app’s backup by its first field, and sends other JSON to the importers', () => {
    expect(isBackupText('{\n "format": "structured-memory-backup",\n "version": 1')).toBe(true);
    expect(isBackupText('\uFEFF{"format":"structured-memory-backup"}')).toBe(true);
    expect(isBackupText('{"entries":{"0":{"uid":0}}}')).toBe(false);
    expect(isBackupText('{"user_name":"Mira"}\n{"mes":"hi"}')).toBe(false);
    expect(isMarkdownFile('chat.jsonl', '', 'not json at all')).toBe(false);
    expect(isMarkdownFile('notes.md', '', '{')).toBe(true);
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
