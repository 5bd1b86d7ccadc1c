// Accessibility of every screen, in Debian Chromium against the production build: an axe-core
// scan (every rule it runs by default, colour contrast included) of the chat, the explorer (tree,
// map, search results, an entry's detail and its forms, the trash and its confirmation),
// Settings, the data menu and the import dialog, at desktop and phone size; and the keyboard
// promises: Escape closes each dialog, menu and form and gives focus back to what opened it,
// destructive confirmations start on Cancel, names read as words.
//
// axe-core walks the open shadow roots of the components from the document (a test plants a
// fault two roots deep and sees it reported).
//
// axe-core is served beside the app (same origin) and added with a script tag by URL: the app's
// CSP (`script-src 'self'`) refuses the inline script `addScriptTag({ path })` would make, and
// the scan should see the app as shipped, CSP included, rather than a context that bypasses it.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { axeScan, buildAndServe, callWorker, focused, seed } from './explorer-fixture';
import type { StaticServer } from './static-server';

const explorer = (p: Page) => p.locator('sm-explorer');
const detail = (p: Page) => p.locator('sm-entry-detail');

async function open(p: Page, path: string): Promise<void> {
  const parts = path.split('/');
  for (let i = 0; i < parts.length; i++) {
    const item = p.getByRole('treeitem', { name: parts[i], exact: true });
    if (i < parts.length - 1 && (await item.getAttribute('aria-expanded')) === 'true') continue;
    await item.click();
  }
  await expect
    .poll(() => detail(p).evaluate((el) => (el as unknown as { path?: string }).path))
    .toBe(path);
  await detail(p).getByRole('toolbar').waitFor();
}

