// End to end, in the production build: memory written by a version that kept no chunk times in
// its shards (before the word index's sittings) still loads and answers after the update. The
// first load rebuilds the shards from the chunk rows, over several ranges of chunk ids, in one
// transaction (docs/design.md, "shards").
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { buildAndServe, callWorker } from './explorer-fixture';

/** Turns of ten sentences each: 430 of them pass 4,096 chunks, two shard ranges and more. */
const TURNS = 430;

describe('an update that rebuilds the shards (Chromium)', () => {
  let app: Awaited<ReturnType<typeof buildAndServe>> | undefined;
  let browser: Browser | undefined;
  let page: Page;

  beforeAll(async () => {
    app = await buildAndServe();
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.dispose();
  });

  /** Every compact part's chunk count and how many times it holds, read from IndexedDB. */
  const heads = (): Promise<{ count: number; times: number }[]> =>
    page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((ok, fail) => {
        const r = indexedDB.open('structured-memory');
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      const rows = await new Promise<{ count: number; times?: ArrayLike<number> }[]>((ok) => {
        const r = db.transaction('shardHeads').objectStore('shardHeads').getAll();
        r.onsuccess = () => ok(r.result);
      });
      db.close();
      return rows.map((h) => ({ count: h.count, times: h.times?.length ?? 0 }));
    });

  it('rebuilds shards written without times, and finds a sentence of every range', async () => {
    await page.goto(app!.server.url);
    const conv = await callWorker<{ id: number }>(page, 'createConversation', 'A long chat');
    await page.evaluate(
      async ([id, turns]) => {
        const memory = (
          document.querySelector('sm-app') as unknown as {
            memory: { recordTurn(t: object): Promise<{ status: string; message?: string }> };
          }
        ).memory;
        for (let i = 0; i < turns; i++) {
          const text = Array.from(
            { length: 10 },
            (_, j) => `Line ${j} of turn ${i} names the token tok${i}x${j}.`,
          ).join(' ');
          const r = await memory.recordTurn({ conversationId: id, role: 'user', text });
          if (r.status !== 'SUCCESS') throw new Error(r.message);
        }
      },
      [conv.id, TURNS] as const,
    );
    const before = await heads();
    expect(before.reduce((n, h) => n + h.count, 0)).toBeGreaterThan(4096);
    expect(before.every((h) => h.times === h.count)).toBe(true);

    // As the previous version wrote them: no times in either part of any piece.
    await page.evaluate(async () => {
      const db = await new Promise<IDBDatabase>((ok, fail) => {
        const r = indexedDB.open('structured-memory');
        r.onsuccess = () => ok(r.result);
        r.onerror = () => fail(r.error);
      });
      const tx = db.transaction(['shards', 'shardHeads'], 'readwrite');
      for (const name of ['shards', 'shardHeads']) {
        const r = tx.objectStore(name).openCursor();
        r.onsuccess = () => {
          const c = r.result;
          if (!c) return;
          const v = c.value as { times?: unknown };
          delete v.times;
          c.update(v);
          c.continue();
        };
      }
      await new Promise<void>((ok, fail) => {
        tx.oncomplete = () => ok();
        tx.onerror = () => fail(tx.error);
      });
      db.close();
    });
    expect((await heads()).every((h) => h.times === 0)).toBe(true);

    await page.reload();
    // Every rebuild step the app shows from here on, and the banner's words at each.
    await page.waitForFunction(
      () => (document.querySelector('sm-app') as unknown as { app?: unknown } | null)?.app,
    );
    await page.evaluate(() => {
      type Indexing = { done: number; total: number } | undefined;
      const el = document.querySelector('sm-app') as unknown as HTMLElement & {
        updateComplete: Promise<unknown>;
        app: { subscribe(f: () => void): () => void; state: { indexing: Indexing } };
      };
      // Every notice shown, as its "N more" button does: with no model server set up, that one
      // comes first.
      (el as unknown as { moreBanners: boolean }).moreBanners = true;
      const seen: { indexing: Indexing; banner?: string }[] = [];
      (window as unknown as { seen: typeof seen }).seen = seen;
      el.app.subscribe(() => {
        const indexing = el.app.state.indexing;
        if (seen.length && seen.at(-1)!.indexing === indexing) return;
        const step: (typeof seen)[number] = { indexing };
        seen.push(step);
        void el.updateComplete.then(() => {
          step.banner = [...(el.shadowRoot?.querySelectorAll('.banner') ?? [])]
            .map((b) => b.textContent?.replace(/\s+/g, ' ').trim() ?? '')
            .join(' | ');
        });
      });
    });
    // The first search loads the index, which rebuilds the shards first; a sentence of the first
    // range and one of the last are found.
    for (const turn of [3, TURNS - 2]) {
      const hits = await callWorker<{ chunk: { text: string } }[] | { message: string }>(
        page,
        'searchChunks',
        conv.id,
        `tok${turn}x7`,
        1,
      );
      expect(hits).toEqual([
        expect.objectContaining({
          chunk: expect.objectContaining({
            text: `Line 7 of turn ${turn} names the token tok${turn}x7.`,
          }),
        }),
      ]);
    }
    const after = await heads();
    const chunks = before.reduce((n, h) => n + h.count, 0);
    expect(after.reduce((n, h) => n + h.count, 0)).toBe(chunks);
    expect(after.every((h) => h.times === h.count)).toBe(true);

    // Meanwhile the app said so, range by range, with the count of sentences, and stopped.
    await expect
      .poll(() =>
        page.evaluate(
          () =>
            (window as unknown as { seen: { indexing?: unknown }[] }).seen.at(-1)?.indexing ?? null,
        ),
      )
      .toBeNull();
    const seen = await page.evaluate(
      () =>
        (
          window as unknown as {
            seen: { indexing?: { done: number; total: number }; banner?: string }[];
          }
        ).seen,
    );
    const steps = seen.flatMap((s) => (s.indexing ? [s.indexing] : []));
    expect(steps[0]).toEqual({ done: 0, total: chunks });
    expect(steps.length).toBeGreaterThan(1);
    const done = steps.map((s) => s.done);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(steps.every((s) => s.total === chunks && s.done < chunks)).toBe(true);
    const shown = seen.flatMap((s) => (s.indexing && s.banner ? [s.banner] : []));
    expect(shown[0]).toContain(
      `Updating search: 0 of ${chunks.toLocaleString('en-US')} chat sentences`,
    );
    expect(seen.at(-1)?.banner ?? '').not.toContain('Updating search');

    // For the screenshots: a step the rebuild showed, halfway, shown again (it passes fast).
    const halfway = steps[Math.floor(steps.length / 2)]!;
    await page.evaluate((indexing) => {
      const app = (document.querySelector('sm-app') as unknown as { app: { set(p: object): void } })
        .app;
      app.set({ indexing });
    }, halfway);
    await page.getByRole('progressbar', { name: 'Search index update' }).waitFor();
    await page.screenshot({ path: '/tmp/sm-index-rebuild-desktop.png' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: '/tmp/sm-index-rebuild-phone.png' });

    // Its sibling line, the re-embedding after a model switch, is drawn the same way.
    await page.evaluate(() => {
      const app = (document.querySelector('sm-app') as unknown as { app: { set(p: object): void } })
        .app;
      app.set({ indexing: undefined, reembed: { done: 3, total: 10 } });
    });
    const bar = page.getByRole('progressbar', { name: 'Re-embedding progress' });
    await bar.waitFor();
    expect(await bar.evaluate((el) => (el as HTMLProgressElement).value)).toBe(3);
    expect(await page.locator('sm-app .banner').allTextContents()).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Re-embedding memory with the new model: 3 of 10'),
      ]),
    );
    expect(await page.getByRole('progressbar', { name: 'Search index update' }).count()).toBe(0);
  });
});
