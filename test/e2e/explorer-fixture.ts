// What the explorer's end-to-end tests share: the production build with the bundled model (and
// axe-core beside it, same origin, so the app's CSP stays as shipped), a memory to browse, and
// small page helpers that see into shadow roots.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import { build } from 'vite';
import { expect } from 'vitest';
import { launchChromium } from './chromium';
import { serveStatic, type StaticServer } from './static-server';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DAY = 86_400_000;

/** Served next to the app, so `page.addScriptTag({ url })` loads it under the app's own CSP. */
export const AXE_FILE = 'axe.min.js';

export interface SeedEntry {
  path: string;
  ageDays: number;
  content: unknown;
}

const LONG_NOTE = Array.from(
  { length: 40 },
  (_, i) => `Line ${i + 1}: pack item ${i + 1}, check it twice.`,
).join('\n');

/** A small memory with a few headings, weak and strong matches for "oat milk", a long entry. */
export const SEED: SeedEntry[] = [
  {
    path: 'User/Preferences/Coffee',
    ageDays: 2,
    content: 'Flat white, no sugar; oat milk on weekdays.',
  },
  {
    path: 'User/Preferences/Tea',
    ageDays: 200,
    content: 'Green tea after lunch, never after 5 pm.',
  },
  {
    path: 'User/Preferences/PreferDark',
    ageDays: 3,
    content: { theme: 'dark', editor: 'dark too', since: 2021, contrast: 'high' },
  },
  { path: 'User/Health/Allergies', ageDays: 400, content: ['peanuts', 'penicillin'] },
  {
    path: 'Projects/HaloWeave/Goals/Phase1',
    ageDays: 1,
    content: 'Ship the offline editor by June.',
  },
  {
    path: 'Projects/HaloWeave/Goals/Phase2',
    ageDays: 5,
    content: 'Sync between devices, still offline first.',
  },
  {
    path: 'Projects/HaloWeave/Decisions/Storage',
    ageDays: 10,
    content: { choice: 'IndexedDB via Dexie', why: 'offline first: works with no network' },
  },
  {
    path: 'Projects/HaloWeave/People/Ana',
    ageDays: 30,
    content: 'Design lead; prefers async reviews; takes her coffee black.',
  },
  {
    path: 'Recipes/Breakfast/Overnight oats',
    ageDays: 60,
    content: 'Oats, yoghurt, a splash of milk and chia; soak 8 hours in the fridge.',
  },
  { path: 'Recipes/Dinner/Risotto', ageDays: 15, content: 'Arborio rice, warm stock, parmesan.' },
  {
    path: 'Travel/Lisbon',
    ageDays: 35,
    content: 'Download the maps for offline use before the trip; hotel in Alfama.',
  },
  {
    path: 'Notes/Shopping',
    ageDays: 4,
    content: 'Bread, apples, batteries, bin bags, light bulbs, stamps, and milk for the cat.',
  },
  { path: 'Notes/Packing', ageDays: 8, content: LONG_NOTE },
];

/** A JSON backup of `entries`, dated relative to `now` (the format of exportJson). */
export function backup(entries: SeedEntry[], now: number): string {
  return JSON.stringify({
    format: 'structured-memory-backup',
    version: 1,
    exported: new Date(now).toISOString(),
    entries: entries.map((e) => {
      const at = new Date(now - e.ageDays * DAY).toISOString();
      return {
        path: e.path,
        content: e.content,
        contextChunks: [],
        version: 1,
        created: at,
        modified: at,
        accessed: at,
      };
    }),
  });
}

