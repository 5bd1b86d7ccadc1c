// End to end, as a person does it in the production build: Settings → Server → Where the model
// runs: In this browser → choose the repo's tiny GGUF from disk → Save → send a message: the
// reply streams from llama.cpp in WebAssembly in the page (no server anywhere) and Stop ends
// it. The file is kept in the browser (it survives a reload), its size is shown, Delete removes
// it, and a file that is not a GGUF is refused in a sentence with nothing kept.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { allowLongReplies, axeScan, buildAndServe } from './explorer-fixture';
import type { StaticServer } from './static-server';
import { splitGguf } from '../fixtures/split-gguf';
import { makeTinyGguf } from '../fixtures/tiny-gguf';

const POLL = { timeout: 20_000, interval: 50 };

describe('Settings → In this browser, in the app', () => {
  let app: Awaited<ReturnType<typeof buildAndServe>> | undefined;
  let server: StaticServer;
  let browser: Browser | undefined;
  let page: Page;
  let files = '';
  const outside: string[] = [];

  beforeAll(async () => {
    app = await buildAndServe();
    server = app.server;
    files = await mkdtemp(join(tmpdir(), 'sm-gguf-'));
    await writeFile(join(files, 'tiny-endless.gguf'), makeTinyGguf({ endless: true }));
    await writeFile(join(files, 'notes.gguf'), 'these are my notes, not a model');
    for (const [i, part] of splitGguf(makeTinyGguf(), 3).entries()) {
      await writeFile(join(files, `split-0000${i + 1}-of-00003.gguf`), part);
    }
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('request', (r) => {
      if (!r.url().startsWith(server.url) && !r.url().startsWith('blob:')) outside.push(r.url());
    });
    await page.goto(server.url);
  });

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    if (files) await rm(files, { recursive: true, force: true });
  });

  const dialog = () => page.getByRole('dialog', { name: 'Settings' });
  const openSettings = async () => {
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await dialog().waitFor();
  };
  const lastReply = () =>
    page.evaluate(() => {
      const chat = document.querySelector('sm-app')!.shadowRoot!.querySelector('sm-chat')!;
      const bubbles = chat.shadowRoot!.querySelectorAll('sm-message[kind="assistant"]');
      const last = bubbles[bubbles.length - 1];
      return {
        state: last?.getAttribute('state') ?? '',
        text: last?.shadowRoot?.querySelector('.md')?.textContent ?? '',
      };
    });

  it('refuses a file that is not a GGUF, keeps the model chosen, and chats with it', async () => {
    await openSettings();
    await dialog().getByRole('combobox', { name: 'Where the model runs' }).selectOption('inpage');
    expect(await dialog().getByRole('textbox', { name: 'Endpoint URL' }).count()).toBe(0);
    // Cross-origin isolated here, so it says it runs on several threads.
    await expect
      .poll(
        () =>
          dialog()
            .getByText(/Runs multi-threaded/)
            .count(),
        POLL,
      )
      .toBe(1);
    // Save with no file: a sentence says what to do.
    await dialog().getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(
        () => dialog().getByText('Choose a GGUF model file, or choose A model server.').count(),
        POLL,
      )
      .toBe(1);
    const picker = dialog().getByLabel('Model file (GGUF)');
    await picker.setInputFiles(join(files, 'notes.gguf'));
    await expect
      .poll(
        () =>
          dialog()
            .getByText(/notes\.gguf is not a GGUF model file/)
            .count(),
        POLL,
      )
      .toBe(1);
    await picker.setInputFiles(join(files, 'tiny-endless.gguf'));
    await expect
      .poll(() => dialog().getByText('tiny-endless.gguf', { exact: true }).count(), POLL)
      .toBe(1);
    expect(
      await dialog()
        .getByText(/KB, kept in this browser/)
        .count(),
    ).toBe(1);
    await page.screenshot({ path: '/tmp/sm-inpage-settings-desktop.png' });
    // The panel passes axe like the rest of Settings (labels, contrast, names).
    expect(await axeScan(page, server)).toEqual([]);
    await allowLongReplies(dialog());
    await dialog().getByRole('button', { name: 'Save' }).click();
    await dialog().waitFor({ state: 'hidden' });
    // From here on nothing leaves the page (before, the app probed the default server).
    outside.length = 0;

    const box = page.getByRole('textbox', { name: /message/i });
    await box.fill('Hello, tell me a long story.');
    await box.press('Enter');
    await expect.poll(async () => (await lastReply()).text.length, POLL).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(async () => (await lastReply()).state, POLL).toBe('stopped');
    await page.screenshot({ path: '/tmp/sm-inpage-chat-desktop.png' });
    expect(outside).toEqual([]);
  });

  it('keeps the file across a reload, and Delete removes it', async () => {
    await page.reload();
    await openSettings();
    expect(
      await dialog().getByRole('combobox', { name: 'Where the model runs' }).inputValue(),
    ).toBe('inpage');
    await expect
      .poll(() => dialog().getByText('tiny-endless.gguf', { exact: true }).count(), POLL)
      .toBe(1);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: '/tmp/sm-inpage-settings-phone.png' });
    await page.setViewportSize({ width: 1280, height: 800 });
    await dialog().getByRole('button', { name: 'Delete' }).click();
    await expect
      .poll(() => dialog().getByText('tiny-endless.gguf', { exact: true }).count(), POLL)
      .toBe(0);
    const left = await page.evaluate(async () => {
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('models');
      const names: string[] = [];
      for await (const key of (dir as unknown as { keys(): AsyncIterable<string> }).keys())
        names.push(key);
      return names;
    });
    expect(left).toEqual([]);
    // With its model gone, the next start's banner speaks of the model in this browser, not of a
    // server, and leads to its settings.
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().waitFor({ state: 'hidden' });
    await page.reload();
    const banner = page.getByRole('region', { name: 'Model in this browser' });
    await expect
      .poll(() => banner.innerText().catch(() => ''), POLL)
      .toContain('The model in this browser is not running.');
    await page.screenshot({ path: '/tmp/sm-inpage-banner-desktop.png' });
    await banner.getByRole('button', { name: 'Check the model in Settings' }).click();
    await dialog().waitFor({ state: 'visible' });
  });

  it('keeps a split model chosen as all its parts, and refuses an incomplete set', async () => {
    const picker = dialog().getByLabel('Model file (GGUF)');
    const part = (i: number) => join(files, `split-0000${i}-of-00003.gguf`);
    await picker.setInputFiles([part(1), part(3)]);
    await expect
      .poll(
        () =>
          dialog()
            .getByText(
              'This model is split in 3 files and split-00002-of-00003.gguf is missing: choose all 3 parts together.',
            )
            .count(),
        POLL,
      )
      .toBe(1);
    await picker.setInputFiles([part(3), part(1), part(2)]);
    await expect
      .poll(
        () =>
          dialog()
            .getByText(/ in 3 parts, kept in this browser$/)
            .count(),
        POLL,
      )
      .toBe(1);
    expect(await dialog().getByText('split-00001-of-00003.gguf', { exact: true }).count()).toBe(1);
    await dialog().getByRole('button', { name: 'Delete' }).click();
    await expect
      .poll(() => dialog().getByText('split-00001-of-00003.gguf', { exact: true }).count(), POLL)
      .toBe(0);
  });
});
