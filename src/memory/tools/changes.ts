// The change feed's engine side (docs/design.md, "Change notifications"): what the writes behind
// a storagemutated report changed, read once the indexes have taken them in, so the page can
// patch what it shows instead of loading it again.
import type { StoreContext } from '../store';
import { ENTRY_TABLE } from '../db';
import type { ChangedKeys, MemoryChange } from '../types';

export function changeTools(ctx: StoreContext) {
  const { db, entryChanges } = ctx;

  async function describeChanges(keys: ChangedKeys): Promise<Omit<MemoryChange, 'tables'>> {
    // A closed engine describes nothing: every view loads again from the one that replaced it.
    if (ctx.state.closed) return {};
    const out: Omit<MemoryChange, 'tables'> = {};
    if (keys[ENTRY_TABLE]) {
      const entries = await entryChanges();
      if (entries) out.entries = entries;
    }
    const conversations = keys.conversations;
    if (Array.isArray(conversations)) {
      const rows = await db.conversations.bulkGet(conversations);
      out.conversations = {
        upserted: rows.filter((r) => r !== undefined),
        removed: conversations.filter((_, i) => !rows[i]),
      };
    }
    if (Array.isArray(keys.messages)) out.messages = { ids: keys.messages };
    const history = keys.history;
    if (Array.isArray(history)) {
      // A history row gone (the trash purged) cannot say its path: then no part, a reload.
      const rows = await db.history.bulkGet(history);
      if (rows.every((r) => r !== undefined)) {
        out.history = { paths: [...new Set(rows.map((r) => r.path))] };
      }
    }
    return out;
  }

  return { describeChanges };
}
