// Nothing lost by a click (issue 11), as a person uses the built app in Chromium: a delete undone
// from the toast, a deleted subtree listed in the Trash (also after a reload) and restored with
// its history and context, emptying the trash behind a confirmation, a move that says where the
// entry came from and where it went, a tool card that follows the move, and an edit by hand that
// keeps the conversation context. Screenshots of the Trash and the toast at desktop and phone size
// go to /tmp/shots-trash/.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeReply, type FakeServer } from '../fixtures/fake-llm';
import { launchChromium } from './chromium';
import { serveStatic, type StaticServer } from './static-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHOTS = process.env.TRASH_SHOTS ?? '/tmp/shots-trash';

/** The fake model saves `Chat/Note` when asked to remember, then confirms. */
function reply(req: { body: unknown }): FakeReply {
  const messages = (req.body as { messages?: { role: string; content: string | null }[] }).messages;
  const last = messages?.[messages.length - 1];
  if (last?.role === 'tool') return { text: 'Noted.' };
  if (/remember/i.test(last?.content ?? '')) {
    return {
      toolCalls: [
        { name: 'saveMemory', arguments: { path: 'Chat/Note', content: 'bring the umbrella' } },
      ],
    };
  }
  return { text: 'OK.' };
}

interface AppMemory {
  createConversation(title: string): Promise<{ id: number }>;
  recordTurn(t: { conversationId: number; role: string; text: string }): Promise<unknown>;
  saveMemory(p: string, c: unknown, tokens?: number, o?: unknown): Promise<{ status: string }>;
  getEntry(p: string): Promise<{ contextChunks: unknown[]; content: unknown }>;
}

