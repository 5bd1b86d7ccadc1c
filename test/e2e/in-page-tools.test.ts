// End to end in the production build, with no model server anywhere: the chat runs the model in
// this browser (llama.cpp in WebAssembly, the repo's tiny GGUF) with memory tools on, its reply
// sampled under the grammar of text or one tool call (src/llm/in-page/grammar.ts). The model is
// one that prefers the start of a saveMemory call (the fixture's `favour`; a random model would
// not choose a call, nor close a free string, by itself): the grammar finishes the call so that
// it parses and fits the tool's schema, the connector reads it back as a native tool call, and
// the chat runs it as it runs any server's: the entry shows in memory.
import type { Browser, BrowserContext, Page, Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { buildAndServe, callWorker, openInTree } from './explorer-fixture';
import type { StaticServer } from './static-server';
import { makeTinyGguf } from '../fixtures/tiny-gguf';

const POLL = { timeout: 60_000, interval: 50 };

type AppHandle = {
  subscribe(listener: () => void): () => void;
  state: { status: { state: string; message?: string; progress?: { done: number } } };
};
/**
 * The start of a call as one piece the model prefers: it decides to save, and where, and what.
 * How the call ends is left to sampling: at random it never closes (tried: the chat then says
 * the call could not be read); under the grammar it always does.
 */
const CALL_START =
  '<tool_call>{"name":"saveMemory","arguments":{"path":"Drinks/Tea","content":"likes green tea"';

/** Keeps `bytes` in this browser's model storage as `name` (what Settings' file picker does). */
async function keepModel(page: Page, name: string, bytes: Uint8Array): Promise<void> {
  await page.evaluate(
    async ([n, b64]) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const root = await navigator.storage.getDirectory();
      const dir = await root.getDirectoryHandle('models', { create: true });
      const writable = await (await dir.getFileHandle(n, { create: true })).createWritable();
      await writable.write(data);
      await writable.close();
    },
    [name, Buffer.from(bytes).toString('base64')] as const,
  );
}

