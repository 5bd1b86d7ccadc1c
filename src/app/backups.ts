// The page's backups and storage (docs/settings.md, "Storage the browser keeps" and "Backups"):
// asks the browser to keep memory after a save, follows when memory changed and when it was last
// exported, backed up or synced, says when the reminder shows, and writes the automatic backup
// when it is due (to the folder the person picked, or as a download). The decisions are the pure
// functions of backup-plan.ts; what this device remembers is kept in localStorage (per browser
// profile, never synced), the picked folder's handle in the memory database's settings table.
import { proxy } from 'comlink';
import type { MemoryChange, MemoryStats, ToolError } from '../memory/types';
import type { SyncStatus } from '../sync/engine';
import {
  DAY_MS,
  EMPTY_RECORD,
  REMIND_AFTER_MS,
  autoBackupDue,
  autoBackupName,
  memoryChangeKind,
  noteChange,
  normaliseRecord,
  reminderDue,
  type BackupRecord,
} from './backup-plan';
import {
  askFolderPermission,
  downloadFile,
  folderPermission,
  folderPicker,
  writeBackupFile,
  type BackupFolder,
} from './backup-files';
import { unrestorableBackup } from '../memory/imports/limits';
import type { AppSettings, NoticeStorage } from './settings';
import {
  UNKNOWN_STORAGE,
  readStorageStatus,
  storageApi,
  type StorageStatus,
} from './storage-status';

/** localStorage key of the record (per browser profile). */
export const BACKUP_RECORD_KEY = 'sm-backups';
/** Settings-table key of the picked folder's handle (this device only: sync leaves it). */
export const BACKUP_FOLDER_KEY = 'backupFolder';
/** How often an open page looks whether a backup or the reminder is due. */
const CHECK_EVERY_MS = 30 * 60 * 1000;

/** What Settings → Data, the reminder and the Export menu show. */
export interface BackupState {
  record: BackupRecord;
  /** When a sync last finished (this device), or null. */
  lastSync: number | null;
  storage: StorageStatus;
  /** The browser can write to a folder the person picks. */
  folderSupported: boolean;
  /** The picked folder, and whether the app may write to it now. */
  folder: { name: string; permission: PermissionState } | undefined;
  /** A backup is being written. */
  running: boolean;
  /** What the last backup did or why it failed, in a sentence. */
  message: { kind: 'info' | 'error'; text: string } | undefined;
  /** The reminder shows. */
  reminder: boolean;
  /** An automatic backup is due but the folder needs permission again (from a click). */
  waitingForFolder: boolean;
  /** The last automatic backup failed (the reason is `message`); it is tried again. */
  autoFailed: boolean;
}

/** The memory worker calls this needs. */
export interface BackupMemory {
  exportJson(): Promise<string | ToolError>;
  stats(): Promise<MemoryStats>;
  getSetting(key: string): Promise<unknown>;
  setSetting(key: string, value: unknown): Promise<void>;
  onMemoryChange(listener: (change: MemoryChange) => void): Promise<void> | void;
  onSyncStatus(listener: (status: SyncStatus) => void): Promise<void> | void;
}

export interface BackupsOptions {
  memory: BackupMemory;
  /** The app's settings once loaded (undefined before). */
  settings: () => AppSettings | undefined;
  /** Wraps a callback the worker calls (Comlink's `proxy`, the default). */
  wrapCallback?: <F extends (...args: never[]) => unknown>(fn: F) => F;
  /** Where the record is kept (default localStorage). */
  storage?: NoticeStorage;
  now?: () => number;
  /** Saves a file as a download (default: through an anchor). */
  download?: (text: string, name: string) => void;
}

function defaultStorage(): NoticeStorage | undefined {
  try {
    return globalThis.localStorage ?? undefined;
  } catch {
    return undefined;
  }
}

function isToolError(v: unknown): v is ToolError {
  return typeof v === 'object' && v !== null && (v as ToolError).status === 'ERROR';
}

export class Backups {
  private readonly memory: BackupMemory;
  private readonly settings: () => AppSettings | undefined;
  private readonly wrap: <F extends (...args: never[]) => unknown>(fn: F) => F;
  private readonly storage: NoticeStorage | undefined;
  private readonly now: () => number;
  private readonly download: (text: string, name: string) => void;
  private readonly listeners = new Set<() => void>();
  private folderHandle: BackupFolder | undefined;
  /** Record kept in this page when localStorage is refused. */
  private fallbackRecord: BackupRecord = EMPTY_RECORD;
  private current: BackupState;
  private started = false;
  private storageRefused = false;
  private lastSettings: string | undefined;

  constructor(options: BackupsOptions) {
    this.memory = options.memory;
    this.settings = options.settings;
    this.wrap = options.wrapCallback ?? proxy;
    this.storage = options.storage ?? defaultStorage();
    this.now = options.now ?? Date.now;
    this.download = options.download ?? downloadFile;
    this.current = {
      record: this.readRecord(),
      lastSync: null,
      storage: UNKNOWN_STORAGE,
      folderSupported: folderPicker() !== undefined,
      folder: undefined,
      running: false,
      message: undefined,
      reminder: false,
      waitingForFolder: false,
      autoFailed: false,
    };
  }

