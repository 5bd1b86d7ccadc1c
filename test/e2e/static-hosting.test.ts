// End to end: one production build (the config `npm run build` uses, nothing overridden) served
// by a plain static server with no special headers, at a domain's root and under a sub-path, as
// GitHub Pages does. In each: the app loads with only relative URLs, its service worker takes over
// and makes the page cross-origin isolated with one reload, a memory saved through the chat is
// found by search, the model files are downloaded once, and a reload while offline still shows
// the app and the memory. And when the app's script cannot load (opened from disk, files missing),
// the page says so in words instead of staying blank. docs/hosting.md describes the design.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISOLATION_HEADERS } from '../../src/isolation';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';
import { demoReply } from '../fixtures/fake-llm/demo';
import { launchChromium } from './chromium';
import { runSearch } from './explorer-fixture';
import { serveStatic } from './static-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHOTS = '/tmp/sm-shots';
const FACT = 'the lighthouse key hangs behind the blue door';

/** Searches memory from the explorer's search box and returns the paths listed. */
async function searchFor(page: Page, query: string): Promise<string> {
  await runSearch(page, query, 60_000);
  const list = page.locator('sm-memory-search').getByRole('list', { name: 'Search results' });
  return (await list.textContent()) ?? '';
}

/** The Cache Storage entries of the service worker's on-demand file cache, as paths. */
function cachedFiles(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const cache = await caches.open('structured-memory-files');
    return (await cache.keys()).map((r) => new URL(r.url).pathname);
  });
}