describe('accessibility (axe-core in Chromium)', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ server, dispose } = await buildAndServe());
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await page.goto(server.url);
    await seed(page);
    // A chat with turns, an entry with history and context, and something in the trash.
    await page.evaluate(async () => {
      const m = (
        document.querySelector('sm-app') as unknown as {
          memory: Record<string, (...a: unknown[]) => Promise<{ id: number }>>;
        }
      ).memory;
      const { id } = await m.createConversation('Lisbon trip');
      await m.recordTurn({
        conversationId: id,
        role: 'user',
        text: 'We fly to Lisbon in May; the hotel is in Alfama.',
      });
      await m.recordTurn({
        conversationId: id,
        role: 'assistant',
        text: 'Noted: **Lisbon** in May, hotel in *Alfama*.',
      });
      await m.saveMemory('Travel/Lisbon', 'Lisbon in May, hotel in Alfama.', 300, {
        conversationId: id,
      });
      await m.saveMemory('Notes/Scratch', 'to be deleted', 0);
      await m.deleteMemory('Notes/Scratch');
    });
    await page.reload();
    await page.getByRole('treeitem', { name: 'Projects' }).waitFor({ timeout: 30_000 });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await dispose?.();
  });

  it('the chat screen (conversations, chat, explorer tree)', async () => {
    await page.getByRole('button', { name: /^Lisbon trip/ }).click();
    await page.getByText('hotel is in Alfama').first().waitFor({ timeout: 30_000 });
    expect.soft(await axeScan(page, server)).toEqual([]);
  });

  it('the scan reaches into the components’ shadow roots, nested ones too', async () => {
    // Every view is a Lit component with an open shadow root; axe-core walks open shadow roots
    // from the document. A fault planted two roots deep (a message in the chat) must be found.
    const planted = await page.evaluate(() => {
      const chat = document.querySelector('sm-app')?.shadowRoot?.querySelector('sm-chat');
      const message = chat?.shadowRoot?.querySelector('sm-message');
      const root = message?.shadowRoot;
      if (!root) return false;
      const button = document.createElement('button');
      button.id = 'planted-fault';
      root.append(button); // a button with no name
      return true;
    });
    expect(planted).toBe(true);
    try {
      const found = await axeScan(page, server);
      expect(found.some((v) => v.startsWith('button-name') && v.includes('planted-fault'))).toBe(
        true,
      );
    } finally {
      await page.evaluate(() =>
        document
          .querySelector('sm-app')
          ?.shadowRoot?.querySelector('sm-chat')
          ?.shadowRoot?.querySelector('sm-message')
          ?.shadowRoot?.querySelector('#planted-fault')
          ?.remove(),
      );
    }
  });

  it('search results, the weaker ones shown', async () => {
    const search = page.locator('sm-memory-search');
    await search.getByRole('searchbox').fill('oat milk');
    await search.getByRole('button', { name: 'Search', exact: true }).click();
    await search.getByRole('button', { name: /^Show \d+ weaker match/ }).click();
    await search.getByRole('button', { name: 'Hide weaker matches' }).waitFor();
    expect.soft(await axeScan(page, server)).toEqual([]);
  });

  it("an entry's detail, with history and context, and its edit, move and delete forms", async () => {
    await open(page, 'Travel/Lisbon');
    await detail(page).getByRole('button', { name: 'Version 1' }).click();
    expect.soft(await axeScan(page, server)).toEqual([]);
    for (const action of ['Edit', 'Move', 'Delete']) {
      await detail(page).getByRole('toolbar').getByRole('button', { name: action }).click();
      expect.soft(await axeScan(page, server), action).toEqual([]);
      await page.keyboard.press('Escape');
    }
  });

  it('the map, with the keyboard on it', async () => {
    await explorer(page).getByRole('tab', { name: 'Map' }).click();
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowRight');
    expect((await focused(page)).label).toBe('Memory map');
    expect.soft(await axeScan(page, server)).toEqual([]);
  });

  it('the trash, and its confirmation', async () => {
    await explorer(page).getByRole('tab', { name: 'Trash' }).click();
    await page.locator('sm-trash').getByRole('button', { name: 'Restore Notes/Scratch' }).waitFor();
    expect.soft(await axeScan(page, server)).toEqual([]);
    await page.locator('sm-trash').getByRole('button', { name: 'Empty trash' }).click();
    expect.soft(await axeScan(page, server)).toEqual([]);
    await page.keyboard.press('Escape');
    await explorer(page).getByRole('tab', { name: 'Tree' }).click();
  });

  it('Settings', async () => {
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await page.getByRole('dialog').first().waitFor();
    expect.soft(await axeScan(page, server)).toEqual([]);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it('the data menu and the import dialog', async () => {
    await page.getByRole('button', { name: /^Export/ }).click();
    await page.locator('sm-data-menu').getByRole('button', { name: 'JSON' }).waitFor();
    expect.soft(await axeScan(page, server)).toEqual([]);
    await page.keyboard.press('Escape');
    const backup = await callWorker<string>(page, 'exportJson');
    await page.locator('sm-data-menu input[type=file]').setInputFiles({
      name: 'backup.json',
      mimeType: 'application/json',
      buffer: Buffer.from(backup),
    });
    await page.getByRole('dialog', { name: 'Import a JSON backup' }).waitFor();
    expect.soft(await axeScan(page, server)).toEqual([]);
    await page.getByRole('button', { name: 'Replace all' }).click();
    await page.getByRole('dialog', { name: 'Replace all memory?' }).waitFor();
    expect.soft(await axeScan(page, server)).toEqual([]);
    await page.keyboard.press('Escape');
  });

  it('at phone size: the chat and the memory tab', async () => {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    try {
      const p = await phone.newPage();
      await p.goto(server.url);
      await p.getByRole('tab', { name: 'Memory' }).click();
      await seed(p);
      await p.getByRole('tab', { name: 'Chat', exact: true }).click();
      expect.soft(await axeScan(p, server), 'chat').toEqual([]);
      await p.getByRole('tab', { name: 'Memory' }).click();
      await open(p, 'User/Preferences/PreferDark');
      expect.soft(await axeScan(p, server), 'memory').toEqual([]);
    } finally {
      await phone.close();
    }
  });

  describe('the keyboard', () => {
    it('names read as words: the title and its kind, apart', async () => {
      await open(page, 'User/Preferences/PreferDark');
      // Was "PreferDarkentry · v1".
      await detail(page)
        .getByRole('heading', { name: 'PreferDark, entry, version 1', exact: true })
        .waitFor();
      const snapshot = await detail(page).ariaSnapshot();
      expect(snapshot).toContain('heading "PreferDark, entry, version 1" [level=2]');
      // The breadcrumb's slashes are drawn, not read.
      expect(snapshot).not.toMatch(/text: \//);
    });

    it('Escape closes the edit and move forms, focus back on the button that opened them', async () => {
      for (const action of ['Edit', 'Move']) {
        await detail(page).getByRole('toolbar').getByRole('button', { name: action }).click();
        const form = detail(page).getByRole('form');
        await form.waitFor();
        await page.keyboard.press('Escape');
        await expect.poll(() => form.count()).toBe(0);
        expect((await focused(page)).text).toBe(action);
      }
    });

    it('the delete confirmation starts on Cancel; Escape closes it, focus back on Delete', async () => {
      await detail(page).getByRole('toolbar').getByRole('button', { name: 'Delete' }).click();
      await detail(page).getByRole('group', { name: 'Confirm delete' }).waitFor();
      expect((await focused(page)).text).toBe('Cancel');
      await page.keyboard.press('Escape');
      await expect
        .poll(() => detail(page).getByRole('group', { name: 'Confirm delete' }).count())
        .toBe(0);
      expect((await focused(page)).text).toBe('Delete');
      // Enter on the first focus keeps the entry.
      await detail(page).getByRole('toolbar').getByRole('button', { name: 'Delete' }).click();
      await page.keyboard.press('Enter');
      expect(await detail(page).getByRole('heading', { level: 2 }).textContent()).toContain(
        'PreferDark',
      );
      expect(
        await callWorker<{ status: string }>(page, 'getEntry', 'User/Preferences/PreferDark'),
      ).not.toHaveProperty('status');
    });

    it('deleting a chat asks first, starting on Cancel; Escape keeps it', async () => {
      const chats = page.locator('sm-conversations');
      await chats.getByRole('button', { name: 'Delete chat: Lisbon trip' }).click();
      await chats.getByRole('group', { name: 'Confirm deleting Lisbon trip' }).waitFor();
      expect((await focused(page)).text).toBe('Cancel');
      await page.keyboard.press('Escape');
      await expect
        .poll(() => chats.getByRole('group', { name: 'Confirm deleting Lisbon trip' }).count())
        .toBe(0);
      expect((await focused(page)).label).toBe('Delete chat: Lisbon trip');
    });

    it('Escape closes the export menu and the import dialog, focus back where it was', async () => {
      const exportButton = page.getByRole('button', { name: /^Export/ });
      await exportButton.click();
      expect((await focused(page)).text).toMatch(/^Markdown/);
      await page.keyboard.press('Escape');
      expect((await focused(page)).text).toMatch(/^Export/);
      expect(await exportButton.getAttribute('aria-expanded')).toBe('false');

      const importButton = page.getByRole('button', { name: 'Import', exact: true });
      await importButton.focus();
      const backup = await callWorker<string>(page, 'exportJson');
      await page.locator('sm-data-menu input[type=file]').setInputFiles({
        name: 'backup.json',
        mimeType: 'application/json',
        buffer: Buffer.from(backup),
      });
      await page.getByRole('dialog', { name: 'Import a JSON backup' }).waitFor();
      await page.getByRole('button', { name: 'Replace all' }).click();
      // The destructive step starts on Cancel.
      await page.getByRole('dialog', { name: 'Replace all memory?' }).waitFor();
      expect((await focused(page)).text).toBe('Cancel');
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      expect((await focused(page)).text).toBe('Import');
    });

    it('Escape closes the trash confirmation, which starts on Cancel', async () => {
      await explorer(page).getByRole('tab', { name: 'Trash' }).click();
      const empty = page.locator('sm-trash').getByRole('button', { name: 'Empty trash' });
      await empty.click();
      expect((await focused(page)).text).toBe('Cancel');
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      expect((await focused(page)).text).toBe('Empty trash');
      await explorer(page).getByRole('tab', { name: 'Tree' }).click();
    });
  });
});
