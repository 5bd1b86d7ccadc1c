// The "In this browser" model: llama.cpp compiled to WebAssembly (`@wllama/wllama`), in its own
// worker so generation never blocks the page. The wasm file comes from the app's own origin (the
// build copies it from the npm package); nothing is fetched from a CDN (compat mode is off).
// docs/in-page-model.md.
import { expose } from 'comlink';
import { LoggerWithoutDebug, Wllama } from '@wllama/wllama';
import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import type {
  InPageChatRequest,
  InPageLoadOptions,
  InPageModelInfo,
} from '../src/llm/in-page/types';

/** A grammar every piece of text (valid UTF-8) matches. */
const ANY_TEXT = 'root ::= [^\\x00]*';

let engine: Wllama | undefined;
let running: AbortController | undefined;

function threadsWanted(): number {
  // Threads need SharedArrayBuffer, which needs a cross-origin isolated page.
  if (!self.crossOriginIsolated) return 1;
  // Up to 4: more rarely helps a small model on a laptop, and leaves cores for the page.
  return Math.max(2, Math.min(4, navigator.hardwareConcurrency || 2));
}

const api = {
  /** Loads a GGUF (its parts, for a split model); replaces the model loaded before. */
  async load(files: Blob[], options: InPageLoadOptions): Promise<InPageModelInfo> {
    running?.abort();
    await engine?.exit();
    const next = new Wllama({ default: wasmUrl }, { logger: LoggerWithoutDebug });
    next.setCompat(null); // never the CDN build
    const started = performance.now();
    await next.loadModel(files, {
      n_ctx: options.context,
      n_threads: threadsWanted(),
      n_gpu_layers: 0,
    });
    engine = next;
    const info = next.getLoadedContextInfo();
    return {
      threads: next.getNumThreads(),
      multithreaded: next.isMultithread(),
      context: info.n_ctx,
      contextTrained: info.n_ctx_train,
      chatTemplate: next.getChatTemplate(),
      architecture: info.metadata['general.architecture'] ?? '',
      name: info.metadata['general.name'] ?? '',
      loadMs: Math.round(performance.now() - started),
    };
  },

  /**
   * Generates a reply to `request.messages` under the model's chat template; each piece of text
   * goes to `onText` as it comes. Resolves with why it ended.
   */
  async chat(
    request: InPageChatRequest,
    onText: (text: string) => void,
  ): Promise<{ finish: 'stop' | 'length' | 'aborted' }> {
    if (!engine) throw Object.assign(new Error('No model is loaded.'), { code: 'no-model' });
    running?.abort();
    const controller = new AbortController();
    running = controller;
    let finish: 'stop' | 'length' | 'aborted' = 'stop';
    try {
      await engine.createChatCompletion({
        messages: request.messages,
        max_tokens: request.maxTokens,
        temperature: request.temperature,
        seed: request.seed,
        // Without a grammar of its own, a reply still follows one that any text matches: it
        // keeps the model from writing broken UTF-8 (a lone byte token), which would end the
        // stream inside the engine with an error.
        grammar: request.grammar ?? (request.jsonSchema ? undefined : ANY_TEXT),
        ...(request.jsonSchema
          ? {
              response_format: {
                type: 'json_schema' as const,
                json_schema: { name: 'answer', schema: request.jsonSchema, strict: true },
              },
            }
          : {}),
        // llama.cpp's server takes `stop` as OpenAI does; wllama's types do not list it.
        ...(request.stop?.length ? ({ stop: request.stop } as object) : {}),
        stream: true,
        abortSignal: controller.signal,
        onData: (chunk) => {
          const choice = chunk.choices[0];
          const text = choice?.delta.content;
          if (text) onText(text);
          if (choice?.finish_reason === 'length') finish = 'length';
        },
      });
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    } finally {
      if (running === controller) running = undefined;
    }
    return { finish: controller.signal.aborted ? 'aborted' : finish };
  },

  /** Ends the running generation (its `chat` call resolves with `aborted`). */
  stop(): void {
    running?.abort();
  },

  async unload(): Promise<void> {
    running?.abort();
    await engine?.exit();
    engine = undefined;
  },
};

export type InPageModelApi = typeof api;
expose(api);
