// The Dexie schema (SPEC §2). Every past version stays declared; changes get a new version.
import Dexie, { type Table } from 'dexie';
import type { Chunk, Conversation, HistoryRow, MemoryEntry, Message, SettingRow } from './types';

export const DEFAULT_DB_NAME = 'structured-memory';

export class MemoryDB extends Dexie {
  structured_memory!: Table<MemoryEntry, number>;
  conversations!: Table<Conversation, number>;
  messages!: Table<Message, number>;
  chunks!: Table<Chunk, number>;
  history!: Table<HistoryRow, number>;
  settings!: Table<SettingRow, string>;

  constructor(name: string = DEFAULT_DB_NAME) {
    super(name);
    this.version(1).stores({
      structured_memory: '++id, &path, parent_path, heading, modified',
      conversations: '++id, modified',
      messages: '++id, conversationId, time',
      chunks: '++id, conversationId, turnId, model',
      history: '++id, path, replaced',
      settings: '&key',
    });
  }
}

export const ENTRY_TABLE = 'structured_memory';
export const CHUNK_TABLE = 'chunks';

/**
 * True when a Dexie/IndexedDB error means the quota is exhausted. It can hide in `inner`
 * (AbortError) or in a BulkError's `failures`.
 */
export function isQuotaError(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as { name?: unknown; inner?: unknown; failures?: unknown };
  if (e.name === 'QuotaExceededError') return true;
  if (Array.isArray(e.failures) && e.failures.some((f) => isQuotaError(f, depth + 1))) return true;
  return isQuotaError(e.inner, depth + 1);
}
