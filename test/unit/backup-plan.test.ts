// The backups' decisions (src/app/backup-plan.ts) and the storage words (storage-status.ts).
import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  EMPTY_RECORD,
  autoBackupDue,
  autoBackupName,
  backupsToDelete,
  daysAgo,
  isAutoBackupName,
  memoryChangeKind,
  normaliseRecord,
  noteChange,
  reminderDue,
} from '../../src/app/backup-plan';
import { normaliseSettings } from '../../src/app/settings';
import {
  browserFamily,
  formatBytes,
  storageAdvice,
  usageLine,
  type StorageStatus,
} from '../../src/app/storage-status';

const T = new Date(2026, 10, 20, 12, 0, 0).getTime();

describe('the backup reminder', () => {
  it('shows a week after the first change when memory was never kept elsewhere', () => {
    const r = noteChange(EMPTY_RECORD, null, T);
    expect(reminderDue(r, null, T + 7 * DAY_MS - 1, true)).toBe(false);
    expect(reminderDue(r, null, T + 7 * DAY_MS, true)).toBe(true);
    expect(reminderDue(r, null, T + 7 * DAY_MS, false)).toBe(false);
  });

  it('counts from the last backup or sync, and only when memory changed since', () => {
    const backedUp = { ...EMPTY_RECORD, lastBackup: T };
    expect(reminderDue(backedUp, null, T + 30 * DAY_MS, true)).toBe(false);
    const changed = noteChange(backedUp, null, T + DAY_MS);
    expect(changed.lastChange).toBe(T + DAY_MS);
    expect(reminderDue(changed, null, T + 7 * DAY_MS, true)).toBe(true);
    // A sync after the change keeps it elsewhere.
    expect(reminderDue(changed, T + 2 * DAY_MS, T + 8 * DAY_MS, true)).toBe(false);
  });

  it('writes down only the first change after memory was kept', () => {
    const r = noteChange(EMPTY_RECORD, null, T);
    expect(noteChange(r, null, T + 5)).toBe(r);
    // Synced since: the next change starts a new count.
    expect(noteChange(r, T + 10, T + 20).lastChange).toBe(T + 20);
  });

  it('stays hidden for a week after Dismiss', () => {
    const r = { ...noteChange(EMPTY_RECORD, null, T), dismissedAt: T + 8 * DAY_MS };
    expect(reminderDue(r, null, T + 14 * DAY_MS, true)).toBe(false);
    expect(reminderDue(r, null, T + 15 * DAY_MS, true)).toBe(true);
  });

  it('reads a broken stored record as never', () => {
    expect(normaliseRecord({ lastBackup: 'x', lastChange: -1, lastAuto: T })).toEqual({
      ...EMPTY_RECORD,
      lastAuto: T,
    });
    expect(normaliseRecord(null)).toEqual(EMPTY_RECORD);
  });
});

describe('the automatic backup', () => {
  it('is due at once, then after its period when memory changed', () => {
    expect(autoBackupDue(EMPTY_RECORD, 'off', T)).toBe(false);
    expect(autoBackupDue(EMPTY_RECORD, 'daily', T)).toBe(true);
    const done = { ...EMPTY_RECORD, lastAuto: T, lastChange: T - 1 };
    expect(autoBackupDue(done, 'daily', T + 2 * DAY_MS)).toBe(false); // nothing changed
    const changed = { ...done, lastChange: T + 1 };
    expect(autoBackupDue(changed, 'daily', T + DAY_MS - 1)).toBe(false);
    expect(autoBackupDue(changed, 'daily', T + DAY_MS)).toBe(true);
    expect(autoBackupDue(changed, 'weekly', T + 6 * DAY_MS)).toBe(false);
    expect(autoBackupDue(changed, 'weekly', T + 7 * DAY_MS)).toBe(true);
  });

  it('names its files by time and deletes only its own beyond the number kept', () => {
    const name = autoBackupName(new Date(2026, 0, 2, 3, 4, 5));
    expect(name).toBe('structured-memory-backup-2026-01-02-030405.json');
    expect(isAutoBackupName(name)).toBe(true);
    expect(isAutoBackupName('structured-memory-2026-01-02.json')).toBe(false);
    const names = [
      'structured-memory-backup-2026-01-03-000000.json',
      'notes.txt',
      'structured-memory-backup-2026-01-01-000000.json',
      'structured-memory-2026-01-01.json',
      'structured-memory-backup-2026-01-02-000000.json',
    ];
    expect(backupsToDelete(names, 2)).toEqual(['structured-memory-backup-2026-01-01-000000.json']);
    expect(backupsToDelete(names, 0)).toHaveLength(2); // the newest always stays
  });

  it('says how long ago in days', () => {
    expect(daysAgo(null, T)).toBe('never');
    expect(daysAgo(T - 60_000, T)).toBe('today');
    expect(daysAgo(T - DAY_MS, T)).toBe('yesterday');
    expect(daysAgo(T - 9 * DAY_MS, T)).toBe('9 days ago');
  });

  it('keeps the backup settings valid', () => {
    const s = normaliseSettings({ autoBackup: 'hourly', backupKeep: 5, backupReminder: false });
    expect(s.autoBackup).toBe('off');
    expect(s.backupKeep).toBe(7);
    expect(s.backupReminder).toBe(false);
    expect(normaliseSettings({ autoBackup: 'weekly', backupKeep: 14 })).toMatchObject({
      autoBackup: 'weekly',
      backupKeep: 14,
    });
  });
});

