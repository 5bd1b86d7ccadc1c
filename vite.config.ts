// Build, worker, dev/preview server and test configuration.
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';

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

export default defineConfig({
  plugins: [onnxRuntimeFiles(), onnxRuntimeUrls()],
  worker: { format: 'es', plugins: () => [onnxRuntimeUrls()] },
  // The dev server's dependency scan does not follow `new Worker(new URL(…))`; naming the
  // worker finds its dependencies (transformers.js, Dexie) up front, not with a reload.
  optimizeDeps: { entries: ['index.html', 'workers/memory.worker.ts'] },
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
    ],
  },
});
