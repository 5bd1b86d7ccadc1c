// How large another tool's file may be (docs/import-export.md): shared by the memory worker, which
// checks what it is handed, and the page, which checks a file's size before reading it.

/**
 * The largest file of another tool imported at once (bytes). Each file is parsed, embedded and
 * written in one step, so one this large already takes a couple of minutes here (10,000
 * messages, about 5 MB, take 16 s: bench/imports.ts); a larger one is refused before anything is
 * read, in a sentence.
 */
export const MAX_FOREIGN_FILE_BYTES = 32 * 1024 * 1024;

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
