// In-memory index of conversation chunks for one model: one packed Float32Array, filled once
// from Dexie and kept current from the keys that each write touched (ours or another tab's).
import type { Table } from 'dexie';
import { dotRow, topK } from './scoring';
import type { Chunk } from './types';
import { PackedVectors } from './vector-store';

interface ChunkRef {
  row: number;
  conversationId: number;
}

export class SemanticIndex {
  private readonly vectors: PackedVectors;
  private readonly byId = new Map<number, ChunkRef>();
  private readonly byConversation = new Map<number, Set<number>>();

  constructor(
    private readonly table: Table<Chunk, number>,
    readonly model: string,
    readonly dims: number,
  ) {
    this.vectors = new PackedVectors(dims, 1024);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Fills the index from every chunk row of this model. */
  async load(): Promise<void> {
    this.vectors.clear();
    this.byId.clear();
    this.byConversation.clear();
    await this.table
      .where('model')
      .equals(this.model)
      .each((c) => this.put(c));
  }

  /**
   * After a bulk write whose keys are unknown: reads the rows added since the highest indexed
   * id, and reloads everything only when the count shows that rows were also deleted.
   */
  async catchUp(): Promise<void> {
    let maxId = 0;
    for (const id of this.byId.keys()) if (id > maxId) maxId = id;
    await this.table
      .where(':id')
      .above(maxId)
      .each((c) => c.model === this.model && this.put(c));
    const total = await this.table.where('model').equals(this.model).count();
    if (total !== this.byId.size) await this.load();
  }

  /** Brings the index in line with the rows now stored under `ids` (added, changed or gone). */
  async refresh(ids: readonly number[]): Promise<void> {
    if (!ids.length) return;
    const rows = await this.table.bulkGet(ids as number[]);
    rows.forEach((row, i) => {
      if (row && row.model === this.model) this.put(row);
      else this.remove(ids[i]);
    });
    this.maybeCompact();
  }

  /** Chunk ids of a conversation with their cosine to `query`, best `k` first. */
  search(
    conversationId: number,
    query: Float32Array,
    k: number,
  ): { id: number; similarity: number }[] {
    const ids = this.byConversation.get(conversationId);
    if (!ids || !ids.size || query.length !== this.dims) return [];
    const idList = [...ids];
    const scores = new Float32Array(idList.length);
    const buf = this.vectors.buffer;
    for (let i = 0; i < idList.length; i++) {
      scores[i] = dotRow(query, buf, this.byId.get(idList[i])!.row, this.dims);
    }
    return topK(scores, k).map((i) => ({ id: idList[i], similarity: scores[i] }));
  }

  private put(c: Chunk): void {
    if (c.id === undefined || c.embedding.length !== this.dims) return;
    if (this.byId.has(c.id)) return; // chunk rows never change once written
    const row = this.vectors.append([c.embedding]);
    this.byId.set(c.id, { row, conversationId: c.conversationId });
    let set = this.byConversation.get(c.conversationId);
    if (!set) this.byConversation.set(c.conversationId, (set = new Set()));
    set.add(c.id);
  }

  private remove(id: number): void {
    const ref = this.byId.get(id);
    if (!ref) return;
    this.vectors.release(ref.row, 1);
    this.byId.delete(id);
    this.byConversation.get(ref.conversationId)?.delete(id);
  }

  private maybeCompact(): void {
    if (!this.vectors.fragmented) return;
    const refs = [...this.byId.values()];
    const starts = this.vectors.compact(refs.map((r) => ({ first: r.row, count: 1 })));
    refs.forEach((r, i) => (r.row = starts[i]));
  }
}
