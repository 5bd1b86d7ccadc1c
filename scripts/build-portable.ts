// `npm run build:portable`: the whole app as one HTML file that opens by double-click from disk
// (README.md, "Portable file"). Two Vite builds with vite.portable.config.ts (the app as one ES
// module, the memory worker as one classic script), then one page that carries, gzip-compressed
// and base64-encoded: the app, the worker and the bundled model's three files. A small inline
// loader inflates the app and imports it from a blob: URL, makes the worker's source (the model
// first, then the worker) into another blob: URL, and says in words what a file:// page cannot
// have (a service worker) or what this browser refuses (storage).
//
// Usage: tsx scripts/build-portable.ts [--out <dir>]   (default dist-portable/)
import { createHash } from 'node:crypto';
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { BUNDLED_MODEL } from '../src/embeddings/models';
import { STATIC_MODEL_FILES } from '../src/embeddings/static-model';
import {
  IN_PAGE_WORKER_URL_GLOBAL,
  WASM_URL_GLOBAL,
  WORKER_URL_GLOBAL,
  portableConfig,
} from '../vite.portable.config';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const PORTABLE_FILE = 'structured-memory.html';

/** Gzip (level 9) then base64: no character in it needs escaping inside a <script> element. */
const pack = (bytes: Uint8Array): string => gzipSync(bytes, { level: 9 }).toString('base64');

/** Data blocks: inert script elements the loader reads by id. */
const block = (id: string, data: string): string =>
  `<script type="application/octet-stream" id="${id}">${data}</script>`;

/**
 * Runs in the worker before its own code, as a classic script: turns the model's base64 copies
 * (SM_PORTABLE_FILES, put in front by the loader) into blob: URLs made here, which this worker
 * may fetch (one made by the page it may not, on file://), for workers/memory.worker.ts.
 */
const WORKER_PRELUDE = `(function () {
  var packed = self.SM_PORTABLE_FILES || {};
  var urls = {};
  for (var name in packed) {
    var b64 = packed[name];
    var bytes;
    if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(b64);
    else {
      var text = atob(b64);
      bytes = new Uint8Array(text.length);
      for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    }
    urls[name] = URL.createObjectURL(new Blob([bytes]));
  }
  self.SM_BUNDLED_FILES = urls;
  delete self.SM_PORTABLE_FILES;
})();
`;

/**
 * Runs in the in-page model's worker before its own code: makes the WebAssembly file (its
 * gzip-compressed base64 copy, put in front by the loader) into a data: URL, which wllama's own
 * worker may fetch (a blob: URL made here it may not, on file://). A promise: the worker awaits
 * it when it first loads a model, so opening the page inflates nothing.
 */
const IN_PAGE_PRELUDE = `(function () {
  var b64 = self.SM_PORTABLE_WASM_GZ;
  delete self.SM_PORTABLE_WASM_GZ;
  self.${WASM_URL_GLOBAL} = (async function () {
    var bytes = Uint8Array.fromBase64 ? Uint8Array.fromBase64(b64) : Uint8Array.from(atob(b64), function (c) { return c.charCodeAt(0); });
    var wasm = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).blob();
    return new FileReaderSync().readAsDataURL(new Blob([wasm], { type: 'application/wasm' }));
  })();
})();
`;

