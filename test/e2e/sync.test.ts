// Sync between two browser profiles (two Chromium contexts, separate storage) through a real
// server of the CouchDB replication protocol (express-pouchdb in memory on 127.0.0.1, started
// and stopped here), set up in Settings → Sync as a person does: a save on A shows in B's tree
// with live sync; edits made while the server is away end as one live version and the other in
// history on both; 1,000 entries and a server stopped mid-sync; encryption (no plaintext on the
// server, a wrong passphrase said and nothing written); CORS not enabled said with the fix; the
// setup steps said before any sync, and Check server naming what is missing; a failed Sync now
// saying truly whether anything tries again; skipped documents counted with their reasons; and a
// server stopped mid-sync raising no uncaught error. Screenshots go to /tmp/shots-sync/.
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSyncServer, type TestSyncServer } from '../sync-server';
import { launchChromium } from './chromium';
import { AXE_FILE, axeScan } from './explorer-fixture';
import { serveStatic, type StaticServer } from './static-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHOTS = process.env.SHOTS_DIR ?? '/tmp/shots-sync';

interface AppHandle {
  memory: {
    saveMemory(p: string, c: unknown, t?: number, o?: unknown): Promise<{ status: string }>;
    queryMemory(p: string): Promise<{ status: string; content?: unknown }>;
    getHistory(p: string): Promise<{
      status: string;
      versions: { id: number; content: unknown; conflictFrom?: string }[];
    }>;
    restoreMemory(id: number): Promise<{ status: string }>;
    importJson(text: string): Promise<{ status: string; imported?: number }>;
    memoryIndex(): Promise<{ path: string }[]>;
    queryMemoryHeading(
      p: string,
      q: string,
    ): Promise<{ status: string; children: { path: string }[] }>;
  };
}

function backupOf(n: number): string {
  const at = new Date(Date.UTC(2025, 0, 1)).toISOString();
  return JSON.stringify({
    format: 'structured-memory-backup',
    version: 1,
    entries: Array.from({ length: n }, (_, i) => ({
      path: `Bulk/group-${Math.floor(i / 50)}/item-${i}`,
      content: { text: `bulk item ${i}` },
      contextChunks: [],
      version: 1,
      created: at,
      modified: at,
      accessed: at,
    })),
  });
}

