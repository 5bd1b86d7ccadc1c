// Build, worker, dev/preview server and test configuration.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { defineConfig } from 'vitest/config';
import { ISOLATION_HEADERS } from './src/isolation.ts';

export { ISOLATION_HEADERS };

/**
 * Every URL of the build is relative (`./assets/…`, `./sw.js`, the manifest's scope), so one
 * dist/ works at a domain's root and under any sub-path (docs/hosting.md).
 */
const BASE = './';

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
 * Serves the ONNX runtime from the app itself under `BASE_URL + 'ort/'`, never from a CDN (the app
 * fetches nothing but its own files and the user's servers: docs/design.md, "Security"): copied
 * into the build output, and streamed from node_modules by the dev server.
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
        // A relative base is relative to the app's root, one folder above this chunk (assets/).
        const url = base.startsWith('.')
          ? `new URL(${JSON.stringify(`../${base}ort/`)}+"${file}",import.meta.url)`
          : `new URL(${JSON.stringify(`${base}ort/`)}+"${file}",self.location.href)`;
        out = out.replaceAll(`new URL("${file}",import.meta.url)`, url);
      }
      return out === code ? null : { code: out, map: null };
    },
  };
}

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

/**
 * index.html's one inline script (`<script id="boot-check">`, which says in words why the page
 * stayed blank) is allowed by its hash in the page's CSP, computed here so it cannot go stale.
 */
function bootCheckCsp(): Plugin {
  return {
    name: 'structured-memory:boot-check-csp',
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const script = /<script id="boot-check">([\s\S]*?)<\/script>/.exec(html)?.[1];
        if (script === undefined) {
          // Test and bench pages (test/e2e/harness, bench/browser) have no boot check.
          if (ctx.path === '/index.html')
            throw new Error('index.html has no <script id="boot-check">');
          return html;
        }
        const hash = createHash('sha256').update(script).digest('base64');
        return html.replace("script-src 'self'", `script-src 'self' 'sha256-${hash}'`);
      },
    },
  };
}

/**
 * Workbox's service worker build reads NODE_ENV, which Vitest sets to 'test': that would ship
 * Workbox's logging build. The service worker is always the production one.
 */
function productionWorkbox(): Plugin {
  return {
    name: 'structured-memory:production-workbox',
    config: () => ({ define: { 'process.env.NODE_ENV': JSON.stringify('production') } }),
  };
}

/**
 * The installable, offline app (docs/design.md, "The installable app"): the service worker (workers/sw.ts) precaches the app
 * shell; the ONNX runtime under `ort/` and the bundled model under `models/` are listed with their
 * revisions but cached when the app first fetches them, so a first visit downloads each once; it
 * adds the cross-origin isolation headers where the host sends none (docs/hosting.md). New
 * versions wait until the user accepts them in `<sm-update-prompt>` (registerType 'prompt').
 */
function pwa() {
  return VitePWA({
    registerType: 'prompt',
    // `<sm-update-prompt>` registers through `virtual:pwa-register` (a module: the CSP allows
    // no inline script but the boot check), so nothing is injected into index.html.
    injectRegister: false,
    strategies: 'injectManifest',
    srcDir: 'workers',
    filename: 'sw.ts',
    mode: 'production',
    manifest: {
      // Relative to the manifest, so the same build is installable at any path.
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
    // manifest itself); listing them again would list each twice.
    includeManifestIcons: false,
    injectManifest: {
      // Globbed in the build output once it is written: that includes the public/ files and the
      // ONNX runtime, which onnxRuntimeFiles() emits in generateBundle. workers/sw.ts precaches
      // all but `ort/`, `models/`, the in-page model's worker and wasm (`assets/*.wasm`) and the
      // transformers.js chunk, whose entries it uses as the revisions of its file cache.
      globPatterns: [
        '**/*.{html,js,css,svg,png}',
        'ort/*.{mjs,wasm}',
        'models/**/*',
        'assets/*.wasm',
      ],
      globIgnores: ['**/*.md', '_headers'],
      // The threaded ONNX runtime binary is about 27 MB.
      maximumFileSizeToCacheInBytes: 40 * 1024 * 1024,
      // A classic script: module service workers are not in every browser the app supports.
      rollupFormat: 'iife',
      buildPlugins: { vite: [productionWorkbox()] },
    },
  });
}

export default defineConfig({
  base: BASE,
  plugins: [isolationHeaders(), bootCheckCsp(), onnxRuntimeFiles(), onnxRuntimeUrls(), pwa()],
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
