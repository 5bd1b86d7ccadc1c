// The explorer's search as a person reads it, in Debian Chromium against the production build
// with the bundled model: hits in the engine's order, the query's words marked (markup in
// memories stays text), strength in words with the numbers on hover, weaker hits folded away
// behind the cut-off, the scope shown and switched in one click; screenshots at desktop and
// phone size.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenize } from '../../src/memory/lexical/tokenize';
import { MIN_RELEVANCE } from '../../src/memory/ranking';
import type { HeadingChild, HeadingResult } from '../../src/memory/types';
import { launchChromium } from './chromium';
import { runSearch } from './explorer-fixture';
import { serveStatic, type StaticServer } from './static-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHOTS = join(ROOT, 'test-results', 'screenshots');
const DAY = 86_400_000;
const HOSTILE = 'Notes/<img src=x onerror="window.__xss = 1">';

interface SeedEntry {
  path: string;
  ageDays: number;
  content: unknown;
  /** The conversation saved with it: [role, text] per sentence. */
  context?: [string, string][];
}

const SEED: SeedEntry[] = [
  {
    path: 'User/Preferences/Coffee',
    ageDays: 2,
    content: 'Flat white, no sugar; oat milk on weekdays.',
    context: [['user', 'I switched to oat milk last month, it froths better.']],
  },
  {
    path: 'User/Preferences/Tea',
    ageDays: 200,
    content: 'Green tea after lunch, never after 5 pm.',
  },
  {
    path: 'User/Health/Allergies',
    ageDays: 400,
    content: ['peanuts', 'penicillin'],
    context: [
      ['user', 'Also, dairy upsets my stomach, so I avoid cheese.'],
      ['assistant', 'Noted: peanuts and penicillin are allergies, dairy is best avoided.'],
    ],
  },
  {
    path: 'Projects/HaloWeave/Goals/Phase1',
    ageDays: 1,
    content: 'Ship the offline editor by June.',
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
    path: HOSTILE,
    ageDays: 0.1,
    content: '<script>window.__xss = 2</script> milk <img src=x onerror="window.__xss = 3">',
  },
  {
    path: 'Notes/Shopping',
    ageDays: 4,
    content: `${'Bread, apples, washing-up liquid, batteries, bin bags, light bulbs. '.repeat(5)}Remember the oat milk for Sunday. Stamps.`,
  },
];

/** A JSON backup of SEED, dated relative to now (the format of exportJson). */
function backup(now: number): string {
  return JSON.stringify({
    format: 'structured-memory-backup',
    version: 1,
    exported: new Date(now).toISOString(),
    entries: SEED.map((e) => {
      const at = new Date(now - e.ageDays * DAY).toISOString();
      return {
        path: e.path,
        content: e.content,
        contextChunks: (e.context ?? []).map(([role, text], i) => ({
          turn_id: i + 1,
          sentence_id: 0,
          role,
          text,
          similarity: 0.8,
          tokenCount: Math.ceil(text.length / 4),
        })),
        version: 1,
        created: at,
        modified: at,
        accessed: at,
      };
    }),
  });
}

