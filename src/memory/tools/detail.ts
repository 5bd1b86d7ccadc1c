// What the explorer shows for one path, read in one call (docs/design.md, "One explorer
// click"): the entry or heading, its history, what lies below it, where it went if it moved,
// and the conversation of each context chunk's source message.
import type { StoreContext } from '../store';
import type {
  EntryDetail,
  EntryView,
  HeadingResult,
  HeadingOptions,
  HistoryResult,
  NotFoundResult,
  ResolveResult,
  ToolError,
} from '../types';
import { isToolError } from '../validate';

/** The reads an entry's detail is made of, from the other tool modules. */
export interface DetailReads {
  getEntry(path: unknown): Promise<EntryView | ToolError>;
  getHistory(path: unknown): Promise<HistoryResult | ToolError>;
  queryMemoryHeading(
    path: unknown,
    query?: unknown,
    recencyBias?: unknown,
    options?: HeadingOptions,
  ): Promise<HeadingResult | NotFoundResult | ToolError>;
  resolvePath(path: unknown): Promise<ResolveResult | ToolError>;
}

/** Children listed in a heading's detail. */
export const DETAIL_CHILD_LIMIT = 50;

export function detailTools(ctx: StoreContext, reads: DetailReads) {
  const { db, entries, guard, pathArg } = ctx;

  async function entryDetail(
    pathIn: unknown,
    options: { childLimit?: number } = {},
  ): Promise<EntryDetail | ToolError> {
    return guard(async () => {
      const path = pathArg(pathIn, true);
      if (isToolError(path)) return path;
      const limit = options.childLimit ?? DETAIL_CHILD_LIMIT;
      const idx = await entries({ waitForModel: false });
      const below = idx
        .descendants(path)
        .map((r) => r.path)
        .sort();
      const hist = path === '' ? undefined : await reads.getHistory(path);
      const history = hist && !isToolError(hist) ? hist.versions : [];
      let children: EntryDetail['children'] = [];
      let totalChildren = 0;
      if (below.length > 0) {
        const heading = await reads.queryMemoryHeading(path, undefined, undefined, { limit });
        if (heading.status === 'SUCCESS') {
          children = heading.children;
          totalChildren = heading.totalChildren;
        }
      }
      const base = { status: 'SUCCESS' as const, path, history, below, children, totalChildren };
      if (path !== '' && idx.exists(path)) {
        const entry = await reads.getEntry(path);
        if (!isToolError(entry)) {
          // Each source message's conversation, so a Source link opens it directly. A message
          // counts only if it holds the chunk's text: a snapshot synced from another device
          // names that device's message ids, which may be other messages here (docs/sync.md).
          const turns = [...new Set(entry.contextChunks.map((c) => c.turn_id))];
          const messages = turns.length ? await db.messages.bulkGet(turns) : [];
          const byId = new Map(messages.flatMap((m, i) => (m ? [[turns[i]!, m] as const] : [])));
          const sources: Record<number, number> = {};
          for (const c of entry.contextChunks) {
            const m = byId.get(c.turn_id);
            if (m && m.text.includes(c.text)) sources[c.turn_id] = m.conversationId;
          }
          return { ...base, kind: 'entry' as const, entry, sources };
        }
        if (entry.code !== 'NOT_FOUND') return entry;
        // Deleted since the index was read: what is there now follows.
      }
      if (below.length > 0 || path === '') return { ...base, kind: 'heading' as const };
      let moved: EntryDetail['moved'];
      if (history.length) {
        const where = await reads.resolvePath(path);
        if (!isToolError(where) && where.moves.length) moved = { to: where.path, live: where.live };
      }
      return { ...base, kind: 'missing' as const, ...(moved ? { moved } : {}) };
    });
  }

  return { entryDetail };
}
