// Room for what a person looks at (issue 23, walk items 3, 6 and 9), in the built app in
// Chromium at desktop (1280×800) and phone (390×844) size: the first open shows one banner line;
// a search with an entry open shows at least three whole results; two chats whose titles part
// after 20 characters read apart; the Undo toast covers none of the entry pane; every heading of
// the memory map is named, in letters of 11 px or more; the header's counts stay on one line with
// 12,345 entries. axe finds nothing on each screen. Screenshots go to /tmp/shots-layout/
// (LAYOUT_SHOTS overrides).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TITLE_MAX } from '../../src/memory/replies';
import { launchChromium } from './chromium';
import {
  SEED,
  axeScan,
  backup,
  buildAndServe,
  callWorker,
  openInTree,
  runSearch,
  seed,
} from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = process.env.LAYOUT_SHOTS ?? '/tmp/shots-layout';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

async function box(l: Locator): Promise<Box> {
  const b = await l.boundingBox();
  if (!b) throw new Error('not laid out');
  return b;
}

const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

const detail = (p: Page) => p.locator('sm-entry-detail');
const search = (p: Page) => p.locator('sm-memory-search');

/**
 * The search results wholly in view: inside the explorer's scrolled search area, below the
 * search box that stays at its top, and inside the window.
 */
function wholeResults(p: Page): Promise<number> {
  return p.locator('sm-explorer').evaluate((explorer) => {
    const area = explorer.shadowRoot!.querySelector('.search')!.getBoundingClientRect();
    const searchRoot = explorer.shadowRoot!.querySelector('sm-memory-search')!.shadowRoot!;
    const form = searchRoot.querySelector('form')!.getBoundingClientRect();
    const top = Math.max(area.top, form.bottom);
    const bottom = Math.min(area.bottom, innerHeight);
    return [...searchRoot.querySelectorAll('li.hit')].filter((li) => {
      const r = li.getBoundingClientRect();
      return r.height > 0 && r.top >= top - 0.5 && r.bottom <= bottom + 0.5;
    }).length;
  });
}

/** The characters of `el`'s text that are painted inside its box (not clipped or cut off). */
function visibleText(l: Locator): Promise<string> {
  return l.evaluate((el) => {
    const frame = el.getBoundingClientRect();
    let out = '';
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const r = range.getBoundingClientRect();
        const x = r.left + r.width / 2;
        const y = r.top + r.height / 2;
        if (x >= frame.left && x <= frame.right && y >= frame.top && y <= frame.bottom) {
          out += text[i];
        }
      }
    }
    return out.replace(/\s+/g, ' ').trim();
  });
}

/** Every heading path of `entries` (each proper prefix of a path). */
function headingsOf(entries: readonly { path: string }[]): string[] {
  const out = new Set<string>();
  for (const { path } of entries) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) out.add(parts.slice(0, i).join('/'));
  }
  return [...out];
}