describe('sync between two browsers', () => {
  let browser: Browser;
  let contextA: BrowserContext;
  let contextB: BrowserContext;
  let a: Page;
  let b: Page;
  let app: StaticServer;
  let couch: TestSyncServer;
  let outDir: string;
  let stopAt: ((path: string) => boolean) | null = null;

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-sync-e2e-'));
    await mkdir(SHOTS, { recursive: true });
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
      define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('bundled') },
    });
    // axe-core beside the app, same origin, so the app's CSP stays as shipped.
    await copyFile(join(ROOT, 'node_modules/axe-core/axe.min.js'), join(outDir, AXE_FILE));
    app = await serveStatic(outDir);
    couch = await startSyncServer({
      onRequest(req) {
        if (stopAt?.(req.path)) {
          stopAt = null;
          void couch.stop();
          throw new Error('gone');
        }
      },
    });
    browser = await launchChromium();
    contextA = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contextB = await browser.newContext({ viewport: { width: 390, height: 844 } });
    a = await contextA.newPage();
    b = await contextB.newPage();
    for (const p of [a, b]) await ready(p);
  });

  afterAll(async () => {
    await contextA?.close();
    await contextB?.close();
    await browser?.close();
    await couch?.close();
    await app?.close();
    await rm(outDir, { recursive: true, force: true });
  });

  /** Uncaught errors of each page, and unhandled rejections of its memory worker. */
  const uncaught = new Map<Page, string[]>();

  async function ready(p: Page) {
    const seen: string[] = [];
    uncaught.set(p, seen);
    p.on('pageerror', (e) => seen.push(`page: ${e.name}: ${e.message}`));
    p.on('worker', (w) => {
      w.on('console', (m) => {
        if (m.text().startsWith('uncaught in worker:')) seen.push(m.text());
      });
      void w
        .evaluate(() => {
          self.addEventListener('unhandledrejection', (e) =>
            console.error(`uncaught in worker: ${String(e.reason)}`),
          );
          self.addEventListener('error', (e) => console.error(`uncaught in worker: ${e.message}`));
        })
        .catch(() => undefined);
    });
    await p.goto(app.url);
    await p.waitForFunction(
      () => !!(document.querySelector('sm-app') as unknown as AppHandle | null)?.memory,
      null,
      { timeout: 60_000 },
    );
  }

  const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `${name}.png`) });
  const dialog = (p: Page) => p.getByRole('dialog', { name: 'Settings' });
  const statusLine = (p: Page) => dialog(p).locator('sm-sync-settings [role="status"]');
  const alerts = (p: Page) => dialog(p).locator('sm-sync-settings .error');

  async function openSync(p: Page) {
    // A fresh page may still be drawing its shell: press Settings until the dialog shows.
    await expect
      .poll(
        async () => {
          if (await dialog(p).isVisible()) return true;
          await p.getByRole('button', { name: 'Settings', exact: true }).click();
          return dialog(p).isVisible();
        },
        { timeout: 30_000 },
      )
      .toBe(true);
    await dialog(p).getByLabel('CouchDB server').scrollIntoViewIfNeeded();
  }

  async function fillSync(
    p: Page,
    fields: { url: string; database: string; passphrase?: string; encrypt?: boolean },
  ) {
    const d = dialog(p);
    await d.getByLabel('CouchDB server').fill(fields.url);
    await d.getByLabel('Database').fill(fields.database);
    const encrypt = d.getByLabel('Encrypt end to end');
    if ((await encrypt.isChecked()) !== !!fields.encrypt) await encrypt.click();
    if (fields.encrypt) await d.getByLabel('Passphrase').fill(fields.passphrase ?? '');
  }

  async function closeSettings(p: Page) {
    await dialog(p).getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog(p).isVisible()).toBe(false);
  }

  /** Presses Sync now and waits until that sync has finished (a newer last sync, or an error). */
  async function syncNow(p: Page) {
    await openSync(p);
    const before = await statusLine(p).getAttribute('data-last-sync');
    await dialog(p).getByRole('button', { name: 'Sync now' }).click();
    await expect
      .poll(
        async () =>
          (await alerts(p).count()) > 0 ||
          ((await statusLine(p).getAttribute('data-last-sync')) !== before &&
            (await statusLine(p).getAttribute('data-state')) !== 'syncing'),
        { timeout: 120_000 },
      )
      .toBe(true);
  }

  /** Presses Check server and waits for its verdict: each line's step, mark and text. */
  async function checkServer(p: Page) {
    const result = dialog(p).locator('#sync-check-result');
    const before = Number(await result.getAttribute('data-checks'));
    await dialog(p).getByRole('button', { name: 'Check server' }).click();
    await expect
      .poll(async () => Number(await result.getAttribute('data-checks')), { timeout: 30_000 })
      .toBe(before + 1);
    const list = dialog(p).getByRole('list', { name: 'Server check' });
    return list.locator('li').evaluateAll((lis) =>
      lis.map((li) => ({
        step: li.getAttribute('data-step'),
        ok: li.getAttribute('data-ok'),
        text: li.textContent?.replace(/\s+/g, ' ').trim() ?? '',
      })),
    );
  }

  /** A port on 127.0.0.1 where nothing listens. */
  async function closedPort(): Promise<number> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return port;
  }

  /** Calls a method of the page's memory engine (through the worker) with JSON arguments. */
  const call = <K extends keyof AppHandle['memory']>(
    p: Page,
    name: K,
    ...args: Parameters<AppHandle['memory'][K]>
  ): Promise<Awaited<ReturnType<AppHandle['memory'][K]>>> =>
    p.evaluate(
      ([n, a]) => {
        const m = (document.querySelector('sm-app') as unknown as AppHandle)
          .memory as unknown as Record<string, (...x: unknown[]) => Promise<unknown>>;
        return m[n as string](...(a as unknown[]));
      },
      [name, args] as const,
    ) as never;
  const content = async (p: Page, path: string) => (await call(p, 'queryMemory', path)).content;
  const conflicts = async (p: Page, path: string) =>
    (await call(p, 'getHistory', path)).versions.filter((v) => v.conflictFrom);
  const paths = async (p: Page) => (await call(p, 'memoryIndex')).map((e) => e.path);

  it('before any sync, Settings → Sync says the server must allow this app (CORS), and Check server says what is missing', async () => {
    const origin = new URL(app.url).origin;
    for (const p of [a, b]) {
      await openSync(p);
      const panel = dialog(p).locator('sm-sync-settings');
      const steps = panel.getByRole('list', { name: 'Setting up sync' });
      // The permission the server must give, with this app's own origin, said up front.
      expect(await steps.textContent()).toMatch(/turn on CORS/);
      expect(await steps.textContent()).toContain(origin);
      await steps.scrollIntoViewIfNeeded();
      // Jargon comes with plain words.
      expect(await steps.textContent()).toMatch(/CORS \(sharing with other web addresses\)/);
      expect(await panel.locator('#sync-encrypt-hint').textContent()).toMatch(
        /ciphertext: text that nobody can read without your passphrase/,
      );
    }
    await shot(a, 'desktop-sync-steps');
    await shot(b, 'phone-sync-steps');
    await closeSettings(b);

    // Nothing listens at the address.
    const nothing = `http://127.0.0.1:${await closedPort()}`;
    await fillSync(a, { url: nothing, database: 'memory' });
    let lines = await checkServer(a);
    expect(lines).toHaveLength(1);
    expect(lines[0].step).toBe('reach');
    expect(lines[0].ok).not.toBe('true');
    expect(lines[0].text).toMatch(/start CouchDB, or correct the address|Nothing answers/);

    // A server that answers but does not allow this app: the page is cross-origin isolated, so
    // it cannot tell that from a server that is down; it says both, with this app's origin.
    const noCors = await startSyncServer({ cors: false });
    const guarded = await startSyncServer({ auth: { username: 'ana', password: 'right' } });
    try {
      await fillSync(a, { url: noCors.url, database: 'memory' });
      lines = await checkServer(a);
      expect(lines[0].ok).not.toBe('true');
      expect(lines[0].text).toContain(`does not allow this app (${origin})`);
      expect(lines[0].text).toMatch(/enable_cors = true/);

      // A wrong password: the server and its CORS are fine, the login is what is missing.
      await fillSync(a, { url: guarded.url, database: 'fresh' });
      await dialog(a).locator('sm-sync-settings').getByLabel('Username').fill('ana');
      await dialog(a).locator('sm-sync-settings').getByLabel('Password').fill('wrong');
      lines = await checkServer(a);
      expect(lines.map((l) => [l.step, l.ok])).toEqual([
        ['reach', 'true'],
        ['cors', 'true'],
        ['login', 'false'],
      ]);
      expect(lines[2].text).toMatch(/refused the username or password/);

      // All fine: a database that is not there yet is made by the first sync (an admin login).
      await dialog(a).locator('sm-sync-settings').getByLabel('Password').fill('right');
      lines = await checkServer(a);
      expect(lines.map((l) => [l.step, l.ok])).toEqual([
        ['reach', 'true'],
        ['cors', 'true'],
        ['login', 'true'],
        ['database', 'true'],
      ]);
      expect(lines[3].text).toMatch(/"fresh" is not there yet; the first sync creates it/);
      expect(await dialog(a).locator('#sync-check-result').textContent()).toMatch(
        /The server is ready/,
      );
      await shot(a, 'desktop-sync-check');
      expect(await axeScan(a, app)).toEqual([]);
      // The check wrote nothing: no database was made.
      const dbs = await fetch(`${guarded.url}/_all_dbs`, {
        headers: { Authorization: `Basic ${Buffer.from('ana:right').toString('base64')}` },
      }).then((r) => r.json());
      expect(dbs).not.toContain('fresh');
    } finally {
      await noCors.close();
      await guarded.close();
    }
    await dialog(a).locator('sm-sync-settings').getByLabel('Username').fill('');
    await dialog(a).locator('sm-sync-settings').getByLabel('Password').fill('');
    await closeSettings(a);
  });

  it('a failed Sync now says truly whether anything tries again: not with Keep in sync off, yes with it on', async () => {
    const nothing = `http://127.0.0.1:${await closedPort()}`;
    await openSync(a);
    await fillSync(a, { url: nothing, database: 'memory' });
    await dialog(a).getByRole('button', { name: 'Sync now' }).click();
    await expect
      .poll(() => alerts(a).first().textContent(), { timeout: 60_000 })
      .toMatch(/cannot be reached/);
    const fix = dialog(a).locator('sm-sync-settings .fix').first();
    expect(await fix.textContent()).toMatch(/Nothing tries again by itself: press Sync now/);
    await shot(a, 'desktop-sync-failed-once');
    // With Keep in sync on, it does try again by itself, and says so.
    await dialog(a).getByLabel('Keep in sync').click();
    await expect
      .poll(() => fix.textContent(), { timeout: 60_000 })
      .toMatch(/Keep in sync tries again by itself/);
    await dialog(a).getByLabel('Keep in sync').click();
    await expect.poll(() => alerts(a).count(), { timeout: 30_000 }).toBe(0);
    await closeSettings(a);
  });

  it('Keep in sync on both: a save on A appears in B’s tree', async () => {
    const url = couch.url;
    for (const p of [a, b]) {
      await openSync(p);
      await fillSync(p, { url, database: 'shared' });
      await dialog(p).getByLabel('Keep in sync').click();
      await expect
        .poll(() => statusLine(p).textContent(), { timeout: 60_000 })
        .toMatch(/Last sync .*keeping in sync/);
    }
    await shot(a, 'desktop-sync-settings');
    await shot(b, 'phone-sync-settings');
    for (const p of [a, b]) await closeSettings(p);
    // Typed, then the dialog's Save (which saves the app's settings, not sync's): opened again,
    // the form shows the sync settings in use, not the typing.
    await openSync(a);
    await dialog(a).getByLabel('Database').fill('typed-then-saved');
    await dialog(a).getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog(a).isVisible()).toBe(false);
    await openSync(a);
    expect(await dialog(a).getByLabel('Database').inputValue()).toBe('shared');
    await closeSettings(a);
    // Replace all on a browser that syncs says what the next sync does (then Cancel).
    await a.locator('sm-data-menu input[type=file]').setInputFiles({
      name: 'backup.json',
      mimeType: 'application/json',
      buffer: Buffer.from(backupOf(1)),
    });
    await a.getByRole('button', { name: /^Replace all/ }).click();
    const confirm = a.getByRole('dialog', { name: 'Replace all memory?' });
    await expect
      .poll(() => confirm.innerText())
      .toContain('This browser syncs: at the next sync, what the sync server holds comes back');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => confirm.count()).toBe(0);

    await call(a, 'saveMemory', 'Synced/from-A', { note: 'made on A' });
    const treeB = b.getByRole('tree', { name: 'Memory' });
    // The phone shows one pane at a time: the tree is under Memory.
    const memoryTab = b.getByRole('tab', { name: 'Memory' });
    if (await memoryTab.count()) await memoryTab.click();
    await expect
      .poll(() => treeB.getByRole('treeitem', { name: 'Synced' }).count(), { timeout: 60_000 })
      .toBe(1);
    // The header agrees with the tree as soon as the tree shows the arrival (it read "0 entries").
    expect(await b.locator('sm-app .stats').first().textContent()).toMatch(/^\s*1 entry ·/);
    expect(await content(b, 'Synced/from-A')).toEqual({ note: 'made on A' });
    await shot(b, 'phone-tree-after-sync');
  });

  it('documents from the server that fail the checks: the count and each reason are shown', async () => {
    // Another program writes to the server: 3 entries whose id names another path, 2 with a
    // version that is not a whole number ≥ 1.
    const server = couch.database('shared');
    const good = (await server.get('entry:Synced/from-A')) as Record<string, unknown>;
    const { _id, _rev, ...body } = good;
    const bad = [
      ...[1, 2, 3].map((i) => ({ ...body, _id: `entry:Bad/elsewhere-${i}` })),
      ...[1, 2].map((i) => ({
        ...body,
        _id: `entry:Bad/version-${i}`,
        path: `Bad/version-${i}`,
        version: -i,
      })),
    ];
    expect(_id && _rev).toBeTruthy();
    await server.bulkDocs(bad);
    await openSync(b);
    const skipped = dialog(b).locator('sm-sync-settings .skipped-box');
    await expect
      .poll(() => skipped.textContent(), { timeout: 60_000 })
      .toMatch(/5 documents from the server were not written here/);
    const reasons = await skipped.locator('li').allTextContents();
    expect(reasons).toHaveLength(2);
    expect(reasons[0]).toMatch(/^3 × .*id/);
    expect(reasons[1]).toMatch(/^2 × .*version/);
    await skipped.scrollIntoViewIfNeeded();
    await shot(b, 'phone-sync-skipped');
    expect(await axeScan(b, app)).toEqual([]);
    // Nothing else is affected: the good entry is still there, the bad ones are not.
    expect((await paths(b)).filter((p) => p.startsWith('Bad/'))).toEqual([]);
    expect(await content(b, 'Synced/from-A')).toEqual({ note: 'made on A' });
    await closeSettings(b);
  });

  it('edits on both while the server is away: one live version on both, the other in history on both', async () => {
    await call(a, 'saveMemory', 'Pets/cat', { name: 'Tom' });
    await expect
      .poll(async () => (await call(b, 'queryMemory', 'Pets/cat')).status, { timeout: 60_000 })
      .toBe('SUCCESS');
    await couch.stop();
    await call(a, 'saveMemory', 'Pets/cat', { name: 'Tom', colour: 'grey' });
    await call(b, 'saveMemory', 'Pets/cat', { name: 'Tom', colour: 'black' });
    await couch.start();
    for (const p of [a, b, a]) {
      await syncNow(p);
      await closeSettings(p);
    }
    const live = await content(a, 'Pets/cat');
    await expect.poll(() => content(b, 'Pets/cat'), { timeout: 60_000 }).toEqual(live);
    expect([
      { name: 'Tom', colour: 'grey' },
      { name: 'Tom', colour: 'black' },
    ]).toContainEqual(live);
    for (const p of [a, b]) {
      await expect
        .poll(async () => (await conflicts(p, 'Pets/cat')).length, { timeout: 60_000 })
        .toBe(1);
      const [lost] = await conflicts(p, 'Pets/cat');
      expect(lost.content).not.toEqual(live);
      expect(lost.conflictFrom).toBe('Chrome on Linux');
    }
    // The entry's history in the explorer says which version is the other device's.
    await a.getByRole('tab', { name: 'Tree' }).click();
    const filter = a.getByRole('searchbox', { name: 'Filter paths' });
    await filter.fill('Pets/cat');
    const item = a.getByRole('tree', { name: 'Memory' }).getByRole('treeitem', { name: 'cat' });
    await expect.poll(() => item.count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await item.first().click();
    await filter.fill('');
    const history = a.locator('sm-entry-detail .history');
    await expect
      .poll(() => history.textContent(), { timeout: 20_000 })
      .toMatch(/conflict, from Chrome on Linux/);
    await history.scrollIntoViewIfNeeded();
    await shot(a, 'desktop-conflict-in-history');
  });

  it('1,000 entries reach an empty browser; the server stopped mid-sync, then resumed: each entry once', async () => {
    // B leaves live sync; A brings 1,000 entries.
    await openSync(b);
    await dialog(b).getByLabel('Keep in sync').click();
    await closeSettings(b);
    expect((await call(a, 'importJson', backupOf(1000))).imported).toBe(1000);
    await syncNow(a);
    await closeSettings(a);
    // A third, empty profile.
    const contextC = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const c = await contextC.newPage();
      await ready(c);
      await openSync(c);
      await fillSync(c, { url: couch.url, database: 'shared' });
      // Stopped mid-pull, when the replication asks the server for its counts after the first
      // batch (PouchDB leaves that request's failure unhandled).
      let batches = 0;
      stopAt = (path) => {
        if (path.includes('_bulk_get')) batches++;
        return batches > 0 && path === '/shared/';
      };
      await dialog(c).getByRole('button', { name: 'Sync now' }).click();
      await expect
        .poll(() => alerts(c).first().textContent(), { timeout: 60_000 })
        .toMatch(/cannot be reached/);
      expect(batches).toBeGreaterThan(0);
      expect(await dialog(c).locator('sm-sync-settings .fix').first().textContent()).toMatch(
        /press Sync now/,
      );
      // A sentence, and no uncaught error in the page (nor in its worker).
      await expect.poll(() => statusLine(c).getAttribute('data-state')).toBe('error');
      expect(uncaught.get(c)).toEqual([]);
      await shot(c, 'desktop-sync-unreachable');
      await couch.start();
      await dialog(c).getByRole('button', { name: 'Sync now' }).click();
      await expect
        .poll(async () => (await statusLine(c).textContent())?.trim(), { timeout: 120_000 })
        .toMatch(/^Last sync \d/);
      expect(await alerts(c).count()).toBe(0);
      expect(uncaught.get(c)).toEqual([]);
      const all = await paths(c);
      const bulk = all.filter((p) => p.startsWith('Bulk/'));
      expect(bulk).toHaveLength(1000);
      expect(new Set(bulk).size).toBe(1000);
      expect(all).toContain('Synced/from-A');
      const hit = await call(c, 'queryMemoryHeading', 'Bulk', 'bulk item 321');
      expect(hit.children[0]?.path).toBe('Bulk/group-6/item-321');
    } finally {
      await contextC.close();
    }
  });

  it('encryption: the server keeps no plaintext; a wrong passphrase is said and writes nothing', async () => {
    await openSync(a);
    await fillSync(a, { url: couch.url, database: 'sealed', encrypt: true, passphrase: 'kiwi-7' });
    await dialog(a).getByLabel('Keep in sync').click(); // off: A syncs by hand here
    await closeSettings(a);
    await call(a, 'saveMemory', 'Secret/diary', { text: 'rhubarb crumble' });
    await syncNow(a);
    expect(await alerts(a).count()).toBe(0);
    await closeSettings(a);
    const docs = await couch.storedDocs('sealed');
    expect(docs.length).toBeGreaterThan(1);
    // Every document but the encryption header (salt, check value) is a keyed-hash id, a
    // revision and a sealed body.
    for (const doc of docs) {
      if (doc._id === 'structured-memory-sync') continue;
      expect(doc._id).toMatch(/^x[0-9a-f]{64}$/);
      for (const key of Object.keys(doc).filter((k) => !k.startsWith('_'))) expect(key).toBe('e');
    }
    // No text of any entry appears anywhere. (Whole phrases: a four-letter word such as "Pets"
    // turns up by chance in half a megabyte of base64 ciphertext about once in thirty runs.)
    const stored = JSON.stringify(docs);
    for (const plain of [
      'rhubarb crumble',
      'Secret/diary',
      'Synced/from-A',
      'Pets/cat',
      'made on A',
    ])
      expect(stored).not.toContain(plain);

    const before = (await paths(b)).length;
    await openSync(b);
    await fillSync(b, { url: couch.url, database: 'sealed', encrypt: true, passphrase: 'wrong' });
    await dialog(b).getByRole('button', { name: 'Sync now' }).click();
    await expect
      .poll(() => alerts(b).first().textContent(), { timeout: 60_000 })
      .toMatch(/passphrase does not open this database/);
    expect(await dialog(b).locator('sm-sync-settings .fix').first().textContent()).toMatch(
      /Nothing was written here/,
    );
    await shot(b, 'phone-sync-wrong-passphrase');
    expect((await paths(b)).length).toBe(before);
    await dialog(b).getByLabel('Passphrase').fill('kiwi-7');
    await dialog(b).getByRole('button', { name: 'Sync now' }).click();
    await expect
      .poll(() => content(b, 'Secret/diary'), { timeout: 60_000 })
      .toEqual({ text: 'rhubarb crumble' });
    await closeSettings(b);
  });

  it('a server without CORS: the status says so, with the CouchDB settings that enable it', async () => {
    const noCors = await startSyncServer({ cors: false });
    try {
      await openSync(a);
      await fillSync(a, { url: noCors.url, database: 'memory' });
      await dialog(a).getByRole('button', { name: 'Sync now' }).click();
      await expect
        .poll(() => alerts(a).first().textContent(), { timeout: 60_000 })
        .toMatch(/CORS is not enabled/);
      const fix = await dialog(a).locator('sm-sync-settings .fix').first().textContent();
      expect(fix).toMatch(/enable_cors = true/);
      expect(fix).toContain(new URL(app.url).origin);
      await shot(a, 'desktop-sync-cors');
      await closeSettings(a);
    } finally {
      await noCors.close();
    }
  });
});