/** Builds the app (bundled model) into a temporary folder with axe-core beside it, and serves it. */
export async function buildAndServe(): Promise<{ server: StaticServer; dispose(): Promise<void> }> {
  const outDir = await mkdtemp(join(tmpdir(), 'sm-explorer-'));
  await build({
    root: ROOT,
    configFile: join(ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
    define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('bundled') },
  });
  await copyFile(join(ROOT, 'node_modules/axe-core/axe.min.js'), join(outDir, AXE_FILE));
  const server = await serveStatic(outDir);
  return {
    server,
    async dispose() {
      await server.close();
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/**
 * The built app in Chromium on one desktop page (1280×800) holding SEED, its page errors
 * collected; `close` ends the page, the browser and the server.
 */
export async function openSeeded(): Promise<{
  page: Page;
  errors: string[];
  close(): Promise<void>;
}> {
  const app = await buildAndServe();
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.server.url);
  await seed(page);
  return {
    page,
    errors,
    async close() {
      await context.close();
      await browser.close();
      await app.dispose();
    },
  };
}

/** Calls a method of the worker's Comlink proxy, which the page keeps on <sm-app>. */
export async function callWorker<T>(page: Page, method: string, ...args: unknown[]): Promise<T> {
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
  ) as Promise<T>;
}

/** Replaces the page's memory with SEED and waits for the tree to show it. */
export async function seed(page: Page, entries: SeedEntry[] = SEED): Promise<void> {
  const r = await callWorker<{ status: string }>(
    page,
    'importJson',
    backup(entries, Date.now()),
    'replace',
  );
  if (r.status !== 'SUCCESS') throw new Error(`import failed: ${JSON.stringify(r)}`);
  await page.getByRole('treeitem', { name: 'Projects' }).waitFor({ timeout: 30_000 });
}

/**
 * Points the app at a model server (the stored app settings, `settings` beside the endpoint),
 * reloads, and waits until the chat says it is connected.
 */
export async function connectApp(
  page: Page,
  endpoint: string,
  settings: Record<string, unknown> = {},
): Promise<void> {
  await callWorker(page, 'setSetting', 'app', { endpoint, ...settings });
  await page.reload();
  await page.locator('sm-chat').locator('.status.connected').waitFor({ timeout: 30_000 });
}

/** The focused element, looked for through shadow roots: tag, its text and its aria-label. */
export function focused(page: Page): Promise<{ tag: string; text: string; label: string | null }> {
  return page.evaluate(() => {
    let el: Element | null = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    return {
      tag: el?.localName ?? '',
      text: (el?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      label: el?.getAttribute('aria-label') ?? null,
    };
  });
}

/**
 * Installed before the app loads (`addInitScript`): records the method name of each call sent to
 * a worker, and `(model request)` for each chat request, for the tests that count round trips.
 * Also what `settled` and `reportArrived` read: the calls still waiting for the worker's answer,
 * and a summary of each change report the worker sends the page (a Comlink call on one of the
 * page's MessagePorts: the paths and conversation titles it carries).
 */
export const COUNT_CALLS = `(() => {
  const calls = [];
  window.__workerCalls = calls;
  const pending = new Set();
  window.__workerPending = pending;
  const reports = [];
  window.__memoryReports = reports;
  const answered = new WeakSet();
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (data, ...rest) {
    if (data && data.type === 'APPLY' && Array.isArray(data.path)) calls.push(data.path.join('.'));
    if (data && typeof data.id === 'string') pending.add(data.id);
    if (!answered.has(this)) {
      answered.add(this);
      this.addEventListener('message', (ev) => {
        if (ev.data && typeof ev.data.id === 'string') pending.delete(ev.data.id);
      });
    }
    return post.call(this, data, ...rest);
  };
  const summary = (c) => ({
    tables: c.tables,
    paths: [
      ...((c.entries && c.entries.upserted) || []).map((e) => e.path),
      ...((c.entries && c.entries.removed) || []),
    ],
    details: (c.details || []).map((d) => d.path),
    conversations: ((c.conversations && c.conversations.upserted) || []).map((v) => v.title),
  });
  const wrappers = new WeakMap();
  const add = MessagePort.prototype.addEventListener;
  const remove = MessagePort.prototype.removeEventListener;
  MessagePort.prototype.addEventListener = function (type, listener, ...rest) {
    if (type !== 'message' || typeof listener !== 'function') return add.call(this, type, listener, ...rest);
    const wrapped = function (ev) {
      const d = ev.data;
      if (d && d.type === 'APPLY' && Array.isArray(d.argumentList)) {
        for (const a of d.argumentList) {
          if (a && a.type === 'RAW' && a.value && Array.isArray(a.value.tables)) reports.push(summary(a.value));
        }
      }
      return listener.call(this, ev);
    };
    wrappers.set(listener, wrapped);
    return add.call(this, type, wrapped, ...rest);
  };
  MessagePort.prototype.removeEventListener = function (type, listener, ...rest) {
    return remove.call(this, type, wrappers.get(listener) || listener, ...rest);
  };
  const send = window.fetch;
  window.fetch = function (input, init) {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.includes('/chat/completions')) calls.push('(model request)');
    return send.call(this, input, init);
  };
})();`;

/** What COUNT_CALLS keeps of one change report the page received. */
export interface ReportSummary {
  tables: string[];
  /** Entry paths upserted or removed. */
  paths: string[];
  /** Paths of the entry details it carried. */
  details: string[];
  /** Titles of the conversations upserted. */
  conversations: string[];
}

/** How many change reports the page has received so far. */
export const reportCount = (p: Page) =>
  p.evaluate(() => (window as unknown as { __memoryReports: unknown[] }).__memoryReports.length);

/**
 * Waits until a change report received after the `from`-th one matches `wanted`: the write a test
 * made has reached this page (its views patch from this report, on it or the next frame).
 */
export async function reportArrived(
  p: Page,
  from: number,
  wanted: Partial<Record<'paths' | 'details' | 'conversations', string>>,
): Promise<void> {
  await p.waitForFunction(
    ([n, want]) =>
      (window as unknown as { __memoryReports: ReportSummary[] }).__memoryReports
        .slice(n)
        .some((r) =>
          (Object.keys(want) as (keyof typeof want)[]).every((k) => r[k].includes(want[k]!)),
        ),
    [from, wanted] as const,
    { timeout: 30_000 },
  );
}

/**
 * The longest a view waits after a change report before it loads again (the header's counts and
 * storage, `debounceMs` in src/ui/sm-app.ts), with a margin.
 */
const LONGEST_RELOAD_DELAY_MS = 300 + 50;

/**
 * Waits until the page is settled: no call to the worker waits for its answer, and two frames
 * pass (a view patches a report on the next frame, and loads again from there) and a view's
 * longest delayed reload (`LONGEST_RELOAD_DELAY_MS`) with no new call. Then what has not been
 * called is not coming from what happened before.
 */
export async function settled(p: Page): Promise<void> {
  for (;;) {
    const quiet = await p.evaluate(
      (delay) =>
        new Promise<boolean>((resolve) => {
          const w = window as unknown as { __workerCalls: string[]; __workerPending: Set<string> };
          const frame = (f: () => void) =>
            document.visibilityState === 'hidden' ? setTimeout(f, 0) : requestAnimationFrame(f);
          const mark = w.__workerCalls.length;
          const idle = w.__workerPending.size === 0;
          frame(() =>
            frame(() =>
              setTimeout(
                () =>
                  resolve(idle && w.__workerPending.size === 0 && w.__workerCalls.length === mark),
                delay,
              ),
            ),
          );
        }),
      LONGEST_RELOAD_DELAY_MS,
    );
    if (quiet) return;
  }
}

/** The calls recorded since the `from`-th. */
export const callsSince = (p: Page, from: number) =>
  p.evaluate(
    (n) => (window as unknown as { __workerCalls: string[] }).__workerCalls.slice(n),
    from,
  );
/** How many calls were recorded so far. */
export const callCount = (p: Page) =>
  p.evaluate(() => (window as unknown as { __workerCalls: string[] }).__workerCalls.length);

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown; summary: string }[];
}