/** The page's loader (an inline module script, allowed by its hash in the CSP). */
function loader(modelFiles: Record<string, string>): string {
  return `
const NOTICE_KEY = 'structured-memory:portable-notice';
const text = (id) => document.getElementById(id).textContent.trim();
const bytes = (b64) => {
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64);
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
};
const inflate = (id) =>
  new Response(new Blob([bytes(text(id))]).stream().pipeThrough(new DecompressionStream('gzip'))).text();

function storageWorks() {
  return new Promise((resolve) => {
    try {
      const request = indexedDB.open('structured-memory-portable-probe');
      request.onsuccess = () => {
        request.result.close();
        resolve(true);
      };
      request.onerror = () => resolve(false);
      request.onblocked = () => resolve(true);
    } catch {
      resolve(false);
    }
  });
}

function remembered() {
  try {
    return localStorage.getItem(NOTICE_KEY) === '1';
  } catch {
    return false;
  }
}

/** One line above the app: what this page does without (never a blank page, never only the console). */
function notice(message, { alert = false, dismissable = true } = {}) {
  const bar = document.createElement('div');
  bar.id = alert ? 'portable-error' : 'portable-notice';
  bar.setAttribute('role', alert ? 'alert' : 'status');
  bar.style.cssText =
    'display:flex;gap:0.75rem;align-items:center;padding:0.4rem 1rem;font:14px/1.4 system-ui,sans-serif;color:#1d2430;' +
    (alert ? 'background:#fef3f2;border-bottom:1px solid #fda29b' : 'background:#eef4ff;border-bottom:1px solid #c7d7fe');
  const words = document.createElement('span');
  words.style.flex = '1';
  words.textContent = message;
  bar.appendChild(words);
  if (dismissable) {
    const close = document.createElement('button');
    close.type = 'button';
    close.textContent = 'Dismiss';
    close.addEventListener('click', () => {
      bar.remove();
      try {
        localStorage.setItem(NOTICE_KEY, '1');
      } catch {}
    });
    bar.appendChild(close);
  }
  document.body.insertBefore(bar, document.body.firstChild);
  // The app fills the window (100dvh); with the line above it, it takes the height that is left.
  document.body.style.cssText = 'margin:0;display:flex;flex-direction:column;height:100dvh';
  const app = document.querySelector('sm-app');
  if (app) app.style.cssText = 'flex:1 1 auto;min-height:0;height:auto';
}

try {
  const [app, worker, inPage] = await Promise.all([
    inflate('sm-app-js'),
    inflate('sm-worker-js'),
    inflate('sm-in-page-js'),
  ]);
  // The model in this browser: its worker, with the WebAssembly file still compressed.
  globalThis.${IN_PAGE_WORKER_URL_GLOBAL} = URL.createObjectURL(
    new Blob(['self.SM_PORTABLE_WASM_GZ = "' + text('sm-wllama-wasm') + '";\\n', ${JSON.stringify(IN_PAGE_PRELUDE)}, inPage], { type: 'text/javascript' }),
  );
  const files = {};
  for (const [name, id] of Object.entries(${JSON.stringify(modelFiles)})) files[name] = text(id);
  const workerSource = 'self.SM_PORTABLE_FILES = ' + JSON.stringify(files) + ';\\n' + ${JSON.stringify(WORKER_PRELUDE)} + worker;
  globalThis.${WORKER_URL_GLOBAL} = URL.createObjectURL(new Blob([workerSource], { type: 'text/javascript' }));
  const fromFile = location.protocol === 'file:';
  if (!(await storageWorks())) {
    notice(
      'This browser keeps no storage for this page' +
        (fromFile ? ' (a file opened from disk)' : '') +
        ', so memories cannot be saved here. Open the file in Chromium, Edge or Firefox (not in a private window), or serve it from a web server.',
      { alert: true, dismissable: false },
    );
  } else if (fromFile && !remembered()) {
    notice(
      'Opened from a file: no server and no service worker (browsers run none for files; this file needs none, it holds the whole app and its model). Memories are kept in this browser\\'s storage for local files; Export keeps a copy elsewhere.',
    );
  }
  await import(URL.createObjectURL(new Blob([app], { type: 'text/javascript' })));
} catch (error) {
  notice('Structured Memory could not start from this file: ' + (error && error.message ? error.message : String(error)) + '. Use a current Chromium, Edge, Firefox or Safari.', { alert: true, dismissable: false });
  throw error;
}
`;
}

async function only(dir: string, pattern: RegExp): Promise<string> {
  const names = (await readdir(dir)).filter((n) => pattern.test(n));
  if (names.length !== 1)
    throw new Error(`expected one ${pattern} in ${dir}, found ${names.join(', ') || 'none'}`);
  return join(dir, names[0]);
}

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;

