// Sentence embeddings, mean pooled and L2-normalised, with a fallback to the bundled offline model
// when the chosen hub model cannot be loaded. The bundled static model runs in plain TypeScript
// (./static-model.ts); transformer models run through transformers.js feature extraction, in Node
// (onnxruntime-node) and in a browser Web Worker (onnxruntime-web, bundled by Vite). No top-level
// `node:` imports, and transformers.js is imported only when a transformer model is loaded, so a
// build whose model is the bundled one never fetches it or the ONNX runtime
// (docs/decisions/0009-static-model-without-runtime.md).
import type { DataType, DeviceType, ProgressInfo } from '@huggingface/transformers';
import { BUNDLED_MODEL, DEFAULT_MODEL, MODELS, modelInfo } from './models';
import { embeddingThreads } from './threads';
import { loadStaticModel, type StaticModelFile } from './static-model';
import type { Embedder, EmbedderProgress, ModelInfo } from './types';

export interface CreateEmbedderOptions {
  /**
   * Model id; default DEFAULT_MODEL (`Xenova/all-MiniLM-L6-v2`, from the Hugging Face hub). A
   * function is asked for the id when the model is first needed (the worker reads the user's
   * choice so; a rejection means DEFAULT_MODEL).
   */
  model?: string | (() => Promise<string>);
  /** If the chosen model cannot be loaded, use BUNDLED_MODEL instead (default true). */
  fallback?: boolean;
  /**
   * Where bundled models live (folder or URL prefix ending in `/`). Default: in Node the
   * absolute path of `<repo>/public/models/`; in the browser `import.meta.env.BASE_URL + 'models/'`.
   */
  localModelPath?: string;
  /**
   * Where each file of the bundled model is, overriding `localModelPath` (the portable single
   * file passes `blob:` URLs of the copies it carries inside).
   */
  bundledFiles?: Partial<Record<StaticModelFile, string>>;
  /**
   * Browser only: URL prefix (ending in `/`) where the app serves the ONNX runtime's
   * `ort-wasm-simd-threaded*.{mjs,wasm}` files. Default `import.meta.env.BASE_URL + 'ort/'`.
   */
  wasmPaths?: string;
  /** transformers.js device (default: `cpu` in Node, `wasm` in the browser). */
  device?: DeviceType;
  /** transformers.js dtype for the chosen model (default per registry: q8 for MiniLM, fp32 bundled). */
  dtype?: DataType;
  /** Download / load progress, fallback notice and readiness. */
  onProgress?: (progress: EmbedderProgress) => void;
  /** Texts per model call (default 32). */
  batchSize?: number;
  /** Override of the hub host (e.g. a mirror; tests use a closed local port). */
  remoteHost?: string;
  /**
   * Hub loads only: how long to wait for the hub to start answering a request (ms, default
   * 15000) before giving up (and falling back). Does not limit the download itself.
   */
  hubTimeoutMs?: number;
}

/** Thrown (as the rejection of ready()/embed()) when no model could be loaded. */
export class ModelUnavailableError extends Error {
  readonly code = 'MODEL_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelUnavailableError';
  }
}

type Transformers = typeof import('@huggingface/transformers');
/** The callable part of a feature-extraction pipeline that we use. */
interface Extractor {
  (
    texts: string[],
    options: { pooling: 'mean'; normalize: boolean },
  ): Promise<{ data: ArrayLike<number>; dims: number[]; dispose?: () => void }>;
  dispose(): Promise<void>;
}
interface Loaded {
  info: ModelInfo;
  /** Vectors of non-blank texts, in order (a text with no known token may give NaN or zeros). */
  embedBatch(texts: string[]): Promise<ArrayLike<number>[]>;
  dispose(): Promise<void>;
}

const HF_HOST = 'https://huggingface.co/';
const CDN_PREFIX = 'https://cdn.jsdelivr.net/';

function isNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof proc !== 'undefined' && !!proc.versions?.node;
}

function baseUrl(): string {
  // import.meta.env exists under Vite and vitest, not under plain Node/tsx.
  const base = (import.meta as { env?: { BASE_URL?: string } }).env?.BASE_URL ?? '/';
  const folder = base.endsWith('/') ? base : base + '/';
  // A relative base (the default build, which works at any path: docs/hosting.md) is relative to
  // the app's root, and a built script, this one included, lives one folder below it (assets/).
  if (folder.startsWith('.')) return new URL('../' + folder, import.meta.url).href;
  return folder;
}

/** Default folder of bundled models: `<repo>/public/models/` in Node, `BASE_URL/models/` in browsers. */
export function defaultLocalModelPath(): string {
  if (!isNode()) return baseUrl() + 'models/';
  // Kept in a variable so that Vite does not try to turn it into a bundled asset URL.
  const relative = '../../public/models/';
  const url = new URL(relative, import.meta.url);
  if (url.protocol !== 'file:') return url.href;
  const path = decodeURIComponent(url.pathname);
  return /^\/[A-Za-z]:\//.test(path) ? path.slice(1) : path; // Windows drive letters
}

