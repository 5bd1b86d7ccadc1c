// Storage the browser keeps and backups that happen (issue 23), as a person meets them in the
// built app in Chromium: the browser is asked to keep memory after the first save (not on a first
// visit) and Settings → Data shows its answer, the usage and what is free; the backup reminder
// comes a week after memory changed, goes with an export, a dismissal or its setting; the
// automatic backup writes to the picked folder (an origin-private folder handed to the real
// picker's caller, since the picker cannot be driven headless) keeping the newest few of its own
// files, or downloads where the browser has no folder access; and each file restores through
// Import in a fresh profile. axe finds nothing on Settings → Data at desktop and phone size.
// Screenshots go to /tmp/shots-backups/.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { SEED, axeScan, buildAndServe, callWorker, focused, seed } from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = process.env.SHOTS_DIR ?? '/tmp/shots-backups';
const DAY = 86_400_000;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** Counts the page's calls of `navigator.storage.persist()`. */
const COUNT_PERSIST = `(() => {
  window.__persistCalls = 0;
  const persist = StorageManager.prototype.persist;
  StorageManager.prototype.persist = function () {
    window.__persistCalls++;
    return persist.call(this);
  };
})()`;

/** The folder picker answers with a folder of the origin private file system. */
const OPFS_PICKER = `window.showDirectoryPicker = async () =>
  (await navigator.storage.getDirectory()).getDirectoryHandle('backups', { create: true });`;

/** A browser without folder access (Firefox, Safari). */
const NO_PICKER = `delete window.showDirectoryPicker; delete Window.prototype.showDirectoryPicker;`;

/** The files of the private 'backups' folder: name → text. */
function folderFiles(page: Page): Promise<Record<string, string>> {
  return page.evaluate(async () => {
    const dir = await (
      await navigator.storage.getDirectory()
    ).getDirectoryHandle('backups', { create: true });
    const out: Record<string, string> = {};
    for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) {
      out[name] = await (await (await dir.getFileHandle(name)).getFile()).text();
    }
    return out;
  });
}