describe('room for what a person looks at (Chromium)', () => {
  let browser: Browser;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  const contexts: BrowserContext[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ server, dispose } = await buildAndServe());
    browser = await launchChromium();
  });

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await dispose?.();
  });

  /** A fresh profile at `size` with the app open. */
  async function open(size: typeof DESKTOP): Promise<Page> {
    const context = await browser.newContext({
      viewport: size,
      ...(size === PHONE ? { isMobile: true, hasTouch: true } : {}),
    });
    contexts.push(context);
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(server.url);
    return page;
  }

  const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `${name}.png`) });
  const sizeName = (size: typeof DESKTOP) => (size === PHONE ? 'phone' : 'desktop');

  for (const size of [DESKTOP, PHONE]) {
    it(`${sizeName(size)}: the first open shows one banner line, the others behind "N more"`, async () => {
      const page = await open(size);
      const banners = page.locator('sm-app .banner');
      // No server yet, and the service worker's "ready to work offline" (and, on a busy machine,
      // the embedding model still loading): more than one thing to say.
      const more = page.getByRole('button', { name: /^\d+ more$/ });
      await more.waitFor({ timeout: 30_000 });
      // The most urgent line first, once the connection to the (absent) server has failed.
      await expect
        .poll(() => banners.first().textContent(), { timeout: 30_000 })
        .toContain('No model server yet.');
      await expect.poll(() => banners.count(), { timeout: 30_000 }).toBe(1);
      // One line: the header and the tabs (phone) leave the rest to the panes.
      const b = await box(banners);
      expect(b.height).toBeLessThan(40);
      const header = await box(page.locator('sm-app header'));
      const main = await box(page.locator('sm-app main'));
      const tabs = size === PHONE ? (await box(page.locator('sm-app nav.tabs'))).height : 0;
      expect(main.y - (header.y + header.height) - tabs).toBeLessThan(42);
      expect(await axeScan(page, server)).toEqual([]);
      await shot(page, `${sizeName(size)}-first-open`);

      // The others on request, and gone again.
      await more.click();
      expect(await more.getAttribute('aria-expanded')).toBe('true');
      // Two once the embedding model has loaded (its line goes then).
      await expect.poll(() => banners.count(), { timeout: 30_000 }).toBe(2);
      expect(await banners.nth(1).textContent()).toContain('ready to work offline');
      expect(await axeScan(page, server)).toEqual([]);
      await shot(page, `${sizeName(size)}-banners-expanded`);
      await banners.nth(1).getByRole('button', { name: 'Dismiss this notice' }).click();
      await expect.poll(() => banners.count()).toBe(1);
      expect(await page.getByRole('button', { name: /more$/ }).count()).toBe(0);
    });
  }

  for (const size of [DESKTOP, PHONE, { width: 360, height: 740 }]) {
    it(`${size.width} wide: the Export menu opens whole inside the window`, async () => {
      const page = await open(size);
      if (size.width < 800) await page.getByRole('tab', { name: 'Memory' }).click();
      await seed(page);
      await openInTree(page, 'User/Preferences/Coffee');
      await page.getByRole('button', { name: /^Export/ }).click();
      const items = page.locator('sm-data-menu ul.menu li');
      // The selected subtree's item (the widest) comes once the menu has looked for it.
      await expect
        .poll(() => items.allTextContents())
        .toContainEqual(expect.stringContaining('User/Preferences/Coffee'));
      for (const b of await items.all()) {
        const r = await box(b);
        const name = (await b.textContent()) ?? '';
        expect(r.x, name).toBeGreaterThanOrEqual(0);
        expect(r.x + r.width, name).toBeLessThanOrEqual(size.width);
      }
      await shot(page, `${size.width}-export-menu`);
    });
  }

  for (const size of [DESKTOP, PHONE]) {
    it(`${sizeName(size)}: a search with an entry open shows at least three whole results`, async () => {
      const page = await open(size);
      if (size === PHONE) await page.getByRole('tab', { name: 'Memory' }).click();
      await seed(page);
      await openInTree(page, 'User/Preferences/Coffee');
      await runSearch(page, 'milk');
      expect(await search(page).locator('li.hit').count()).toBeGreaterThanOrEqual(3);
      expect(await wholeResults(page)).toBeGreaterThanOrEqual(3);
      // The entry still shows its title and its actions below.
      const pane = await box(detail(page));
      const edit = await box(detail(page).getByRole('button', { name: 'Edit' }));
      expect(edit.y + edit.height).toBeLessThanOrEqual(Math.min(pane.y + pane.height, size.height));
      expect(await axeScan(page, server)).toEqual([]);
      await shot(page, `${sizeName(size)}-search-with-entry`);

      // Choosing a result opens it below; the results keep their room.
      await search(page).locator('li.hit button.path', { hasText: 'Shopping' }).click();
      await expect
        .poll(() => detail(page).evaluate((el) => (el as unknown as { path?: string }).path))
        .toBe('Notes/Shopping');
      expect(await wholeResults(page)).toBeGreaterThanOrEqual(3);
      // Cleared: the entry has its usual half back.
      const before = (await box(detail(page))).height;
      await search(page).getByRole('button', { name: 'Clear' }).click();
      await expect.poll(async () => (await box(detail(page))).height).toBeGreaterThan(before + 60);
    });
  }

  for (const size of [DESKTOP, PHONE]) {
    it(`${sizeName(size)}: two chats whose titles part after 20 characters read apart`, async () => {
      const page = await open(size);
      // As long as a title made from a first message gets (TITLE_MAX), parting near the end.
      const titles = [
        'Remember that my favourite colour is deep green',
        'Remember that my favourite colour is pale blue',
      ];
      expect(titles[0].slice(0, 36)).toBe(titles[1].slice(0, 36));
      expect(Math.max(...titles.map((t) => t.length))).toBeLessThanOrEqual(TITLE_MAX);
      for (const t of titles) await callWorker(page, 'createConversation', t);
      if (size === PHONE) await page.getByRole('tab', { name: 'Chats' }).click();
      const list = page.locator('sm-conversations');
      const item = (t: string) =>
        list
          .locator('li')
          .filter({ has: page.getByRole('button', { name: `Rename chat: ${t}`, exact: true }) });
      for (const t of titles) await item(t).waitFor();
      const shown = await Promise.all(titles.map((t) => visibleText(item(t).locator('.title'))));
      expect(shown[0]).not.toBe(shown[1]);
      // Each reads whole, the open one (in bold) too.
      expect(shown).toEqual(titles);
      // Rename and Delete do not sit on the title.
      for (const t of titles) {
        const title = await box(item(t).locator('.title'));
        const rename = await box(list.getByRole('button', { name: `Rename chat: ${t}` }));
        expect(overlaps(title, rename)).toBe(false);
      }
      expect(await axeScan(page, server)).toEqual([]);
      await shot(page, `${sizeName(size)}-chats`);
    });
  }

  for (const size of [DESKTOP, PHONE]) {
    it(`${sizeName(size)}: the Undo toast covers none of the entry pane`, async () => {
      const page = await open(size);
      if (size === PHONE) await page.getByRole('tab', { name: 'Memory' }).click();
      await seed(page);
      await openInTree(page, 'Notes/Packing');
      await detail(page).getByRole('button', { name: 'Move' }).click();
      const to = detail(page).getByRole('textbox', { name: 'New path' });
      await to.fill('Lists/Packing');
      await to.press('Enter');
      const toast = page.locator('sm-toast').getByRole('button', { name: 'Undo' });
      await toast.waitFor();
      // Held open while it is measured: the pointer rests on it.
      await toast.hover();
      const notice = await box(page.locator('sm-toast .toast'));
      const pane = await box(detail(page));
      expect(overlaps(notice, pane)).toBe(false);
      for (const button of await detail(page).getByRole('button').all()) {
        const b = await button.boundingBox();
        if (b && b.height > 0) expect(overlaps(notice, b), await button.innerText()).toBe(false);
      }
      expect(await axeScan(page, server)).toEqual([]);
      await shot(page, `${sizeName(size)}-undo-toast`);
      await toast.click();
      await expect
        .poll(() => page.locator('sm-toast [role="status"]').textContent())
        .toContain('Moved back');
    });
  }

  for (const size of [DESKTOP, PHONE]) {
    it(`${sizeName(size)}: every heading of the map is named, in letters of 11 px or more`, async () => {
      const page = await open(size);
      if (size === PHONE) await page.getByRole('tab', { name: 'Memory' }).click();
      await seed(page);
      await page.getByRole('tab', { name: 'Map' }).click();
      const map = page.locator('sm-memory-map');
      await expect
        .poll(() => map.evaluate((el) => (el as unknown as { cellCount: number }).cellCount))
        .toBeGreaterThan(0);
      const frame = await box(map.locator('.frame'));
      const labels = await map.locator('svg text').evaluateAll((texts) =>
        texts.map((t) => {
          const r = t.getBoundingClientRect();
          return {
            path: t.getAttribute('data-path') ?? '',
            heading: t.classList.contains('heading'),
            // Its own words, less the count beside them.
            text: [...t.childNodes]
              .filter((n) => n.nodeType === Node.TEXT_NODE)
              .map((n) => n.textContent)
              .join('')
              .trim(),
            size: parseFloat(getComputedStyle(t).fontSize),
            box: { x: r.x, y: r.y, width: r.width, height: r.height },
          };
        }),
      );
      for (const path of headingsOf(SEED)) {
        const name = path.split('/').pop()!;
        const label = labels.find((l) => l.heading && l.path === path);
        expect(label, `${path} has a label`).toBeDefined();
        // Its name, or at least its first letters and an ellipsis.
        const text = label!.text;
        expect(text === name || (text.endsWith('…') && name.startsWith(text.slice(0, -1)))).toBe(
          true,
        );
        expect(text.length, `${path}: “${text}”`).toBeGreaterThanOrEqual(3);
        const b = label!.box;
        expect(b.x >= frame.x && b.y >= frame.y, path).toBe(true);
        expect(b.x + b.width <= frame.x + frame.width + 0.5, path).toBe(true);
        expect(b.y + b.height <= frame.y + frame.height + 0.5, path).toBe(true);
      }
      for (const l of labels) expect(l.size, l.path).toBeGreaterThanOrEqual(11);
      expect(await axeScan(page, server)).toEqual([]);
      await shot(page, `${sizeName(size)}-map`);
    });
  }

  it('desktop: the header keeps its counts on one line with 12,345 entries', async () => {
    const page = await open(DESKTOP);
    const many = Array.from({ length: 12_345 }, (_, i) => ({
      path: `Bulk/Group ${i % 50}/Item ${i}`,
      ageDays: i % 300,
      content: `note ${i}`,
    }));
    const r = await callWorker<{ status: string }>(
      page,
      'importJson',
      backup(many, Date.now()),
      'replace',
    );
    expect(r.status).toBe('SUCCESS');
    const stats = page.locator('sm-app header .stats');
    await expect.poll(() => stats.textContent(), { timeout: 30_000 }).toContain('12,345 entries');
    // The storage used and the model are there too, before measuring.
    await expect.poll(() => stats.textContent(), { timeout: 30_000 }).toContain('embeddings');
    const line = await stats.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      // The counts themselves, painted whole (not cut short at the line's end).
      const text = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
      const end = text.indexOf('indexed') + 'indexed'.length;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      let seen = 0;
      let right = 0;
      for (let node = walker.nextNode(); node && seen < end; node = walker.nextNode()) {
        const r = document.createRange();
        r.selectNodeContents(node);
        const rects = [...r.getClientRects()];
        if (rects.length) right = Math.max(right, ...rects.map((x) => x.right));
        seen += (node.textContent ?? '').replace(/\s+/g, ' ').trim().length + 1;
      }
      return { lines: lines.size, countsRight: right, boxRight: el.getBoundingClientRect().right };
    });
    expect(line.lines).toBe(1);
    expect(line.countsRight).toBeLessThanOrEqual(line.boxRight + 0.5);
    expect(await axeScan(page, server)).toEqual([]);
    await shot(page, 'desktop-header-counts');
  });

  it('raised no page errors', () => {
    expect(errors).toEqual([]);
  });
});
