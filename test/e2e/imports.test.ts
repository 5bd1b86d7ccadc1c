// Importing other tools' files in Chromium (issue 24, docs/import-export.md), against the
// production build with the bundled model: a SillyTavern chat, a lorebook and a character card
// picked at once through Import become a chat that opens with its messages (names and markup
// shown as text) and is found by search, and entries the memory search finds; a card dropped on
// the app is imported too; the same chat again adds nothing. Screenshots under /tmp.
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardText, pngWithText } from '../unit/import-png';
import { launchChromium } from './chromium';
import { axeScan, buildAndServe, callWorker } from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = '/tmp/imports-shots';
const POLL = { timeout: 60_000, interval: 50 };
const FIXTURES = new URL('../fixtures/imports/', import.meta.url).pathname;
const FACT = 'The lighthouse keeper is Bartholomew Quill';

/** A fixture as the file picker gets it (Playwright takes paths or buffers, not both at once). */
async function fixtureFile(name: string) {
  return { name, mimeType: '', buffer: await readFile(join(FIXTURES, name)) };
}

describe('importing from other tools in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;

  const dialog = () => page.locator('sm-data-menu').getByRole('dialog');
  const report = () => dialog().getByRole('status');

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ server, dispose } = await buildAndServe());
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await page.goto(server.url);
    await page.getByRole('button', { name: 'Import', exact: true }).waitFor();
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await dispose?.();
  });

  it('a chat, a lorebook and a card picked at once: a report, the chat with its messages, search hits', async () => {
    const card = JSON.parse(await readFile(join(FIXTURES, 'card-v2.json'), 'utf8')) as unknown;
    await page.locator('sm-data-menu input[type=file]').setInputFiles([
      await fixtureFile('seraphina.jsonl'),
      await fixtureFile('eldoria-world.json'),
      {
        name: 'Seraphina.png',
        mimeType: 'image/png',
        buffer: Buffer.from(pngWithText({ chara: cardText(card) })),
      },
    ]);
    await expect.poll(() => report().count(), POLL).toBe(1);
    const lines = await report().locator('ul.report > li').allInnerTexts();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain(
      'seraphina.jsonl: Imported the chat “Seraphina · 2024-07-12” (7 messages).',
    );
    expect(lines[0]).toContain('Message 1: only the chosen swipe was kept, 1 other was left out');
    expect(lines[1]).toContain('eldoria-world.json: Imported 4 entries.');
    expect(lines[1]).toContain('Entry 3: left out (it has no content)');
    expect(lines[2]).toContain('Seraphina.png: Imported 8 entries.');
    expect(await axeScan(page, server)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/report-desktop.png` });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/report-phone.png` });
    await page.setViewportSize({ width: 1280, height: 800 });
    // The chat is listed, and the report opens it.
    const list = page.locator('sm-conversations');
    await list.getByText('Seraphina · 2024-07-12').waitFor(POLL);
    await dialog().getByRole('button', { name: 'Open “Seraphina · 2024-07-12”' }).click();
    await expect.poll(() => dialog().isVisible()).toBe(false);
    await expect
      .poll(() => list.locator('li.active .title').innerText(), POLL)
      .toBe('Seraphina · 2024-07-12');
    const chat = page.locator('sm-chat');
    await chat.locator('sm-message', { hasText: FACT }).waitFor(POLL);
    await chat
      .locator('sm-message', { hasText: 'Mira hid the map under the loose floorboard.' })
      .waitFor(POLL);
    const hostile = chat.locator('sm-message', { hasText: '<script>alert(1)</script>' });
    await hostile.waitFor(POLL);
    expect(await hostile.locator('script, b').count()).toBe(0);
    // Each message says who said it, as the chat named them (a group chat's replies apart).
    await expect
      .poll(() => chat.locator('sm-message', { hasText: FACT }).locator('.speaker').innerText())
      .toMatch(/^Seraphina\b/);
    expect(
      await chat
        .locator('sm-message[kind="user"]', { hasText: 'Who keeps the lighthouse' })
        .locator('.speaker')
        .innerText(),
    ).toMatch(/^Mira\b/);
    await page.screenshot({ path: `${SHOTS}/chat-desktop.png` });

    // Search finds the chat's message, and the lorebook's entry.
    const found = await callWorker<{ results: { text: string; chat: string }[] }>(
      page,
      'searchConversations',
      'who keeps the lighthouse',
      5,
    );
    expect(found.results.find((r) => r.text.includes(FACT))?.chat).toBe('Seraphina · 2024-07-12');
    const search = page.locator('sm-memory-search');
    await search.getByRole('searchbox').fill('seven bridges over the river');
    await search.getByRole('button', { name: 'Search', exact: true }).click();
    const paths = () =>
      search
        .locator('li.hit > .head > button.path')
        .allTextContents()
        .then((t) => t.map((p) => p.trim()));
    await expect.poll(paths, POLL).toContain('Lorebook/eldoria-world/Eldoria');
    expect((await paths())[0]).toBe('Lorebook/eldoria-world/Eldoria');
    // Its preview is the lore's text, as the person wrote it, not the stored object's JSON.
    const preview = await search.locator('li.hit').first().locator('p.preview').innerText();
    expect(preview).toContain(
      'Eldoria is the capital, built on seven bridges over the river Auln.',
    );
    expect(preview).not.toMatch(/"keys"|\{"content"/);
  });

  it('the same chat again adds nothing and says so', async () => {
    await page
      .locator('sm-data-menu input[type=file]')
      .setInputFiles(join(FIXTURES, 'seraphina.jsonl'));
    await expect
      .poll(() => report().innerText(), POLL)
      .toContain('seraphina.jsonl: Imported before: nothing was added.');
    await dialog().getByRole('button', { name: 'Close' }).click();
    const chats = await callWorker<{ title: string }[]>(page, 'listConversations');
    expect(chats.filter((c) => c.title === 'Seraphina · 2024-07-12')).toHaveLength(1);
  });

  it('a card dropped on the app is imported', async () => {
    const text = await readFile(join(FIXTURES, 'card-v1.json'), 'utf8');
    await page.evaluate((json) => {
      const data = new DataTransfer();
      data.items.add(new File([json], 'bart.json', { type: 'application/json' }));
      const target = document.querySelector('sm-app')!;
      const over = new DragEvent('dragover', {
        dataTransfer: data,
        bubbles: true,
        cancelable: true,
        composed: true,
      });
      target.dispatchEvent(over);
      if (!over.defaultPrevented) throw new Error('the app did not take the drag');
      target.dispatchEvent(
        new DragEvent('drop', {
          dataTransfer: data,
          bubbles: true,
          cancelable: true,
          composed: true,
        }),
      );
    }, text);
    await expect.poll(() => report().innerText(), POLL).toContain('bart.json: Imported 4 entries.');
    await dialog().getByRole('button', { name: 'Close' }).click();
    const entry = await callWorker<{ content: unknown }>(
      page,
      'getEntry',
      'Characters/Bartholomew Quill/Personality',
    );
    expect(entry.content).toBe('gruff, honest');
  });

  it('Export → SillyTavern lorebook downloads all memory as World Info', async () => {
    await page.getByRole('button', { name: /^Export/ }).click();
    await page
      .locator('sm-data-menu')
      .getByRole('button', { name: 'SillyTavern lorebook' })
      .waitFor();
    await page.screenshot({ path: `${SHOTS}/export-menu-desktop.png` });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('sm-data-menu').getByRole('button', { name: 'SillyTavern lorebook' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(
      /^structured-memory-lorebook-\d{4}-\d{2}-\d{2}\.json$/,
    );
    const world = JSON.parse(await readFile(await download.path(), 'utf8')) as {
      entries: Record<string, { comment: string; content: string }>;
    };
    const byPath = new Map(Object.values(world.entries).map((e) => [e.comment, e.content]));
    expect(byPath.get('Characters/Bartholomew Quill/Personality')).toBe('gruff, honest');
    expect(byPath.get('Lorebook/eldoria-world/Guild of Lamps')).toBe(
      'The Guild of Lamps lights every street lamp at dusk.',
    );
  });

  it('Cancel during several files: the file being imported finishes, the rest are left alone', async () => {
    // The worker's first answer waits until the test lets it go, so Cancel comes mid-import.
    await page.locator('sm-data-menu').evaluate((el) => {
      const menu = el as unknown as { memory: Record<string, unknown> };
      const real = menu.memory;
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      (window as unknown as { releaseImport: () => void }).releaseImport = release;
      menu.memory = new Proxy(
        {},
        {
          get: (_t, key) => {
            if (typeof key !== 'string' || key === 'then' || key.startsWith('_$')) return undefined;
            const fn = real[key] as (...a: unknown[]) => Promise<unknown>;
            if (key !== 'importFile') return fn;
            return async (...args: unknown[]) => {
              await gate;
              return fn(...args);
            };
          },
        },
      );
    });
    const card = (name: string) => ({
      name: `${name}.json`,
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify({ name, description: `${name} is a test character.` })),
    });
    await page
      .locator('sm-data-menu input[type=file]')
      .setInputFiles([card('Ada'), card('Brin'), card('Cato')]);
    await dialog().getByRole('heading', { name: 'Importing 1 of 3…' }).waitFor(POLL);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}/progress-phone.png` });
    await page.setViewportSize({ width: 1280, height: 800 });
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().getByRole('button', { name: 'Stopping after this file…' }).waitFor(POLL);
    await page.evaluate(() => (window as unknown as { releaseImport: () => void }).releaseImport());
    await expect.poll(() => report().count(), POLL).toBe(1);
    expect(await report().locator('ul.report > li').allInnerTexts()).toEqual([
      'Ada.json: Imported 1 entry.',
      'Brin.json: Not imported: the import was cancelled.',
      'Cato.json: Not imported: the import was cancelled.',
    ]);
    expect(await dialog().getByRole('heading').innerText()).toBe('Imported 1 of 3 files');
    await dialog().getByRole('button', { name: 'Close' }).click();
    const paths = (await callWorker<{ path: string }[]>(page, 'memoryIndex')).map((e) => e.path);
    expect(paths).toContain('Characters/Ada/Description');
    expect(paths.filter((p) => /Brin|Cato/.test(p))).toEqual([]);
  });

  it('a file that is not a chat gets a sentence, and nothing changes', async () => {
    const before = await callWorker<unknown>(page, 'stats');
    await page.locator('sm-data-menu input[type=file]').setInputFiles({
      name: 'notes.jsonl',
      mimeType: 'application/octet-stream',
      buffer: Buffer.from('just some notes\n'),
    });
    await expect
      .poll(() => report().innerText(), POLL)
      .toContain(
        'notes.jsonl: Nothing was imported; nothing changed. notes.jsonl is not a SillyTavern chat',
      );
    // The heading says so too (it said "Import finished").
    expect(await dialog().getByRole('heading').innerText()).toBe('Nothing was imported');
    await dialog().getByRole('button', { name: 'Close' }).click();
    expect(await callWorker<unknown>(page, 'stats')).toEqual(before);
  });

  it('another tool’s file over 32 MB is refused in a sentence before it is read; nothing changes', async () => {
    const before = await callWorker<unknown>(page, 'stats');
    // 3 GB, sparse on disk: reading it whole would fail or hold the page.
    const huge = join(await mkdtemp(join(tmpdir(), 'sm-huge-')), 'huge-chat.jsonl');
    await writeFile(huge, '');
    await truncate(huge, 3 * 1024 * 1024 * 1024);
    try {
      await page.locator('sm-data-menu input[type=file]').setInputFiles(huge);
      await expect
        .poll(() => report().innerText(), POLL)
        .toContain(
          'huge-chat.jsonl: Nothing was imported; nothing changed. huge-chat.jsonl is 3072 MB: a file from another tool is imported up to 32 MB at a time.',
        );
      await dialog().getByRole('button', { name: 'Close' }).click();
      expect(await callWorker<unknown>(page, 'stats')).toEqual(before);
    } finally {
      await rm(dirname(huge), { recursive: true, force: true });
    }
  });

  it('this app’s backup or Markdown over 64 MB is refused in a sentence before it is read; nothing changes', async () => {
    // The page has made its first chat (it makes one as it starts), so nothing else changes.
    const chats = async () =>
      (await callWorker<{ conversations: number }>(page, 'stats')).conversations;
    await expect.poll(chats, POLL).toBeGreaterThan(0);
    const before = await callWorker<unknown>(page, 'stats');
    // 3 GB each, sparse on disk after a start that says what they are: reading one whole would
    // fail or hold the page.
    const dir = await mkdtemp(join(tmpdir(), 'sm-huge-'));
    const backup = join(dir, 'huge-backup.json');
    const markdown = join(dir, 'huge-memory.md');
    await writeFile(backup, '{\n "format": "structured-memory-backup",\n "version": 1,\n');
    await writeFile(markdown, '# Memory\n\n');
    for (const f of [backup, markdown]) await truncate(f, 3 * 1024 * 1024 * 1024);
    const limit =
      'is 3072 MB: a backup or Markdown file of this app is imported up to 64 MB at a time, as much as a browser tab can hold while it reads and indexes it. Split it into smaller files (in a backup, each chat with its messages) and import them one after the other.';
    try {
      // Alone, before Merge or Replace all is asked.
      await page.locator('sm-data-menu input[type=file]').setInputFiles(backup);
      await expect
        .poll(() => dialog().getByRole('alert').innerText(), POLL)
        .toBe(`huge-backup.json: Nothing was imported; nothing changed. huge-backup.json ${limit}`);
      await dialog().getByRole('button', { name: 'Close' }).click();
      // With another file, in the report.
      const notes = join(dir, 'notes.jsonl');
      await writeFile(notes, 'just some notes\n');
      await page.locator('sm-data-menu input[type=file]').setInputFiles([markdown, notes]);
      await expect
        .poll(() => report().innerText(), POLL)
        .toContain(
          `huge-memory.md: Nothing was imported; nothing changed. huge-memory.md ${limit}`,
        );
      await dialog().getByRole('button', { name: 'Close' }).click();
      expect(await callWorker<unknown>(page, 'stats')).toEqual(before);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
