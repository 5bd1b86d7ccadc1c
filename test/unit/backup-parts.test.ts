// Parts of the JSON backup lifted out of its closure (src/memory/tools/backup.ts): the backup of
// stored rows, the reading of a file before anything is written, and the rows an import writes.
import { describe, expect, it } from 'vitest';
import {
  backupOf,
  backupValidator,
  chatsAlreadyHere,
  importedChunks,
  importedHistoryRow,
  parseBackup,
  type BackupMessage,
} from '../../src/memory/tools/backup';
import type { Conversation, HistoryRow, MemoryEntry, Message } from '../../src/memory/types';
import { isToolError } from '../../src/memory/validate';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const t1 = new Date('2026-02-01T00:00:00.000Z');

const entry: MemoryEntry = {
  id: 1,
  path: 'Travel/Lisbon',
  heading: 'Lisbon',
  parent_path: 'Travel',
  content: { hotel: 'Alfama' },
  contextChunks: [
    {
      turn_id: 5,
      sentence_id: 0,
      role: 'user',
      text: 'Book Alfama.',
      embedding: new Float32Array([1, 0]),
      similarity: 0.5,
      tokenCount: 3,
    },
  ],
  embedding: new Float32Array([0, 1]),
  model: 'm',
  created: t0,
  modified: t1,
  accessed: t1,
  version: 2,
  movedFrom: 'Trips/Lisbon',
};
const hist: HistoryRow = {
  id: 9,
  path: 'Travel/Lisbon',
  version: 1,
  reason: 'move',
  replaced: t1,
  entry: { ...entry, version: 1 },
  movedTo: 'Travel/Lisbon2',
};
const conv: Conversation = { id: 3, title: 'Trip', created: t0, modified: t1, named: true };
const message: Message = { id: 5, conversationId: 3, role: 'user', text: 'Book Alfama.', time: t0 };

describe('backupOf and parseBackup', () => {
  const validator = backupValidator();

  it('a backup carries no vectors and reads back as it was written', () => {
    const backup = backupOf(t1, [entry], [hist], [conv], [message]);
    const text = JSON.stringify(backup);
    expect(text).not.toContain('embedding');
    const parsed = parseBackup(text, 'merge', validator);
    if (isToolError(parsed)) throw new Error(parsed.message);
    expect(parsed.replace).toBe(false);
    expect(parsed.backup.exported).toBe(t1.toISOString());
    expect(parsed.backup.entries[0]).toMatchObject({
      path: 'Travel/Lisbon',
      content: { hotel: 'Alfama' },
      version: 2,
      movedFrom: 'Trips/Lisbon',
      created: t0.toISOString(),
    });
    expect(parsed.backup.history?.[0]).toMatchObject({ movedTo: 'Travel/Lisbon2', reason: 'move' });
    expect(parsed.backup.conversations).toEqual([
      { id: 3, title: 'Trip', created: t0.toISOString(), modified: t1.toISOString(), named: true },
    ]);
    expect(parsed.backup.messages?.[0]).toEqual({ ...message, time: t0.toISOString() });
    const replace = parseBackup(text, 'replace', validator);
    expect(!isToolError(replace) && replace.replace).toBe(true);
  });

  it('a chat or message dated out of years 0000–9999 is clamped, so the backup still reads back', () => {
    const far = new Date(1720791300000000); // year 56499
    const backup = backupOf(t1, [], [], [{ ...conv, modified: far }], [{ ...message, time: far }]);
    const parsed = parseBackup(JSON.stringify(backup), 'replace', validator);
    if (isToolError(parsed)) throw new Error(parsed.message);
    expect(parsed.backup.messages?.[0].time).toBe('9999-12-31T23:59:59.999Z');
    expect(parsed.backup.conversations?.[0].modified).toBe('9999-12-31T23:59:59.999Z');
  });

  it('refuses what is not a backup, saying nothing changed and why', () => {
    const good = JSON.stringify(backupOf(t1, [entry], [], [], []));
    const cases: [unknown, unknown, string, RegExp][] = [
      [42, 'merge', 'INVALID_ARGUMENT', /the backup must be text/],
      [good, 'append', 'INVALID_ARGUMENT', /mode must be "merge" or "replace", got "append"/],
      ['{"format":', 'merge', 'INVALID_CONTENT', /nothing changed. It is not valid JSON/],
      [
        '{"format":"x"}',
        'merge',
        'INVALID_CONTENT',
        /^The file was not imported; nothing changed\. /,
      ],
      [good.replace('"version":2', '"version":-2'), 'merge', 'INVALID_CONTENT', /nothing changed/],
      // A newer app's backup: said as such, not as a schema error.
      [
        good.replace(/"version":1,"exported"/, '"version":99,"exported"'),
        'merge',
        'INVALID_CONTENT',
        /nothing changed\. .*written by a newer version of the app \(backup format 99; this one reads up to 1\): update the app/,
      ],
    ];
    for (const [text, mode, code, message] of cases) {
      const r = parseBackup(text, mode, validator);
      expect(isToolError(r) && r.code, String(text).slice(0, 40)).toBe(code);
      expect(isToolError(r) && r.message, String(text).slice(0, 40)).toMatch(message);
    }
  });
});

