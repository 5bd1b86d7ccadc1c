// End to end: the chat panel with the real chat session and the "In this browser" connector
// (src/llm/in-page/connector.ts): llama.cpp in WebAssembly runs the repo's tiny GGUF in a worker,
// with no model server anywhere. A message gets a streamed reply, and Stop ends a reply that
// would never end by itself; the composer works again after.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { serveStatic, type StaticServer } from './static-server';
import { makeTinyGguf } from '../fixtures/tiny-gguf';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HARNESS = 'test/e2e/harness/chat.html';
const POLL = { timeout: 60_000, interval: 50 };

type Harness = { turns: { status: string; text: string }[]; generations: string[] };

describe('chat with the model in this browser (no server)', () => {
  let outDir = '';
  let server: StaticServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  /** Requests to anywhere but the app's own server (there must be none). */
  const outside: string[] = [];

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-inpage-chat-'));
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true, rollupOptions: { input: join(ROOT, HARNESS) } },
    });
    await writeFile(join(outDir, 'endless.gguf'), makeTinyGguf({ endless: true }));
    // A model that writes broken UTF-8: lone lead bytes (0xE2 with nothing after it).
    await writeFile(join(outDir, 'lead.gguf'), makeTinyGguf({ favour: ['<0xE2>'] }));
    server = await serveStatic(outDir);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.on('request', (r) => {
      if (!r.url().startsWith(server!.url) && !r.url().startsWith('blob:')) outside.push(r.url());
    });
    await page.goto(
      `${server.url}${HARNESS}?scenario=live&maxTokens=5000&context=8192&model=${encodeURIComponent(`${server.url}endless.gguf`)}`,
    );
    await page.waitForFunction(() => 'harness' in window);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  const box = () => page.locator('sm-chat textarea');
  const stopButton = () => page.getByRole('button', { name: 'Stop' });

  /** The last assistant bubble's state and text. */
  const lastReply = () =>
    page.evaluate(() => {
      const bubbles = document
        .querySelector('sm-chat')!
        .shadowRoot!.querySelectorAll('sm-message[kind="assistant"]');
      const last = bubbles[bubbles.length - 1];
      return {
        state: last?.getAttribute('state') ?? '',
        text: last?.shadowRoot?.querySelector('.md')?.textContent ?? '',
      };
    });

  it('streams a reply into the chat, and Stop ends it at once', async () => {
    await box().fill('Hello there, tell me a long story.');
    await box().press('Enter');
    // Tokens arrive: the bubble grows while the turn runs.
    await expect.poll(async () => (await lastReply()).text.length, POLL).toBeGreaterThan(20);
    expect(await stopButton().isEnabled()).toBe(true);
    await stopButton().click();
    await page.waitForFunction(
      () => (window as unknown as { harness: Harness }).harness.turns.length >= 1,
      undefined,
      POLL,
    );
    const turn = await page.evaluate(
      () => (window as unknown as { harness: Harness }).harness.turns[0],
    );
    // Stopped, not ended by the token limit (this model never ends a reply by itself).
    expect(turn.status).toBe('aborted');
    expect(turn.text.length).toBeGreaterThan(5);
    // …and the engine itself stopped generating (it did not run on to the token limit).
    await page.waitForFunction(
      () => (window as unknown as { harness: Harness }).harness.generations.length >= 1,
      undefined,
      POLL,
    );
    expect(
      await page.evaluate(() => (window as unknown as { harness: Harness }).harness.generations),
    ).toEqual(['aborted']);
    await expect.poll(async () => (await lastReply()).state, POLL).toBe('stopped');
    // The composer works again, and the next message gets a reply from the same model.
    await expect.poll(() => stopButton().isDisabled(), POLL).toBe(true);
    await box().fill('And a short one?');
    await box().press('Enter');
    await expect.poll(async () => (await lastReply()).text.length, POLL).toBeGreaterThan(5);
    await stopButton().click();
    await page.waitForFunction(
      () => (window as unknown as { harness: Harness }).harness.turns.length >= 2,
      undefined,
      POLL,
    );
    expect(outside).toEqual([]);
    await page.screenshot({ path: '/tmp/sm-inpage-chat.png' });
  });

  it('Regenerate and Continue run on the model in this browser too', async () => {
    const tab = await browser!.newPage({ viewport: { width: 1100, height: 800 } });
    await tab.goto(
      `${server!.url}${HARNESS}?scenario=live&maxTokens=5000&context=8192&model=${encodeURIComponent(`${server!.url}endless.gguf`)}`,
    );
    await tab.waitForFunction(() => 'harness' in window);
    const stop = () => tab.getByRole('button', { name: 'Stop' });
    const idle = () => expect.poll(() => stop().isDisabled(), POLL).toBe(true);
    const generations = () =>
      tab.evaluate(() => (window as unknown as { harness: Harness }).harness.generations);
    const reply = () => tab.locator('sm-chat sm-message[kind="assistant"]').last();
    const replyText = () =>
      reply().evaluate((el) => el.shadowRoot?.querySelector('.md')?.textContent ?? '');
    const box = tab.locator('sm-chat textarea');
    await box.fill('Tell me a story.');
    await box.press('Enter');
    await expect.poll(async () => (await replyText()).length, POLL).toBeGreaterThan(5);
    await stop().click();
    await idle();
    await expect.poll(generations, POLL).toEqual(['aborted']);
    // Another answer to the same message: it streams from the engine, and Stop ends it.
    const first = await replyText();
    await reply().getByRole('button', { name: 'Regenerate reply' }).click();
    await expect.poll(async () => (await replyText()) !== first, POLL).toBe(true);
    await expect.poll(async () => (await replyText()).length, POLL).toBeGreaterThan(5);
    await stop().click();
    await idle();
    await expect.poll(generations, POLL).toEqual(['aborted', 'aborted']);
    // Continue goes on from where that reply stopped, from the engine again.
    const stopped = await replyText();
    await reply().getByRole('button', { name: 'Continue' }).click();
    await expect
      .poll(async () => (await replyText()).length, POLL)
      .toBeGreaterThan(stopped.length + 5);
    await stop().click();
    await idle();
    await expect.poll(generations, POLL).toEqual(['aborted', 'aborted', 'aborted']);
    await tab.close();
  });

  for (const [file, what] of [['lead.gguf', 'lone lead bytes']] as const) {
    it(`a stream of broken UTF-8 (${what}) ends as a reply, and the chat goes on`, async () => {
      const other = await browser!.newPage({ viewport: { width: 1100, height: 800 } });
      const errors: string[] = [];
      other.on('pageerror', (e) => errors.push(e.message));
      await other.goto(
        `${server!.url}${HARNESS}?scenario=live&maxTokens=30&context=4096&model=${encodeURIComponent(`${server!.url}${file}`)}`,
      );
      await other.waitForFunction(() => 'harness' in window);
      const turns = () =>
        other.evaluate(() => (window as unknown as { harness: Harness }).harness.turns);
      for (const [n, words] of [
        [1, 'Say something.'],
        [2, 'And again?'],
      ] as const) {
        await other.locator('sm-chat textarea').fill(words);
        await other.locator('sm-chat textarea').press('Enter');
        await other.waitForFunction(
          (count) => (window as unknown as { harness: Harness }).harness.turns.length >= count,
          n,
          POLL,
        );
        const turn = (await turns())[n - 1]!;
        // The model kept starting characters it did not finish; the reply still ends as an
        // answer (by the token limit), not with an error from the engine, and what it shows is
        // whole characters (the grammar made it finish them).
        expect(turn.status).toBe('answered');
        expect(turn.text.length).toBeGreaterThan(5);
        expect(turn.text).not.toContain('\uFFFD');
      }
      expect(errors).toEqual([]);
      await other.close();
    });
  }
});
