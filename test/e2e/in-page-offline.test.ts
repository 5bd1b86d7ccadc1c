// End to end, in the production build: the model in this browser works offline after its first
// use. The first visit does not download its worker or its WebAssembly file; the first chat does,
// and the service worker keeps them (workers/sw.ts); offline, after a reload, the kept model
// loads from there and chats.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { allowLongReplies, assistantReplies, buildAndServe, chatAndStop } from './explorer-fixture';
import type { StaticServer } from './static-server';
import { makeTinyGguf } from '../fixtures/tiny-gguf';

const POLL = { timeout: 60_000, interval: 50 };
const ENGINE = /^\/assets\/(in-page-model\.worker-[\w-]+\.js|wllama-[\w-]+\.wasm)$/;

describe('the model in this browser, offline after its first use', () => {
  let app: Awaited<ReturnType<typeof buildAndServe>> | undefined;
  let server: StaticServer;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  let files = '';

  beforeAll(async () => {
    app = await buildAndServe();
    server = app.server;
    files = await mkdtemp(join(tmpdir(), 'sm-gguf-offline-'));
    await writeFile(join(files, 'tiny-endless.gguf'), makeTinyGguf({ endless: true }));
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
    if (files) await rm(files, { recursive: true, force: true });
  });

  const chat = (text: string) => chatAndStop(page, text, POLL);
  const engineRequests = (from = 0) =>
    server.requests.slice(from).filter((r) => ENGINE.test(new URL(r.url, server.url).pathname));

  it('loads nothing of the engine on the first visit, then chats offline after a reload', async () => {
    await page.goto(server.url);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    // The app has started (its memory worker answers): the engine was not among its downloads.
    await page.waitForFunction(
      () => !!(document.querySelector('sm-app') as { memory?: unknown } | null)?.memory,
    );
    expect(engineRequests()).toEqual([]);

    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    await dialog.getByRole('combobox', { name: 'Where the model runs' }).selectOption('inpage');
    await dialog.getByLabel('Model file (GGUF)').setInputFiles(join(files, 'tiny-endless.gguf'));
    await expect
      .poll(() => dialog.getByText('tiny-endless.gguf', { exact: true }).count(), POLL)
      .toBe(1);
    await allowLongReplies(dialog);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await chat('Hello, tell me a long story.');
    // The first use fetched the worker and the wasm, once each, and the service worker kept them.
    expect(engineRequests().map((r) => r.status)).toEqual([200, 200]);
    const kept = await page.evaluate(async () =>
      (await (await caches.open('structured-memory-files')).keys()).map(
        (r) => new URL(r.url).pathname,
      ),
    );
    expect(kept.filter((p) => /^\/assets\/(in-page-model|wllama)/.test(p)).length).toBe(2);

    const replies = (await assistantReplies(page)).length;

    await context.setOffline(true);
    try {
      const before = server.requests.length;
      await page.reload();
      await page.waitForFunction(
        () => !!(document.querySelector('sm-app') as { memory?: unknown } | null)?.memory,
      );
      // The chat reopens where it was (its reply) before the next message is typed.
      await expect.poll(async () => (await assistantReplies(page)).length, POLL).toBe(replies);
      await chat('And another one, offline.');
      expect(engineRequests(before)).toEqual([]);
    } finally {
      await context.setOffline(false);
    }
  });
});
