// Build configuration of the portable single file (`npm run build:portable` runs
// scripts/build-portable.ts: two builds with this configuration, then one HTML file; README.md,
// "Portable file"). The app and its memory worker are built separately, each into one script;
// the worker starts from a blob: URL as a classic script (Chromium refuses a module worker from
// a blob: URL on a file:// page), and the bundled model is carried inside the page.
import type { InlineConfig, Plugin } from 'vite';

/** The global through which the page gives the app the worker's blob: URL. */
export const WORKER_URL_GLOBAL = 'SM_PORTABLE_WORKER_URL';

const PWA_STUB = '\0portable:pwa-register';
const TRANSFORMERS_STUB = '\0portable:transformers';

/** The global through which the page gives the app the in-page model worker's blob: URL. */
export const IN_PAGE_WORKER_URL_GLOBAL = 'SM_PORTABLE_IN_PAGE_WORKER_URL';
/**
 * The global through which that worker gets its WebAssembly file: a promise of a data: URL its
 * prelude makes from the file's compressed copy (scripts/build-portable.ts).
 */
export const WASM_URL_GLOBAL = 'SM_PORTABLE_WASM_URL';
const WASM_STUB = '\0portable:wllama-wasm';

/**
 * What a file opened from disk cannot have, replaced by small modules that say so:
 * - `virtual:pwa-register`: browsers run no service worker for file:// pages, and the file needs
 *   none (it holds the whole app); registration reports "no service worker" and the app starts.
 * - `@huggingface/transformers`: the ONNX runtime (27 MB) is not carried; choosing a transformer
 *   model fails with a sentence and the embedder falls back to the bundled model.
 * - the model in this browser (src/llm/in-page/connector.ts): its worker starts from the blob:
 *   URL the page made from its inline copy, as a classic script; in that worker the WebAssembly
 *   file is the data: URL its prelude makes, and wllama's own worker starts as a classic script
 *   (its code is one: Chromium refuses a module worker from a blob: URL on a file:// page).
 * - the worker's URL: `new URL('../workers/memory.worker.ts', import.meta.url)` becomes the
 *   blob: URL the page made from the worker's inline copy, started as a classic script.
 */
export function portableStubs(): Plugin {
  return {
    name: 'structured-memory:portable-stubs',
    enforce: 'pre',
    resolveId(id) {
      if (id === 'virtual:pwa-register') return PWA_STUB;
      if (id === '@huggingface/transformers') return TRANSFORMERS_STUB;
      if (id.endsWith('wllama.wasm?url')) return WASM_STUB;
      return null;
    },
    load(id) {
      if (id === WASM_STUB) return `export default '';`;
      if (id === PWA_STUB) {
        return `export function registerSW(options) {
  queueMicrotask(() => options.onRegisteredSW?.(undefined, undefined));
  return async () => location.reload();
}`;
      }
      if (id === TRANSFORMERS_STUB) {
        return `export const env = { backends: { onnx: {} } };
export async function pipeline() {
  throw new Error('the portable file carries only the bundled model; transformer models need the app served from a web server');
}`;
      }
      return null;
    },
    transform(code, id) {
      const replace = (what: RegExp, by: string, where: string) => {
        if (!what.test(code)) throw new Error(`portable build: ${where} changed; update ${what}`);
        code = code.replace(what, by);
      };
      if (id.endsWith('/src/llm/in-page/connector.ts')) {
        replace(
          /new URL\(\s*'\.\.\/\.\.\/\.\.\/workers\/in-page-model\.worker\.ts',\s*import\.meta\.url\s*\)/,
          `globalThis.${IN_PAGE_WORKER_URL_GLOBAL}`,
          'connector.ts',
        );
        replace(/type: 'module',/, "type: 'classic',", 'connector.ts');
        return { code, map: null };
      }
      if (id.endsWith('/workers/in-page-model.worker.ts')) {
        replace(
          /new Wllama\(\{ default: wasmUrl \}/,
          `new Wllama({ default: await self.${WASM_URL_GLOBAL} }`,
          'in-page-model.worker.ts',
        );
        return { code, map: null };
      }
      if (/\/@wllama\/wllama\/esm\/index\.js$/.test(id)) {
        replace(/new Worker\(workerURL, \{ type: "module" \}\)/, 'new Worker(workerURL)', 'wllama');
        return { code, map: null };
      }
      if (!id.endsWith('/src/worker-client.ts')) return null;
      const url = /new URL\(\s*'\.\.\/workers\/memory\.worker\.ts',\s*import\.meta\.url\s*\)/;
      const type = /type: 'module',/;
      if (!url.test(code) || !type.test(code)) {
        throw new Error(
          'portable build: src/worker-client.ts no longer creates the worker as expected',
        );
      }
      return {
        code: code
          .replace(url, `globalThis.${WORKER_URL_GLOBAL}`)
          .replace(type, "type: 'classic',"),
        map: null,
      };
    },
  };
}

/** Shared by both builds: the bundled model as the only model, nothing split or preloaded. */
export function portableConfig(root: string, outDir: string): InlineConfig {
  return {
    root,
    configFile: false,
    base: './',
    publicDir: false,
    logLevel: 'warn',
    define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('bundled') },
    plugins: [portableStubs()],
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      modulePreload: false,
      cssCodeSplit: false,
      assetsInlineLimit: Number.MAX_SAFE_INTEGER,
      chunkSizeWarningLimit: 4096,
    },
  };
}