describe('storage in words', () => {
  const base: StorageStatus = { supported: true, persisted: false, usage: 2_300_000, quota: 1e11 };

  it('says what not being kept means in each browser, and what to do', () => {
    const safari = storageAdvice(base, 'safari', false);
    expect(safari.advice.join(' ')).toMatch(/7 days.*Add to Home Screen/);
    expect(storageAdvice(base, 'chromium', false).advice.join(' ')).toMatch(/install/);
    expect(storageAdvice(base, 'firefox', false).advice.join(' ')).toMatch(/Allow/);
    for (const f of ['safari', 'firefox', 'chromium', 'other'] as const)
      expect(storageAdvice(base, f, false).advice.at(-1)).toMatch(/Sync.*backups/);
  });

  it('says when memory is kept, and when the browser does not say', () => {
    expect(storageAdvice({ ...base, persisted: true }, 'chromium', false)).toEqual({
      status: expect.stringMatching(/^Kept/),
      advice: [],
    });
    const none = storageAdvice(
      { supported: false, persisted: undefined, usage: undefined, quota: undefined },
      'other',
      false,
    );
    expect(none.status).toMatch(/does not say/);
    expect(none.advice).toHaveLength(1);
  });

  it('gives usage and what is free', () => {
    expect(usageLine(base)).toBe('2.3 MB used, about 100 GB free for this site.');
    expect(usageLine({ ...base, quota: undefined })).toBe('2.3 MB used.');
    expect(usageLine({ ...base, usage: undefined })).toBeUndefined();
    expect(formatBytes(812)).toBe('812 B');
  });

  it('tells the browser family from the user agent', () => {
    const safari =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
    expect(browserFamily(safari)).toBe('safari');
    expect(
      browserFamily('Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'),
    ).toBe('firefox');
    expect(browserFamily('x', ['Chromium', 'Not.A/Brand'])).toBe('chromium');
  });
});

describe('what counts as a change of memory', () => {
  it('counts entries, messages, history and deleted chats, not an empty new chat or a database open', () => {
    const entry = {
      path: 'A/B',
      version: 1,
      created: 1,
      modified: 1,
      accessed: 1,
      size: 1,
      chunks: 0,
    };
    expect(
      memoryChangeKind({
        tables: ['structured_memory'],
        entries: { upserted: [entry], removed: [] },
      }),
    ).toEqual({ changed: true, saved: true });
    expect(
      memoryChangeKind({
        tables: ['history', 'structured_memory'],
        entries: { upserted: [], removed: ['A/B'] },
        history: { paths: ['A/B'] },
      }),
    ).toEqual({ changed: true, saved: false });
    expect(memoryChangeKind({ tables: ['messages'], messages: { ids: [3] } }).changed).toBe(true);
    expect(
      memoryChangeKind({
        tables: ['conversations'],
        conversations: {
          upserted: [{ id: 1, title: 'New chat', created: new Date(), modified: new Date() }],
          removed: [],
        },
      }).changed,
    ).toBe(false);
    expect(
      memoryChangeKind({
        tables: [
          'structured_memory',
          'conversations',
          'messages',
          'chunks',
          'history',
          'settings',
          'shards',
        ],
        entries: { upserted: [], removed: [] },
      }),
    ).toEqual({ changed: false, saved: false });
  });
});
