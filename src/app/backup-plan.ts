// What the backups decide, as pure functions (docs/settings.md, "Backups"): when memory counts as
// kept elsewhere, when the reminder shows, when an automatic backup is due, what its files are
// called and which of them to delete. The I/O around them is in backups.ts and backup-files.ts.

import type { MemoryChange } from '../memory/types';

export const DAY_MS = 86_400_000;
/** How long memory may go changed and not kept elsewhere before the reminder shows. */
export const REMIND_AFTER_MS = 7 * DAY_MS;

export type AutoBackup = 'off' | 'daily' | 'weekly';

/** How often an automatic backup is written, per setting. */
export const AUTO_BACKUP_PERIOD_MS: Record<Exclude<AutoBackup, 'off'>, number> = {
  daily: DAY_MS,
  // A little under a week, so that a backup at 9:00 is not skipped for one at 9:05 a week later.
  weekly: 7 * DAY_MS - 60 * 60 * 1000,
};

/** How many automatic backup files the folder keeps (the setting's choices). */
export const KEEP_CHOICES = [3, 7, 14, 30] as const;

/** What this device remembers about its backups (ms since epoch, or null for never). */
export interface BackupRecord {
  /** The last export of all memory or backup, by hand or automatic. */
  lastBackup: number | null;
  /** The last automatic backup. */
  lastAuto: number | null;
  /** The first change to memory since it was last kept elsewhere (backup or sync). */
  lastChange: number | null;
  /** When the reminder was last dismissed. */
  dismissedAt: number | null;
  /** When the browser was last asked to keep memory (`navigator.storage.persist()`). */
  persistAskedAt: number | null;
}

export const EMPTY_RECORD: BackupRecord = {
  lastBackup: null,
  lastAuto: null,
  lastChange: null,
  dismissedAt: null,
  persistAskedAt: null,
};

/** A stored record read back; anything malformed counts as never. */
export function normaliseRecord(stored: unknown): BackupRecord {
  const out: BackupRecord = { ...EMPTY_RECORD };
  if (!stored || typeof stored !== 'object') return out;
  for (const key of Object.keys(EMPTY_RECORD) as (keyof BackupRecord)[]) {
    const v = (stored as Record<string, unknown>)[key];
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) out[key] = v;
  }
  return out;
}

/**
 * What a change report of the memory worker means for backups: `changed`, something a backup
 * would hold changed (an entry, a message, history, a deleted chat; not an empty new chat or
 * the report of all tables a database open sends); `saved`, an entry was saved.
 */
export function memoryChangeKind(c: MemoryChange): { changed: boolean; saved: boolean } {
  const saved = (c.entries?.upserted.length ?? 0) > 0;
  const changed =
    saved ||
    (c.entries?.removed.length ?? 0) > 0 ||
    (c.messages?.ids.length ?? 0) > 0 ||
    (c.history?.paths.length ?? 0) > 0 ||
    (c.conversations?.removed.length ?? 0) > 0;
  return { changed, saved };
}

/** When memory was last kept elsewhere: the later of the last backup and the last sync. */
export function lastKept(record: BackupRecord, lastSync: number | null): number | null {
  const times = [record.lastBackup, lastSync].filter((t): t is number => t !== null);
  return times.length ? Math.max(...times) : null;
}

/** Whether memory changed since it was last kept elsewhere. */
export function changedSinceKept(record: BackupRecord, lastSync: number | null): boolean {
  const kept = lastKept(record, lastSync);
  return record.lastChange !== null && (kept === null || record.lastChange > kept);
}

/**
 * The record after memory changed at `at`. Only the first change after memory was kept is
 * written down (what the reminder counts from), so a busy chat does not write on every turn.
 */
export function noteChange(
  record: BackupRecord,
  lastSync: number | null,
  at: number,
): BackupRecord {
  return changedSinceKept(record, lastSync) ? record : { ...record, lastChange: at };
}

/**
 * Whether the reminder shows: memory changed, and for a week nothing was exported, backed up or
 * synced (counted from the last of those, or from the change when there was none), and it was
 * not dismissed in the last week.
 */
export function reminderDue(
  record: BackupRecord,
  lastSync: number | null,
  now: number,
  enabled: boolean,
): boolean {
  if (!enabled || !changedSinceKept(record, lastSync)) return false;
  const since = lastKept(record, lastSync) ?? record.lastChange!;
  if (now - since < REMIND_AFTER_MS) return false;
  return record.dismissedAt === null || now - record.dismissedAt >= REMIND_AFTER_MS;
}

/**
 * Whether an automatic backup is due: never written yet, or its period has passed since the
 * last one and memory changed since (an unchanged memory would only push older copies out).
 */
export function autoBackupDue(record: BackupRecord, setting: AutoBackup, now: number): boolean {
  if (setting === 'off') return false;
  if (record.lastAuto === null) return true;
  if (now - record.lastAuto < AUTO_BACKUP_PERIOD_MS[setting]) return false;
  return record.lastChange !== null && record.lastChange > record.lastAuto;
}

const AUTO_NAME = /^structured-memory-backup-\d{4}-\d{2}-\d{2}-\d{6}\.json$/;

/** An automatic backup's file name, local time to the second: sorts by name as by time. */
export function autoBackupName(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  const time = `${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}`;
  return `structured-memory-backup-${day}-${time}.json`;
}

/** Whether a file in the backup folder is one the automatic backup wrote (by its name). */
export function isAutoBackupName(name: string): boolean {
  return AUTO_NAME.test(name);
}

/**
 * Which files of the backup folder to delete so that the newest `keep` automatic backups stay.
 * Only names the automatic backup writes are ever listed; the person's own files stay.
 */
export function backupsToDelete(names: readonly string[], keep: number): string[] {
  const ours = names.filter(isAutoBackupName).sort().reverse();
  return ours.slice(Math.max(1, Math.floor(keep)));
}

/** "today", "yesterday", "3 days ago", or "never": how long ago `then` was, in whole days. */
export function daysAgo(then: number | null, now: number): string {
  if (then === null) return 'never';
  const startOfDay = (t: number) => {
    const d = new Date(t);
    return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  };
  const days = Math.round((startOfDay(now) - startOfDay(then)) / DAY_MS);
  if (days <= 0) return 'today';
  if (days === 1) return 'yesterday';
  return `${days} days ago`;
}