/**
 * Runs axe on the whole page (shadow roots included) and lists what it found, readably (the
 * page must be served with axe at AXE_FILE: `buildAndServe` copies it there).
 */
export async function axeScan(page: Page, server: StaticServer): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) {
    await page.addScriptTag({ url: `${server.url}${AXE_FILE}` });
  }
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(ctx: Document, o: object): Promise<{ violations: Violation[] }> };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({
        target: (n as unknown as { target: unknown }).target,
        summary: (n as unknown as { failureSummary?: string }).failureSummary ?? '',
      })),
    }));
  });
  return violations.flatMap((v) =>
    v.nodes.map(
      (n) =>
        `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(n.target)}: ${n.summary.replace(/\s+/g, ' ')}`,
    ),
  );
}

/**
 * Waits until `banner` is visible, opening "N more" while it waits behind the first banner line
 * (the page shows one at a time, the most urgent first, and which comes first can depend on when
 * the model server's connection fails).
 */
export async function showBanner(page: Page, banner: Locator): Promise<void> {
  const more = page.locator('sm-app').getByRole('button', { name: /^\d+ more$/ });
  await expect
    .poll(
      async () => {
        if (await banner.first().isVisible()) return true;
        const open = await more.getAttribute('aria-expanded', { timeout: 100 }).catch(() => null);
        if (open === 'false') await more.click();
        return false;
      },
      { timeout: 30_000, interval: 50 },
    )
    .toBe(true);
}

