// An explorer with room (issue 11), as a person uses the built app in Chromium: the divider
// between the explorer and an entry's detail (and the one between the tree and the search
// results) moves with the mouse and the keyboard and is remembered after a reload; the edit form's
// Save is in view at 1280×800 without scrolling; search lists strong matches first with "Show N
// weaker matches"; the scope switches between all memory and the selected heading; the map works
// from the keyboard; at phone size an entry's detail starts above the fold. Screenshots at
// desktop and phone size go to /tmp/shots-explorer/ (EXPLORER_SHOTS overrides).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_RELEVANCE } from '../../src/memory/ranking';
import type { HeadingChild, HeadingResult } from '../../src/memory/types';
import { DEFAULT_SPLIT, SPLIT_KEY } from '../../src/ui/split-layout';
import { launchChromium } from './chromium';
import {
  buildAndServe,
  callWorker,
  focused,
  openInTree,
  runSearch,
  seed,
} from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = process.env.EXPLORER_SHOTS ?? '/tmp/shots-explorer';

const explorer = (p: Page) => p.locator('sm-explorer');
const detail = (p: Page) => p.locator('sm-entry-detail');
const search = (p: Page) => p.locator('sm-memory-search');
const footDivider = (p: Page) =>
  p.getByRole('separator', { name: 'Resize the explorer and the entry detail' });
/** The path the entry detail shows (a property, not an attribute). */
const detailPath = (p: Page) =>
  detail(p).evaluate((el) => (el as unknown as { path?: string }).path);
const viewsDivider = (p: Page) =>
  p.getByRole('separator', { name: 'Resize the tree and the search results' });

async function box(l: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  const b = await l.boundingBox();
  if (!b) throw new Error('not laid out');
  return b;
}

async function listed(p: Page): Promise<{ path: string; weak: boolean; strength: string }[]> {
  return search(p)
    .locator('li.hit')
    .evaluateAll((items) =>
      items.map((li) => ({
        path: (li.querySelector('.head > button.path')?.textContent ?? '').replace(/\s+/g, ''),
        weak: li.classList.contains('weak'),
        strength: (li.querySelector('.match .word')?.textContent ?? '').trim(),
      })),
    );
}

/** Whether `l`'s centre is inside the viewport and `l` is what a click there would reach. */
async function visibleUncovered(l: Locator): Promise<boolean> {
  return l.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const x = r.left + r.width / 2;
    const y = r.top + r.height / 2;
    if (r.height === 0 || y < 0 || y > innerHeight || x < 0 || x > innerWidth) return false;
    let hit: Element | null = document.elementFromPoint(x, y);
    while (hit?.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit === el || el.contains(hit);
  });
}

