// Build, worker, dev/preview server and test configuration.
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { defineConfig } from 'vitest/config';
import { BUNDLED_MODEL } from './src/embeddings/models';

/**
 * The ONNX runtime files the browser fetches at run time. transformers.js 4.x imports
 * `onnxruntime-web/webgpu` (ort.webgpu.bundle.min.mjs); given a `wasmPaths` prefix, that
 * bundle loads its asyncify Emscripten loader and binary from the prefix instead of a CDN.
 */
export const ORT_FILES = [
  'ort-wasm-simd-threaded.asyncify.mjs',
  'ort-wasm-simd-threaded.asyncify.wasm',
] as const;

/** The folder of the onnxruntime-web that transformers.js itself resolves, so versions match. */
function ortDistDir(): string {
  const fromRoot = createRequire(import.meta.url);
  const transformers = fromRoot.resolve('@huggingface/transformers');
  const fromTransformers = createRequire(transformers);
  return dirname(fromTransformers.resolve(`onnxruntime-web/${ORT_FILES[1]}`));
}

const ORT_MIME: Record<string, string> = {
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
};

/**
 * Serves the ONNX runtime from the app itself under `BASE_URL + 'ort/'` (SPEC §5: never
 * a CDN): copied into the build output, and streamed from node_modules by the dev server.
 */
