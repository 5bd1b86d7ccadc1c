// The contract between the memory engine and whatever computes sentence embeddings.

/** Static facts about one embedding model. */
export interface ModelInfo {
  /** Model id, stored on every vector row (e.g. `Xenova/all-MiniLM-L6-v2`). */
  id: string;
  /** Vector length. */
  dims: number;
  /** Cosine similarity above which a chunk counts as relevant for this model. */
  threshold: number;
  /**
   * Typical cosines of unrelated and of related text for this model (labelled pairs), which
   * map a cosine onto the calibrated semantic relevance (src/memory/ranking.ts). Absent: the
   * threshold ± 0.25.
   */
  calibration?: { unrelated: number; related: number };
  /** Whether this is the bundled offline model. */
  bundled: boolean;
}

/** Progress of a model download or load, 0..1 where known. */
export interface EmbedderProgress {
  status: 'download' | 'load' | 'ready' | 'fallback';
  file?: string;
  progress?: number;
  message?: string;
}

/**
 * Computes normalised sentence embeddings (cosine = dot product).
 * Loading is lazy: the first `ready()` or `embed()` loads the model.
 */
export interface Embedder {
  /** Loads the model (falling back to the bundled one if allowed) and tells which is active. */
  ready(): Promise<ModelInfo>;
  /** One unit-length Float32Array per text, in order. Empty input gives []. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Releases the runtime session. */
  dispose(): Promise<void>;
}
