// The memory worker: owns the engine (Dexie + embeddings) off the main thread and exposes it
// with Comlink. The page imports only `MemoryWorkerApi` (a type), never this module's code.
import { expose } from 'comlink';
import type { EmbedderProgress } from '../src/embeddings/types';
import { BUNDLED_MODEL, createEmbedder, openMemory } from '../src/memory';

/**
 * The embedding model chosen at build time with `VITE_EMBEDDING_MODEL`: a model id, or
 * `bundled` for the offline model. Unset means the embedder's default (the hub model, falling
 * back to the bundled one). A build-time choice, never a URL parameter.
 */
function configuredModel(): string | undefined {
  const value: unknown = import.meta.env.VITE_EMBEDDING_MODEL;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  return value.trim() === 'bundled' ? BUNDLED_MODEL : value.trim();
}

function createWorkerApi() {
  const progressListeners = new Set<(progress: EmbedderProgress) => void>();
  // Replayed to late subscribers: the fallback notice, then the latest step.
  let fallback: EmbedderProgress | undefined;
  let lastProgress: EmbedderProgress | undefined;
  const notify = (listener: (progress: EmbedderProgress) => void, progress: EmbedderProgress) => {
    // A listener from a closed page rejects; drop it rather than fail the model load.
    Promise.resolve(listener(progress)).catch(() => progressListeners.delete(listener));
  };

  const memory = openMemory({
    embedder: createEmbedder({
      model: configuredModel(),
      onProgress(progress: EmbedderProgress) {
        if (progress.status === 'fallback') fallback = progress;
        lastProgress = progress;
        for (const listener of progressListeners) notify(listener, progress);
      },
    }),
  });

  // The engine's methods are closures over its state, so they can be spread as they are. Every
  // MemoryApi method crosses, including setTokenCounter: the page passes its function wrapped in
  // Comlink's proxy(), and every count is then a round trip to the page.
  return {
    ...memory,
    /**
     * Calls `listener` (wrapped in Comlink's `proxy()` by the page) on every model download or
     * load step, starting with the fallback notice (if any) and the latest step seen.
     */
    onModelProgress(listener: (progress: EmbedderProgress) => void): void {
      progressListeners.add(listener);
      if (fallback && fallback !== lastProgress) notify(listener, fallback);
      if (lastProgress) notify(listener, lastProgress);
    },
  };
}

/** What the page sees through `wrap<MemoryWorkerApi>()`. */
export type MemoryWorkerApi = ReturnType<typeof createWorkerApi>;

expose(createWorkerApi());
