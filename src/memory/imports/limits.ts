// How large an imported file may be (docs/import-export.md), another tool's or this app's own
// backup or Markdown export: shared by the memory worker, which checks what it is handed, and the
// page, which checks a file's size before reading it.

/**
 * The largest file of another tool imported at once (bytes). Each file is parsed, embedded and
 * written in one step, so one this large already takes a couple of minutes here (10,000
 * messages, about 5 MB, take 16 s: bench/imports.ts); a larger one is refused before anything is
 * read, in a sentence.
 */
export const MAX_FOREIGN_FILE_BYTES = 32 * 1024 * 1024;

/**
 * The largest backup or Markdown export of this app imported at once (bytes). Its text is held
 * twice (the page reads it, the worker gets a copy), parsed whole, and every entry, snapshot and
 * message is embedded, its vector kept until the one transaction writes: importing a 7 MB backup
 * of 20,000 messages took about 200 MB more memory (30 times its size; measured in Node with the
 * bundled model, whose vectors are a quarter of the default model's). A browser tab holds a few
 * GB at most (Chromium stops a tab's JavaScript heap at 4 GB; a phone closes the tab well
 * before), so 64 MB, about 2 GB to import and years of daily chats, is as much as one tab can
 * safely take; a larger file is refused before anything is read, in a sentence, instead of the
 * tab running out of memory (or, past 512 MB, failing to read it with a misleading error).
 */
export const MAX_OWN_FILE_BYTES = 64 * 1024 * 1024;

/** A size in whole megabytes (at least 1), as a person reads it. */
function megabytes(bytes: number): string {
  return `${Math.max(1, Math.round(bytes / (1024 * 1024)))} MB`;
}

/** The refusal of another tool's file of `size` bytes over the limit, named `name`. */
export function tooLargeForeignFile(name: string, size: number): string {
  return (
    `Nothing was imported; nothing changed. ${name} is ${megabytes(size)}: a file from ` +
    `another tool is imported up to ${megabytes(MAX_FOREIGN_FILE_BYTES)} at a time. ` +
    'Export a shorter chat (or split the file into several) and import those.'
  );
}

/** The refusal of this app's backup or Markdown file `name` of `size` bytes, over the limit. */
export function tooLargeOwnFile(name: string, size: number): string {
  return (
    `Nothing was imported; nothing changed. ${name} is ${megabytes(size)}: a backup or Markdown ` +
    `file of this app is imported up to ${megabytes(MAX_OWN_FILE_BYTES)} at a time, as much as ` +
    'a browser tab can hold while it reads and indexes it. Split it into smaller files (in a ' +
    'backup, each chat with its messages) and import them one after the other.'
  );
}

/**
 * Why a file of `size` bytes is refused before it is read (`own`: this app's backup or Markdown
 * export, else another tool's file), or undefined when it may be read.
 */
export function fileSizeRefusal(name: string, size: number, own: boolean): string | undefined {
  if (own) return size > MAX_OWN_FILE_BYTES ? tooLargeOwnFile(name, size) : undefined;
  return size > MAX_FOREIGN_FILE_BYTES ? tooLargeForeignFile(name, size) : undefined;
}

/**
 * What a person must know of a backup Import would refuse (its text over MAX_OWN_FILE_BYTES as a
 * file), or undefined: it is written all the same, but cannot be restored here in one piece.
 */
export function unrestorableBackup(text: string): string | undefined {
  // A character is one to three bytes in the file: only a text that may pass the limit is counted.
  if (text.length * 3 <= MAX_OWN_FILE_BYTES) return undefined;
  const bytes = new TextEncoder().encode(text).length;
  if (bytes <= MAX_OWN_FILE_BYTES) return undefined;
  return (
    `This backup is ${megabytes(bytes)}, more than Import takes at once ` +
    `(${megabytes(MAX_OWN_FILE_BYTES)}), so it cannot be restored here as it is. Keep an older ` +
    'backup as well, or keep your memory in sync with a server (Settings), which has no such limit.'
  );
}
