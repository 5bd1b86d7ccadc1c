// The "Recalled:" note of a turn, in Debian Chromium against the production build and a fake
// llama.cpp: one note per turn, even when the model called a tool before it answered, and a note
// that names an entry where it is now once it was moved (after a reload too), its link opening it
// there. Screenshot under /tmp.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';
import { launchChromium } from './chromium';
import { buildAndServe, callWorker, connectApp, seed } from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = '/tmp/recalled-note-shots';
const POLL = { timeout: 30_000, interval: 50 };

describe('the Recalled note in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  let fake: FakeServer;

  const chat = () => page.locator('sm-chat');
  const notes = () => chat().locator('sm-message .recalled');
  const idle = () =>
    expect.poll(() => chat().getByRole('button', { name: 'Stop' }).isDisabled(), POLL).toBe(true);
  /** A message's text as shown (its shadow root's). */
  const shown = (m: ReturnType<typeof chat>) =>
    m.evaluate((el) => (el.shadowRoot as unknown as HTMLElement).textContent ?? '');
  const detailPath = () =>
    page.locator('sm-entry-detail').evaluate((el) => (el as unknown as { path?: string }).path);

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ server, dispose } = await buildAndServe());
    // The model looks at its memory first (a tool card), then answers.
    fake = await startFakeServer('llamacpp', {
      replies: [
        { toolCalls: [{ name: 'listMemory', arguments: { path: 'User' } }] },
        { text: 'A flat white with oat milk.' },
      ],
      tokenDelayMs: 1,
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await page.goto(server.url);
    await seed(page);
    await connectApp(page, fake.url, { maxOutputTokens: 24, memoryKeeper: false });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await fake?.close();
    await dispose?.();
  });

  it('one note per turn, under the reply, also after a tool call', async () => {
    const box = chat().getByRole('textbox', { name: 'Message', exact: true });
    await box.fill('How do I take my coffee with oat milk?');
    await box.press('Enter');
    await idle();
    await chat().locator('sm-tool-card').first().waitFor(POLL);
    await expect
      .poll(() => shown(chat().locator('sm-message[kind="assistant"]').last()), POLL)
      .toContain('A flat white with oat milk.');
    await expect.poll(() => notes().count(), POLL).toBe(1);
    expect(await notes().innerText()).toContain('User/Preferences/Coffee');
    // The one note is the reply's: the message with the answer carries it.
    const withNote = chat().locator('sm-message', { has: page.locator('.recalled') });
    expect(await shown(withNote)).toContain('A flat white with oat milk.');
  });

  it('after a move the note names the entry where it is now, and its link opens it there', async () => {
    const moved = await callWorker<{ status: string }>(
      page,
      'moveMemory',
      'User/Preferences/Coffee',
      'Drinks/Coffee',
    );
    expect(moved.status).toBe('SUCCESS');
    await expect.poll(() => notes().innerText(), POLL).toContain('Drinks/Coffee');
    expect(await notes().innerText()).not.toContain('User/Preferences/Coffee');
    await page.screenshot({ path: join(SHOTS, 'after-move-desktop.png') });
    await notes().getByRole('link', { name: 'Drinks/Coffee' }).click();
    await expect.poll(detailPath, POLL).toBe('Drinks/Coffee');

    // Stored as it was said; shown where it is, after a reload too.
    await page.reload();
    await expect.poll(() => notes().count(), POLL).toBe(1);
    await expect.poll(() => notes().innerText(), POLL).toContain('Drinks/Coffee');
    expect(await notes().innerText()).not.toContain('User/Preferences/Coffee');
  });
});