describe('one build on any static host', () => {
  let outDir = '';
  let browser: Browser | undefined;
  let llm: FakeServer | undefined;

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-static-'));
    await mkdir(SHOTS, { recursive: true });
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
    });
    // The scripted demo model: "Remember that …" saves a memory under Notes/.
    llm = await startFakeServer('koboldcpp', { defaultReply: demoReply });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await llm?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  for (const prefix of ['/', '/some/sub/path/']) {
    it(`served plainly at ${prefix}: isolated after one reload, saves, finds, works offline`, async () => {
      if (!browser || !llm) throw new Error('setup failed');
      // GitHub Pages' headers: none of ours, ten minutes of caching, validators.
      const server = await serveStatic(outDir, {
        headers: {},
        prefix,
        cacheControl: 'public, max-age=600',
      });
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      try {
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(error.message));
        let loads = 0;
        page.on('load', () => loads++);

        await page.goto(server.url);
        // The first load is not isolated (no headers); the service worker takes over, and the
        // page reloads once into its responses, which carry COOP/COEP.
        // (Polled from here: an evaluation that meets the reload fails, and is asked again.)
        await expect
          .poll(
            () =>
              page
                .evaluate(() => navigator.serviceWorker.controller !== null && crossOriginIsolated)
                .catch(() => false),
            { timeout: 60_000 },
          )
          .toBe(true);
        const tree = page.getByRole('tree', { name: 'Memory' });
        await tree.waitFor({ timeout: 60_000 });
        // The reload's load event may come after the tree is drawn.
        await expect.poll(() => loads, { timeout: 30_000 }).toBe(2);
        const cores = await page.evaluate(() => navigator.hardwareConcurrency);
        const threads = Math.min(4, Math.ceil(cores / 2));

        // Everything came from under the prefix, and nothing was missing.
        expect(server.requests.filter((r) => !r.url.startsWith(prefix))).toEqual([]);
        // (Status 0: still being answered, e.g. the model the worker is fetching; 304: the
        // service worker asked whether the page's copy of a file is current.)
        expect(server.requests.filter((r) => r.status >= 300 && r.status !== 304)).toEqual([]);

        // Settings say how many threads embeddings use, and why.
        await page.getByRole('button', { name: 'Settings', exact: true }).click();
        const dialog = page.getByRole('dialog', { name: 'Settings' });
        await expect
          .poll(() => dialog.locator('#embeddingModel-hint').textContent())
          .toContain(
            `Embeddings use ${threads} ${threads === 1 ? 'thread' : 'threads'} (half of this device’s ${cores} cores, at most 4)`,
          );
        expect(await dialog.locator('#embeddingModel-hint').textContent()).toContain(
          'this page is cross-origin isolated',
        );
        await dialog.getByRole('textbox', { name: 'Endpoint URL' }).fill(llm.url);
        await dialog.getByRole('button', { name: 'Save' }).click();
        await expect
          .poll(() => page.getByText('fake-model').count(), { timeout: 30_000 })
          .toBeGreaterThan(0);

        // A memory saved through the chat is found by search.
        await page.getByRole('textbox', { name: 'Message' }).fill(`Remember that ${FACT}.`);
        await page.getByRole('button', { name: 'Send' }).click();
        await expect
          .poll(() => tree.getByRole('treeitem', { name: 'Notes' }).count(), { timeout: 60_000 })
          .toBe(1);
        expect(await searchFor(page, 'lighthouse key')).toContain('blue door');

        // The worker fetched the bundled model (and, for it, the ONNX runtime) through the
        // service worker's cache: each file once from the server, and now cached.
        const fetched = server.requests
          .map((r) => r.url)
          .filter((u) => /^(ort|models)\//.test(u.slice(prefix.length)));
        expect(fetched.some((u) => u.includes('/models/'))).toBe(true);
        expect(fetched.length).toBe(new Set(fetched).size);
        const cached = await cachedFiles(page);
        for (const url of fetched) expect(cached, url).toContain(url);

        // Still the same two loads: the reload happened once.
        expect(loads).toBe(2);
        // Nothing was downloaded twice: the precache and the model cache reuse what the page
        // fetched, and the reload's check of sw.js is answered 304 (docs/hosting.md).
        const bodies = server.requests
          .filter((r) => r.status === 200)
          .map((r) => r.url.replace(/\?.*$/, ''));
        expect(bodies.filter((url, i) => bodies.indexOf(url) !== i)).toEqual([]);

        await context.setOffline(true);
        try {
          await page.reload();
          expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
          await expect
            .poll(() => tree.getByRole('treeitem', { name: 'Notes' }).count(), { timeout: 60_000 })
            .toBe(1);
          expect(await searchFor(page, 'lighthouse key')).toContain('blue door');
          const name = prefix === '/' ? 'static-root' : 'static-subpath';
          await page.screenshot({ path: `${SHOTS}/${name}-offline-1280.png` });
          await page.setViewportSize({ width: 390, height: 844 });
          await page.screenshot({ path: `${SHOTS}/${name}-offline-390.png` });
        } finally {
          await context.setOffline(false);
        }
        expect(errors).toEqual([]);
      } finally {
        await context.close();
        await server.close();
      }
    });
  }

  it('ships a _headers file that gives Netlify and Cloudflare Pages the isolation headers', async () => {
    const rules = await readFile(join(outDir, '_headers'), 'utf8');
    const lines = rules.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(lines[0]).toBe('/*');
    for (const [name, value] of Object.entries(ISOLATION_HEADERS)) {
      expect(lines).toContain(`  ${name}: ${value}`);
    }
  });

  it('says in words why it cannot start when opened from disk', async () => {
    if (!browser) throw new Error('setup failed');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      await page.goto(pathToFileURL(join(outDir, 'index.html')).href);
      const alert = page.locator('#boot-error');
      await alert.waitFor();
      expect(await alert.getAttribute('role')).toBe('alert');
      const text = await alert.textContent();
      expect(text).toContain('Structured Memory could not start');
      expect(text).toContain('file://');
      expect(text).toContain('python3 -m http.server');
      await page.screenshot({ path: `${SHOTS}/boot-error-file-1280.png` });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: `${SHOTS}/boot-error-file-390.png` });
    } finally {
      await context.close();
    }
  });

  it('says which script failed when the upload is missing files', async () => {
    if (!browser) throw new Error('setup failed');
    const server = await serveStatic(outDir, { headers: {}, prefix: '/app/' });
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      serviceWorkers: 'block',
    });
    try {
      const page = await context.newPage();
      // As if assets/ had not been uploaded.
      await page.route('**/assets/**', (route) => route.fulfill({ status: 404, body: '' }));
      await page.goto(server.url);
      const alert = page.locator('#boot-error');
      await alert.waitFor();
      const text = await alert.textContent();
      expect(text).toMatch(/its script http:\/\/127\.0\.0\.1:\d+\/app\/assets\/index-[\w-]+\.js/);
      expect(text).toContain('assets/ folder beside index.html');
      await page.screenshot({ path: `${SHOTS}/boot-error-missing-1280.png` });
    } finally {
      await context.close();
      await server.close();
    }
  });
});