describe('storage the browser keeps, and backups', () => {
  let browser: Browser;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  let files: string;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    files = await mkdtemp(join(tmpdir(), 'sm-backups-'));
    ({ server, dispose } = await buildAndServe());
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await dispose?.();
    await rm(files, { recursive: true, force: true });
  });

  async function open(init: string[] = [], options = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: DESKTOP, ...options });
    contexts.push(context);
    for (const script of init) await context.addInitScript(script);
    const page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(server.url);
    await page.locator('sm-app .stats').getByText(/entr/).waitFor({ timeout: 60_000 });
    return page;
  }

  async function openData(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await page.locator('sm-settings dialog[open]').waitFor();
    await page.locator('sm-settings #data').scrollIntoViewIfNeeded();
  }

  async function save(page: Page): Promise<void> {
    await page.locator('sm-settings').getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('sm-settings dialog[open]').waitFor({ state: 'detached' });
  }

  /** Imports `path` in a fresh profile (Replace all or Merge) and waits for the tree to show it. */
  async function restore(path: string, how: 'Merge' | 'Replace all'): Promise<void> {
    const page = await open();
    await page.locator('sm-data-menu input[type=file]').setInputFiles(path);
    await page.getByRole('button', { name: new RegExp(`^${how}`) }).click();
    if (how === 'Replace all')
      await page.getByRole('button', { name: 'Replace all', exact: true }).click();
    await page.getByText(/^Imported \d+ entries/).waitFor({ timeout: 30_000 });
    await page.getByRole('treeitem', { name: 'Projects' }).waitFor({ timeout: 30_000 });
    expect(await callWorker<{ entries: number }>(page, 'stats')).toMatchObject({
      entries: SEED.length,
    });
  }

  it('asks the browser to keep memory after the first save, and shows its answer', async () => {
    const page = await open([COUNT_PERSIST]);
    await openData(page);
    const kept = page.locator('sm-backup-panel #storage-kept');
    await expect.poll(() => kept.textContent()).toMatch(/Not kept for sure|Kept/);
    // A first visit is not the moment: nothing was asked yet.
    expect(
      await page.evaluate(() => (window as unknown as { __persistCalls: number }).__persistCalls),
    ).toBe(0);
    await page.keyboard.press('Escape');

    await callWorker(page, 'saveMemory', 'Drinks/Tea', 'Earl Grey, no milk');
    await page.waitForFunction(
      () => (window as unknown as { __persistCalls: number }).__persistCalls === 1,
    );
    const persisted = await page.evaluate(() => navigator.storage.persisted());
    await openData(page);
    await expect
      .poll(() => kept.textContent())
      .toMatch(persisted ? /^Kept: the browser will not clear/ : /^Not kept for sure/);
    await expect
      .poll(() => page.locator('sm-backup-panel #storage-usage').textContent())
      .toMatch(/^\d[\d.]* (B|KB|MB|GB) used, about \d[\d.]* (KB|MB|GB|TB) free for this site\.$/);
    if (!persisted) {
      await expect
        .poll(() => page.locator('sm-backup-panel').getByRole('list').textContent())
        .toMatch(/install this one[\s\S]*turn on Sync, or keep backups/);
    }
    expect(await page.locator('sm-backup-panel #last-backup').textContent()).toBe(
      'Last backup: never.',
    );

    for (const [size, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      await page.setViewportSize(viewport);
      await page.locator('sm-settings #data').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, `data-${size}.png`) });
      expect(await axeScan(page, server)).toEqual([]);
    }
    expect(problems).toEqual([]);
  });

  it('says so where the browser has no Storage API, and memory is saved all the same', async () => {
    const page = await open([
      `Object.defineProperty(Navigator.prototype, 'storage', { get: () => undefined });`,
    ]);
    await callWorker(page, 'saveMemory', 'Drinks/Tea', 'Earl Grey, no milk');
    await page.getByRole('treeitem', { name: 'Drinks' }).waitFor();
    await openData(page);
    await expect
      .poll(() => page.locator('sm-backup-panel #storage-kept').textContent())
      .toBe(
        'This browser does not say whether it keeps memory: it may clear it when space runs low.',
      );
    expect(await page.locator('sm-backup-panel #storage-usage').count()).toBe(0);
    expect(await page.locator('sm-backup-panel').getByRole('list').textContent()).toMatch(
      /turn on Sync, or keep backups/,
    );
    expect(problems).toEqual([]);
  });

  it('reminds a week after memory changed, and not after an export, a dismissal or with the setting off', async () => {
    const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
    contexts.push(context);
    const page = await context.newPage();
    await page.clock.install();
    await page.goto(server.url);
    await seed(page);
    const reminder = page.getByRole('region', { name: 'Backup reminder' });
    // The least urgent banner line: behind "N more" while another shows (no model server yet, an
    // app update): opened when it is there and closed.
    const more = page.locator('sm-app').getByRole('button', { name: /^\d+ more$/ });
    const showReminder = async () => {
      await reminder.or(more).first().waitFor();
      if (!(await reminder.count()) && (await more.getAttribute('aria-expanded')) !== 'true') {
        await more.click();
      }
      await reminder.waitFor();
    };
    // The change is written down; six days on, no reminder yet.
    await page.waitForFunction(
      () => !!JSON.parse(localStorage.getItem('sm-backups') ?? '{}').lastChange,
    );
    await page.clock.fastForward(6 * DAY);
    await openData(page);
    expect(await page.locator('sm-backup-panel #last-backup').textContent()).toBe(
      'Last backup: never.',
    );
    expect(await reminder.count()).toBe(0);
    await page.keyboard.press('Escape');

    // A week: one short line.
    await page.clock.fastForward(1 * DAY + 60_000);
    await showReminder();
    expect(await reminder.locator('.text').textContent()).toBe('No backup of memory yet.');
    expect((await reminder.boundingBox())!.height).toBeLessThanOrEqual(40);
    await page.setViewportSize(PHONE);
    expect((await reminder.boundingBox())!.height).toBeLessThanOrEqual(36);
    await page.screenshot({ path: join(SHOTS, 'reminder-phone.png') });
    await page.setViewportSize(DESKTOP);
    await page.screenshot({ path: join(SHOTS, 'reminder-desktop.png') });

    // Dismissed: gone for a week, then back.
    await reminder.getByRole('button', { name: 'Dismiss the backup reminder' }).click();
    await reminder.waitFor({ state: 'detached' });
    await page.clock.fastForward(7 * DAY + 60_000);
    await showReminder();

    // An export of all memory is a backup: the reminder goes, the menu says when.
    await page.getByRole('button', { name: 'Export' }).click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'JSON', exact: true }).click(),
    ]);
    await download.saveAs(join(files, 'export.json'));
    await reminder.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Export' }).click();
    expect(await page.locator('sm-data-menu #hint-backups').textContent()).toMatch(
      /^Last backup:\s+today$/,
    );
    await page.screenshot({ path: join(SHOTS, 'export-menu.png') });
    // Backup settings… opens Settings at Data, focus on its first button.
    await page.getByRole('button', { name: 'Backup settings…' }).click();
    await page.locator('sm-settings dialog[open]').waitFor();
    await expect.poll(() => focused(page)).toMatchObject({ text: 'Ask the browser to keep it' });
    expect(await page.locator('sm-backup-panel #last-backup').textContent()).toBe(
      'Last backup: today.',
    );
    await page.keyboard.press('Escape');

    // Changed again and a week without a backup: back; the setting turns it off.
    await callWorker(page, 'saveMemory', 'Drinks/Tea', 'Earl Grey');
    // The change reaches the page's record on its own time: wait for it to be written down, or
    // the clock would move first and the change count from eight days on.
    await page.waitForFunction(() => {
      const r = JSON.parse(localStorage.getItem('sm-backups') ?? '{}');
      return r.lastChange !== null && r.lastBackup !== null && r.lastChange > r.lastBackup;
    });
    await page.clock.fastForward(8 * DAY);
    await showReminder();
    expect(await reminder.locator('.text').textContent()).toBe('Last backup: 8 days ago.');
    await openData(page);
    await page.locator('sm-settings').getByLabel('Remind me to back up').uncheck();
    await save(page);
    await reminder.waitFor({ state: 'detached' });
  });

  it('backs up to the picked folder, keeps the newest of its own files, and the file restores', async () => {
    const page = await open([OPFS_PICKER]);
    await seed(page);
    // Older automatic backups and a file of the person's own already in the folder.
    await page.evaluate(async () => {
      const dir = await (
        await navigator.storage.getDirectory()
      ).getDirectoryHandle('backups', { create: true });
      for (const name of [
        'structured-memory-backup-2020-01-01-090000.json',
        'structured-memory-backup-2020-01-02-090000.json',
        'structured-memory-backup-2020-01-03-090000.json',
        'notes.txt',
      ]) {
        const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
        await w.write('old');
        await w.close();
      }
    });
    await openData(page);
    const panel = page.locator('sm-backup-panel');
    await panel.getByRole('button', { name: 'Choose a folder…' }).click();
    await panel.getByText('Backups go to the folder “backups”').waitFor();
    const dialog = page.locator('sm-settings');
    await dialog.getByLabel('Automatic backup').selectOption('daily');
    await dialog.getByLabel('Backups kept in the folder').selectOption('3');
    await save(page);

    await page.waitForFunction(
      () => !!JSON.parse(localStorage.getItem('sm-backups') ?? '{}').lastAuto,
      undefined,
      { timeout: 30_000 },
    );
    const written = await folderFiles(page);
    const names = Object.keys(written).sort();
    expect(names).toHaveLength(4);
    expect(names.slice(0, 3)).toEqual([
      'notes.txt',
      'structured-memory-backup-2020-01-02-090000.json',
      'structured-memory-backup-2020-01-03-090000.json',
    ]);
    expect(names[3]).toMatch(/^structured-memory-backup-\d{4}-\d{2}-\d{2}-\d{6}\.json$/);
    const text = written[names[3]];
    expect(JSON.parse(text)).toMatchObject({ format: 'structured-memory-backup' });

    await openData(page);
    expect(await panel.locator('#last-backup').textContent()).toBe('Last backup: today.');
    await expect.poll(() => panel.getByRole('status').textContent()).toContain(names[3]);
    await panel.locator('#last-backup').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'data-folder-desktop.png') });
    await page.keyboard.press('Escape');

    const path = join(files, names[3]);
    await writeFile(path, text);
    await restore(path, 'Replace all');
  });

  it('downloads the automatic backup where the browser has no folder access, and it restores', async () => {
    const page = await open([NO_PICKER], { acceptDownloads: true });
    await seed(page);
    await openData(page);
    const panel = page.locator('sm-backup-panel');
    await panel.getByText(/saved as downloads: this browser cannot write to a folder/).waitFor();
    expect(await panel.getByRole('button', { name: /folder/ }).count()).toBe(0);
    await page.locator('sm-settings').getByLabel('Automatic backup').selectOption('weekly');
    const downloading = page.waitForEvent('download', { timeout: 30_000 });
    await save(page);
    const download = await downloading;
    expect(download.suggestedFilename()).toMatch(/^structured-memory-backup-.*\.json$/);
    const path = join(files, `dl-${download.suggestedFilename()}`);
    await download.saveAs(path);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({
      format: 'structured-memory-backup',
    });
    await restore(path, 'Merge');
  });

  it('a backup whose keys a tool sorted (jq -S) is still this app’s backup, and restores', async () => {
    const from = await open();
    await seed(from);
    const sortKeys = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sortKeys)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
            )
          : v;
    const text = JSON.stringify(
      sortKeys(JSON.parse(await callWorker<string>(from, 'exportJson'))),
      null,
      2,
    );
    expect(text.indexOf('"format"')).toBeGreaterThan(256);
    const path = join(files, 'sorted-keys.json');
    await writeFile(path, text);
    await restore(path, 'Replace all');
  });

  it('a backup merged twice adds its chat once, and the second time says it was here', async () => {
    const from = await open();
    await seed(from);
    const chat = await callWorker<{ id: number }>(from, 'createConversation', 'Lisbon trip');
    await callWorker(from, 'addMessage', {
      conversationId: chat.id,
      role: 'user',
      text: 'We fly on the 9th.',
    });
    // The same backup under two names (the file input takes a file again only when it changes).
    const text = await callWorker<string>(from, 'exportJson');
    const paths = ['merge-once.json', 'merge-again.json'].map((f) => join(files, f));
    for (const p of paths) await writeFile(p, text);
    const page = await open();
    const titles = async () =>
      (await callWorker<{ title: string }[]>(page, 'listConversations')).map((c) => c.title);
    const merge = async (path: string) => {
      await page.locator('sm-data-menu input[type=file]').setInputFiles(path);
      await page.getByRole('button', { name: /^Merge/ }).click();
      const done = page.locator('sm-data-menu').getByRole('status');
      await done.getByText(/^Imported \d+ entries/).waitFor({ timeout: 30_000 });
      const said = await done.innerText();
      await page.locator('sm-data-menu').getByRole('button', { name: 'Close' }).click();
      return said;
    };
    expect(await merge(paths[0])).not.toMatch(/here already/);
    const once = (await titles()).sort();
    expect(once.filter((t) => t === 'Lisbon trip')).toHaveLength(1);
    // The chat of the backup was here already. (The backup may also hold the empty chat that
    // page opened once the seed's Replace all took the chat it had open; it is not counted.)
    const again = await merge(paths[1]);
    expect((await titles()).sort()).toEqual(once);
    const n = SEED.length;
    const backedUp = (JSON.parse(text) as { conversations: { title: string }[] }).conversations;
    expect(backedUp.filter((c) => c.title === 'Lisbon trip')).toHaveLength(1);
    expect(again).toBe(
      `Imported ${n} entries (0 new, 0 updated, ${n} unchanged). 1 chat was here already, so not added again.`,
    );
  });
});