/** Opens `path` from the memory tree, heading by heading, until its detail shows. */
export async function openInTree(p: Page, path: string): Promise<void> {
  const parts = path.split('/');
  for (let i = 0; i < parts.length; i++) {
    const item = p.getByRole('treeitem', { name: parts[i], exact: true });
    if (i < parts.length - 1 && (await item.getAttribute('aria-expanded')) === 'true') continue;
    await item.click();
  }
  const detail = p.locator('sm-entry-detail');
  await expect
    .poll(() => detail.evaluate((el) => (el as unknown as { path?: string }).path))
    .toBe(path);
  await detail.getByRole('heading', { level: 2 }).waitFor();
}

/** Runs a memory search and waits for its result line. */
export async function runSearch(p: Page, query: string, timeout = 30_000): Promise<void> {
  const search = p.locator('sm-memory-search');
  await search.getByRole('searchbox').fill(query);
  await search.getByRole('button', { name: 'Search', exact: true }).click();
  await expect
    .poll(
      () =>
        search
          .getByRole('status')
          .filter({ hasText: `“${query}”` })
          .count(),
      {
        timeout,
      },
    )
    .toBe(1);
}

/** The assistant's replies in the chat so far, in order, as the person reads them. */
export function assistantReplies(p: Page): Promise<string[]> {
  return p.evaluate(() => {
    const chat = document.querySelector('sm-app')!.shadowRoot!.querySelector('sm-chat')!;
    const bubbles = chat.shadowRoot!.querySelectorAll('sm-message[kind="assistant"]');
    return [...bubbles].map((b) => b.shadowRoot?.querySelector('.md')?.textContent ?? '');
  });
}

/**
 * Sends a message, waits for the model's reply to stream some text, then presses Stop. The
 * text may come in a later bubble than the first: a model that calls a tool first (the tests'
 * random-weight model may) shows the call's bubble, then its reply in the next.
 */
export async function chatAndStop(
  p: Page,
  text: string,
  poll: { timeout: number; interval: number },
): Promise<void> {
  const before = (await assistantReplies(p)).length;
  const box = p.getByRole('textbox', { name: /message/i });
  await box.fill(text);
  await box.press('Enter');
  try {
    await expect
      .poll(async () => (await assistantReplies(p)).slice(before).join('').length, poll)
      .toBeGreaterThan(20);
  } catch (e) {
    // What a person would see instead of the reply: the failure names it.
    throw new Error(`No reply streamed to “${text}”; the page shows ${await whatPageSays(p)}`, {
      cause: e,
    });
  }
  await p.getByRole('button', { name: 'Stop' }).click();
}

/** The page's alerts, statuses and replies so far, as text (for a failing test's message). */
export async function whatPageSays(p: Page): Promise<string> {
  const texts = async (role: 'alert' | 'status') =>
    (await p.getByRole(role).allInnerTexts()).map((t) => t.trim()).filter(Boolean);
  return JSON.stringify({
    alerts: await texts('alert'),
    statuses: await texts('status'),
    replies: await assistantReplies(p),
  });
}

/**
 * In an open Settings dialog, lets a reply run to 5,000 tokens in an 8,192-token context (room
 * left for the prompt): a test that presses Stop needs a reply still streaming when it does, and
 * the tests' endless model writes 512 tokens (the default limit) in well under a second on a
 * quiet machine.
 */
export async function allowLongReplies(dialog: Locator): Promise<void> {
  await dialog.getByLabel('Context size').fill('8192');
  await dialog.getByLabel('Max output tokens').fill('5000');
}