describe('memory tools with the model in this browser', () => {
  let app: Awaited<ReturnType<typeof buildAndServe>> | undefined;
  let server: StaticServer;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  const outside: string[] = [];
  /** What went wrong in the page (told when a step fails). */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    app = await buildAndServe();
    server = app.server;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(server.url);
    await keepModel(page, 'calls-tea.gguf', makeTinyGguf({ favour: [CALL_START] }));
    await callWorker(page, 'setSetting', 'app', {
      modelSource: 'inpage',
      inPageModel: 'calls-tea.gguf',
      memoryKeeper: false,
      maxOutputTokens: 64,
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(server.url) && !r.url().startsWith('blob:')) outside.push(r.url());
    });
    await page.reload();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
  });

  const chat = () => page.locator('sm-chat');

  it('a grammar-constrained saveMemory call from the chat saves an entry that shows in memory', async () => {
    // Tools are native with this kind: the grammar, not the prompt, carries the calls.
    await chat().locator('.status.connected').waitFor(POLL);
    // From here on nothing leaves the page (the first load, before the settings, probed the
    // default server).
    outside.length = 0;
    expect(await chat().locator('.status').innerText()).toContain('native tools');
    const box = chat().getByRole('textbox', { name: 'Message', exact: true });
    await box.fill('Remember that I like green tea.');
    await box.press('Enter');
    const card = chat().locator('sm-tool-card').first();
    await card.waitFor(POLL);
    await expect
      .poll(() => card.evaluate((el) => el.shadowRoot?.textContent ?? ''), POLL)
      .toContain('Drinks/Tea');
    // The model calls again each round (it only prefers that call): Stop ends the turn.
    await chat().getByRole('button', { name: 'Stop' }).click();
    await expect
      .poll(() => chat().getByRole('button', { name: 'Stop' }).isDisabled(), POLL)
      .toBe(true);
    const saved = await callWorker<{ status: string; content?: unknown }>(
      page,
      'queryMemory',
      'Drinks/Tea',
    );
    expect(saved.status).toBe('SUCCESS');
    expect(saved.content).toBe('likes green tea');
    await openInTree(page, 'Drinks/Tea');
    expect(
      await page.locator('sm-entry-detail').evaluate((el) => el.shadowRoot?.textContent ?? ''),
    ).toContain('likes green tea');
    expect(outside).toEqual([]);
  });

  it('a setting saved in another tab is taken here without loading the model again', async () => {
    await chat().locator('.status.connected').waitFor(POLL);
    const engines: string[] = [];
    const onWorker = (w: Worker) => {
      if (w.url().includes('in-page-model')) engines.push(w.url());
    };
    page.on('worker', onWorker);
    try {
      // What another tab's Save writes: the same model, another temperature.
      const stored = await callWorker<Record<string, unknown>>(page, 'getSetting', 'app');
      await callWorker(page, 'setSetting', 'app', { ...stored, temperature: 0.2 });
      await expect
        .poll(
          () =>
            page.evaluate(
              () =>
                (
                  document.querySelector('sm-app') as unknown as {
                    app: { state: { settings: { temperature: number } } };
                  }
                ).app.state.settings.temperature,
            ),
          POLL,
        )
        .toBe(0.2);
      await chat().locator('.status.connected').waitFor(POLL);
      expect(engines).toEqual([]);
    } finally {
      page.off('worker', onWorker);
    }
  });

  /** The status line's words in `p`'s chat. */
  const statusText = (p: Page) =>
    p
      .locator('sm-chat')
      .locator('.status')
      .evaluate((el) => el.textContent ?? '');

  it('a second tab says the model is open in the first, and loads its own copy when asked, with progress', async () => {
    await chat().locator('.status.connected').waitFor(POLL);
    const second = await context.newPage();
    await second.goto(server.url);
    const sentence =
      'calls-tea.gguf is open in another tab of this app. Close it there and it loads here, or use it here too';
    await expect.poll(() => statusText(second), POLL).toContain(sentence);
    // It waits: nothing is loaded in the second tab until it is asked.
    expect(await second.locator('sm-chat').locator('.status.connected').count()).toBe(0);
    await second.screenshot({ path: '/tmp/sm-inpage-other-tab-desktop.png' });
    await second.setViewportSize({ width: 390, height: 844 });
    await second.screenshot({ path: '/tmp/sm-inpage-other-tab-phone.png' });
    await second.setViewportSize({ width: 1280, height: 800 });
    // Every status the second tab shows from here on, in order.
    await second.evaluate(() => {
      const app = (document.querySelector('sm-app') as unknown as { app: AppHandle }).app;
      const seen: AppHandle['state']['status'][] = [];
      (window as unknown as { seen: typeof seen }).seen = seen;
      app.subscribe(() => {
        if (seen.at(-1) !== app.state.status) seen.push(app.state.status);
      });
    });
    await second.locator('sm-chat').getByRole('button', { name: 'Use it here too' }).click();
    await second.locator('sm-chat').locator('.status.connected').waitFor(POLL);
    const seen = await second.evaluate(
      () => (window as unknown as { seen: AppHandle['state']['status'][] }).seen,
    );
    const messages = seen.map((s) => s.message ?? s.state);
    // The bytes as they are read, then setting up, then connected.
    expect(messages[0]).toMatch(/^Loading calls-tea\.gguf: 0% \(0 B of \d+ KB\)…$/);
    const reading = seen.filter((s) => s.progress);
    expect(reading.length).toBeGreaterThan(1);
    const done = reading.map((s) => s.progress!.done);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(messages).toContain('Loading calls-tea.gguf: setting it up…');
    expect(messages.at(-1)).toBe('connected');
    // For the screenshots: a status the load showed, halfway, shown again (it passes too fast).
    const halfway = reading[Math.floor(reading.length / 2)]!;
    await second.evaluate((status) => {
      const app = (document.querySelector('sm-app') as unknown as { app: AppHandle }).app;
      (app as unknown as { set(patch: object): void }).set({ status });
    }, halfway);
    await second.locator('sm-chat').locator('.status progress').waitFor();
    await second.screenshot({ path: '/tmp/sm-inpage-loading-desktop.png' });
    await second.setViewportSize({ width: 390, height: 844 });
    await second.screenshot({ path: '/tmp/sm-inpage-loading-phone.png' });
    await second.close();
  });

  it('Delete in Settings ends the engine that holds the model, and a later message says there is none', async () => {
    await chat().locator('.status.connected').waitFor(POLL);
    const engine = () => page.workers().filter((w) => w.url().includes('in-page-model'));
    expect(engine()).toHaveLength(1);
    const ended = new Promise<void>((done) => engine()[0]!.once('close', () => done()));
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    // Gone at once, before Settings is saved or closed: its memory is free.
    const waited = await Promise.race([
      ended.then(() => 'ended'),
      new Promise<string>((done) => setTimeout(() => done('running'), POLL.timeout)),
    ]);
    if (waited !== 'ended') {
      const says = await dialog
        .locator('sm-in-page-model')
        .evaluate((el) => el.shadowRoot?.textContent?.replace(/\s+/g, ' ') ?? '');
      const status = await statusText(page);
      throw new Error(
        `The engine still runs ${POLL.timeout / 1000} s after Delete. Settings says: ${says}. ` +
          `The chat says: ${status}. Engines: ${engine().length}. Page errors: ${pageErrors.join(' | ') || 'none'}.`,
      );
    }
    expect(engine()).toHaveLength(0);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    const gone =
      'The model file calls-tea.gguf is no longer in this browser: choose it again in Settings → Model.';
    await expect.poll(() => statusText(page), POLL).toContain(gone);
    const box = chat().getByRole('textbox', { name: 'Message', exact: true });
    await box.fill('Are you still there?');
    await box.press('Enter');
    await expect
      .poll(async () => (await chat().getByRole('alert').allTextContents()).join(' '), POLL)
      .toContain(gone);
    expect(engine()).toHaveLength(0);
  });
});
