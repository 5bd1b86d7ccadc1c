// Where a backup file goes: a folder the person picked (File System Access API), where the newest
// few automatic backups are kept and older ones this app wrote are deleted, or a download where
// the browser has no folder access (docs/settings.md, "Backups"). The folder writer takes any
// directory handle, so a test hands it one from the origin private file system.
import { backupsToDelete } from './backup-plan';

/** The parts of the File System Access API used here (not all in TypeScript's DOM lib yet). */
export interface BackupFolder {
  readonly name: string;
  getFileHandle(name: string, options?: { create?: boolean }): Promise<FileSystemFileHandle>;
  removeEntry(name: string): Promise<void>;
  keys(): AsyncIterable<string>;
  queryPermission?(options: { mode: 'readwrite' }): Promise<PermissionState>;
  requestPermission?(options: { mode: 'readwrite' }): Promise<PermissionState>;
}

type DirectoryPicker = (options?: {
  id?: string;
  mode?: 'read' | 'readwrite';
  startIn?: string;
}) => Promise<BackupFolder>;

/** The browser's folder picker, when it has one. */
export function folderPicker(): DirectoryPicker | undefined {
  const picker = (globalThis as { showDirectoryPicker?: DirectoryPicker }).showDirectoryPicker;
  return typeof picker === 'function' ? picker.bind(globalThis) : undefined;
}

/** Whether the app may write to the folder now ('prompt': only after asking, from a click). */
export async function folderPermission(folder: BackupFolder): Promise<PermissionState> {
  if (!folder.queryPermission) return 'granted';
  return folder.queryPermission({ mode: 'readwrite' });
}

/** Asks for write access to the folder again (call it from a click). */
export async function askFolderPermission(folder: BackupFolder): Promise<boolean> {
  if (!folder.requestPermission) return true;
  return (await folder.requestPermission({ mode: 'readwrite' })) === 'granted';
}

/**
 * Writes `text` to `name` in the folder, then deletes the automatic backups beyond the newest
 * `keep`; returns the names deleted. The file is complete before anything is deleted: a
 * failed write leaves the older backups as they were.
 */
export async function writeBackupFile(
  folder: BackupFolder,
  name: string,
  text: string,
  keep: number,
): Promise<string[]> {
  const file = await folder.getFileHandle(name, { create: true });
  const writable = await file.createWritable();
  try {
    await writable.write(new Blob([text], { type: 'application/json' }));
    await writable.close();
  } catch (e) {
    await writable.abort().catch(() => undefined);
    throw e;
  }
  const names: string[] = [];
  for await (const n of folder.keys()) names.push(n);
  const old = backupsToDelete(names, keep);
  for (const n of old) await folder.removeEntry(n);
  return old;
}

/** Saves a file through the browser's downloads (no folder access, or none picked). */
export function downloadFile(text: string, name: string, type = 'application/json'): void {
  const url = URL.createObjectURL(new Blob([text], { type: `${type};charset=utf-8` }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // The download has started from the URL by now; give slow browsers a moment anyway.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