/**
 * transformers.js reads its settings from the global `env` while a pipeline loads files, so
 * loads with different settings must not interleave. This chain serialises them (module state,
 * but only a lock: each embedder keeps its own pipeline).
 */
let envLock: Promise<unknown> = Promise.resolve();

async function withEnv<T>(
  env: Transformers['env'],
  makeSettings: (current: Transformers['env']) => EnvSettings,
  fn: () => Promise<T>,
): Promise<T> {
  const run = async (): Promise<T> => {
    const settings = makeSettings(env);
    const saved: Partial<Record<EnvKey, unknown>> = {};
    const target = env as unknown as Record<EnvKey, unknown>;
    for (const key of Object.keys(settings) as EnvKey[]) {
      saved[key] = target[key];
      target[key] = settings[key];
    }
    try {
      return await fn();
    } finally {
      for (const key of Object.keys(saved) as EnvKey[]) target[key] = saved[key];
    }
  };
  const result = envLock.then(run, run);
  envLock = result.catch(() => undefined);
  return result;
}
type EnvKey = 'allowLocalModels' | 'allowRemoteModels' | 'remoteHost' | 'fetch';
type EnvSettings = Partial<Pick<Transformers['env'], EnvKey>>;
type Fetch = Transformers['env']['fetch'];