/** Calls a method of the worker's Comlink proxy, which the page keeps on <sm-app>. */
async function callWorker<T>(page: Page, method: string, ...args: unknown[]): Promise<T> {
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

/** What the engine answers for the search the explorer runs. */
async function engineSearch(page: Page, scope: string, query: string): Promise<HeadingChild[]> {
  const result = await callWorker<HeadingResult>(
    page,
    'queryMemoryHeading',
    scope,
    query,
    undefined,
    {
      limit: 50,
    },
  );
  expect(result.status).toBe('SUCCESS');
  return result.children;
}

/** The result paths listed, in order. */
async function listedPaths(search: Locator): Promise<string[]> {
  return search
    .locator('li.hit > .head > button.path')
    .allTextContents()
    .then((t) => t.map((s) => s.replace(/\s+/g, '')));
}

const noSpace = (p: string) => p.replace(/\s+/g, '');

describe('search shows why an entry matched (Chromium)', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let outDir: string;

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-search-'));
    await mkdir(SHOTS, { recursive: true });
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
      define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('bundled') },
    });
    server = await serveStatic(outDir);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await page.goto(server.url);
    const imported = await callWorker<{ status: string }>(
      page,
      'importJson',
      backup(Date.now()),
      'replace',
    );
    if (imported.status !== 'SUCCESS')
      throw new Error(`import failed: ${JSON.stringify(imported)}`);
    await page.getByRole('treeitem', { name: 'Recipes' }).waitFor({ timeout: 30_000 });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  it('lists hits in the engine order, relevant ones first shown, weaker ones on request', async () => {
    const search = page.locator('sm-memory-search');
    // Nothing selected: the whole memory, and it says so.
    await expect.poll(() => search.getByText('all memory').count()).toBeGreaterThan(0);
    await runSearch(page, 'oat milk');
    const engine = await engineSearch(page, '', 'oat milk');
    const relevant = engine.filter((c) => (c.relevance ?? 1) >= MIN_RELEVANCE);
    const weaker = engine.length - relevant.length;
    expect(relevant.length).toBeGreaterThan(0);
    expect(await listedPaths(search)).toEqual(relevant.map((c) => noSpace(c.path)));
    expect(relevant.map((c) => c.path)).toContain('User/Preferences/Coffee');
    expect(relevant.map((c) => c.path)).toContain('Notes/Shopping');

    if (weaker > 0) {
      const more = search.getByRole('button', { name: /^Show \d+ weaker match/ });
      expect(await more.textContent()).toContain(`Show ${weaker} weaker`);
      await more.click();
      expect(await listedPaths(search)).toEqual(engine.map((c) => noSpace(c.path)));
      expect(await search.locator('li.hit.weak').count()).toBe(weaker);
      await search.getByRole('button', { name: 'Hide weaker matches' }).click();
      expect(await listedPaths(search)).toEqual(relevant.map((c) => noSpace(c.path)));
    }
  });

  it('marks matched words (and only those) in previews, paths and context', async () => {
    const search = page.locator('sm-memory-search');
    const engine = await engineSearch(page, '', 'oat milk');
    const items = search.locator('li.hit');
    const n = await items.count();
    expect(n).toBeGreaterThan(1);
    for (let i = 0; i < n; i++) {
      const path = noSpace((await items.nth(i).locator('.head > button.path').textContent()) ?? '');
      const hit = engine.find((c) => noSpace(c.path) === path);
      expect(hit, path).toBeDefined();
      const terms = new Set(hit?.why?.terms ?? []);
      for (const mark of await items.nth(i).locator('mark').allTextContents()) {
        expect(
          tokenize(mark).some((t) => terms.has(t)),
          `${path}: ${mark}`,
        ).toBe(true);
      }
    }
    // The coffee entry: both words marked in its content.
    const coffee = items.filter({ hasText: 'Flat white' });
    expect(await coffee.locator('.preview mark').allTextContents()).toEqual(['oat', 'milk']);
    // A match far into a long entry is brought into the preview.
    const shopping = items.filter({ hasText: 'Notes/Shopping' });
    const preview = (await shopping.locator('.preview').textContent())?.trim() ?? '';
    expect(preview.startsWith('…')).toBe(true);
    expect(await shopping.locator('.preview mark').allTextContents()).toEqual(['oat', 'milk']);
  });

  it('keeps markup in memories as text: no element, no script run', async () => {
    const search = page.locator('sm-memory-search');
    // Weakly relevant (its markup words dilute the match): among the weaker hits.
    const more = search.getByRole('button', { name: /^Show \d+ weaker match/ });
    if ((await more.count()) > 0) await more.click();
    const hostile = search.locator('li.hit').filter({ hasText: '<script>' });
    expect(await hostile.count()).toBe(1);
    expect(await hostile.locator('.preview mark').allTextContents()).toEqual(['milk']);
    const found = await search.evaluate((el) => {
      const root = el.shadowRoot!;
      return {
        active: root.querySelectorAll('script, img, iframe, object, embed').length,
        xss: (window as unknown as { __xss?: number }).__xss,
      };
    });
    expect(found).toEqual({ active: 0, xss: undefined });
    expect(await hostile.locator('.head > button.path').textContent()).toContain('<img src=x');
    await search.locator('li.hit.weak').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'search-why-weaker.png') });
    await search.getByRole('button', { name: 'Hide weaker matches' }).click();
  });

  it('says how strong each match is in words, the numbers on hover', async () => {
    const search = page.locator('sm-memory-search');
    const engine = await engineSearch(page, '', 'oat milk');
    const first = search.locator('li.hit').first();
    const word = (await first.locator('.match .word').textContent())?.trim();
    expect(['Strong match', 'Good match']).toContain(word);
    const title = (await first.locator('.match').getAttribute('title')) ?? '';
    expect(title).toContain(`Relevance ${engine[0].relevance?.toFixed(2)}`);
    expect(title).toContain(`Recency ${engine[0].recency?.toFixed(2)}`);
    expect(title).toContain(
      `Score ${engine[0].score?.toFixed(2)} = 0.70 × relevance + 0.30 × recency`,
    );
    // No raw numbers on the card itself.
    expect(await search.locator('li.hit').first().textContent()).not.toMatch(/\d\.\d\d/);
    await search.locator('li.hit').first().hover();
    await page.screenshot({ path: join(SHOTS, 'search-why-desktop.png') });
  });

  it('notes a match carried by the conversation saved with the entry', async () => {
    const search = page.locator('sm-memory-search');
    await runSearch(page, 'dairy');
    const engine = await engineSearch(page, '', 'dairy');
    const allergies = engine.find((c) => c.path === 'User/Health/Allergies');
    expect(allergies?.why?.fromSnapshot).toBe(true);
    if ((await search.locator('li.hit').filter({ hasText: 'Allergies' }).count()) === 0) {
      await search.getByRole('button', { name: /weaker match/ }).click();
    }
    const hit = search.locator('li.hit').filter({ hasText: 'Allergies' });
    await expect
      .poll(() => hit.locator('.why').textContent())
      .toContain('Matched in the conversation it was saved from');
    expect(await hit.locator('ul.chunks mark').allTextContents()).toContain('dairy');
    await hit.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'search-why-context.png') });
  });

  it('shows the scope and changes it in one click', async () => {
    const search = page.locator('sm-memory-search');
    await page.getByRole('treeitem', { name: 'Projects' }).click();
    await page.getByRole('treeitem', { name: 'HaloWeave' }).click();
    const heading = search.getByRole('button', { name: 'in Projects/HaloWeave' });
    const all = search.getByRole('button', { name: 'all memory' });
    // Selecting a heading offers it as the scope; the search stays on all memory until asked.
    await heading.waitFor();
    expect(await all.getAttribute('aria-pressed')).toBe('true');
    await heading.click();
    await expect.poll(() => heading.getAttribute('aria-pressed')).toBe('true');
    expect(await all.getAttribute('aria-pressed')).toBe('false');

    await runSearch(page, 'offline');
    await expect
      .poll(() => search.getByRole('status').first().textContent())
      .toContain('in Projects/HaloWeave for “offline”');
    const under = await listedPaths(search);
    expect(under.length).toBeGreaterThan(0);
    for (const p of under) expect(p.startsWith('Projects/HaloWeave/')).toBe(true);
    await search.getByRole('group', { name: 'Search in' }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'search-why-scope.png') });
    expect(under).toEqual(
      (await engineSearch(page, 'Projects/HaloWeave', 'offline'))
        .filter((c) => (c.relevance ?? 1) >= MIN_RELEVANCE)
        .map((c) => noSpace(c.path)),
    );

    // One click: the results follow.
    await all.click();
    await expect
      .poll(() => search.getByRole('status').first().textContent(), { timeout: 30_000 })
      .toContain('in all memory for “offline”');
    expect(await all.getAttribute('aria-pressed')).toBe('true');
    const everywhere = await listedPaths(search);
    expect(everywhere).toContain('Travel/Lisbon');
    expect(everywhere).toEqual(
      (await engineSearch(page, '', 'offline'))
        .filter((c) => (c.relevance ?? 1) >= MIN_RELEVANCE)
        .map((c) => noSpace(c.path)),
    );
  });

  it('reads at phone size', async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    try {
      const p = await phone.newPage();
      await p.goto(server.url);
      await callWorker(p, 'importJson', backup(Date.now()), 'replace');
      await p.getByRole('tab', { name: 'Memory' }).click();
      await expect
        .poll(() => p.getByRole('treeitem', { name: 'Recipes' }).count(), { timeout: 30_000 })
        .toBe(1);
      const search = p.locator('sm-memory-search');
      await runSearch(p, 'oat milk');
      await search.locator('li.hit').first().scrollIntoViewIfNeeded();
      // Nothing spills sideways.
      const overflow = await search.evaluate((el) => el.scrollWidth - el.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await p.screenshot({ path: join(SHOTS, 'search-why-phone.png') });
    } finally {
      await phone.close();
    }
  });
});
