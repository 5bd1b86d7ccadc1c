// Settings and the app shell in plain words, as a person meets them in Chromium (production
// build, the default embedding model, whose download fails offline, and a fake KoboldCPP): the
// first-run message leads into Settings, Test connection says what answers (or what is wrong and
// the fix), a dismissed fallback banner stays dismissed, the header counts what an imported
// backup holds, and the shell fits a phone. Screenshots go to /tmp/shots-settings/.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';
import { launchChromium } from './chromium';
import { serveStatic, type StaticServer } from './static-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHOTS = process.env.SHOTS_DIR ?? '/tmp/shots-settings';
/** Markup in a model name must show as text. */
const MODEL = 'Mistral-7B <b>Q4</b>';

interface AppHandle {
  memory: {
    createConversation(t: string): Promise<{ id: number }>;
    recordTurn(t: { conversationId: number; role: string; text: string }): Promise<unknown>;
    saveMemory(p: string, c: unknown, t?: number, o?: unknown): Promise<unknown>;
    deleteConversation(id: number): Promise<unknown>;
    exportJson(): Promise<string>;
    stats(): Promise<{ entries: number; chunks: number }>;
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** The element that has focus, through shadow roots. */
function deepFocus(page: Page): Promise<string> {
  return page.evaluate(() => {
    let el: Element | null = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    return el ? `${el.tagName.toLowerCase()}#${el.id}:${el.textContent?.trim() ?? ''}` : '';
  });
}

describe('settings and the shell in plain words', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let fake: FakeServer;
  let server: StaticServer;
  let outDir: string;
  let files: string;

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-plain-'));
    files = await mkdtemp(join(tmpdir(), 'sm-plain-files-'));
    await mkdir(SHOTS, { recursive: true });
    // The default model (the hub one): offline it falls back to the bundled model, with a banner.
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
      define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('') },
    });
    server = await serveStatic(outDir);
    fake = await startFakeServer('koboldcpp', {
      model: MODEL,
      contextSize: 8192,
      firstEventDelayMs: 20,
      toolDelayMs: 20,
      tokenDelayMs: 5,
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await fake?.close();
    await server?.close();
    await rm(outDir, { recursive: true, force: true });
    await rm(files, { recursive: true, force: true });
  });

  const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SHOTS, `${name}.png`) });
  const settingsDialog = (p: Page = page) => p.getByRole('dialog', { name: 'Settings' });

  it('first run: the message about the model server opens Settings at the URL field', async () => {
    await page.goto(server.url);
    const setUp = page.getByRole('button', { name: 'Set up the model server' });
    await expect.poll(() => setUp.count(), { timeout: 30_000 }).toBe(1);
    await setUp.click();
    await expect.poll(() => settingsDialog().isVisible(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => deepFocus(page)).toMatch(/^input#endpoint/);
    // Escape closes it and gives focus back to where it was.
    await page.keyboard.press('Escape');
    await expect.poll(() => settingsDialog().isVisible()).toBe(false);
    await expect.poll(() => deepFocus(page)).toMatch(/Set up the model server/);
  });

  it('every setting says what it does, in one line, and bad values get a sentence', async () => {
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = settingsDialog();
    const recency = dialog.getByRole('spinbutton', { name: 'Default recency bias' });
    expect(await recency.getAttribute('min')).toBe('0');
    expect(await recency.getAttribute('max')).toBe('1');
    expect(await recency.getAttribute('step')).toBe('0.05');
    const described = await recency.evaluate((el) =>
      (el.getAttribute('aria-describedby') ?? '')
        .split(/\s+/)
        .map((id) => (el.getRootNode() as ShadowRoot).getElementById(id)?.textContent ?? '')
        .join(' '),
    );
    expect(described).toMatch(/newer memories are preferred over better matches/);
    for (const name of [
      'Endpoint URL',
      'Tool mode',
      'Temperature',
      'Max output tokens',
      'Context size',
      'Default recency bias',
      'Default context tokens',
      'Embedding model',
      'Persona prompt',
    ]) {
      const hint = await dialog.getByLabel(name, { exact: true }).evaluate((el) =>
        (el.getAttribute('aria-describedby') ?? '')
          .split(/\s+/)
          .map((id) => (el.getRootNode() as ShadowRoot).getElementById(id)?.textContent ?? '')
          .join(' ')
          .trim(),
      );
      expect(hint, name).not.toBe('');
    }
    // Words from inside the app (issue 23, walk item 10) each come with a plain line beside them:
    // the hint that uses one also has a sentence that uses none, and says what the word means.
    const JARGON =
      /native|prompted|updateMemory|moveMemory|cross-origin|isolated|tool call|COOP|COEP|embed|runtime/i;
    const hintOf = (name: string) =>
      dialog.getByLabel(name, { exact: true }).evaluate((el) =>
        (el.getAttribute('aria-describedby') ?? '')
          .split(/\s+/)
          .map((id) => (el.getRootNode() as ShadowRoot).getElementById(id)?.textContent ?? '')
          .join(' ')
          .replace(/\s+/g, ' ')
          .trim(),
      );
    const plain: [string, RegExp, RegExp[]][] = [
      ['Tool mode', /native|prompted/i, [/Native\b[^.]*model server/, /Prompted\b[^.]*any model/]],
      [
        'Let the model edit and move entries',
        /updateMemory and moveMemory/,
        [/change part of an entry/, /move or rename entries/],
      ],
      ['Embedding model', /cross-origin isolated/, [/processor cores/]],
    ];
    for (const [name, term, says] of plain) {
      const hint = await hintOf(name);
      expect(hint, name).toMatch(term);
      const sentences = hint.split(/(?<=\.)\s+/);
      expect(
        sentences.filter((t) => !JARGON.test(t) && t.split(' ').length >= 6),
        `${name}: ${hint}`,
      ).not.toEqual([]);
      for (const meaning of says) expect(hint, name).toMatch(meaning);
    }
    await dialog.getByLabel('Embedding model', { exact: true }).scrollIntoViewIfNeeded();
    await shot('desktop-settings-memory');

    await recency.fill('1.5');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => dialog.getByText(/Use a number from 0 \(best match only\) to 1/).count())
      .toBe(1);
    expect(await deepFocus(page)).toMatch(/^input#recencyBias/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('Test connection says what answers, and what is wrong with a wrong URL', async () => {
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = settingsDialog();
    await dialog.getByRole('textbox', { name: 'Endpoint URL' }).fill(fake.url);
    await dialog.getByRole('button', { name: 'Test connection' }).click();
    const result = dialog.locator('.test-result');
    await expect.poll(() => result.textContent(), { timeout: 30_000 }).toMatch(/KoboldCPP 1\.102/);
    const text = (await result.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain(`Model: ${MODEL}`);
    expect(text).toContain('Context size: 8,192 tokens');
    expect(text).toMatch(/Tool calls: native/);
    // The model name is text, never markup.
    expect(await result.locator('b').count()).toBe(0);
    await shot('desktop-settings-tested');

    const port = await closedPort();
    await dialog.getByRole('textbox', { name: 'Endpoint URL' }).fill(`http://127.0.0.1:${port}`);
    // The old result no longer describes this address.
    await expect.poll(() => result.count()).toBe(0);
    await dialog.getByRole('button', { name: 'Test connection' }).click();
    await expect
      .poll(() => dialog.locator('.test-error').textContent(), { timeout: 30_000 })
      .toMatch(
        // The page is cross-origin isolated, so a refused connection and a server that does not
        // allow this page cannot be told apart: both are said, each with its fix.
        new RegExp(
          `Nothing answers at http://127\\.0\\.0\\.1:${port}, or the server there does not let this page .* read its replies.*start KoboldCPP.*Endpoint URL.*CORS settings`,
        ),
      );

    // llama.cpp started without --jinja refuses native tool calls: asked, and said with the fix.
    const noJinja = await startFakeServer('llamacpp', { jinja: false });
    try {
      await dialog.getByRole('textbox', { name: 'Endpoint URL' }).fill(noJinja.url);
      await dialog.getByRole('button', { name: 'Test connection' }).click();
      await expect
        .poll(async () => (await result.textContent())?.replace(/\s+/g, ' '), { timeout: 30_000 })
        .toMatch(/Tool calls: prompted: The llama\.cpp server refused native tool calls .*--jinja/);
      await shot('desktop-settings-tested-no-jinja');
    } finally {
      await noJinja.close();
    }

    // KoboldCPP with a password, and none given: said before the first chat fails.
    const locked = await startFakeServer('koboldcpp', { password: 'sesame' });
    try {
      await dialog.getByRole('textbox', { name: 'Endpoint URL' }).fill(locked.url);
      await dialog.getByRole('button', { name: 'Test connection' }).click();
      await expect
        .poll(() => dialog.locator('.test-error').textContent(), { timeout: 30_000 })
        .toMatch(/has a password.*API key \/ password/);
      await dialog.getByLabel('API key / password').fill('sesame');
      await dialog.getByRole('button', { name: 'Test connection' }).click();
      await expect
        .poll(() => result.textContent(), { timeout: 30_000 })
        .toMatch(/Model: fake-model/);
    } finally {
      await locked.close();
    }

    await dialog.getByRole('textbox', { name: 'Endpoint URL' }).fill(fake.url);
    await dialog.getByLabel('API key / password').fill('');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => settingsDialog().isVisible()).toBe(false);
    await expect
      .poll(() => page.getByRole('button', { name: 'Set up the model server' }).count(), {
        timeout: 30_000,
      })
      .toBe(0);
  });

  it('a dismissed fallback banner stays dismissed after a reload', async () => {
    const banner = page.locator('sm-app').locator('.banner.notice');
    await expect
      .poll(() => banner.textContent(), { timeout: 60_000 })
      .toMatch(/bundled offline model/);
    await banner.getByRole('button', { name: /Dismiss/ }).click();
    await expect.poll(() => banner.count()).toBe(0);
    // After the reload, the app's own report that it handled the fallback: the state in which
    // it decided on the banner (recorded as the app publishes it, from its first state on).
    await page.addInitScript(() => {
      const w = window as unknown as { fallbackDecisions: boolean[] };
      w.fallbackDecisions = [];
      type Watched = {
        app?: {
          state: { modelProgress?: { status: string }; fallback?: unknown };
          subscribe(f: () => void): void;
        };
      };
      const watch = () => {
        const app = (document.querySelector('sm-app') as Watched | null)?.app;
        if (!app) return void setTimeout(watch, 0);
        app.subscribe(() => {
          if (app.state.modelProgress?.status === 'fallback')
            w.fallbackDecisions.push(app.state.fallback !== undefined);
        });
      };
      watch();
    });
    await page.reload();
    await page.waitForFunction(
      () => (window as unknown as { fallbackDecisions: boolean[] }).fallbackDecisions.length > 0,
      undefined,
      { timeout: 60_000 },
    );
    await page.evaluate(
      () =>
        (document.querySelector('sm-app') as unknown as { updateComplete: Promise<boolean> })
          .updateComplete,
    );
    expect(
      await page.evaluate(
        () => (window as unknown as { fallbackDecisions: boolean[] }).fallbackDecisions,
      ),
    ).not.toContain(true);
    expect(await banner.count()).toBe(0);
  });

  it('the header counts the chunks of an imported backup in a fresh profile', async () => {
    if (!page.url().startsWith(server.url)) await page.goto(server.url);
    await page.waitForFunction(
      () => !!(document.querySelector('sm-app') as unknown as AppHandle)?.memory,
    );
    // A backup whose first chat was deleted: its entry keeps the context it was saved with.
    const json = await page.evaluate(async () => {
      const { memory } = document.querySelector('sm-app') as unknown as AppHandle;
      const a = await memory.createConversation('Tea');
      await memory.recordTurn({
        conversationId: a.id,
        role: 'user',
        text: 'I drink green tea every morning. My cat is called Tom.',
      });
      await memory.saveMemory('User/Drinks', { likes: 'green tea' }, 200, {
        conversationId: a.id,
      });
      await memory.deleteConversation(a.id);
      const b = await memory.createConversation('Trip');
      await memory.recordTurn({
        conversationId: b.id,
        role: 'user',
        text: 'We fly to Lisbon in May. The hotel is near the river.',
      });
      await memory.saveMemory('Plans/Trip', { city: 'Lisbon', month: 'May' }, 200, {
        conversationId: b.id,
      });
      return memory.exportJson();
    });
    const backup = JSON.parse(json) as { entries: { contextChunks?: unknown[] }[] };
    const contextChunks = backup.entries.reduce((n, e) => n + (e.contextChunks?.length ?? 0), 0);
    expect(contextChunks).toBeGreaterThan(2);
    const file = join(files, 'backup.json');
    await writeFile(file, json);

    const fresh = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const other = await fresh.newPage();
      await other.goto(server.url);
      await other.locator('sm-data-menu input[type=file]').setInputFiles(file);
      await other.getByRole('button', { name: 'Merge' }).click();
      const tree = other.getByRole('tree', { name: 'Memory' });
      await expect
        .poll(() => tree.getByRole('treeitem', { name: 'Plans' }).count(), { timeout: 60_000 })
        .toBe(1);
      const stats = await other.evaluate(() =>
        (document.querySelector('sm-app') as unknown as AppHandle).memory.stats(),
      );
      const header = other.locator('sm-app header .stats');
      await expect
        .poll(async () => (await header.textContent())?.replace(/\s+/g, ' '), { timeout: 10_000 })
        .toMatch(
          new RegExp(
            `2 entries · ${contextChunks} quoted chat sentences · ${stats.chunks} chat sentences`,
          ),
        );
    } finally {
      await fresh.close();
    }
  });

  it('skip link: the first Tab stop, and it moves focus to the chat', async () => {
    await page.reload();
    await page.locator('sm-app header').waitFor();
    await page.keyboard.press('Tab');
    expect(await deepFocus(page)).toMatch(/Skip to chat/);
    await page.keyboard.press('Enter');
    expect(await deepFocus(page)).toMatch(/^section#chat/);
  });

  it('screenshots: desktop and phone, main screen and Settings; the phone shell is compact', async () => {
    await page.reload();
    await expect.poll(() => page.getByText(MODEL).count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await shot('desktop-main');
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await shot('desktop-settings');
    await page.keyboard.press('Escape');

    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      hasTouch: true,
      isMobile: true,
    });
    try {
      const p = await phone.newPage();
      await p.goto(server.url);
      // A fresh profile: the first-run message shows, the fallback banner behind "N more".
      await expect
        .poll(() => p.getByRole('button', { name: 'Set up the model server' }).count(), {
          timeout: 30_000,
        })
        .toBe(1);
      const more = p.getByRole('button', { name: /^\d+ more$/ });
      await more.click();
      await expect
        .poll(() => p.locator('sm-app .banner.notice').count(), { timeout: 60_000 })
        .toBe(1);
      // The model's loading banner goes once the fallback model is ready: measure after it.
      await expect
        .poll(() => p.locator('sm-app .banner progress').count(), { timeout: 60_000 })
        .toBe(0);
      await more.click();
      await expect.poll(() => p.locator('sm-app .banner').count()).toBe(1);
      await shot('phone-main', p);
      // Header, both banners and the tabs together leave most of the screen to the content.
      const top = await p.locator('sm-app main').evaluate((el) => el.getBoundingClientRect().top);
      expect(top).toBeLessThan(200);
      for (const banner of await p.locator('sm-app .banner').all()) {
        expect((await banner.boundingBox())!.height).toBeLessThan(48);
      }
      await p.getByRole('button', { name: 'Set up the model server' }).click();
      await p.getByRole('textbox', { name: 'Endpoint URL' }).fill(fake.url);
      await p.getByRole('button', { name: 'Test connection' }).click();
      await expect
        .poll(() => p.locator('sm-settings .test-result').count(), { timeout: 30_000 })
        .toBe(1);
      await shot('phone-settings', p);
      await p.getByLabel('Embedding model', { exact: true }).scrollIntoViewIfNeeded();
      await shot('phone-settings-memory', p);
      await p.getByRole('button', { name: 'Save' }).click();
      // An entry on the Memory tab starts above the fold.
      await p.evaluate(async () => {
        const { memory } = document.querySelector('sm-app') as unknown as AppHandle;
        await memory.saveMemory('Plans/Trip', { city: 'Lisbon', month: 'May' });
      });
      await p.getByRole('tab', { name: 'Memory' }).click();
      const tree = p.getByRole('tree', { name: 'Memory' });
      await tree.getByRole('treeitem', { name: 'Plans' }).click();
      await p.keyboard.press('ArrowRight');
      await tree.getByRole('treeitem', { name: 'Trip' }).click();
      const detail = p.locator('sm-entry-detail');
      await detail.waitFor();
      await shot('phone-memory-entry', p);
      expect((await detail.boundingBox())!.y).toBeLessThan(844 - 120);
    } finally {
      await phone.close();
    }
  });
});