  get state(): Readonly<BackupState> {
    return this.current;
  }

  /** Calls `listener` after each change of `state`; returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Follows memory changes and sync, reads the storage status and the folder, and checks. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    void this.memory.onMemoryChange(this.wrap((change: MemoryChange) => this.handleChange(change)));
    void this.memory.onSyncStatus(
      this.wrap((status: SyncStatus) => {
        if (status.lastSync !== this.current.lastSync) this.set({ lastSync: status.lastSync });
      }),
    );
    globalThis.addEventListener?.('storage', (e: StorageEvent) => {
      if (e.key === BACKUP_RECORD_KEY) this.set({ record: this.readRecord() });
    });
    globalThis.addEventListener?.('appinstalled', () => void this.askToKeep());
    globalThis.document?.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') void this.check();
    });
    setInterval(() => void this.check(), CHECK_EVERY_MS);
    await Promise.all([this.refreshStorage(), this.loadFolder()]);
    // Memory kept from before this device counted changes: the reminder counts from today.
    const r = this.readRecord();
    if (r.lastChange === null && r.lastBackup === null) {
      const stats = await this.memory.stats().catch(() => undefined);
      if (stats && stats.entries + stats.messages > 0)
        this.updateRecord((rec) => noteChange(rec, this.current.lastSync, this.now()));
    }
    await this.check();
  }

  /** The app's settings changed: the reminder and the automatic backup follow at once. */
  settingsChanged(): void {
    const s = this.settings();
    const key = s ? `${s.backupReminder}|${s.autoBackup}|${s.backupKeep}` : undefined;
    if (key === this.lastSettings) return;
    this.lastSettings = key;
    void this.check();
  }

  /** Reads what the browser says about storage now. */
  async refreshStorage(): Promise<void> {
    this.set({ storage: await readStorageStatus() });
  }

  /**
   * Asks the browser to keep memory (`navigator.storage.persist()`): after a save, on install,
   * or from Settings. Chromium answers at once by its own rules; Firefox asks the person.
   */
  async askToKeep(): Promise<void> {
    const api = storageApi();
    if (!api || typeof api.persist !== 'function') return;
    this.updateRecord((r) => ({ ...r, persistAskedAt: this.now() }));
    await api.persist().catch(() => false);
    await this.refreshStorage();
  }

  /** An export of all memory finished (from the Export menu): it counts as a backup. */
  recordBackup(): void {
    this.updateRecord((r) => ({ ...r, lastBackup: this.now() }));
    this.set({ reminder: this.reminderNow() });
  }

  /** Hides the reminder for a week (and the wait for the folder's permission for a day). */
  dismissReminder(): void {
    this.updateRecord((r) => ({ ...r, dismissedAt: this.now() }));
    this.set({ reminder: false, waitingForFolder: false, autoFailed: false });
  }

  /**
   * Backs up now, from a click: to the picked folder (asking for its permission again when
   * needed), else as a download.
   */
  async backUpNow(): Promise<void> {
    const folder = this.folderHandle;
    if (folder && (await folderPermission(folder)) !== 'granted') {
      if (!(await askFolderPermission(folder))) {
        this.set({
          message: {
            kind: 'error',
            text: `The browser did not allow writing to the folder “${folder.name}”. Choose it again, or stop using it to download backups instead.`,
          },
        });
        return;
      }
      await this.loadFolder();
    }
    await this.write(folder && this.current.folder?.permission === 'granted' ? folder : undefined);
  }

  /** Lets the person pick the folder for backups (from a click). */
  async chooseFolder(): Promise<void> {
    const pick = folderPicker();
    if (!pick) return;
    let folder: BackupFolder;
    try {
      folder = await pick({ id: 'structured-memory-backups', mode: 'readwrite' });
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') return; // closed the picker
      this.set({
        message: {
          kind: 'error',
          text: `That folder cannot be used: ${e instanceof Error ? e.message : String(e)}. Choose another one.`,
        },
      });
      return;
    }
    await this.memory.setSetting(BACKUP_FOLDER_KEY, folder);
    this.folderHandle = folder;
    this.set({
      folder: { name: folder.name, permission: await folderPermission(folder) },
      waitingForFolder: false,
      message: undefined,
    });
    await this.check();
  }

  /** Stops using the picked folder: automatic backups are downloaded from now on. */
  async forgetFolder(): Promise<void> {
    await this.memory.setSetting(BACKUP_FOLDER_KEY, null);
    this.folderHandle = undefined;
    this.set({ folder: undefined, waitingForFolder: false });
  }

  /** Whether the reminder shows now, and any automatic backup that is due is written. */
  async check(): Promise<void> {
    this.set({ record: this.readRecord(), reminder: this.reminderNow() });
    await this.autoBackupIfDue();
  }

  private reminderNow(): boolean {
    const s = this.settings();
    if (!s) return false;
    return reminderDue(this.readRecord(), this.current.lastSync, this.now(), s.backupReminder);
  }

