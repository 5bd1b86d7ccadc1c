// What an entry's detail shows (src/ui/sm-entry-detail.ts), as data: built from the worker's
// `entryDetail` answer, and brought up to date from a change report, which carries the detail
// the page shows when the write touched it (docs/design.md, "Change notifications").
import type {
  EntryDetail,
  HeadingChild,
  HistoryResult,
  MemoryChange,
  QueryResult,
  ToolError,
} from '../memory/types';
import { changeTouches } from '../memory/change-feed';
import { RELOAD } from './memory-watch';

export type HistoryVersion = HistoryResult['versions'][number];

/** Most children listed for a heading; the rest are counted. */
export const CHILD_LIMIT = 200;

export interface Loaded {
  path: string;
  /** Earlier versions at this path, newest first. */
  history: HistoryVersion[];
  /** Entries strictly below the path. */
  descendants: number;
  /** Their paths, sorted. */
  below: string[];
  /** Direct children (entries and sub-headings), newest first, at most CHILD_LIMIT. */
  children: HeadingChild[];
  totalChildren: number;
}

export type Detail =
  | (Loaded & {
      kind: 'entry';
      entry: QueryResult;
      /** Conversation of each context chunk's source message, by message (turn) id. */
      sources: Record<number, number>;
      /** The path it had before its latest move. */
      movedFrom?: string;
      /** The version whose save took the context chunks, when a later change kept them. */
      contextVersion?: number;
    })
  | (Loaded & { kind: 'heading' })
  | (Loaded & {
      kind: 'missing';
      /** Where the entry went, when it was moved away (its moves followed). */
      moved?: { to: string; live: boolean };
    })
  | { kind: 'error'; path: string; message: string };

/** What the detail shows of `path`, from the worker's `entryDetail` answer. */
export function detailOf(path: string, detail: EntryDetail | ToolError): Detail {
  if (detail.status !== 'SUCCESS') return { kind: 'error', path, message: detail.message };
  const { history, below, children, totalChildren } = detail;
  const loaded: Loaded = {
    path,
    history,
    descendants: below.length,
    below,
    children,
    totalChildren,
  };
  if (detail.kind === 'entry' && detail.entry) {
    const { content, contextChunks, created, modified, accessed, version } = detail.entry;
    const view: QueryResult = {
      status: 'SUCCESS',
      path,
      content,
      contextChunks,
      metadata: { created, modified, accessed, version },
    };
    return {
      ...loaded,
      kind: 'entry',
      entry: view,
      sources: detail.sources ?? {},
      movedFrom: detail.entry.movedFrom,
      contextVersion: detail.entry.contextVersion,
    };
  }
  if (detail.kind === 'heading') return { ...loaded, kind: 'heading' };
  return { ...loaded, kind: 'missing', moved: detail.moved };
}

/**
 * `detail` after a report: the same when the write did not touch its path or what lies below, the
 * detail the report carries when it did, else RELOAD (read it again). A path moved away from
 * follows its moves, which any later write may extend: it reads again on any entry write.
 */
export function patchDetail(
  detail: Detail | undefined,
  change: MemoryChange,
): Detail | undefined | typeof RELOAD {
  if (!detail) return detail;
  if (detail.kind === 'missing' && detail.moved) {
    const touched = change.tables.some((t) => t === 'structured_memory' || t === 'history');
    return touched ? RELOAD : detail;
  }
  if (!changeTouches(change, detail.path)) return detail;
  const fresh = change.details?.find((d) => d.path === detail.path);
  return fresh ? detailOf(detail.path, fresh) : RELOAD;
}
