// Sentence embeddings: the Embedder contract, the model registry and the transformers.js embedder.
export type { Embedder, EmbedderProgress, ModelInfo } from './types';
export { BUNDLED_MODEL, DEFAULT_MODEL, MODELS, modelInfo } from './models';
export type { ModelLoadInfo } from './models';
export { createEmbedder, defaultLocalModelPath, ModelUnavailableError } from './embedder';
export type { CreateEmbedderOptions } from './embedder';