  private handleChange(change: MemoryChange): void {
    const { changed, saved } = memoryChangeKind(change);
    if (changed) this.updateRecord((r) => noteChange(r, this.current.lastSync, this.now()));
    // A saved entry is the moment to ask the browser to keep memory (not a first visit).
    if (saved) void this.askAfterSave();
  }

  private async askAfterSave(): Promise<void> {
    const asked = this.readRecord().persistAskedAt;
    if (asked !== null && this.now() - asked < REMIND_AFTER_MS) return;
    if (this.current.storage === UNKNOWN_STORAGE) await this.refreshStorage();
    if (this.current.storage.persisted !== false) return;
    await this.askToKeep();
  }

  private async autoBackupIfDue(): Promise<void> {
    const s = this.settings();
    if (!s || this.current.running) return;
    if (!autoBackupDue(this.readRecord(), s.autoBackup, this.now())) return;
    const folder = this.folderHandle;
    if (folder && (await folderPermission(folder)) !== 'granted') {
      // Writing needs a click now (the reminder line offers it); nothing is downloaded instead.
      if (this.mayShowProblem()) this.set({ waitingForFolder: true });
      return;
    }
    const stats = await this.memory.stats().catch(() => undefined);
    if (!stats || (stats.entries === 0 && stats.messages === 0)) return;
    const locks = globalThis.navigator?.locks;
    const run = async () => {
      // Another tab may have written it while this one waited.
      if (autoBackupDue(this.readRecord(), s.autoBackup, this.now()))
        await this.write(folder, true);
    };
    if (locks) await locks.request('sm-auto-backup', { ifAvailable: true }, (l) => l && run());
    else await run();
  }

  /** A problem of the automatic backup shows in the reminder line unless dismissed today. */
  private mayShowProblem(): boolean {
    const dismissed = this.readRecord().dismissedAt;
    return dismissed === null || this.now() - dismissed >= DAY_MS;
  }

  /**
   * Writes one backup to `folder`, or downloads it; records it, or says why it failed (`auto`:
   * an automatic one, whose failure the reminder line shows too).
   */
  private async write(folder: BackupFolder | undefined, auto = false): Promise<void> {
    if (this.current.running) return;
    this.set({ running: true, message: undefined });
    try {
      const text = await this.memory.exportJson();
      if (isToolError(text)) throw new Error(text.message);
      const at = this.now();
      const name = autoBackupName(new Date(at));
      let where: string;
      if (folder) {
        const keep = this.settings()?.backupKeep ?? 7;
        await writeBackupFile(folder, name, text, keep);
        where = `to the folder “${folder.name}” as ${name}`;
      } else {
        this.download(text, name);
        where = `as the download ${name}`;
      }
      this.updateRecord((r) => ({ ...r, lastBackup: at, lastAuto: at }));
      const unrestorable = unrestorableBackup(text);
      this.set({
        waitingForFolder: false,
        autoFailed: false,
        reminder: this.reminderNow(),
        message: unrestorable
          ? { kind: 'error', text: `Backed up ${where}. ${unrestorable}` }
          : { kind: 'info', text: `Backed up ${where}.` },
      });
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const full = e instanceof DOMException && e.name === 'QuotaExceededError';
      this.set({
        autoFailed: auto && this.mayShowProblem(),
        message: {
          kind: 'error',
          text: full
            ? `The backup did not fit: the disk is full. Free some space, then press Back up now.`
            : `The backup failed: ${why}. Your memory is unchanged; press Back up now to try again.`,
        },
      });
    } finally {
      this.set({ running: false });
    }
  }

  private async loadFolder(): Promise<void> {
    if (!this.current.folderSupported) return;
    const stored = await this.memory.getSetting(BACKUP_FOLDER_KEY).catch(() => undefined);
    const folder =
      stored && typeof (stored as BackupFolder).getFileHandle === 'function'
        ? (stored as BackupFolder)
        : undefined;
    this.folderHandle = folder;
    this.set({
      folder: folder
        ? { name: folder.name, permission: await folderPermission(folder) }
        : undefined,
    });
  }

  private readRecord(): BackupRecord {
    if (!this.storage || this.storageRefused) return this.fallbackRecord;
    try {
      return normaliseRecord(JSON.parse(this.storage.getItem(BACKUP_RECORD_KEY) ?? 'null'));
    } catch {
      return this.fallbackRecord;
    }
  }

  /** Changes the record as it is stored now (another tab may have changed it). */
  private updateRecord(change: (r: BackupRecord) => BackupRecord): void {
    const before = this.readRecord();
    const after = change(before);
    if (after === before) return;
    this.fallbackRecord = after;
    try {
      this.storage?.setItem(BACKUP_RECORD_KEY, JSON.stringify(after));
    } catch {
      this.storageRefused = true; // full or refused: remembered for this page only
    }
    this.set({ record: after });
  }

  private set(patch: Partial<BackupState>): void {
    this.current = { ...this.current, ...patch };
    for (const listener of this.listeners) listener();
  }
}
