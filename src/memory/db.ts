// The Dexie schema (docs/design.md, "Data model"). Every past version stays declared; changes
// get a new version.
import Dexie, { type Table } from 'dexie';
import {
  SHARD_CODES_SCHEMA,
  SHARD_HEAD_SCHEMA,
  SHARD_SCHEMA,
  rebuildShards,
  type ChunkShard,
  type ShardCodes,
  type ShardHead,
} from './shards';
import type { Chunk, Conversation, HistoryRow, MemoryEntry, Message, SettingRow } from './types';

export const DEFAULT_DB_NAME = 'structured-memory';

export class MemoryDB extends Dexie {
  structured_memory!: Table<MemoryEntry, number>;
  conversations!: Table<Conversation, number>;
  messages!: Table<Message, number>;
  chunks!: Table<Chunk, number>;
  history!: Table<HistoryRow, number>;
  settings!: Table<SettingRow, string>;
  /** Chunk vectors packed a few thousand per row, for a fast cold start (shards.ts). */
  shards!: Table<ChunkShard, number>;
  /** Each shard's compact part (ids, words, sign codes), read first on a cold start. */
  shardHeads!: Table<ShardHead, number>;
  /** Each shard's vectors in int8 (codes and scales), what a cold start loads (shards.ts). */
  shardCodes!: Table<ShardCodes, number>;

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
    // 2: packed vector shards, built from the chunk rows already there.
    this.version(2)
      .stores({ shards: SHARD_SCHEMA })
      .upgrade(async (tx) => {
        const chunks = tx.table<Chunk, number>(CHUNK_TABLE);
        const shards = tx.table<ChunkShard, number>(SHARD_TABLE);
        const models = await chunks.orderBy('model').uniqueKeys();
        for (const model of models) await rebuildShards(chunks, { shards }, String(model));
      });
    // 3: each shard's compact part in a table of its own. Shards written before it load whole
    // (as in version 2) and get their compact part when next rewritten or rebuilt.
    this.version(3).stores({ shardHeads: SHARD_HEAD_SCHEMA });
    // 4: each shard's vectors in int8 in a table of their own, a quarter of the f32 bytes, which
    // a cold start loads. Pieces written before it load their f32 rows, as in version 3, and get
    // their codes when next rewritten or rebuilt.
    this.version(4).stores({ shardCodes: SHARD_CODES_SCHEMA });
  }
}

/**
 * The tables a piece of the shards lives in (vectors, compact part, int8 part): every
 * transaction that writes chunk rows names them all, since the shard helpers write each part.
 */
export function shardTables(db: Pick<MemoryDB, 'shards' | 'shardHeads' | 'shardCodes'>): Table[] {
  return [db.shards, db.shardHeads, db.shardCodes];
}

export const ENTRY_TABLE = 'structured_memory';
export const CHUNK_TABLE = 'chunks';
export const SHARD_TABLE = 'shards';
export const SHARD_HEAD_TABLE = 'shardHeads';

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
