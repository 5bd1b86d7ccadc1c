// End to end: with the bundled model, the production build in headless Chromium saves and finds
// a memory without ever requesting the ONNX runtime (no *.wasm, nothing under ort/, no chunk of
// the build that holds transformers.js or onnxruntime-web), whether the build's model is the
// bundled one or the user chose it in Settings. Service workers are blocked here: the precache is
// the PWA test's subject, this one is what the page and its worker fetch.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { serveStatic, type StaticServer } from './static-server';
import { BUNDLED_MODEL } from '../../src/embeddings/models';
import { callWorker } from './explorer-fixture';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every file under `dir`, as paths relative to it with a leading `/`. */
async function listFiles(dir: string, prefix = '/'): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory())
      out.push(...(await listFiles(join(dir, entry.name), `${prefix}${entry.name}/`)));
    else out.push(prefix + entry.name);
  }
  return out;
}

describe('bundled model in Chromium: no ONNX runtime', () => {
  let outDir = '';
  let server: StaticServer | undefined;
  let browser: Browser | undefined;
  const extraDirs: string[] = [];
  const extraServers: StaticServer[] = [];

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-static-'));
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
      define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('bundled') },
    });
    server = await serveStatic(outDir);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
    for (const s of extraServers) await s.close();
    for (const dir of extraDirs) await rm(dir, { recursive: true, force: true });
  });

  it('saves and finds a memory; the runtime is never requested', async () => {
    if (!browser || !server) throw new Error('setup failed');
    // The build still carries the runtime for transformer models: find the files that hold it.
    const files = await listFiles(outDir);
    const runtimeFiles: string[] = [];
    for (const file of files) {
      if (file.endsWith('.wasm') || file.startsWith('/ort/')) runtimeFiles.push(file);
      else if (/\.m?js$/.test(file)) {
        const code = await readFile(join(outDir, file), 'utf8');
        // The runtime's own code names itself; the app's loader only names the binary's files.
        if (code.includes('onnxruntime')) runtimeFiles.push(file);
      }
    }
    expect(runtimeFiles.some((f) => f.endsWith('.wasm'))).toBe(true);
    expect(runtimeFiles.some((f) => /^\/assets\/.*\.js$/.test(f))).toBe(true); // the lazy chunk

    const context = await browser.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    await page.goto(server.url);
    expect(await callWorker(page, 'modelInfo')).toMatchObject({ id: BUNDLED_MODEL, bundled: true });
    const save = (path: string, text: string) => callWorker(page, 'saveMemory', path, text);
    expect(
      await save('Home/Pets', 'Our dog Biscuit is a golden retriever who loves the beach.'),
    ).toMatchObject({ status: 'SUCCESS', version: 1 });
    expect(
      await save('Home/Taxes', 'The quarterly VAT return is filed by the accountant in March.'),
    ).toMatchObject({ status: 'SUCCESS', version: 1 });
    // A search in other words than the entry's finds it by meaning (no word in common).
    const found = (await callWorker(
      page,
      'queryMemoryHeading',
      'Home',
      'puppy at the seaside',
    )) as {
      status: string;
      signals: string;
      children: { path: string; similarity?: number }[];
    };
    expect(found).toMatchObject({ status: 'SUCCESS', signals: 'both' });
    expect(found.children[0].path).toBe('Home/Pets');
    expect(found.children[0].similarity).toBeGreaterThan(0.3);

    const paths = server.requests.map((r) => r.url.split('?')[0]);
    expect(paths).toContain(`/models/${BUNDLED_MODEL}/onnx/model.onnx`);
    expect(paths).toContain(`/models/${BUNDLED_MODEL}/tokenizer.json`);
    const runtimeRequests = paths.filter(
      (p) => /\.wasm$/.test(p) || /(^|\/)ort[-/]/.test(p) || runtimeFiles.includes(p),
    );
    expect(runtimeRequests).toEqual([]);

    let bytes = 0;
    for (const p of new Set(paths)) {
      const info = await stat(
        join(outDir, decodeURIComponent(p === '/' ? '/index.html' : p)),
      ).catch(() => undefined);
      if (info?.isFile()) bytes += info.size;
    }
    console.info(
      `static-model e2e: ${new Set(paths).size} files, ${(bytes / 1e6).toFixed(2)} MB uncompressed; ` +
        `runtime files in the build: ${runtimeFiles.join(', ')}`,
    );
    await page.screenshot({ path: '/tmp/sm-static-model.png' });
    await context.close();
  });
  it('with the bundled model chosen in Settings, a default build loads no runtime on the next start', async () => {
    if (!browser) throw new Error('setup failed');
    // The default build (hub model first, fallback to the bundled one).
    const defaultDir = await mkdtemp(join(tmpdir(), 'sm-static-default-'));
    extraDirs.push(defaultDir);
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir: defaultDir, emptyOutDir: true },
    });
    const served = await serveStatic(defaultDir);
    extraServers.push(served);
    const context = await browser.newContext({ serviceWorkers: 'block' });
    const first = await context.newPage();
    await first.goto(served.url);
    // What Settings stores when the user picks "bundled offline model".
    await callWorker(first, 'setSetting', 'app', { embeddingModel: 'bundled' });
    await callWorker(first, 'modelInfo');
    // The next start, in a page of its own: what the first page still loads (it follows the
    // stored setting, switching model) is not counted as the next start's.
    await first.close();
    const page = await context.newPage();
    const fetched: string[] = [];
    page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
    await page.goto(served.url);
    expect(
      await callWorker(page, 'saveMemory', 'Home/Pets', 'Our dog loves the beach.'),
    ).toMatchObject({
      status: 'SUCCESS',
    });
    expect(await callWorker(page, 'modelInfo')).toMatchObject({ id: BUNDLED_MODEL });
    // Service workers are blocked in this browser: the banner says so in words, not in a
    // script error's (behind "N more" while the message about the model server shows).
    const banner = page.getByText('Offline use is unavailable');
    const more = page.getByRole('button', { name: /^\d+ more$/ });
    await expect
      .poll(async () => {
        if (await banner.isVisible()) return true;
        if (
          (await more.getAttribute('aria-expanded', { timeout: 100 }).catch(() => null)) === 'false'
        ) {
          await more.click();
        }
        return false;
      })
      .toBe(true);
    expect(await banner.textContent()).toContain('did not let the app install its service worker');
    expect(await banner.textContent()).not.toMatch(/TypeError|undefined/);
    // Settings speak of no threads for a model that has none.
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const hint = page.getByRole('dialog', { name: 'Settings' }).locator('#embeddingModel-hint');
    await expect.poll(() => hint.textContent()).toContain('needs no neural runtime and no threads');
    expect(await hint.textContent()).not.toContain('Embeddings use');
    await page.screenshot({ path: '/tmp/sm-static-model-settings.png' });
    const after = fetched;
    expect(after.filter((p) => /transformers|\.wasm$|\/ort\//.test(p))).toEqual([]);
    // The bundled model was loaded once, not after a default model first.
    expect(after.filter((p) => p.endsWith('/onnx/model.onnx'))).toHaveLength(1);
    await context.close();
  });
});