/** Builds the portable file into `outDir`; returns its path and size in bytes. */
export async function buildPortable(outDir: string): Promise<{ path: string; bytes: number }> {
  const work = await mkdtemp(join(tmpdir(), 'sm-portable-'));
  try {
    const appDir = join(work, 'app');
    const workerDir = join(work, 'worker');
    await build(portableConfig(ROOT, appDir));
    const workerConfig = portableConfig(ROOT, workerDir);
    await build({
      ...workerConfig,
      define: {
        ...workerConfig.define,
        'process.env.NODE_ENV': JSON.stringify('production'),
        // A classic worker has no import.meta; its own address is its blob: URL.
        'import.meta.url': 'self.location.href',
      },
      build: {
        ...workerConfig.build,
        lib: {
          entry: join(ROOT, 'workers/memory.worker.ts'),
          formats: ['iife'],
          name: 'StructuredMemoryWorker',
          fileName: () => 'memory.worker.js',
        },
      },
    });

    const inPageDir = join(work, 'in-page');
    const inPageConfig = portableConfig(ROOT, inPageDir);
    await build({
      ...inPageConfig,
      define: {
        ...inPageConfig.define,
        'process.env.NODE_ENV': JSON.stringify('production'),
        'import.meta.url': 'self.location.href',
      },
      build: {
        ...inPageConfig.build,
        lib: {
          entry: join(ROOT, 'workers/in-page-model.worker.ts'),
          formats: ['iife'],
          name: 'StructuredMemoryInPageModel',
          fileName: () => 'in-page-model.worker.js',
        },
      },
    });

    let html = await readFile(join(appDir, 'index.html'), 'utf8');
    const appJs = await readFile(await only(join(appDir, 'assets'), /\.js$/));
    const workerJs = await readFile(join(workerDir, 'memory.worker.js'));
    const inPageJs = await readFile(join(inPageDir, 'in-page-model.worker.js'));
    const wasm = await readFile(join(ROOT, 'node_modules/@wllama/wllama/esm/wasm/wllama.wasm'));
    if (appJs.includes('import.meta.url')) {
      throw new Error(
        'portable build: the app still resolves a file next to itself (import.meta.url)',
      );
    }
    const css = (await readdir(join(appDir, 'assets'))).filter((n) => n.endsWith('.css'));
    if (css.length) throw new Error(`portable build: unexpected stylesheets ${css.join(', ')}`);

    // The app's own script, the boot check (which tells hosted pages how to serve the app) and
    // links to files that do not travel with one file: replaced by the loader and a data: icon.
    html = html
      .replace(/<script type="module"[^>]*src="[^"]*"><\/script>\s*/g, '')
      .replace(/<script id="boot-check">[\s\S]*?<\/script>\s*/, '')
      .replace(/<!--[\s\S]*?-->\s*/g, '')
      .replace(/<link rel="(?:icon|apple-touch-icon|manifest)"[^>]*>\s*/g, '');
    if (/<script[^>]*src=/.test(html))
      throw new Error('portable build: a script is still loaded by URL');
    const icon = await readFile(join(ROOT, 'public/icon.svg'));
    const modelDir = join(ROOT, 'public/models', BUNDLED_MODEL);
    const modelIds: Record<string, string> = {};
    const blocks: string[] = [
      block('sm-app-js', pack(appJs)),
      block('sm-worker-js', pack(workerJs)),
      block('sm-in-page-js', pack(inPageJs)),
      block('sm-wllama-wasm', pack(wasm)),
    ];
    for (const [i, file] of STATIC_MODEL_FILES.entries()) {
      modelIds[file] = `sm-model-${i}`;
      blocks.push(block(modelIds[file], pack(await readFile(join(modelDir, file)))));
    }
    const code = loader(modelIds);
    const csp = [
      "default-src 'none'",
      `script-src ${sha256(code)} blob: 'wasm-unsafe-eval'`,
      'worker-src blob:',
      // The user's model server (any address), and the worker's own blob: copies of the model.
      'connect-src http: https: blob: data:',
      'img-src data: blob:',
      "style-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ].join('; ');
    html = html
      .replace(/(<meta\s+http-equiv="Content-Security-Policy"\s+content=")[^"]*(")/, `$1${csp}$2`)
      .replace(
        '<title>',
        `<link rel="icon" href="data:image/svg+xml;base64,${icon.toString('base64')}" />\n    <title>`,
      )
      .replace('</body>', `${blocks.join('\n')}\n<script type="module">${code}</script>\n</body>`);
    if (!html.includes(csp))
      throw new Error('portable build: index.html has no CSP meta to replace');

    await mkdir(outDir, { recursive: true });
    const path = join(outDir, PORTABLE_FILE);
    await writeFile(path, html);
    return { path, bytes: Buffer.byteLength(html) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const out = resolve(i > 0 ? process.argv[i + 1] : join(ROOT, 'dist-portable'));
  const { path, bytes } = await buildPortable(out);
  console.log(`${path}: ${(bytes / 1e6).toFixed(2)} MB`);
}
