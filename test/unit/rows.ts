// Rows for the unit tests of the tool parts (write-parts, history-parts): a context chunk and an
// entry at version 3, made at T0, whose fields a test overrides.
import { placedAt } from '../../src/memory/paths';
import type { ContextChunk, MemoryEntry } from '../../src/memory/types';

export const T0 = new Date('2026-01-01T00:00:00Z');
export const T1 = new Date('2026-02-01T00:00:00Z');
export const T2 = new Date('2026-03-01T00:00:00Z');

export const chunk = (text: string, tokenCount = 3): ContextChunk => ({
  turn_id: 1,
  sentence_id: 0,
  role: 'user',
  text,
  embedding: new Float32Array([1, 0]),
  similarity: 0.5,
  tokenCount,
});

/** Entry 7 at `path`, version 3 of model 'old-model', content `{ note: path }`, one chunk. */
export const entryAt = (path: string, over: Partial<MemoryEntry> = {}): MemoryEntry => ({
  id: 7,
  ...placedAt(path),
  content: { note: path },
  contextChunks: [chunk(`about ${path}`)],
  embedding: new Float32Array([0, 1]),
  model: 'old-model',
  created: T0,
  modified: T0,
  accessed: T0,
  version: 3,
  ...over,
});
