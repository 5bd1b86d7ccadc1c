// The page's backups without a browser (src/app/backups.ts, backup-files.ts): a finished sync
// counts as memory kept elsewhere, the automatic backup downloads where no folder was picked and
// records it, and the folder writer deletes nothing when the new file could not be written.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DAY_MS } from '../../src/app/backup-plan';
import { writeBackupFile, type BackupFolder } from '../../src/app/backup-files';
import { BACKUP_RECORD_KEY, Backups, type BackupMemory } from '../../src/app/backups';
import { DEFAULT_SETTINGS, type AppSettings } from '../../src/app/settings';
import type { MemoryChange } from '../../src/memory/types';
import type { SyncStatus } from '../../src/sync/engine';
import { unrestorableBackup } from '../../src/memory/imports/limits';

const T = Date.UTC(2026, 10, 1, 12);
const saved: MemoryChange = {
  tables: ['structured_memory'],
  entries: {
    upserted: [
      { path: 'A/B', version: 1, created: T, modified: T, accessed: T, size: 1, chunks: 0 },
    ],
    removed: [],
  },
};

function fakeMemory() {
  let onChange: (c: MemoryChange) => void = () => undefined;
  let onSync: (s: SyncStatus) => void = () => undefined;
  const memory: BackupMemory = {
    exportJson: async () => '{"format":"structured-memory-backup","version":1,"entries":[]}',
    stats: async () => ({ entries: 1, chunks: 0, conversations: 0, messages: 0, stale: 0 }),
    getSetting: async () => undefined,
    setSetting: async () => undefined,
    onMemoryChange: (l) => void (onChange = l),
    onSyncStatus: (l) => void (onSync = l),
  };
  return {
    memory,
    change: (c: MemoryChange) => onChange(c),
    sync: (lastSync: number) =>
      onSync({
        state: 'idle',
        lastSync,
        waiting: 0,
        error: null,
        received: 0,
        skipped: 0,
        conflicts: 0,
      }),
  };
}

function store() {
  const items = new Map<string, string>();
  return {
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => void items.set(k, v),
    items,
  };
}

describe('Backups', () => {
  let now = T;
  beforeEach(() => {
    vi.useFakeTimers();
    now = T;
  });
  afterEach(() => vi.useRealTimers());

  function make(settings: Partial<AppSettings> = {}) {
    const fake = fakeMemory();
    const downloads: string[] = [];
    const storage = store();
    const backups = new Backups({
      memory: fake.memory,
      settings: () => ({ ...DEFAULT_SETTINGS, ...settings }),
      wrapCallback: (f) => f,
      storage,
      now: () => now,
      download: (_text, name) => downloads.push(name),
    });
    return { backups, fake, downloads, storage };
  }

  it('reminds a week after a change, unless a sync finished since', async () => {
    const { backups, fake } = make();
    await backups.start();
    fake.change(saved);
    now += 7 * DAY_MS;
    await backups.check();
    expect(backups.state.reminder).toBe(true);

    now = T;
    const synced = make();
    await synced.backups.start();
    synced.fake.change(saved);
    synced.fake.sync(T + DAY_MS);
    now += 8 * DAY_MS;
    await synced.backups.check();
    expect(synced.backups.state.reminder).toBe(false);
  });

  it('says in the reminder line when an automatic backup failed, and why in Settings', async () => {
    const { backups, fake, downloads } = make({ autoBackup: 'weekly' });
    fake.memory.exportJson = async () =>
      ({ status: 'ERROR', code: 'X', message: 'disk gone' }) as never;
    await backups.start();
    expect(downloads).toEqual([]);
    expect(backups.state.autoFailed).toBe(true);
    expect(backups.state.message).toEqual({
      kind: 'error',
      text: 'The backup failed: disk gone. Your memory is unchanged; press Back up now to try again.',
    });
    backups.dismissReminder();
    expect(backups.state.autoFailed).toBe(false);
  });

  it('downloads the automatic backup when no folder was picked, and records it', async () => {
    const { backups, downloads, storage } = make({ autoBackup: 'daily' });
    await backups.start();
    expect(downloads).toHaveLength(1);
    expect(downloads[0]).toMatch(/^structured-memory-backup-2026-11-01-\d{6}\.json$/);
    expect(JSON.parse(storage.items.get(BACKUP_RECORD_KEY)!)).toMatchObject({
      lastBackup: T,
      lastAuto: T,
    });
    // Not again the same day, nor a day later when nothing changed.
    now += DAY_MS;
    await backups.check();
    expect(downloads).toHaveLength(1);
  });
});

describe('a backup larger than Import takes', () => {
  it('is written, and the person is told it cannot be restored here as it is', async () => {
    const fake = fakeMemory();
    const big = `{"format":"structured-memory-backup","version":1,"x":"${'x'.repeat(65 * 1024 * 1024)}"}`;
    fake.memory.exportJson = async () => big;
    const downloads: string[] = [];
    const backups = new Backups({
      memory: fake.memory,
      settings: () => ({ ...DEFAULT_SETTINGS, autoBackup: 'daily' }),
      wrapCallback: (f) => f,
      storage: store(),
      now: () => T,
      download: (_text, name) => downloads.push(name),
    });
    await backups.backUpNow();
    expect(downloads).toHaveLength(1);
    expect(backups.state.message).toEqual({
      kind: 'error',
      text: expect.stringMatching(
        /^Backed up as the download .*\. This backup is 65 MB, more than Import takes at once \(64 MB\), so it cannot be restored here as it is\./,
      ),
    });
    // One Import takes stays quiet.
    expect(unrestorableBackup('{"entries":[]}')).toBeUndefined();
  });
});

describe('writeBackupFile', () => {
  function folder(failWrite: boolean) {
    const files = new Set([
      'structured-memory-backup-2020-01-01-000000.json',
      'structured-memory-backup-2020-01-02-000000.json',
      'mine.json',
    ]);
    const f: BackupFolder = {
      name: 'b',
      async getFileHandle(name) {
        return {
          createWritable: async () => ({
            write: async () => {
              if (failWrite) throw new DOMException('full', 'QuotaExceededError');
              files.add(name);
            },
            close: async () => undefined,
            abort: async () => undefined,
          }),
        } as unknown as FileSystemFileHandle;
      },
      removeEntry: async (name) => void files.delete(name),
      async *keys() {
        yield* [...files];
      },
    };
    return { f, files };
  }

  it('keeps the newest of its own files and the person’s', async () => {
    const { f, files } = folder(false);
    const deleted = await writeBackupFile(
      f,
      'structured-memory-backup-2026-01-01-000000.json',
      '{}',
      2,
    );
    expect(deleted).toEqual(['structured-memory-backup-2020-01-01-000000.json']);
    expect([...files].sort()).toEqual([
      'mine.json',
      'structured-memory-backup-2020-01-02-000000.json',
      'structured-memory-backup-2026-01-01-000000.json',
    ]);
  });

  it('deletes nothing when the new file could not be written', async () => {
    const { f, files } = folder(true);
    await expect(
      writeBackupFile(f, 'structured-memory-backup-2026-01-01-000000.json', '{}', 1),
    ).rejects.toThrow('full');
    expect(files.size).toBe(3);
  });
});
