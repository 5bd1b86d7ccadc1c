// What the reliability cases assert about the store after each hostile case (node, Dexie over
// fake-indexeddb): rows as before or as fully after, the invariants that tie the tables together,
// and that nothing reached Object.prototype.
import Dexie from 'dexie';
import { expect } from 'vitest';
import type { ChunkShard, ShardCodes, ShardHead } from '../../src/memory/shards';
import type { Chunk, HistoryRow, MemoryApi, MemoryEntry, Message } from '../../src/memory/types';
import { closeAll, safeJson, type Snapshot } from '../integration/helpers';

export { contentSnapshot, snapshotDb, safeJson } from '../integration/helpers';

/**
 * Closes a case's memory, lets go of it, and deletes its database: openTestMemory keeps every
 * memory it opened until closeAll(), fake-indexeddb keeps every database, and a long run writes
 * gigabytes (16 MB partial replies, 5 MB messages).
 */
export async function dispose(mem: MemoryApi, name: string): Promise<void> {
  await mem.close();
  await closeAll();
  await Dexie.delete(name);
}

/** JSON text with own keys in order, so a lost or moved `__proto__` key shows. */
export const text = (v: unknown): string => JSON.stringify(v) ?? 'undefined';

/** The snapshot without the fields a read may update (`accessed`). */
export function withoutReads(snap: Snapshot): Snapshot {
  const out: Snapshot = {};
  for (const [table, rows] of Object.entries(snap)) {
    out[table] =
      table === 'structured_memory'
        ? rows.map((r) => ({ ...(r as MemoryEntry), accessed: undefined }))
        : rows;
  }
  return out;
}

/** Entries of a snapshot by path. */
export function entriesByPath(snap: Snapshot): Map<string, MemoryEntry> {
  const rows = (snap.structured_memory ?? []) as MemoryEntry[];
  return new Map(rows.map((r) => [r.path, r]));
}

/**
 * Broken links between the tables, as sentences: duplicate paths, history rows that name another
 * path, chunks missing from the packed shards (or shards naming chunks that are gone), chunks of
 * a conversation or turn that does not exist. [] for a sound store.
 */
export function storeProblems(snap: Snapshot): string[] {
  const out: string[] = [];
  const entries = (snap.structured_memory ?? []) as MemoryEntry[];
  const paths = new Set<string>();
  for (const e of entries) {
    if (paths.has(e.path)) out.push(`two entries at "${e.path}"`);
    paths.add(e.path);
    const cut = e.path.lastIndexOf('/');
    if (
      e.heading !== e.path.slice(cut + 1) ||
      e.parent_path !== (cut < 0 ? '' : e.path.slice(0, cut))
    )
      out.push(`entry "${e.path}" has heading "${e.heading}" under "${e.parent_path}"`);
    if (!Number.isSafeInteger(e.version) || e.version < 1)
      out.push(`entry "${e.path}" has version ${e.version}`);
  }
  for (const h of (snap.history ?? []) as HistoryRow[]) {
    if (h.entry.path !== h.path) out.push(`history row of "${h.path}" holds "${h.entry.path}"`);
  }
  const chunks = (snap.chunks ?? []) as Chunk[];
  const shards = (snap.shards ?? []) as ChunkShard[];
  const inShards = new Map<string, number>();
  for (const s of shards) {
    if (s.ids.length !== s.count)
      out.push(`shard ${s.id} counts ${s.count} but holds ${s.ids.length}`);
    for (const id of s.ids) {
      const key = `${s.model}#${id}`;
      inShards.set(key, (inShards.get(key) ?? 0) + 1);
    }
  }
  // Each shard's compact part under its key, holding the same chunks (none for older shards).
  const byKey = new Map(shards.map((s) => [s.id, s]));
  for (const h of (snap.shardHeads ?? []) as ShardHead[]) {
    const s = byKey.get(h.id);
    if (!s) out.push(`compact part ${h.id} has no shard`);
    else if (h.count !== s.count || h.ids.some((id, i) => id !== s.ids[i]))
      out.push(`compact part ${h.id} holds other chunks than its shard`);
  }
  // And its int8 part, one code row and scale per chunk.
  for (const c of (snap.shardCodes ?? []) as ShardCodes[]) {
    const s = byKey.get(c.id);
    if (!s) out.push(`int8 part ${c.id} has no shard`);
    else if (c.count !== s.count || c.scales.length !== s.count)
      out.push(`int8 part ${c.id} holds ${c.count} rows, its shard ${s.count}`);
  }
  for (const c of chunks) {
    const key = `${c.model}#${c.id}`;
    const n = inShards.get(key) ?? 0;
    if (n !== 1) out.push(`chunk ${c.id} is in ${n} shards`);
    inShards.delete(key);
  }
  for (const key of inShards.keys()) out.push(`a shard holds chunk ${key}, which has no row`);
  const conversations = new Set((snap.conversations ?? []).map((c) => (c as { id: number }).id));
  const messages = new Set(((snap.messages ?? []) as Message[]).map((m) => m.id));
  for (const c of chunks) {
    if (!conversations.has(c.conversationId))
      out.push(`chunk ${c.id} belongs to conversation ${c.conversationId}, which does not exist`);
    if (c.turnId !== undefined && !messages.has(c.turnId))
      out.push(`chunk ${c.id} belongs to turn ${c.turnId}, which does not exist`);
  }
  return out;
}

/**
 * Chat history problems: a tool message whose call no earlier assistant message of its
 * conversation made (a model server refuses such a history on every later turn).
 */
export function chatProblems(snap: Snapshot): string[] {
  const out: string[] = [];
  const calls = new Map<number, Set<string>>();
  const messages = ((snap.messages ?? []) as Message[]).slice().sort((a, b) => a.id! - b.id!);
  for (const m of messages) {
    const made = calls.get(m.conversationId) ?? new Set<string>();
    calls.set(m.conversationId, made);
    for (const c of m.toolCalls ?? []) made.add(c.id);
    if (m.role === 'tool' && !made.has(m.toolCallId ?? ''))
      out.push(
        `tool message ${m.id} answers call ${safeJson(m.toolCallId)}, which no stored assistant message made`,
      );
  }
  return out;
}

export function expectSound(snap: Snapshot, what: string): void {
  expect(storeProblems(snap), `${what}: the store's tables disagree`).toEqual([]);
}

const PROTOTYPES = [Object.prototype, Array.prototype, Function.prototype, String.prototype];
const ownKeys = () => PROTOTYPES.map((p) => Reflect.ownKeys(p).map(String).sort().join(','));
const BASELINE = ownKeys();

/** Nothing was added to the built-in prototypes (a `__proto__` key taken as a prototype). */
export function expectNoPollution(what: string): void {
  expect(ownKeys(), `${what}: a built-in prototype gained a key`).toEqual(BASELINE);
  expect(({} as Record<string, unknown>).polluted, what).toBeUndefined();
}
