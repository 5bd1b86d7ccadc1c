// End to end: the portable single file (`npm run build:portable`) opened from disk as file:// in
// headless Chromium, no server anywhere. It says in words what a file cannot have, saves a
// memory and finds it by meaning from the search box, keeps it when the file is opened again,
// and exports a JSON backup that the same file, opened in another browser profile, imports.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPortable } from '../../scripts/build-portable';
import { launchChromium } from './chromium';
import { makeTinyGguf } from '../fixtures/tiny-gguf';

const SHOTS = '/tmp/sm-shots-portable';
const MB = 1e6;

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

/** Page errors and console errors, but the app's probe of the default LLM endpoint. */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const where = message.location().url ?? '';
    if (/localhost:5001|ERR_CONNECTION_REFUSED|ERR_NAME_NOT_RESOLVED/.test(message.text() + where))
      return;
    problems.push(`console: ${message.text()}`);
  });
  return problems;
}

describe('portable single file from disk (file://)', () => {
  let outDir = '';
  let fileUrl = '';
  let size = 0;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-portable-e2e-'));
    const built = await buildPortable(outDir);
    size = (await stat(built.path)).size;
    fileUrl = pathToFileURL(built.path).href;
    console.info(`portable e2e: ${built.path} ${(size / MB).toFixed(2)} MB`);
    browser = await launchChromium();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  async function open(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
    const page = await context.newPage();
    const problems = watchProblems(page);
    await page.goto(fileUrl);
    return { page, problems };
  }

  it('is one file that loads nothing else', async () => {
    const html = await readFile(join(outDir, 'structured-memory.html'), 'utf8');
    expect(html).not.toMatch(/<script[^>]*\ssrc=/);
    expect(html).not.toMatch(/<link[^>]*\shref="(?!data:)/);
    // The ONNX runtime is not carried: the bundled model needs none.
    expect(html).not.toContain('onnxruntime');
    // The model is inside (6 MB before compression), and so is llama.cpp's single-thread
    // runtime (a file is never cross-origin isolated): the whole stays within 12 MB.
    expect(size).toBeGreaterThan(4 * MB);
    expect(size).toBeLessThanOrEqual(12 * MB);
  });

  it('saves a memory, finds it from the search box, and keeps it when opened again', async () => {
    if (!browser) throw new Error('Chromium did not start');
    const context = await browser.newContext({ acceptDownloads: true });
    contexts.push(context);
    const requested: string[] = [];
    context.on('request', (request) => requested.push(request.url()));
    const { page, problems } = await open(context);

    // What a file cannot have, in words.
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Opened from a file' }).count())
      .toBe(1);
    expect(await callWorker(page, 'modelInfo')).toMatchObject({
      id: 'structured-memory/glove-100d-sif',
      bundled: true,
    });
    expect(
      await callWorker(
        page,
        'saveMemory',
        'Home/Pets',
        'Our dog Biscuit is a golden retriever who loves the beach.',
      ),
    ).toMatchObject({ status: 'SUCCESS', version: 1 });
    expect(
      await callWorker(
        page,
        'saveMemory',
        'Home/Taxes',
        'The quarterly VAT return is filed by the accountant in March.',
      ),
    ).toMatchObject({ status: 'SUCCESS', version: 1 });

    // Found by meaning (no word in common) through the app's own search box.
    await page.getByPlaceholder('What are you looking for?').fill('puppy at the seaside');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.getByRole('list', { name: 'Search results' });
    await expect.poll(() => results.count(), { timeout: 30_000 }).toBe(1);
    const first = results.getByRole('listitem').first();
    expect(await first.textContent()).toMatch(/Pets/);
    await page.screenshot({ path: `${SHOTS}/search.png` });

    // Everything came from the file itself: nothing but file:, blob: and data: URLs, and the
    // app's probe of the default LLM endpoint.
    const other = requested.filter(
      (url) => !/^(file|blob|data):/.test(url) && !url.startsWith('http://localhost:5001'),
    );
    expect(other).toEqual([]);
    expect(problems).toEqual([]);

    // Opened again (the tab closed first): the memory is still there, and the notice, once
    // dismissed, stays away.
    await page.getByRole('button', { name: 'Dismiss' }).first().click();
    await page.close();
    const again = await open(context);
    expect(await callWorker(again.page, 'queryMemory', 'Home/Pets')).toMatchObject({
      status: 'SUCCESS',
      content: 'Our dog Biscuit is a golden retriever who loves the beach.',
    });
    expect(
      await again.page.getByRole('status').filter({ hasText: 'Opened from a file' }).count(),
    ).toBe(0);
    await again.page.screenshot({ path: `${SHOTS}/reopened.png` });

    // Export a JSON backup through the menu, as a download.
    await again.page.getByRole('button', { name: 'Export' }).click();
    const downloading = again.page.waitForEvent('download');
    await again.page.getByRole('button', { name: 'JSON', exact: true }).click();
    const download = await downloading;
    const backup = join(outDir, download.suggestedFilename());
    await download.saveAs(backup);
    expect(await readFile(backup, 'utf8')).toContain('Biscuit');
    expect(again.problems).toEqual([]);

    // Another profile (another browser, say) opens the same file and imports the backup.
    const other2 = await browser.newContext();
    contexts.push(other2);
    const fresh = await open(other2);
    await fresh.page.waitForFunction(
      () => !!(document.querySelector('sm-app') as { memory?: unknown } | null)?.memory,
    );
    expect(await callWorker(fresh.page, 'queryMemory', 'Home/Pets')).toMatchObject({
      status: 'NOT_FOUND',
    });
    const choosing = fresh.page.waitForEvent('filechooser');
    await fresh.page.getByRole('button', { name: 'Import' }).click();
    await (await choosing).setFiles(backup);
    await fresh.page.getByRole('button', { name: /^Merge/ }).click();
    await expect
      .poll(() => fresh.page.getByText(/Imported 2 entries/).count(), { timeout: 30_000 })
      .toBe(1);
    await fresh.page.screenshot({ path: `${SHOTS}/imported.png` });
    expect(await callWorker(fresh.page, 'queryMemory', 'Home/Pets')).toMatchObject({
      status: 'SUCCESS',
    });
    expect(fresh.problems).toEqual([]);
  });
  it('chats with a model chosen from disk, run in the page (In this browser)', async () => {
    if (!browser) throw new Error('Chromium did not start');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const { page, problems } = await open(context);
    const gguf = join(outDir, 'tiny-endless.gguf');
    await writeFile(gguf, makeTinyGguf({ endless: true }));
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    await dialog.getByRole('combobox', { name: 'Where the model runs' }).selectOption('inpage');
    await expect.poll(() => dialog.getByText(/Runs single-threaded/).count()).toBe(1);
    await dialog.getByLabel('Model file (GGUF)').setInputFiles(gguf);
    // A file:// page has no private file storage: the model is held until the page closes.
    await expect
      .poll(() => dialog.getByText(/held until this page closes/).count(), { timeout: 20_000 })
      .toBe(1);
    // Nothing to download into: no link on a page that cannot keep files.
    expect(await dialog.getByRole('textbox', { name: 'Or download one from a link' }).count()).toBe(
      0,
    );
    await page.screenshot({ path: `${SHOTS}/in-page-settings.png` });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const box = page.getByRole('textbox', { name: /message/i });
    await box.fill('Hello, tell me a long story.');
    await box.press('Enter');
    const reply = () =>
      page.evaluate(() => {
        const chat = document.querySelector('sm-app')!.shadowRoot!.querySelector('sm-chat')!;
        const bubbles = chat.shadowRoot!.querySelectorAll('sm-message[kind="assistant"]');
        return bubbles[bubbles.length - 1]?.shadowRoot?.querySelector('.md')?.textContent ?? '';
      });
    await expect.poll(async () => (await reply()).length, { timeout: 60_000 }).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.screenshot({ path: `${SHOTS}/in-page-chat.png` });
    expect(problems).toEqual([]);
  });

  it('says in words when the browser refuses the file storage, and still starts', async () => {
    if (!browser) throw new Error('Chromium did not start');
    const context = await browser.newContext();
    contexts.push(context);
    // As Safari or a private window may do for a file: IndexedDB refused on the page.
    await context.addInitScript(() => {
      IDBFactory.prototype.open = () => {
        throw new DOMException('The operation is insecure.', 'SecurityError');
      };
    });
    const { page } = await open(context);
    const alert = page.getByRole('alert').filter({ hasText: 'keeps no storage' });
    await expect.poll(() => alert.count()).toBe(1);
    expect(await alert.textContent()).toMatch(/memories cannot be saved here/);
    await expect
      .poll(() => page.getByRole('heading', { name: 'Structured Memory' }).count())
      .toBeGreaterThan(0);
    await page.screenshot({ path: `${SHOTS}/storage-refused.png` });
  });
});
