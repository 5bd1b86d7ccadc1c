// The engine's embedding model: loaded once on first use (again after a failure: the hub may
// come back), and every embedding checked for shape. Failures come back as MODEL_UNAVAILABLE.
import type { Embedder, ModelInfo } from '../embeddings/types';
import type { ToolError } from './types';
import { errorText, isToolError, toolError } from './validate';

export type Result<T> = T | ToolError;

export interface ModelAccess {
  /** The model's info once it has loaded; loads it on the first call. */
  model(): Promise<Result<ModelInfo>>;
  /** The model's info if it has loaded already, without waiting. */
  loaded(): ModelInfo | undefined;
  embed(texts: string[]): Promise<Result<{ info: ModelInfo; vectors: Float32Array[] }>>;
}

export function createModelAccess(embedder: Embedder): ModelAccess {
  let readyModel: ModelInfo | undefined;
  let modelPromise: Promise<ModelInfo> | null = null;

  async function model(): Promise<Result<ModelInfo>> {
    try {
      modelPromise ??= embedder.ready();
      readyModel = await modelPromise;
      return readyModel;
    } catch (e) {
      modelPromise = null; // try again next time: the hub may come back
      return toolError(
        'MODEL_UNAVAILABLE',
        `The embedding model could not be loaded: ${errorText(e)}`,
      );
    }
  }

  async function embed(
    texts: string[],
  ): Promise<Result<{ info: ModelInfo; vectors: Float32Array[] }>> {
    const info = await model();
    if (isToolError(info)) return info;
    try {
      const vectors = await embedder.embed(texts);
      if (vectors.length !== texts.length || vectors.some((v) => v.length !== info.dims)) {
        return toolError(
          'MODEL_UNAVAILABLE',
          'The embedding model returned vectors of the wrong shape',
        );
      }
      return { info, vectors };
    } catch (e) {
      return toolError('MODEL_UNAVAILABLE', `The embedding model failed: ${errorText(e)}`);
    }
  }

  return { model, loaded: () => readyModel, embed };
}
