// Chromium helpers of the reliability suite: the production build served with the cross-origin
// isolation headers (as `vite preview` sends them), the app opened in a fresh profile, its memory
// worker's engine read through <sm-app>'s proxy, and the checks every browser case ends with
// (no page error, nothing from content executed, the UI still answers). Builds on the e2e
// helpers (test/e2e/chromium.ts, static-server.ts) and the way test/e2e/app.test.ts drives the app.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { expect } from 'vitest';
import { ISOLATION_HEADERS } from '../../vite.config';
import { launchChromium } from '../e2e/chromium';
import { serveStatic, type StaticServer } from '../e2e/static-server';
import { HANG_MS, within } from './config';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Served {
  browser: Browser;
  server: StaticServer;
  /** The app's origin, without a trailing slash. */
  origin: string;
  close(): Promise<void>;
}

/** Builds the app (bundled embedding model), serves it isolated, and starts Chromium. */
export async function buildAndServe(): Promise<Served> {
  const outDir = await mkdtemp(join(tmpdir(), 'sm-reliability-'));
  await build({
    root: ROOT,
    configFile: join(ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
    define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('bundled') },
  });
  // Isolated, as in production: the hold in `holdWorkerAtWrite` needs SharedArrayBuffer.
  const server = await serveStatic(outDir, { headers: { ...ISOLATION_HEADERS } });
  const browser = await launchChromium();
  return {
    browser,
    server,
    origin: server.url.replace(/\/$/, ''),
    async close() {
      await browser.close();
      await server.close();
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/** A fresh profile (its own IndexedDB); service workers blocked so storage holds only the store. */
export function newProfile(served: Served): Promise<BrowserContext> {
  return served.browser.newContext({
    serviceWorkers: 'block',
    viewport: { width: 1280, height: 800 },
  });
}

export interface AppPage {
  page: Page;
  /** Uncaught errors of the page and of its workers. */
  errors: string[];
}

/** Opens the app in `context` (or on `page`) and waits until its memory worker has a model. */
export async function openApp(
  served: Served,
  context: BrowserContext,
  page?: Page,
): Promise<AppPage> {
  const p = page ?? (await context.newPage());
  const errors: string[] = [];
  p.on('pageerror', (e) => errors.push(`page: ${e.message}`));
  p.on('worker', (w) => {
    w.on('console', (m) => {
      if (m.type() === 'error') errors.push(`worker console: ${m.text()}`);
    });
  });
  await p.goto(served.server.url);
  await p.waitForFunction(
    () => !!(document.querySelector('sm-app') as { memory?: unknown } | null)?.memory,
  );
  await within(call(p, 'modelInfo'), 'the embedding model loading');
  return { page: p, errors };
}

/** Calls a method of the memory worker's proxy that the page keeps on <sm-app>. */
export function call<T = unknown>(page: Page, method: string, ...args: unknown[]): Promise<T> {
  return page.evaluate(
    async ([m, a]) => {
      const app = document.querySelector('sm-app') as unknown as {
        memory: Record<string, (...x: unknown[]) => Promise<unknown>>;
      };
      return app.memory[m as string](...(a as unknown[]));
    },
    [method, args] as const,
  ) as Promise<T>;
}

export interface StoreDigest {
  /** path → content as JSON text, sorted by path. */
  entries: [string, string][];
  history: number;
  conversations: number;
  /** Roles and tool-call links of the messages, in order. */
  messages: { role: string; calls: string[]; answers?: string }[];
}

/** The store as the JSON backup shows it: what must be "as before" or "as after". */
export async function digest(page: Page): Promise<StoreDigest> {
  const json = await call<string | { message: string }>(page, 'exportJson');
  if (typeof json !== 'string') throw new Error(`exportJson failed: ${json.message}`);
  const b = JSON.parse(json) as {
    entries: { path: string; content: unknown }[];
    history?: unknown[];
    conversations?: unknown[];
    messages?: { role: string; toolCalls?: { id: string }[]; toolCallId?: string }[];
  };
  return {
    entries: b.entries
      .map((e): [string, string] => [e.path, JSON.stringify(e.content)])
      .sort(([a], [c]) => (a < c ? -1 : a > c ? 1 : 0)),
    history: b.history?.length ?? 0,
    conversations: b.conversations?.length ?? 0,
    messages: (b.messages ?? []).map((m) => ({
      role: m.role,
      calls: (m.toolCalls ?? []).map((c) => c.id),
      ...(m.toolCallId ? { answers: m.toolCallId } : {}),
    })),
  };
}

/** Nothing built from content ran: no flag on window, no live element made from markup. */
export async function expectInert(page: Page, what: string): Promise<void> {
  expect(
    await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss),
    `${what}: a script from content ran`,
  ).toBeUndefined();
  const injected = await page.evaluate(() => {
    const found: string[] = [];
    const walk = (root: Document | ShadowRoot) => {
      root.querySelectorAll('*').forEach((el) => {
        const handler = ['onerror', 'onload', 'onclick'].some((a) => el.getAttribute(a) !== null);
        const script = el.tagName === 'SCRIPT' && el.textContent?.includes('__xss');
        const frame = el.tagName === 'IFRAME';
        const js = el.getAttribute('href')?.trim().toLowerCase().startsWith('javascript:');
        if (handler || script || frame || js) found.push(el.outerHTML.slice(0, 200));
        if (el.shadowRoot) walk(el.shadowRoot);
      });
    };
    walk(document);
    return found;
  });
  expect(injected, `${what}: markup from content became elements`).toEqual([]);
}

/**
 * The UI still answers: the page runs script, Settings opens and closes, and the memory worker
 * answers a call. Each within the hang limit.
 */
export async function expectResponsive(page: Page, what: string): Promise<void> {
  await within(
    page.evaluate(() => 1 + 1),
    `${what}: the page's main thread`,
  );
  await page.getByRole('button', { name: 'Settings', exact: true }).click({ timeout: HANG_MS });
  const endpoint = page.getByRole('textbox', { name: 'Endpoint URL' });
  await endpoint.waitFor({ timeout: HANG_MS });
  await page.keyboard.press('Escape');
  await endpoint.waitFor({ state: 'hidden', timeout: HANG_MS });
  await within(call(page, 'stats'), `${what}: the memory worker`);
}

/**
 * Makes the memory worker stop dead at its `n`th IndexedDB write from now (put, add, delete,
 * clear): the write blocks in Atomics.wait until the page is closed. Resolves `held` when it
 * stops there. The worker reports through its console, which Playwright forwards.
 */
export async function holdWorkerAtWrite(page: Page, n: number): Promise<{ held: Promise<void> }> {
  const worker = page.workers().find((w) => w.url().includes('memory.worker'));
  if (!worker) throw new Error('the memory worker is not running');
  const held = new Promise<void>((resolve) => {
    worker.on('console', (m) => {
      if (m.text() === 'reliability: held') resolve();
    });
  });
  await worker.evaluate((at) => {
    const scope = globalThis as unknown as { __reliabilityWrites?: number };
    if (scope.__reliabilityWrites === undefined) {
      const gate = new Int32Array(new SharedArrayBuffer(4));
      for (const name of ['put', 'add', 'delete', 'clear'] as const) {
        const proto = IDBObjectStore.prototype as unknown as Record<
          string,
          (...args: unknown[]) => unknown
        >;
        const original = proto[name];
        proto[name] = function (this: unknown, ...args: unknown[]) {
          const s = globalThis as unknown as {
            __reliabilityWrites: number;
            __reliabilityAt: number;
          };
          if (++s.__reliabilityWrites === s.__reliabilityAt) {
            console.log('reliability: held');
            // Blocks this worker until the page closes and ends it (never resolves by itself
            // within the suite's limits: the test closes the page as soon as it sees the log).
            Atomics.wait(gate, 0, 0, 120_000);
          }
          return original.apply(this, args);
        };
      }
    }
    const s = globalThis as unknown as { __reliabilityWrites: number; __reliabilityAt: number };
    s.__reliabilityWrites = 0;
    s.__reliabilityAt = at;
  }, n);
  return { held };
}
