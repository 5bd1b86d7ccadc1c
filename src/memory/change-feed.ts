// What a change report (docs/design.md, "Change notifications") means for a view of one path:
// shared by the page, which decides whether to read again, and the memory worker, which reads
// the details the page watches into the report itself.
import type { MemoryChange } from './types';

/**
 * Whether a report may change what a view of `path` shows (the entry, its history, what lies
 * below): true also when the report cannot say.
 */
export function changeTouches(change: MemoryChange, path: string): boolean {
  const below = (p: string) => path === '' || p === path || p.startsWith(`${path}/`);
  if (change.tables.includes('structured_memory')) {
    if (!change.entries) return true;
    if (change.entries.upserted.some((e) => below(e.path))) return true;
    if (change.entries.removed.some(below)) return true;
  }
  if (change.tables.includes('history')) {
    if (!change.history) return true;
    if (change.history.paths.some((p) => p === path)) return true;
  }
  return false;
}
