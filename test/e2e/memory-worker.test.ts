// End to end: the production build in headless Chromium saves and reads a memory entry through
// the worker, offline (every request goes to the local server) and without CSP violations.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { showBanner } from './explorer-fixture';
import { serveStatic, type StaticServer } from './static-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCREENSHOT = '/tmp/sm-e2e.png';
const SCREENSHOT_FALLBACK = '/tmp/sm-e2e-fallback.png';
const ORT_WASM = '/ort/ort-wasm-simd-threaded.asyncify.wasm';
const ORT_MJS = '/ort/ort-wasm-simd-threaded.asyncify.mjs';
const BUNDLED_MODEL = 'structured-memory/glove-100d-sif';
/** The default LLM endpoint the app probes at start (nothing listens there in tests). */
const LLM_ENDPOINT = 'http://localhost:5001';

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

describe('memory worker in Chromium', () => {
  const outDirs: string[] = [];
  const servers: StaticServer[] = [];
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;

  /** Builds the app into a temporary folder and serves it; `model` is VITE_EMBEDDING_MODEL. */
  async function buildAndServe(model?: string): Promise<StaticServer> {
    const outDir = await mkdtemp(join(tmpdir(), 'sm-e2e-'));
    outDirs.push(outDir);
    const started = performance.now();
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
      define:
        model === undefined
          ? {}
          : { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify(model) },
    });
    console.info(`e2e: vite build ${Math.round(performance.now() - started)} ms`);
    const server = await serveStatic(outDir);
    servers.push(server);
    return server;
  }

  beforeAll(async () => {
    browser = await launchChromium();
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    for (const server of servers) await server.close();
    for (const outDir of outDirs) await rm(outDir, { recursive: true, force: true });
  });

  it('saves and reads an entry through the worker, offline and within the CSP', async () => {
    if (!browser) throw new Error('Chromium did not start');
    // The bundled model, chosen at build time: the hub is unreachable here, and this test
    // must not even try it. (Never a URL parameter: docs/design.md, "Security".)
    const server = await buildAndServe('bundled');
    context = await browser.newContext({ serviceWorkers: 'block' });
    const seen: string[] = [];
    context.on('request', (request) => seen.push(request.url()));
    const page = await context.newPage();
    const problems = watchProblems(page);
    // Runs before the page's own scripts, outside the CSP, to collect violations.
    await page.addInitScript(() => {
      const violations: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = violations;
      document.addEventListener('securitypolicyviolation', (event) => {
        violations.push(`${event.violatedDirective} ${event.blockedURI}`);
      });
    });

    const started = performance.now();
    await page.goto(server.url);
    // The page holds the worker's Comlink proxy on <sm-app>; every call below crosses to the worker.
    const info = await callWorker(page, 'modelInfo');
    console.info(`e2e: model ready ${Math.round(performance.now() - started)} ms`);
    expect(info).toMatchObject({ id: BUNDLED_MODEL, bundled: true });

    const content = { goal: 'Ship the offline prototype', done: false, steps: ['build', 'test'] };
    const saved = await callWorker(page, 'saveMemory', 'E2E/Goals/Phase1', content);
    expect(saved).toMatchObject({ status: 'SUCCESS', path: 'E2E/Goals/Phase1', version: 1 });
    const read = await callWorker(page, 'queryMemory', 'E2E/Goals/Phase1');
    expect(read).toMatchObject({
      status: 'SUCCESS',
      path: 'E2E/Goals/Phase1',
      content,
      metadata: { version: 1 },
    });
    console.info(`e2e: save + read ${Math.round(performance.now() - started)} ms after load`);

    // A heading is not an entry: the engine says so and names the tool to use.
    const heading = await callWorker(page, 'queryMemory', 'E2E/Goals');
    expect(heading).toMatchObject({ status: 'NOT_FOUND', isHeading: true, children: 1 });
    // The saved entry shows in the memory tree, drawn from the worker's data.
    await expect
      .poll(() => page.getByRole('treeitem', { name: 'E2E' }).count(), { timeout: 30_000 })
      .toBe(1);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // Offline: the browser asked nothing of any other origin (no CDN, no model hub).
    const origin = new URL(server.url).origin;
    const outside = seen.filter(
      (url) => /^https?:/.test(url) && ![origin, LLM_ENDPOINT].includes(new URL(url).origin),
    );
    expect(outside).toEqual([]);
    // The model came from the app itself; the bundled model runs without the ONNX runtime
    // (docs/bundled-model.md), which is not even fetched.
    const served = (path: string) => server.requests.find((r) => r.url.split('?')[0] === path);
    expect(served(ORT_WASM)).toBeUndefined();
    expect(served(ORT_MJS)).toBeUndefined();
    expect(
      server.requests.some(
        (r) => r.url.startsWith(`/models/${BUNDLED_MODEL}/`) && r.status === 200,
      ),
    ).toBe(true);
    // The browser-side record includes the worker's fetches, so the check above covers them.
    expect(seen.filter((url) => url.includes('/ort/'))).toEqual([]);

    const violations = await page.evaluate(
      () => (window as unknown as { cspViolations: string[] }).cspViolations,
    );
    expect(violations).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
    context = undefined;
  });

  it('falls back to the bundled model when the hub is unreachable, with no CDN', async () => {
    if (!browser) throw new Error('Chromium did not start');
    // The default build: it tries the hub model first (the browser resolves no outside host).
    const server = await buildAndServe();
    context = await browser.newContext({ serviceWorkers: 'block' });
    const seen: string[] = [];
    context.on('request', (request) => seen.push(request.url()));
    const page = await context.newPage();

    const started = performance.now();
    await page.goto(server.url);
    const info = await callWorker(page, 'modelInfo');
    console.info(`e2e: fallback model ready ${Math.round(performance.now() - started)} ms`);
    expect(info).toMatchObject({ id: BUNDLED_MODEL });
    // The page says why the default model is not the active one (a banner line, behind "N more"
    // while the one about the model server shows).
    await showBanner(page, page.getByRole('status').filter({ hasText: 'bundled offline model' }));
    expect(
      await callWorker(page, 'saveMemory', 'E2E/Fallback', 'plain text, not JSON'),
    ).toMatchObject({
      status: 'SUCCESS',
      version: 1,
    });
    await page.screenshot({ path: SCREENSHOT_FALLBACK, fullPage: true });

    // Outside the app's own origin, only the model hub was tried: never a CDN.
    const origin = new URL(server.url).origin;
    const outside = seen
      .filter(
        (url) => /^https?:/.test(url) && ![origin, LLM_ENDPOINT].includes(new URL(url).origin),
      )
      .map((url) => new URL(url).hostname);
    expect(outside.length).toBeGreaterThan(0);
    for (const host of outside) expect(host).toBe('huggingface.co');
    // The hub failed before any model was opened, and the fallback needs no runtime: the 27 MB
    // ONNX runtime binary was never fetched.
    expect(server.requests.some((r) => r.url.split('?')[0] === ORT_WASM)).toBe(false);
    await context.close();
    context = undefined;
  });
});

/** Console errors, CSP reports and uncaught errors of the page and its workers. */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    const text = message.text();
    // The app probes the default LLM endpoint, where nothing listens in tests.
    if (/localhost:5001|ERR_CONNECTION_REFUSED/.test(text + (message.location().url ?? ''))) return;
    if (message.type() === 'error' || /Content Security Policy|Refused to/.test(text)) {
      problems.push(`console: ${text}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('worker', (worker) => {
    worker.on('console', (message) => {
      if (message.type() === 'error') problems.push(`worker console: ${message.text()}`);
    });
  });
  return problems;
}
