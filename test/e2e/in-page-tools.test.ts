// End to end in the production build, with no model server anywhere: the chat runs the model in
// this browser (llama.cpp in WebAssembly, the repo's tiny GGUF) with memory tools on, its reply
// sampled under the grammar of text or one tool call (src/llm/in-page/grammar.ts). The model is
// one that prefers the start of a saveMemory call (the fixture's `favour`; a random model would
// not choose a call, nor close a free string, by itself): the grammar finishes the call so that
// it parses and fits the tool's schema, the connector reads it back as a native tool call, and
// the chat runs it as it runs any server's: the entry shows in memory.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { buildAndServe, callWorker, openInTree } from './explorer-fixture';
import type { StaticServer } from './static-server';
import { makeTinyGguf } from '../fixtures/tiny-gguf';

const POLL = { timeout: 60_000, interval: 50 };
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
  let page: Page;
  const outside: string[] = [];

  beforeAll(async () => {
    app = await buildAndServe();
    server = app.server;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
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
});
