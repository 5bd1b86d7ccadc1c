// The engine's public API (docs/design.md, "Library API"): openMemory, createEmbedder and
// BUNDLED_MODEL.
import { createMemoryStore } from './memory-store';
import type { MemoryApi, OpenMemoryOptions } from './types';

export { BUNDLED_MODEL, DEFAULT_MODEL, createEmbedder } from '../embeddings';
export type { Embedder, ModelInfo, EmbedderProgress } from '../embeddings/types';
export type * from './types';
export { parsePath } from './paths';

/** Opens (lazily) the memory database `name` and returns the memory tools over it. */
export function openMemory(options: OpenMemoryOptions): MemoryApi {
  return createMemoryStore(options);
}