describe('the rows an import writes', () => {
  it('history rows without vectors, heading and parent from their entry’s path', () => {
    const backup = backupOf(t1, [], [hist], [], []);
    const row = importedHistoryRow(backup.history![0]);
    expect(row).toMatchObject({
      path: 'Travel/Lisbon',
      version: 1,
      reason: 'move',
      replaced: t1,
      movedTo: 'Travel/Lisbon2',
    });
    expect(row.entry).toMatchObject({
      heading: 'Lisbon',
      parent_path: 'Travel',
      model: '',
      content: { hotel: 'Alfama' },
      created: t0,
    });
    expect(row.entry.embedding).toHaveLength(0);
    expect(row.entry.contextChunks[0].embedding).toHaveLength(0);
    expect(row.entry.contextChunks[0].text).toBe('Book Alfama.');
    expect('id' in row).toBe(false);
  });

  it('a top-level path has no parent', () => {
    const backup = backupOf(
      t1,
      [],
      [{ ...hist, path: 'Top', entry: { ...hist.entry, path: 'Top' } }],
      [],
      [],
    );
    const row = importedHistoryRow(backup.history![0]);
    expect(row.entry.heading).toBe('Top');
    expect(row.entry.parent_path).toBe('');
  });

  it('index rows of the messages’ sentences take the new ids and the flat run of vectors', () => {
    const msgs: BackupMessage[] = [
      { id: 10, conversationId: 3, role: 'user', text: 'A. B.', time: t0.toISOString() },
      { id: 11, conversationId: 3, role: 'assistant', text: 'C.', time: t1.toISOString() },
    ];
    const v = [new Float32Array([1]), new Float32Array([2]), new Float32Array([3])];
    const chunks = importedChunks(
      msgs,
      [['A.', 'B.'], ['C.']],
      new Map([[3, 30]]),
      new Map([
        [10, 100],
        [11, 110],
      ]),
      [1, 2, 3],
      { info: { id: 'model-x' }, vectors: v },
    );
    expect(
      chunks.map((c) => [c.conversationId, c.turnId, c.sentenceId, c.text, c.tokenCount]),
    ).toEqual([
      [30, 100, 0, 'A.', 1],
      [30, 100, 1, 'B.', 2],
      [30, 110, 0, 'C.', 3],
    ]);
    expect(chunks.map((c) => c.embedding)).toEqual(v);
    expect(chunks[2]).toMatchObject({ role: 'assistant', model: 'model-x', time: t1 });
  });
});

describe('chatsAlreadyHere', () => {
  const chat = { id: 7, title: 'Trip', created: t0.toISOString(), modified: t1.toISOString() };
  const sent: BackupMessage[] = [
    { id: 20, conversationId: 7, role: 'user', text: 'We fly on the 9th.', time: t0.toISOString() },
    { id: 21, conversationId: 7, role: 'assistant', text: 'Noted.', time: t1.toISOString() },
  ];
  const local = (id: number, created = t0): Conversation => ({
    id,
    title: 'Renamed',
    created,
    modified: t1,
  });
  const held = (conversationId: number, texts: string[]): Message[] =>
    texts.map((text, i) => ({
      id: conversationId * 100 + i,
      conversationId,
      role: i % 2 ? 'assistant' : 'user',
      text,
      time: i % 2 ? t1 : t0,
    }));
  const backup = { conversations: [chat], messages: sent };

  it('finds the chat created at the same moment that holds every message, and maps their ids', () => {
    const here = chatsAlreadyHere(
      backup,
      [local(3), local(4)],
      [...held(3, ['We fly on the 9th.']), ...held(4, ['We fly on the 9th.', 'Noted.', 'More.'])],
    );
    expect([...here]).toEqual([
      [
        7,
        {
          id: 4,
          messages: new Map([
            [20, 400],
            [21, 401],
          ]),
        },
      ],
    ]);
  });

  it('a chat created at another moment, or lacking or changing a message, is another chat', () => {
    const both = ['We fly on the 9th.', 'Noted.'];
    expect(chatsAlreadyHere(backup, [local(3, t1)], held(3, both)).size).toBe(0);
    expect(chatsAlreadyHere(backup, [local(3)], held(3, ['We fly on the 9th.'])).size).toBe(0);
    expect(chatsAlreadyHere(backup, [local(3)], held(3, [both[0], 'Noted!'])).size).toBe(0);
    // A chat without messages is here when one was created at the same moment.
    expect(chatsAlreadyHere({ conversations: [chat] }, [local(3)], []).get(7)?.id).toBe(3);
  });
});
