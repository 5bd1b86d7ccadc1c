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
  InPageLoadProgress,
  InPageModelInfo,
} from '../src/llm/in-page/types';

/** A grammar every piece of text (valid UTF-8) matches. */
const ANY_TEXT = 'root ::= [^\\x00]*';

/** How the engine fails on a piece of broken UTF-8 (its JSON, then the copy of its answer). */
const BROKEN_TEXT = /invalid UTF-8|Invalid typed array length/;

let engine: Wllama | undefined;
let running: AbortController | undefined;

function threadsWanted(asked?: number): number {
  // Threads need SharedArrayBuffer, which needs a cross-origin isolated page.
  if (!self.crossOriginIsolated) return 1;
  if (asked !== undefined && Number.isInteger(asked) && asked >= 1) return Math.min(asked, 16);
  // Up to 4: more rarely helps a small model on a laptop, and leaves cores for the page.
  return Math.max(2, Math.min(4, navigator.hardwareConcurrency || 2));
}

/**
 * The Web Lock a tab's engine holds while its model is loaded, so another tab of the app knows
 * (each copy takes the model's size in memory again). Ending the worker lets it go.
 */
const LOCK = 'structured-memory:in-page-model';
let releaseLock: (() => void) | undefined;
/** Set while a load waits for another tab: going ahead anyway. */
let goAhead: (() => void) | undefined;

/** Takes the lock (now only, or when it is free); resolves whether it was taken. */
function takeLock(onlyNow: boolean): Promise<boolean> {
  return new Promise((taken) => {
    void navigator.locks.request(LOCK, { ifAvailable: onlyNow }, (lock) => {
      if (!lock) return taken(false);
      releaseLock?.();
      taken(true);
      return new Promise<void>((release) => (releaseLock = release));
    });
  });
}

/**
 * `blobs` whose reads are counted: llama.cpp reads the file in pieces while it loads (or wllama
 * copies it in, where the browser lacks JSPI), and each piece read reports the bytes so far.
 */
function counted(blobs: Blob[], onRead: (bytes: number) => void): Blob[] {
  let read = 0;
  const add = (n: number) => onRead((read += n));
  return blobs.map((blob) => {
    const slice = blob.slice.bind(blob);
    const stream = blob.stream.bind(blob);
    return Object.assign(blob, {
      slice(start?: number, end?: number, type?: string): Blob {
        const part = slice(start, end, type);
        const whole = part.arrayBuffer.bind(part);
        return Object.assign(part, {
          async arrayBuffer() {
            const buffer = await whole();
            add(buffer.byteLength);
            return buffer;
          },
        });
      },
      stream() {
        return stream().pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, out) {
              add(chunk.byteLength);
              out.enqueue(chunk);
            },
          }),
        );
      },
    });
  });
}

const api = {
  /**
   * Loads a GGUF (its parts, for a split model); replaces the model loaded before. Progress goes
   * to `onProgress`: waiting for another tab that has the model open (with `oneCopy`; until it
   * closes it, or `useHere`), the bytes read into the engine, then the rest of the load.
   */
  async load(
    files: Blob[],
    options: InPageLoadOptions,
    onProgress?: (progress: InPageLoadProgress) => void,
  ): Promise<InPageModelInfo> {
    running?.abort();
    await engine?.exit();
    engine = undefined;
    const total = files.reduce((sum, f) => sum + f.size, 0);
    if (options.oneCopy && !releaseLock && !(await takeLock(true))) {
      onProgress?.({ phase: 'other-tab', total });
      // Waits in the lock's queue (this tab holds it once the other lets go), or goes ahead.
      await new Promise<void>((ready) => {
        goAhead = ready;
        void takeLock(false).then(() => ready());
      });
      goAhead = undefined;
    }
    let shown = -1;
    const reading = counted(files, (bytes) => {
      const done = Math.min(bytes, total);
      // About a hundred reports at most, and the last one when all is read.
      if (done === total || done - shown >= total / 100) {
        shown = done;
        onProgress?.(done < total ? { phase: 'reading', done, total } : { phase: 'starting' });
      }
    });
    onProgress?.({ phase: 'reading', done: 0, total });
    const next = new Wllama({ default: wasmUrl }, { logger: LoggerWithoutDebug });
    next.setCompat(null); // never the CDN build
    const started = performance.now();
    await next.loadModel(reading, {
      n_ctx: options.context,
      n_threads: threadsWanted(options.threads),
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
   * goes to `onText` as it comes. Resolves with why it ended, once the page has taken every
   * piece: `onText` is a proxy on a port of its own, and a message on another port (this
   * answer) is not ordered after its messages, so the last piece's delivery is awaited first.
   */
  async chat(
    request: InPageChatRequest,
    onText: (text: string) => void | Promise<void>,
  ): Promise<{ finish: 'stop' | 'length' | 'aborted' }> {
    if (!engine) throw Object.assign(new Error('No model is loaded.'), { code: 'no-model' });
    running?.abort();
    const controller = new AbortController();
    running = controller;
    let finish: 'stop' | 'length' | 'aborted' = 'stop';
    // The last piece's delivery (the port delivers in order: when it is taken, all are).
    let delivered: void | Promise<void> = undefined;
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
          if (text) delivered = onText(text);
          if (choice?.finish_reason === 'length') finish = 'length';
        },
      });
    } catch (error) {
      if (!controller.signal.aborted) {
        // A piece that is not whole UTF-8 (a lone continuation byte: the grammar lets it by)
        // fails inside the engine when it is passed on; the engine itself is fine. The reply
        // ends there with what it has; anything else is a real failure.
        if (!BROKEN_TEXT.test(error instanceof Error ? error.message : String(error))) throw error;
        finish = 'stop';
      }
    } finally {
      if (running === controller) running = undefined;
    }
    // A page that could not take it (gone, or its callback failed) changes nothing here.
    await Promise.resolve(delivered).catch(() => undefined);
    return { finish: controller.signal.aborted ? 'aborted' : finish };
  },

  /** A load waiting for another tab goes ahead and loads a copy here too. */
  useHere(): void {
    goAhead?.();
  },

  /** Ends the running generation (its `chat` call resolves with `aborted`). */
  stop(): void {
    running?.abort();
  },

  async unload(): Promise<void> {
    running?.abort();
    await engine?.exit();
    engine = undefined;
    releaseLock?.();
    releaseLock = undefined;
  },
};

export type InPageModelApi = typeof api;
expose(api);
