// End to end: the production build as an installable, offline PWA in headless Chromium. The
// manifest and its icons, cross-origin isolation (COOP/COEP as `vite preview` sends them) with
// CORS fetches still allowed, the service worker precaching the app shell and caching the model
// files when the app first fetches them, a reload while offline that still runs the memory engine,
// and the prompt when a new version is deployed. (test/e2e/static-hosting.test.ts: the same build
// on a plain static host, at a root and under a sub-path.)
import { readFile, rm, mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build, type Plugin } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISOLATION_HEADERS } from '../../vite.config';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';
import { launchChromium } from './chromium';
import { serveStatic, type StaticServer } from './static-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHOTS = '/tmp/sm-shots';
const BUNDLED_MODEL = 'structured-memory/glove-100d-sif';
/** The app shell, which the service worker precaches. */
const MUST_PRECACHE = ['index.html', 'manifest.webmanifest'];
/**
 * Listed in the service worker with their revisions, but cached when the app first fetches them
 * (workers/sw.ts): the ONNX runtime and the bundled model.
 */
const ON_DEMAND = [
  'ort/ort-wasm-simd-threaded.asyncify.mjs',
  'ort/ort-wasm-simd-threaded.asyncify.wasm',
  `models/${BUNDLED_MODEL}/tokenizer.json`,
];
/**
 * What workers/sw.ts caches on first use: the runtime, the models, the transformers.js chunk,
 * the in-page model's worker and WebAssembly file.
 */
const onDemand = (url: string) =>
  /^(ort|models)\//.test(url) ||
  /^assets\/(transformers\.web-[\w-]+\.js|in-page-model\.worker-[\w-]+\.js|wllama-[\w-]+\.wasm)$/.test(
    url,
  );
/** The precache keeps the app shell under the address the page was loaded from. */
const cachedAs = (url: string) => (url === 'index.html' ? '' : url);

interface PrecacheEntry {
  url: string;
  revision: string | null;
}

/** The file list (with revisions) that Workbox injected into sw.js. */
async function precacheManifest(outDir: string): Promise<PrecacheEntry[]> {
  const sw = await readFile(join(outDir, 'sw.js'), 'utf8');
  const list = /(\[\{\s*"?revision"?\s*:[\s\S]*?\}\])/.exec(sw)?.[1];
  if (!list) throw new Error('sw.js has no injected [{revision, url}, …] list');
  // Workbox writes a JS array literal of {url, revision} objects with quoted keys or not.
  const json = list.replace(/([{,])\s*(url|revision)\s*:/g, '$1"$2":');
  return JSON.parse(json) as PrecacheEntry[];
}

/** Builds the app into `outDir` (emptied first); `plugins` change the build (a "new version"). */
async function buildApp(outDir: string, plugins: Plugin[] = []): Promise<void> {
  const started = performance.now();
  await build({
    root: ROOT,
    configFile: join(ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
    plugins,
  });
  console.info(`pwa e2e: vite build ${Math.round(performance.now() - started)} ms`);
}

/** A stand-in for the user's LLM server on another port: CORS-enabled, like KoboldCPP's. */
async function serveCorsApi(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const cors = {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Headers': 'content-type, authorization',
      'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors).end();
      return;
    }
    res
      .writeHead(200, { ...cors, 'Content-Type': 'application/json' })
      .end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model' }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

/** Calls a method of the worker's Comlink proxy, which the page keeps on <sm-app>. */
async function callWorker(page: Page, method: string, ...args: unknown[]): Promise<unknown> {
  await page.waitForFunction(
    () => !!(document.querySelector('sm-app') as { memory?: unknown } | null)?.memory,
  );
  return page.evaluate(
    async ([m, a]) => {
      const app = document.querySelector('sm-app') as unknown as {
        memory: Record<string, (...x: unknown[]) => Promise<unknown>>;
      };
      return app.memory[m as string](...(a as unknown[]));
    },
    [method, args] as const,
  );
}

/**
 * Waits until the app's service worker is activated (the app is installed for offline use) and
 * returns its state and the caches. Not until it controls this page: a page that was loading
 * when the worker activated can be passed over by its clients.claim() (it was not yet a client
 * that can be claimed), and is controlled only from its next load.
 */
async function serviceWorkerState(page: Page) {
  return page.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    const active = registration.active;
    if (active && active.state !== 'activated') {
      await new Promise<void>((resolve) => {
        active.addEventListener('statechange', () => {
          if (active.state === 'activated') resolve();
        });
      });
    }
    const cached: string[] = [];
    for (const name of await caches.keys()) {
      if (!name.startsWith('workbox-precache')) continue;
      const cache = await caches.open(name);
      for (const request of await cache.keys()) {
        const url = new URL(request.url);
        url.searchParams.delete('__WB_REVISION__');
        cached.push(url.pathname.slice(1) + url.search);
      }
    }
    return {
      state: registration.active?.state,
      script: registration.active?.scriptURL,
      cacheNames: await caches.keys(),
      cached,
    };
  });
}

/** Content-Security-Policy violations the page reported (collected by an init script). */
function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
}