describe('an explorer with room (Chromium)', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  const errors: string[] = [];

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ server, dispose } = await buildAndServe());
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(server.url);
    await seed(page);
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await dispose?.();
  });

  const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SHOTS, `${name}.png`) });

  it('the divider between the explorer and the detail moves and is remembered after a reload', async () => {
    await openInTree(page, 'User/Preferences/PreferDark');
    const panel = await box(page.locator('sm-app section.panel.memory'));
    const before = await box(explorer(page));
    // The default share of the memory column, and the detail right below.
    expect(before.height / panel.height).toBeCloseTo(DEFAULT_SPLIT.explorer, 1);
    expect((await box(detail(page))).y).toBeCloseTo(before.y + before.height, 0);

    // Dragged 90 px down: the explorer grows by as much, the detail starts lower.
    const grip = await box(footDivider(page));
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
    await page.mouse.down();
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2 + 45, { steps: 4 });
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2 + 90, { steps: 4 });
    await page.mouse.up();
    const dragged = await box(explorer(page));
    expect(dragged.height - before.height).toBeGreaterThan(85);
    expect(dragged.height - before.height).toBeLessThan(95);
    expect((await box(detail(page))).y).toBeCloseTo(dragged.y + dragged.height, 0);

    // From the keyboard: focused by the drag, an arrow moves it back up by 5 %.
    expect((await focused(page)).label).toBe('Resize the explorer and the entry detail');
    await page.keyboard.press('ArrowUp');
    const keyed = await box(explorer(page));
    expect(dragged.height - keyed.height).toBeCloseTo(panel.height * 0.05, -1);
    const share = keyed.height / panel.height;
    expect(Number(await footDivider(page).getAttribute('aria-valuenow'))).toBe(
      Math.round(share * 100),
    );

    // Remembered on this device: after a reload, the same share.
    const stored = await page.evaluate((k) => localStorage.getItem(k), SPLIT_KEY);
    expect(JSON.parse(stored ?? '{}').explorer).toBeCloseTo(share, 2);
    await page.reload();
    await page.getByRole('treeitem', { name: 'Projects' }).waitFor({ timeout: 30_000 });
    await openInTree(page, 'User/Preferences/PreferDark');
    // The same share (the column itself may differ by a banner that came or went).
    const after = await box(explorer(page));
    const column = await box(page.locator('sm-app section.panel.memory'));
    expect(after.height / column.height).toBeCloseTo(share, 2);
  });

  it('the divider between the tree and the search results moves and is remembered', async () => {
    // No results yet: no divider, the tree has the room.
    expect(await viewsDivider(page).count()).toBe(0);
    await runSearch(page, 'oat milk');
    await viewsDivider(page).waitFor();
    const views = explorer(page).locator('.views');
    const results = explorer(page).locator('.search');
    const tree0 = (await box(views)).height;
    const results0 = (await box(results)).height;
    const grip = await box(viewsDivider(page));
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
    await page.mouse.down();
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2 + 30, { steps: 4 });
    await page.mouse.up();
    const tree1 = (await box(views)).height;
    // The tree gains what the results give up.
    expect(tree1 - tree0).toBeGreaterThan(25);
    expect(tree1 - tree0).toBeLessThan(35);
    expect(results0 - (await box(results)).height).toBeCloseTo(tree1 - tree0, 0);
    const stored = JSON.parse(
      (await page.evaluate((k) => localStorage.getItem(k), SPLIT_KEY)) ?? '{}',
    );
    expect(stored.views).toBeGreaterThan(DEFAULT_SPLIT.views);

    await page.reload();
    await page.getByRole('treeitem', { name: 'Projects' }).waitFor({ timeout: 30_000 });
    await openInTree(page, 'User/Preferences/PreferDark');
    await runSearch(page, 'oat milk');
    expect(Math.abs((await box(views)).height - tree1)).toBeLessThanOrEqual(3);
    // Double-click: back to the defaults (the foot's share while searching, then without).
    await viewsDivider(page).dblclick();
    await footDivider(page).dblclick();
    await search(page).getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => viewsDivider(page).count()).toBe(0);
    await footDivider(page).dblclick();
    await expect
      .poll(async () =>
        JSON.parse((await page.evaluate((k) => localStorage.getItem(k), SPLIT_KEY)) ?? '{}'),
      )
      .toEqual({ ...DEFAULT_SPLIT });
  });

  it('Save of the edit form is in view at 1280×800 without scrolling', async () => {
    for (const path of ['User/Preferences/PreferDark', 'Notes/Packing']) {
      await openInTree(page, path);
      await detail(page).getByRole('button', { name: 'Edit' }).click();
      const save = detail(page).getByRole('button', { name: 'Save' });
      await save.waitFor();
      expect(await visibleUncovered(save), `${path}: Save in view`).toBe(true);
      expect(
        await visibleUncovered(detail(page).getByRole('button', { name: 'Cancel' })),
        `${path}: Cancel in view`,
      ).toBe(true);
      // The content box shows several lines, not a sliver.
      expect(
        (await box(detail(page).getByRole('textbox', { name: 'Content' }))).height,
      ).toBeGreaterThan(90);
      // Nothing scrolled the page itself.
      expect(await page.evaluate(() => scrollY)).toBe(0);
      if (path === 'Notes/Packing') await shot('desktop-edit-long');
      else await shot('desktop-edit');
      await page.keyboard.press('Escape');
      await expect
        .poll(() => detail(page).getByRole('form', { name: 'Edit entry' }).count())
        .toBe(0);
    }
  });

  it('search shows the strong matches first, the weaker ones behind "Show N weaker matches"', async () => {
    await openInTree(page, 'Travel/Lisbon');
    await runSearch(page, 'oat milk');
    const engine = (
      await callWorker<HeadingResult>(page, 'queryMemoryHeading', '', 'oat milk', undefined, {
        limit: 50,
      })
    ).children as HeadingChild[];
    const relevant = engine.filter((c) => (c.relevance ?? 1) >= MIN_RELEVANCE);
    const weaker = engine.length - relevant.length;
    expect(weaker).toBeGreaterThan(0);

    let hits = await listed(page);
    expect(hits.map((h) => h.path)).toEqual(relevant.map((c) => c.path.replace(/\s+/g, '')));
    expect(hits.some((h) => h.weak)).toBe(false);
    expect(hits[0].strength).toBe('Strong match');
    for (const h of hits) expect(['Strong match', 'Good match']).toContain(h.strength);
    await shot('desktop-search');

    const more = search(page).getByRole('button', { name: `Show ${weaker} weaker matches` });
    expect(await more.getAttribute('aria-expanded')).toBe('false');
    await more.click();
    hits = await listed(page);
    expect(hits).toHaveLength(engine.length);
    // Every strong or good match before the first weak one.
    const firstWeak = hits.findIndex((h) => h.weak);
    expect(firstWeak).toBe(relevant.length);
    expect(hits.slice(firstWeak).every((h) => h.weak && h.strength === 'Weak match')).toBe(true);
    await search(page).getByRole('button', { name: 'Hide weaker matches' }).click();
    expect(await listed(page)).toHaveLength(relevant.length);
  });

  it('the scope switches between all memory and the selected heading in one click', async () => {
    await openInTree(page, 'Projects/HaloWeave');
    const all = search(page).getByRole('button', { name: 'all memory', exact: true });
    const under = search(page).getByRole('button', { name: 'in Projects/HaloWeave' });
    // All memory unless asked: selecting a heading does not narrow the search by itself.
    expect(await all.getAttribute('aria-pressed')).toBe('true');
    expect(await under.getAttribute('aria-pressed')).toBe('false');
    await runSearch(page, 'offline');
    expect(await search(page).getByRole('status').first().textContent()).toContain(
      'in all memory for “offline”',
    );
    expect((await listed(page)).map((h) => h.path)).toContain('Travel/Lisbon');

    await under.click();
    await expect
      .poll(() => search(page).getByRole('status').first().textContent(), { timeout: 30_000 })
      .toContain('in Projects/HaloWeave for “offline”');
    expect(await under.getAttribute('aria-pressed')).toBe('true');
    const narrowed = (await listed(page)).map((h) => h.path);
    expect(narrowed.length).toBeGreaterThan(0);
    for (const p of narrowed) expect(p.startsWith('Projects/HaloWeave/')).toBe(true);
    await shot('desktop-search-scope');

    // Under the selected heading, the results follow the selection.
    await openInTree(page, 'Travel');
    await expect
      .poll(() => search(page).getByRole('status').first().textContent(), { timeout: 30_000 })
      .toContain('in Travel for “offline”');
    expect((await listed(page)).map((h) => h.path)).toEqual(['Travel/Lisbon']);

    await search(page).getByRole('button', { name: 'all memory', exact: true }).click();
    await expect
      .poll(() => search(page).getByRole('status').first().textContent(), { timeout: 30_000 })
      .toContain('in all memory for “offline”');
  });

  it('the map is reached with Tab and moved through with the arrow keys; Enter opens a block', async () => {
    await search(page).getByRole('button', { name: 'Clear' }).click();
    const mapTab = explorer(page).getByRole('tab', { name: 'Map' });
    await mapTab.click();
    await page.keyboard.press('Tab');
    const map = explorer(page).getByRole('application', { name: 'Memory map' });
    expect((await focused(page)).label).toBe('Memory map');
    // A focus ring on the map, and an outline on the block the keys are on.
    expect(await map.evaluate((el) => getComputedStyle(el).outlineStyle)).toBe('solid');
    const active = () =>
      explorer(page)
        .locator('sm-memory-map')
        .locator('rect.active[data-path]')
        .getAttribute('data-path');
    const start = await active();
    // It starts on the selected entry's block.
    expect(start).toBe('Travel/Lisbon');
    const caption = explorer(page).locator('sm-memory-map .caption');
    expect(await caption.textContent()).toContain('Travel/Lisbon');

    const seen = new Set<string>([start!]);
    for (const key of ['ArrowLeft', 'ArrowUp', 'ArrowLeft', 'ArrowDown', 'ArrowRight']) {
      await page.keyboard.press(key);
      const now = await active();
      expect(now).toBeTruthy();
      seen.add(now!);
      expect(await caption.textContent()).toContain(now!);
    }
    expect(seen.size).toBeGreaterThan(2);
    // Read out to a screen reader.
    const live = explorer(page).locator('sm-memory-map [aria-live]');
    expect(await live.textContent()).toContain((await active())!);
    await shot('desktop-map-keys');

    const target = (await active())!;
    await page.keyboard.press('Enter');
    await expect.poll(() => detailPath(page)).toBe(target);
    // Focus stays on the map for the next move.
    expect((await focused(page)).label).toBe('Memory map');
    await page.keyboard.press('Home');
    expect(await active()).not.toBe(null);
    await explorer(page).getByRole('tab', { name: 'Tree' }).click();
  });

  it('at phone size an entry’s detail starts above the fold', async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    try {
      const p = await phone.newPage();
      p.on('pageerror', (e) => errors.push(e.message));
      await p.goto(server.url);
      await p.getByRole('tab', { name: 'Memory' }).click();
      await seed(p);
      await runSearch(p, 'offline');
      await shot('phone-search', p);
      await openInTree(p, 'User/Preferences/PreferDark');
      const d = await box(detail(p));
      const title = await box(detail(p).getByRole('heading', { level: 2 }));
      const edit = await box(detail(p).getByRole('button', { name: 'Edit' }));
      // Search results are shown, so the detail yields them most of the room (split-layout.ts):
      // its title and actions still start above the fold.
      expect(d.y).toBeLessThan(844 - 120);
      expect(title.y + title.height).toBeLessThan(844);
      expect(edit.y + edit.height).toBeLessThan(844);
      // Nothing spills sideways.
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shot('phone-detail', p);
      await detail(p).getByRole('button', { name: 'Edit' }).click();
      expect(await visibleUncovered(detail(p).getByRole('button', { name: 'Save' }))).toBe(true);
      await shot('phone-edit', p);
      await p.keyboard.press('Escape');
      await explorer(p).getByRole('tab', { name: 'Map' }).click();
      // The map drawn: its headings named.
      await p.locator('sm-memory-map text.heading').first().waitFor();
      await shot('phone-map', p);
    } finally {
      await phone.close();
    }
  });

  it('threw nothing in the page', () => {
    expect(errors).toEqual([]);
  });
});
