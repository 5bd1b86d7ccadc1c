// Registry of the embedding models the app knows, with their calibrated relevance thresholds.
import type { ModelInfo } from './types';

/** The bundled offline model (public/models/structured-memory/glove-100d-sif/). */
export const BUNDLED_MODEL = 'structured-memory/glove-100d-sif';

/** The default model, loaded from the Hugging Face hub on first use. */
export const DEFAULT_MODEL = 'Xenova/all-MiniLM-L6-v2';

/** Extra loading facts per model (not part of the engine contract). */
export interface ModelLoadInfo extends ModelInfo {
  /** transformers.js dtype used when the caller does not pass one. */
  dtype: 'fp32' | 'q8';
}

export const MODELS: Record<string, ModelLoadInfo> = {
  // MiniLM's calibration is its published behaviour on sentence pairs (unrelated ≈ 0.1, related
  // ≈ 0.6); the hub is out of reach here, so it is not re-measured (docs/search.md).
  [DEFAULT_MODEL]: {
    id: DEFAULT_MODEL,
    dims: 384,
    threshold: 0.5,
    calibration: { unrelated: 0.1, related: 0.6 },
    bundled: false,
    dtype: 'q8',
  },
  // Threshold calibrated on the 60 labelled pairs of test/fixtures/embedding-pairs.json
  // (`tsx scripts/build-bundled-model.ts --calibrate`): 2/60 errors; see docs/bundled-model.md.
  // Calibration: the mean cosine of the unrelated and of the related labelled pairs (the
  // 50k-word build: related 0.485, 0.497 with 110k words; unrelated 0.002).
  [BUNDLED_MODEL]: {
    id: BUNDLED_MODEL,
    dims: 100,
    threshold: 0.23,
    calibration: { unrelated: 0.0, related: 0.485 },
    bundled: true,
    dtype: 'fp32',
  },
};

/**
 * Facts about a model. Unknown ids (any other hub model) get `dims: 0` (learned on load)
 * and MiniLM's threshold of 0.5.
 */
export function modelInfo(id: string): ModelInfo {
  const known = MODELS[id];
  if (known) {
    const { dtype: _dtype, ...info } = known;
    return info;
  }
  return { id, dims: 0, threshold: 0.5, bundled: false };
}