/** A fetch that gives up if no response (headers) arrives within `ms`; the body is not limited. */
function fetchWithTimeout(base: Fetch, ms: number): Fetch {
  return async (input, init) => {
    const controller = new AbortController();
    const outer = (init as { signal?: AbortSignal } | undefined)?.signal;
    if (outer?.aborted) controller.abort(outer.reason);
    outer?.addEventListener('abort', () => controller.abort(outer.reason), { once: true });
    const timer = setTimeout(
      () => controller.abort(new Error(`no answer from ${String(input)} within ${ms} ms`)),
      ms,
    );
    try {
      return await base(input, { ...init, signal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Browser: make onnxruntime-web load its .mjs/.wasm from the app, never from the CDN. */
function configureWasm(env: Transformers['env'], prefix: string | undefined): void {
  if (isNode()) return;
  const wasm = env.backends.onnx.wasm;
  if (!wasm) return;
  const current = wasm.wasmPaths;
  const isDefault =
    current === undefined ||
    (typeof current === 'object' && String(current.wasm ?? '').startsWith(CDN_PREFIX));
  if (prefix === undefined && !isDefault) return; // the app configured it itself
  const base = prefix ?? baseUrl() + 'ort/';
  // Keep the file names transformers.js chose (asyncify build, or the plain one on old Safari).
  const fileOf = (u: unknown, fallback: string): string => {
    const name = typeof u === 'string' || u instanceof URL ? String(u).split('/').pop() : '';
    return name?.startsWith('ort-wasm') ? name : fallback; // not a blob: URL set after loading
  };
  // Threads when the page is cross-origin isolated; the settings say how many and why.
  wasm.numThreads = embeddingThreads().threads;
  const paths = typeof current === 'object' ? current : {};
  wasm.wasmPaths = {
    mjs: base + fileOf(paths.mjs, 'ort-wasm-simd-threaded.asyncify.mjs'),
    wasm: base + fileOf(paths.wasm, 'ort-wasm-simd-threaded.asyncify.wasm'),
  };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Creates an embedder. Nothing is loaded until the first `ready()` or `embed()`.
 * Empty or whitespace-only texts (and texts with no known word, for the bundled model) get a
 * zero vector: cosine 0 with everything, never NaN.
 */
export function createEmbedder(options: CreateEmbedderOptions = {}): Embedder {
  const chosen = options.model;
  const requestedModel = async (): Promise<string> => {
    if (typeof chosen !== 'function') return chosen ?? DEFAULT_MODEL;
    try {
      return await chosen();
    } catch {
      return DEFAULT_MODEL;
    }
  };
  const allowFallback = options.fallback ?? true;
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 32));
  const report = (p: EmbedderProgress): void => {
    try {
      options.onProgress?.(p);
    } catch {
      // a failing progress listener must not break loading
    }
  };

  let loading: Promise<Loaded> | null = null;

  /** The bundled static model, without transformers.js or the ONNX runtime. */
  async function loadBundled(id: string): Promise<Loaded> {
    // The folder only for files not given one by one (a blob: worker has no base to resolve it).
    const locate = (file: StaticModelFile): string => {
      const given = options.bundledFiles?.[file];
      if (given) return given;
      const folder = options.localModelPath ?? defaultLocalModelPath();
      return `${folder.endsWith('/') ? folder : folder + '/'}${id}/${file}`;
    };
    const model = await loadStaticModel(locate, (file, fraction) =>
      report({ status: 'load', file, progress: fraction }),
    );
    const info = modelInfo(id);
    if (info.dims !== model.dims) {
      throw new Error(`${id} has ${model.dims} dimensions where ${info.dims} were expected`);
    }
    return {
      info,
      embedBatch: (texts) => Promise.resolve(texts.map((t) => model.embed(t))),
      dispose: () => Promise.resolve(),
    };
  }

  async function loadModel(id: string, dtype: DataType | undefined): Promise<Loaded> {
    if (MODELS[id]?.bundled) return loadBundled(id);
    const transformers: Transformers = await import('@huggingface/transformers');
    const { env, pipeline } = transformers;
    configureWasm(env, options.wasmPaths);
    const known = MODELS[id];
    const settings = (current: Transformers['env']): EnvSettings => ({
      allowLocalModels: false,
      allowRemoteModels: true,
      remoteHost: options.remoteHost ?? HF_HOST,
      fetch: fetchWithTimeout(current.fetch, options.hubTimeoutMs ?? 15_000),
    });
    const progress_callback = (p: ProgressInfo): void => {
      switch (p.status) {
        case 'initiate':
          report({ status: 'load', file: p.file, progress: 0 });
          break;
        case 'progress':
          report({ status: 'download', file: p.file, progress: p.progress / 100 });
          break;
        case 'progress_total':
          report({ status: 'download', progress: p.progress / 100 });
          break;
        case 'done':
          report({ status: 'load', file: p.file, progress: 1 });
          break;
        default:
          break; // 'download' (start of a file) and 'ready' (we send our own)
      }
    };
    const extractor = (await withEnv(env, settings, () =>
      pipeline('feature-extraction', id, {
        dtype: dtype ?? known?.dtype,
        device: options.device,
        progress_callback,
      }),
    )) as unknown as Extractor;
    const info = modelInfo(id);
    if (!info.dims) {
      // Unknown hub model: learn the vector length from one call.
      const probe = await extractor(['dimension probe'], { pooling: 'mean', normalize: true });
      info.dims = probe.dims.at(-1) ?? 0;
      probe.dispose?.();
    }
    return {
      info,
      async embedBatch(texts) {
        const tensor = await extractor(texts, { pooling: 'mean', normalize: true });
        const data = tensor.data as Float32Array;
        const dims = tensor.dims[1];
        // slice, not subarray: a view would keep (and, in IndexedDB or postMessage,
        // serialise) the whole batch buffer behind every vector.
        const rows = texts.map((_, row) => data.slice(row * dims, (row + 1) * dims));
        tensor.dispose?.();
        return rows;
      },
      dispose: () => extractor.dispose(),
    };
  }

  async function load(): Promise<Loaded> {
    const requested = await requestedModel();
    let loaded: Loaded;
    try {
      loaded = await loadModel(requested, options.dtype);
    } catch (err) {
      if (!allowFallback || requested === BUNDLED_MODEL) {
        throw new ModelUnavailableError(
          `Embedding model ${requested} could not be loaded: ${errorMessage(err)}`,
          { cause: err },
        );
      }
      report({
        status: 'fallback',
        message:
          `Embedding model ${requested} could not be loaded (${errorMessage(err)}); ` +
          `using the bundled offline model ${BUNDLED_MODEL}.`,
      });
      try {
        loaded = await loadModel(BUNDLED_MODEL, undefined);
      } catch (err2) {
        throw new ModelUnavailableError(
          `Neither ${requested} nor the bundled model ${BUNDLED_MODEL} could be loaded: ` +
            errorMessage(err2),
          { cause: err2 },
        );
      }
    }
    report({ status: 'ready', progress: 1, message: `Embedding model: ${loaded.info.id}` });
    return loaded;
  }

  function ensureLoaded(): Promise<Loaded> {
    if (!loading) {
      const attempt = load();
      loading = attempt;
      // A failed load is not cached: the next call tries again (the hub may be back).
      attempt.catch(() => {
        if (loading === attempt) loading = null;
      });
    }
    return loading;
  }

  return {
    async ready(): Promise<ModelInfo> {
      return { ...(await ensureLoaded()).info };
    },

    async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
      if (texts.length === 0) return [];
      signal?.throwIfAborted();
      const { info, embedBatch } = await ensureLoaded();
      const out = new Array<Float32Array>(texts.length);
      const todo: number[] = [];
      texts.forEach((t, i) => {
        if (t.trim() === '') out[i] = new Float32Array(info.dims);
        else todo.push(i);
      });
      for (let start = 0; start < todo.length; start += batchSize) {
        signal?.throwIfAborted();
        const batch = todo.slice(start, start + batchSize);
        const rows = await embedBatch(batch.map((i) => texts[i]));
        batch.forEach((textIndex, row) => {
          const v = rows[row] as Float32Array;
          if (Number.isNaN(v[0])) v.fill(0); // no known token: 0/0 in normalisation
          out[textIndex] = v;
        });
      }
      return out;
    },

    async dispose(): Promise<void> {
      const current = loading;
      loading = null;
      if (!current) return;
      try {
        await (await current).dispose();
      } catch {
        // nothing loaded, nothing to release
      }
    },
  };
}