describe('installable offline PWA', () => {
  let outDir = '';
  let server: StaticServer | undefined;
  let api: { url: string; server: Server } | undefined;
  let llm: FakeServer | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-pwa-'));
    await buildApp(outDir);
    server = await serveStatic(outDir, { headers: { ...ISOLATION_HEADERS } });
    api = await serveCorsApi();
    llm = await startFakeServer('koboldcpp');
    browser = await launchChromium();
    // Service workers are allowed here (the other e2e tests block them).
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // Runs before the page's own scripts, outside the CSP, to collect violations.
    await context.addInitScript(() => {
      const violations: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = violations;
      document.addEventListener('securitypolicyviolation', (event) => {
        violations.push(`${event.violatedDirective} ${event.blockedURI}`);
      });
    });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => api?.server.close(resolve));
    await llm?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  it('lists the app shell, the ONNX runtime and the bundled model, not the hub', async () => {
    const entries = await precacheManifest(outDir);
    const urls = entries.map((e) => e.url);
    for (const url of [...MUST_PRECACHE, ...ON_DEMAND]) expect(urls).toContain(url);
    // Every script of the build (the page, the memory worker, transformers.js).
    expect(urls.filter((u) => /^assets\/.+\.js$/.test(u)).length).toBeGreaterThanOrEqual(3);
    expect(urls.some((u) => u.startsWith('assets/memory.worker'))).toBe(true);
    // transformers.js is listed, to be cached when a transformer model first loads it.
    expect(urls.filter((u) => u.startsWith('assets/transformers')).filter(onDemand)).toHaveLength(
      1,
    );
    expect(new Set(urls).size).toBe(urls.length);
    expect(urls.some((u) => /huggingface|^https?:/.test(u))).toBe(false);
    expect(urls).not.toContain(`models/${BUNDLED_MODEL}/README.md`);
  });

  it('links a valid manifest whose icons load at their declared sizes', async () => {
    if (!context || !server) throw new Error('setup failed');
    const page = await context.newPage();
    await page.goto(server.url);
    expect(await page.title()).toBe('Structured Memory');
    const href = await page.locator('link[rel="manifest"]').getAttribute('href');
    expect(href).toBeTruthy();
    const manifestUrl = new URL(href ?? '', server.url).href;
    const manifest = await page.evaluate(async (url) => {
      const response = await fetch(url);
      return {
        contentType: response.headers.get('content-type'),
        body: (await response.json()) as {
          name: string;
          short_name: string;
          description: string;
          start_url: string;
          display: string;
          theme_color: string;
          background_color: string;
          icons: { src: string; sizes: string; type: string; purpose?: string }[];
        },
      };
    }, manifestUrl);
    expect(manifest.contentType).toMatch(/^application\/manifest\+json/);
    const body = manifest.body;
    expect(body).toMatchObject({ name: 'Structured Memory', display: 'standalone' });
    // The app's root, whatever `base` it is built for.
    expect(new URL(body.start_url, manifestUrl).href).toBe(server.url);
    expect(body.short_name.length).toBeGreaterThan(0);
    expect(body.short_name.length).toBeLessThanOrEqual(12);
    expect(body.description.length).toBeGreaterThan(0);
    expect(body.theme_color).toMatch(/^#[0-9a-f]{6}$/i);
    expect(body.background_color).toMatch(/^#[0-9a-f]{6}$/i);
    const sizes = (purpose: string) =>
      body.icons
        .filter((i) => (i.purpose ?? 'any').split(' ').includes(purpose))
        .map((i) => i.sizes);
    expect(sizes('any')).toEqual(expect.arrayContaining(['192x192', '512x512']));
    expect(sizes('maskable')).toContain('512x512');

    // The browser's own reading of it finds no errors. (Installability itself is what the
    // checks here and the offline test below assert: which objections a browser raises, beyond
    // those, differs between Chromium builds and profiles.)
    const cdp = await context.newCDPSession(page);
    const parsed = await cdp.send('Page.getAppManifest');
    expect(parsed.url).toBe(manifestUrl);
    expect(parsed.errors).toEqual([]);
    await cdp.detach();

    // Each icon decodes, as a PNG, at the size the manifest claims.
    for (const icon of body.icons) {
      const loaded = await page.evaluate(async (src) => {
        const image = new Image();
        image.src = src;
        await image.decode();
        return `${image.naturalWidth}x${image.naturalHeight}`;
      }, new URL(icon.src, manifestUrl).href);
      expect(loaded, icon.src).toBe(icon.sizes);
      expect(icon.type).toBe('image/png');
    }
    await page.close();
  });

  it('is cross-origin isolated, and CORS fetches to the LLM server still work', async () => {
    if (!context || !server || !api) throw new Error('setup failed');
    const page = await context.newPage();
    await page.goto(server.url);
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
    expect(await page.evaluate(() => typeof SharedArrayBuffer)).toBe('function');
    // A chat request is a CORS fetch (with a preflight for its JSON body): COEP allows it.
    const reply = await page.evaluate(async (url) => {
      const response = await fetch(`${url}v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ messages: [] }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    }, api.url);
    expect(reply).toMatchObject({ status: 200, body: { data: [{ id: 'fake-model' }] } });
    await page.close();
  });

  it('activates a service worker, then loads and runs the memory engine offline', async () => {
    if (!context || !server || !llm) throw new Error('setup failed');
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(server.url);

    const sw = await serviceWorkerState(page);
    expect(sw.state).toBe('activated');
    expect(sw.script).toBe(new URL('sw.js', server.url).href);
    const cached = new Set(sw.cached);
    const entries = await precacheManifest(outDir);
    for (const entry of entries.filter((e) => !onDemand(e.url))) {
      expect(cached.has(cachedAs(entry.url)), entry.url).toBe(true);
    }

    const saved = await callWorker(page, 'saveMemory', 'PWA/Offline/Note', {
      text: 'saved while online',
    });
    expect(saved).toMatchObject({ status: 'SUCCESS', version: 1 });
    // Online, the app reaches the model server set in Settings.
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const endpoint = llm.url;
    await page.getByRole('textbox', { name: 'Endpoint URL' }).fill(endpoint);
    await page.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => page.getByText('fake-model').count(), { timeout: 30_000 })
      .toBeGreaterThan(0);

    await context.setOffline(true);
    try {
      const before = server.requests.length;
      const asked = llm.requests.length;
      await page.reload();
      expect(await page.title()).toBe('Structured Memory');
      // The app shell came from the service worker, with its isolation headers.
      expect(await page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
      expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);

      // The app shows its memory, drawn from the worker's data.
      const tree = page.getByRole('tree', { name: 'Memory' });
      await expect
        .poll(() => tree.getByRole('treeitem', { name: 'PWA' }).count(), { timeout: 60_000 })
        .toBe(1);
      // Its requests to the model server fail, and it says so. (That, not navigator.onLine, is
      // what the person sees: some Chromium builds keep onLine true under offline emulation.)
      await expect
        .poll(
          () =>
            page
              .getByRole('status')
              .filter({ hasText: `Nothing answers at ${endpoint}` })
              .count(),
          { timeout: 30_000 },
        )
        .toBe(1);
      expect(llm.requests.length).toBe(asked);

      // The worker starts, loads the model from the service worker's file cache, and answers.
      const info = await callWorker(page, 'modelInfo');
      expect(info).toMatchObject({ id: BUNDLED_MODEL });
      expect(await callWorker(page, 'queryMemory', 'PWA/Offline/Note')).toMatchObject({
        status: 'SUCCESS',
        content: { text: 'saved while online' },
      });
      expect(
        await callWorker(page, 'saveMemory', 'PWA/Offline/Second', 'written offline'),
      ).toMatchObject({ status: 'SUCCESS', version: 1 });
      await page.screenshot({ path: `${SHOTS}/pwa-offline-1280.png` });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: `${SHOTS}/pwa-offline-390.png` });
      await page.setViewportSize({ width: 1280, height: 800 });
      // Nothing of the app reached the server while offline. (Chromium's own update check of
      // the service worker scripts is not covered by the offline emulation; it is not the app.)
      const swScripts = /^\/(sw|workbox-[\w-]+)\.js$/;
      expect(server.requests.slice(before).filter((r) => !swScripts.test(r.url))).toEqual([]);
    } finally {
      await context.setOffline(false);
    }
    expect(errors).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    await page.close();
  });

  it('offers "Reload to update" when a new version is deployed, and reloads into it', async () => {
    if (!context || !server) throw new Error('setup failed');
    const page = await context.newPage();
    await page.goto(server.url);
    const first = await serviceWorkerState(page);
    const oldCaches = first.cacheNames;
    const update = page.getByRole('button', { name: 'Reload to update' });
    expect(await update.count()).toBe(0);

    // Deploy a new version into the same folder: one changed file is a new precache revision.
    const marker: Plugin = {
      name: 'test:new-version',
      transformIndexHtml: (html) =>
        html.replace('</head>', '<meta name="sm-test-version" content="2" />\n</head>'),
    };
    await buildApp(outDir, [marker]);
    const entries = await precacheManifest(outDir);

    // The browser checks sw.js on navigation; the new worker installs and waits for the user.
    await page.reload();
    await update.waitFor({ timeout: 120_000 });
    // The running page is still the old version, served by the old worker.
    expect(await page.locator('meta[name="sm-test-version"]').count()).toBe(0);
    await page.screenshot({ path: `${SHOTS}/pwa-update-1280.png` });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/pwa-update-390.png` });
    await page.setViewportSize({ width: 1280, height: 800 });

    await Promise.all([page.waitForEvent('load', { timeout: 60_000 }), update.click()]);
    await page.locator('meta[name="sm-test-version"]').waitFor({ state: 'attached' });
    expect(await cspViolations(page)).toEqual([]);
    expect(await update.count()).toBe(0);
    const second = await serviceWorkerState(page);
    expect(second.state).toBe('activated');
    const cached = new Set(second.cached);
    for (const entry of entries.filter((e) => !onDemand(e.url))) {
      expect(cached.has(cachedAs(entry.url)), entry.url).toBe(true);
    }
    // Still one precache (outdated entries are cleaned up, not kept beside the new ones).
    expect(second.cacheNames.filter((n) => n.startsWith('workbox-precache'))).toEqual(
      oldCaches.filter((n) => n.startsWith('workbox-precache')),
    );
    await page.close();
  });
});