function onnxRuntimeFiles(): Plugin {
  let base = '/';
  return {
    name: 'structured-memory:onnx-runtime',
    configResolved(config) {
      base = config.base;
    },
    configureServer(server) {
      const dir = ortDistDir();
      server.middlewares.use(`${base}ort/`, (req, res, next) => {
        const name = (req.url ?? '').split('?')[0].replace(/^\//, '');
        const file = ORT_FILES.find((f) => f === name);
        if (!file) return next();
        const path = join(dir, file);
        stat(path).then(
          (info) => {
            res.setHeader('Content-Type', ORT_MIME[file.slice(file.lastIndexOf('.'))]);
            res.setHeader('Content-Length', String(info.size));
            createReadStream(path).pipe(res);
          },
          (error: unknown) => next(error),
        );
      });
    },
    async generateBundle() {
      const dir = ortDistDir();
      for (const file of ORT_FILES) {
        this.emitFile({
          type: 'asset',
          fileName: `ort/${file}`,
          source: await readFile(join(dir, file)),
        });
      }
    },
  };
}

/**
 * The ORT bundle names its binary as `new URL(file, import.meta.url)`, so a build would emit a
 * second, hashed 27 MB copy into assets/. This points it at the copy under `ort/` instead.
 * Needed in the worker build, where transformers.js runs.
 */
function onnxRuntimeUrls(): Plugin {
  let base = '/';
  return {
    name: 'structured-memory:onnx-runtime-urls',
    apply: 'build',
    configResolved(config) {
      base = config.base;
    },
    transform(code, id) {
      if (!id.includes('/onnxruntime-web/dist/')) return null;
      let out = code;
      for (const file of ORT_FILES) {
        out = out.replaceAll(
          `new URL("${file}",import.meta.url)`,
          `new URL(${JSON.stringify(`${base}ort/`)}+"${file}",self.location.href)`,
        );
      }
      return out === code ? null : { code: out, map: null };
    },
  };
}

/**
 * Cross-origin isolation, so the ONNX runtime may use threads (SharedArrayBuffer needs
 * `crossOriginIsolated`). COEP `require-corp` still lets the page make CORS-mode fetches to the
 * user's LLM server and the model hub; every file of the app is same-origin.
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

/**
 * `server.headers` reaches only Vite's own middlewares; this sets the headers first, for every
 * dev response, so the ONNX runtime files (served by a plugin middleware, and loaded as worker
 * scripts by the threaded runtime) carry COEP too.
 */
function isolationHeaders(): Plugin {
  return {
    name: 'structured-memory:isolation-headers',
    apply: 'serve',
    configureServer(server) {
      server.middlewares.use((_req, res, next) => {
        for (const [name, value] of Object.entries(ISOLATION_HEADERS)) res.setHeader(name, value);
        next();
      });
    },
  };
}

/** The bundled offline model's files (the hub model is cached by transformers.js itself). */
const BUNDLED_MODEL_FILES = `models/${BUNDLED_MODEL}/`;

/**
 * The installable, offline app (SPEC §7): a Workbox service worker precaching the app shell,
 * the ONNX runtime under `ort/` and the bundled model. New versions wait until the user
 * accepts them in `<sm-update-prompt>` (registerType 'prompt').
 */
function pwa() {
  return VitePWA({
    registerType: 'prompt',
    // `<sm-update-prompt>` registers through `virtual:pwa-register` (a module: the CSP allows
    // no inline script), so nothing is injected into index.html.
    injectRegister: false,
    strategies: 'generateSW',
    // Not NODE_ENV: under Vitest that is 'test', which would ship Workbox's logging build.
    mode: 'production',
    manifest: {
      // Relative to the manifest, so a build with another `base` stays installable.
      id: './',
      name: 'Structured Memory',
      short_name: 'Memory',
      description: 'Long-term, hierarchical memory for your local LLM, kept in your browser.',
      lang: 'en',
      start_url: './',
      scope: './',
      display: 'standalone',
      theme_color: '#1d4ed8',
      background_color: '#f6f7f9',
      categories: ['productivity', 'utilities'],
      // Made from public/icon.svg by `npm run build:icons`.
      icons: [
        { src: 'pwa-192x192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
        { src: 'pwa-512x512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
        { src: 'maskable-512x512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
      ],
    },
    // The globs below already take every icon from the build output (the plugin adds the
    // manifest itself); listing them again would precache each twice.
    includeManifestIcons: false,
    workbox: {
      // Globbed in the build output once it is written (the service worker is generated when
      // the bundle closes): that includes the public/ files and the ONNX runtime, which
      // onnxRuntimeFiles() emits in generateBundle.
      globPatterns: [
        '**/*.{html,js,css,svg,png}',
        'ort/*.{mjs,wasm}',
        `${BUNDLED_MODEL_FILES}*.json`,
        `${BUNDLED_MODEL_FILES}onnx/*.onnx`,
      ],
      // The threaded ONNX runtime binary is about 27 MB.
      maximumFileSizeToCacheInBytes: 40 * 1024 * 1024,
      navigateFallback: 'index.html',
      // Only page navigations fall back to the app shell, never file paths.
      navigateFallbackDenylist: [/^\/(ort|models|assets)\//],
      cleanupOutdatedCaches: true,
      // A new version waits for the user (the prompt posts SKIP_WAITING); the first one
      // controls the open page at once, so it works offline without a reload.
      clientsClaim: true,
      skipWaiting: false,
    },
  });
}

export default defineConfig({
  plugins: [isolationHeaders(), onnxRuntimeFiles(), onnxRuntimeUrls(), pwa()],
  worker: { format: 'es', plugins: () => [onnxRuntimeUrls()] },
  // The dev server's dependency scan does not follow `new Worker(new URL(…))`; naming the
  // worker finds its dependencies (transformers.js, Dexie) up front, not with a reload.
  optimizeDeps: { entries: ['index.html', 'workers/memory.worker.ts'] },
  server: { headers: { ...ISOLATION_HEADERS } },
  preview: { headers: { ...ISOLATION_HEADERS } },
  build: {
    target: 'es2022',
    // The ONNX runtime binary is large by nature; it is cached, not parsed as JS.
    chunkSizeWarningLimit: 2048,
  },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['test/setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          // A production build plus a real Chromium: slow on a small machine.
          testTimeout: 180_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: {
          // Hostile inputs from a seed (test/reliability/config.ts): a short run here, a long one
          // with `npm run test:reliability`. Its Chromium cases build the app, like e2e.
          name: 'reliability',
          include: ['test/reliability/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['test/setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