describe('trash, undo and moves in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let fake: FakeServer;
  let outDir: string;
  const errors: string[] = [];

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-trash-'));
    await mkdir(SHOTS, { recursive: true });
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
      define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('bundled') },
    });
    server = await serveStatic(outDir);
    fake = await startFakeServer('koboldcpp', { defaultReply: reply, tokenDelayMs: 2 });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await fake?.close();
    await server?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SHOTS, `${name}.png`) });
  const tree = (p: Page = page) => p.getByRole('tree', { name: 'Memory' });
  const detail = (p: Page = page) => p.locator('sm-entry-detail');
  const notice = (p: Page = page) => p.locator('sm-toast');
  const heading = (p: Page = page) => detail(p).locator('h2').textContent();
  /** Opens a path as a person does: filter the tree, choose the node, clear the filter. */
  async function open(path: string, p: Page = page): Promise<void> {
    await p.getByRole('tab', { name: 'Tree' }).click();
    const filter = p.getByRole('searchbox', { name: 'Filter paths' });
    await filter.fill(path);
    const name = path.split('/').at(-1)!;
    const item = tree(p).getByRole('treeitem', { name, exact: true });
    await expect.poll(() => item.count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await item.first().click();
    await filter.fill('');
    await expect.poll(() => heading(p), { timeout: 10_000 }).toMatch(new RegExp(`^${name}`));
  }

  async function deleteOpened(p: Page = page): Promise<void> {
    await detail(p).getByRole('toolbar').getByRole('button', { name: 'Delete' }).click();
    await detail(p)
      .getByRole('group', { name: 'Confirm delete' })
      .getByRole('button', { name: 'Delete' })
      .click();
  }

  const items = (p: Page = page) => p.locator('sm-trash').getByRole('listitem');

  it('starts, and is given memories with conversation context', async () => {
    await page.goto(server.url);
    await expect
      .poll(() => page.evaluate(() => Boolean(document.querySelector('sm-app'))))
      .toBe(true);
    await page.evaluate(async () => {
      const m = (document.querySelector('sm-app') as unknown as { memory: AppMemory }).memory;
      const { id } = await m.createConversation('Trip');
      for (const text of [
        'We are planning a trip to Lisbon in May with the whole family.',
        'The hotel must be near Alfama, with a view of the river.',
        'The budget for the flights is 900 euros.',
      ]) {
        await m.recordTurn({ conversationId: id, role: 'user', text });
      }
      const save = (p: string, c: unknown) => m.saveMemory(p, c, 300, { conversationId: id });
      await save('Trip/Lisbon', 'Lisbon in May, with the family');
      await save('Trip/Lisbon/Hotel', 'near Alfama, with a river view');
      await save('Trip/Lisbon/Budget', { flights: 900, currency: 'EUR' });
      await save('Notes/Idea', 'a trash view for deleted memories');
      await save('Work/Plan', 'ship the trash view');
      await save('Work/Draft', 'a draft to throw away');
    });
    await expect
      .poll(() => tree().getByRole('treeitem', { name: 'Trip' }).count(), { timeout: 30_000 })
      .toBe(1);
  });

  it('delete an entry: it disappears, and Undo in the toast brings it back', async () => {
    await open('Notes/Idea');
    await deleteOpened();
    await expect
      .poll(() => tree().getByRole('treeitem', { name: 'Notes' }).count(), { timeout: 10_000 })
      .toBe(0);
    // The toast says so (a polite live region) and offers Undo; focus went to it, since the
    // Delete button is gone.
    const status = notice().getByRole('status');
    await expect
      .poll(() => status.textContent(), { timeout: 10_000 })
      .toMatch(/Deleted “Notes\/Idea”/);
    const undo = notice().getByRole('button', { name: 'Undo' });
    await expect.poll(() => undo.isVisible()).toBe(true);
    await shot('toast-desktop');
    await expect
      .poll(() =>
        page.evaluate(() => {
          let el = document.activeElement;
          while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
          return el?.textContent?.trim();
        }),
      )
      .toBe('Undo');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => tree().getByRole('treeitem', { name: 'Notes' }).count(), { timeout: 10_000 })
      .toBe(1);
    await expect
      .poll(() => detail().getByText('a trash view for deleted memories').count(), {
        timeout: 10_000,
      })
      .toBeGreaterThan(0);
  });

  it('delete a subtree: the Trash lists it as one item, after a reload too; Restore brings back the entries with their history and context', async () => {
    await page.evaluate(async () => {
      const m = (document.querySelector('sm-app') as unknown as { memory: AppMemory }).memory;
      await m.saveMemory('Trip/Lisbon/Hotel', 'near Alfama, river view, quiet', 300);
    });
    await open('Trip');
    await deleteOpened();
    await expect
      .poll(() => tree().getByRole('treeitem', { name: 'Trip' }).count(), { timeout: 10_000 })
      .toBe(0);
    await page.getByRole('tab', { name: 'Trash' }).click();
    await expect.poll(() => items().count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => items().first().textContent()).toMatch(/Trip[\s\S]*3 entries/);
    await shot('trash-desktop');

    await page.reload();
    await page.getByRole('tab', { name: 'Trash' }).click();
    await expect.poll(() => items().count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => items().first().textContent()).toMatch(/Trip[\s\S]*3 entries/);

    await items().first().getByRole('button', { name: 'Restore Trip' }).click();
    await expect.poll(() => items().count(), { timeout: 10_000 }).toBe(0);
    await expect
      .poll(() => notice().getByRole('status').textContent(), { timeout: 10_000 })
      .toMatch(/Restored “Trip” \(3 entries\)/);
    await open('Trip/Lisbon/Hotel');
    await expect
      .poll(() => detail().getByText('near Alfama, river view, quiet').count(), {
        timeout: 10_000,
      })
      .toBeGreaterThan(0);
    // Its context snapshot and its history are back.
    await expect
      .poll(
        () =>
          detail()
            .getByText(/The hotel must be near Alfama/)
            .count(),
        { timeout: 10_000 },
      )
      .toBeGreaterThan(0);
    const history = detail().locator('section', { hasText: 'History' });
    await expect.poll(() => history.getByText('Version 1', { exact: true }).count()).toBe(1);
    await expect.poll(() => history.getByText('Version 2', { exact: true }).count()).toBe(1);
  });

  it('Empty trash asks first: focus starts on Cancel, Escape closes; confirming empties it', async () => {
    // Markup in a deleted entry's path and content stays text in the Trash.
    await page.evaluate(async () => {
      const m = (document.querySelector('sm-app') as unknown as { memory: AppMemory }).memory;
      await m.saveMemory('Work/<img src=x onerror="window.__xss=1">', '<b onclick=1>bold</b>', 0);
    });
    await open('Work/<img src=x onerror="window.__xss=1">');
    await deleteOpened();
    await open('Work/Draft');
    await deleteOpened();
    await page.getByRole('tab', { name: 'Trash' }).click();
    await expect.poll(() => items().count(), { timeout: 10_000 }).toBe(2);
    await expect
      .poll(() => page.locator('sm-trash').getByText('<b onclick=1>bold</b>').count())
      .toBe(1);
    expect(
      await page.evaluate(() => {
        const root = document.querySelector('sm-app')!.shadowRoot!;
        const trash = root.querySelector('sm-explorer')!.shadowRoot!.querySelector('sm-trash')!;
        return trash.shadowRoot!.querySelectorAll('img, b, [onerror], [onclick]').length;
      }),
    ).toBe(0);
    expect(await page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined();
    const trash = page.locator('sm-trash');
    await trash.getByRole('button', { name: 'Empty trash' }).click();
    const dialog = trash.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await expect
      .poll(() =>
        page.evaluate(() => {
          let el = document.activeElement;
          while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
          return el?.textContent?.trim();
        }),
      )
      .toBe('Cancel');
    await shot('trash-confirm-desktop');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await items().count()).toBe(2);

    await trash.getByRole('button', { name: 'Empty trash' }).click();
    await dialog.getByRole('button', { name: 'Empty trash' }).click();
    await expect.poll(() => items().count(), { timeout: 10_000 }).toBe(0);
    await expect
      .poll(() => trash.getByText(/The trash is empty/).count(), { timeout: 10_000 })
      .toBe(1);
  });

  it('Undo after a move moves it back; Undo after restoring a version brings back the one it replaced', async () => {
    await open('Notes/Idea');
    await detail().getByRole('toolbar').getByRole('button', { name: 'Move' }).click();
    await detail().getByRole('textbox', { name: 'New path' }).fill('Notes/Later');
    await detail()
      .getByRole('form', { name: 'Move or rename' })
      .getByRole('button', { name: 'Move' })
      .click();
    await expect.poll(() => heading(), { timeout: 10_000 }).toMatch(/^Later/);
    // Undo by keyboard: the keys go on in the detail of the entry moved back, not on the page.
    await notice().getByRole('button', { name: 'Undo' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => heading(), { timeout: 10_000 }).toMatch(/^Idea/);
    await expect
      .poll(() => notice().getByRole('status').textContent(), { timeout: 10_000 })
      .toMatch(/Moved back to “Notes\/Idea”/);
    await expect
      .poll(() =>
        page.evaluate(() => {
          let el: Element | null = document.activeElement;
          const hosts: string[] = [];
          while (el?.shadowRoot?.activeElement) {
            hosts.push(el.localName);
            el = el.shadowRoot.activeElement;
          }
          return el && el !== document.body && el.isConnected ? hosts.join(' ') : 'lost';
        }),
      )
      .toMatch(/sm-entry-detail$/);
    // Done with the notice: close it (it would stay its few seconds over the pane's last rows).
    await notice().getByRole('button', { name: 'Close notice' }).click();
    await expect
      .poll(() => tree().getByRole('treeitem', { name: 'Later' }).count(), { timeout: 10_000 })
      .toBe(0);

    await page.evaluate(async () => {
      const m = (document.querySelector('sm-app') as unknown as { memory: AppMemory }).memory;
      await m.saveMemory('Notes/Idea', 'a better idea', 0);
    });
    await expect
      .poll(() => detail().getByText('a better idea').count(), { timeout: 10_000 })
      .toBe(1);
    const history = detail().locator('section', { hasText: 'History' });
    await history.getByRole('button', { name: /^Version 1\b/ }).click();
    await history.getByRole('button', { name: 'Restore', exact: true }).click();
    await expect
      .poll(() => detail().getByText('a trash view for deleted memories').count(), {
        timeout: 10_000,
      })
      .toBeGreaterThan(0);
    await expect
      .poll(() => notice().getByRole('status').textContent(), { timeout: 10_000 })
      .toMatch(/Restored version 1 of “Notes\/Idea”/);
    await notice().getByRole('button', { name: 'Undo' }).click();
    await expect
      .poll(() => detail().getByText('a better idea').count(), { timeout: 10_000 })
      .toBe(1);
  });

  it('move an entry: its detail says where it came from, the old path says where it went', async () => {
    await open('Work/Plan');
    await detail().getByRole('toolbar').getByRole('button', { name: 'Move' }).click();
    await detail().getByRole('textbox', { name: 'New path' }).fill('Done/Plan');
    await detail()
      .getByRole('form', { name: 'Move or rename' })
      .getByRole('button', { name: 'Move' })
      .click();
    await expect.poll(() => heading(), { timeout: 10_000 }).toMatch(/^Plan/);
    await expect.poll(() => detail().getByText('Moved from').count(), { timeout: 10_000 }).toBe(1);
    await expect
      .poll(() => notice().getByRole('status').textContent(), { timeout: 10_000 })
      .toMatch(/Moved “Work\/Plan” to “Done\/Plan”/);
    await shot('moved-desktop');
    // The old path's view says where it went, with a link there.
    await detail().getByRole('button', { name: 'Work/Plan', exact: true }).click();
    await expect.poll(() => heading(), { timeout: 10_000 }).toMatch(/nothing saved/);
    await expect
      .poll(
        () =>
          detail()
            .getByText(/It was moved to/)
            .count(),
        { timeout: 10_000 },
      )
      .toBe(1);
    await detail().getByRole('button', { name: 'Done/Plan', exact: true }).click();
    await expect.poll(() => detail().getByText('ship the trash view').count()).toBeGreaterThan(0);
  });

  it('edit an entry by hand: its conversation context is still shown', async () => {
    await open('Trip/Lisbon');
    const context = detail().locator('section', { hasText: 'Context from the conversation' });
    await expect
      .poll(() => context.getByText(/planning a trip to Lisbon/).count(), { timeout: 10_000 })
      .toBeGreaterThan(0);
    await detail().getByRole('button', { name: 'Edit', exact: true }).click();
    await detail().getByRole('textbox', { name: 'Content' }).fill('Lisbon in late May, four of us');
    await detail().getByRole('button', { name: 'Save', exact: true }).click();
    await expect
      .poll(() => detail().getByText('Lisbon in late May, four of us').count(), {
        timeout: 10_000,
      })
      .toBeGreaterThan(0);
    await expect
      .poll(() => context.getByText(/planning a trip to Lisbon/).count(), { timeout: 10_000 })
      .toBeGreaterThan(0);
    expect(
      await detail()
        .getByText(/No conversation context was stored/)
        .count(),
    ).toBe(0);
    await expect
      .poll(() => context.getByText(/kept from the original save/i).count())
      .toBeGreaterThan(0);
    const stored = await page.evaluate(async () => {
      const m = (document.querySelector('sm-app') as unknown as { memory: AppMemory }).memory;
      return m.getEntry('Trip/Lisbon');
    });
    expect(stored.contextChunks.length).toBeGreaterThan(0);
    await shot('edited-desktop');
  });

  it('a tool card link to a moved path follows the move', async () => {
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await page.getByRole('textbox', { name: 'Endpoint URL' }).fill(fake.url);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect
      .poll(() => page.getByText('fake-model').count(), { timeout: 30_000 })
      .toBeGreaterThan(0);
    await page.getByRole('textbox', { name: 'Message' }).fill('Please remember the umbrella.');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = page.locator('sm-tool-card').getByRole('button', { name: 'Chat/Note' });
    await expect.poll(() => card.count(), { timeout: 60_000 }).toBe(1);
    await open('Chat/Note');
    await detail().getByRole('toolbar').getByRole('button', { name: 'Move' }).click();
    await detail().getByRole('textbox', { name: 'New path' }).fill('Chat/Kept');
    await detail()
      .getByRole('form', { name: 'Move or rename' })
      .getByRole('button', { name: 'Move' })
      .click();
    await expect.poll(() => heading(), { timeout: 10_000 }).toMatch(/^Kept/);
    await open('Done/Plan');
    await card.click();
    await expect.poll(() => heading(), { timeout: 10_000 }).toMatch(/^Kept/);
    await expect
      .poll(() => notice().getByRole('status').textContent(), { timeout: 10_000 })
      .toMatch(/moved to “Chat\/Kept”/);
  });

  it('phone size: the Trash and the toast', async () => {
    const p = await context.newPage();
    p.on('pageerror', (e) => errors.push(e.message));
    await p.setViewportSize({ width: 390, height: 844 });
    await p.goto(server.url);
    await p.getByRole('tab', { name: 'Memory' }).click();
    await expect
      .poll(() => tree(p).getByRole('treeitem', { name: 'Trip' }).count(), { timeout: 30_000 })
      .toBe(1);
    await open('Trip/Lisbon/Budget', p);
    await deleteOpened(p);
    await expect
      .poll(() => notice(p).getByRole('status').textContent(), { timeout: 10_000 })
      .toMatch(/Deleted “Trip\/Lisbon\/Budget”/);
    await shot('toast-phone', p);
    await p.getByRole('tab', { name: 'Trash' }).click();
    await expect.poll(() => items(p).count(), { timeout: 10_000 }).toBe(1);
    await shot('trash-phone', p);
    await p.close();
    expect(errors).toEqual([]);
  });
});
