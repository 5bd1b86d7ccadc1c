// Live views (issue 14; docs/design.md, "Change notifications"): with the explorer open, a write
// in another tab of the same browser or in this one shows in the tree, the map, the open detail
// and the conversation list, patched from the worker's change report: no view reads its whole
// data again. Calls are counted where they leave the page: Comlink's APPLY messages to the
// worker (as in round-trips.test.ts).
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import {
  COUNT_CALLS,
  buildAndServe,
  callCount,
  callWorker,
  callsSince,
  reportArrived,
  reportCount,
  settled,
} from './explorer-fixture';
import type { StaticServer } from './static-server';

/** Whether the map has laid out a block for `path` (its rectangles by path). */
const mapHas = (p: Page, path: string) =>
  p
    .locator('sm-memory-map')
    .evaluate(
      (el, want) =>
        (el as unknown as { layout: { rects: Map<string, unknown> } }).layout.rects.has(want),
      path,
    );

/** Whether the tree holds a node for `path` (expanded or not). */
const treeHas = (p: Page, path: string) =>
  p
    .locator('sm-memory-tree')
    .evaluate(
      (el, want) =>
        (el as unknown as { tree: { byPath: Map<string, unknown> } }).tree.byPath.has(want),
      path,
    );

const POLL = { timeout: 30_000 };
/** Calls that would read a whole view again. */
const FULL_READS = ['memoryIndex', 'listConversations'];

describe('live views (Chromium)', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let other: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  let conversationId = 0;

  beforeAll(async () => {
    ({ server, dispose } = await buildAndServe());
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await page.addInitScript({ content: COUNT_CALLS });
    await page.goto(server.url);
    const saved = await callWorker<{ status: string }>(
      page,
      'saveMemory',
      'Garden/Roses',
      'Prune in late winter.',
    );
    expect(saved.status).toBe('SUCCESS');
    const conv = await callWorker<{ id: number }>(page, 'createConversation', 'Before the rename');
    conversationId = conv.id;
    // A fresh load, so no view is still loading after the writes above when counting starts.
    await page.reload();
    await page.getByRole('treeitem', { name: 'Garden' }).waitFor(POLL);
    await page.locator('sm-conversations').getByText('Before the rename').waitFor(POLL);
    // The second tab of the same browser: its own page and memory worker, the same database.
    other = await context.newPage();
    await other.goto(server.url);
    await other.getByRole('treeitem', { name: 'Garden' }).waitFor(POLL);
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await dispose?.();
  });

  it('an entry saved in another tab shows in the tree and the map, with no full re-read', async () => {
    const before = await callCount(page);
    const reports = await reportCount(page);
    const saved = await callWorker<{ status: string }>(
      other,
      'saveMemory',
      'Kitchen/Knives',
      'Hone weekly, sharpen twice a year.',
    );
    expect(saved.status).toBe('SUCCESS');
    await page.getByRole('treeitem', { name: 'Kitchen' }).waitFor(POLL);
    await page.getByRole('tab', { name: 'Map' }).click();
    await expect.poll(() => mapHas(page, 'Kitchen/Knives'), POLL).toBe(true);
    // The report that carried the save reached this page, and what it set off has finished.
    await reportArrived(page, reports, { paths: 'Kitchen/Knives' });
    await settled(page);
    const calls = await callsSince(page, before);
    for (const full of FULL_READS) expect(calls).not.toContain(full);
    // Nothing selected: no detail to read either.
    expect(calls).not.toContain('entryDetail');
  });

  it('an entry saved in this tab shows in the map (open) and the tree, with no full re-read', async () => {
    const before = await callCount(page);
    const reports = await reportCount(page);
    const saved = await callWorker<{ status: string }>(
      page,
      'saveMemory',
      'Kitchen/Pans',
      'Season the cast iron after washing.',
    );
    expect(saved.status).toBe('SUCCESS');
    await expect.poll(() => mapHas(page, 'Kitchen/Pans'), POLL).toBe(true);
    await reportArrived(page, reports, { paths: 'Kitchen/Pans' });
    await settled(page);
    const calls = await callsSince(page, before);
    expect(calls[0]).toBe('saveMemory');
    for (const full of FULL_READS) expect(calls).not.toContain(full);
    expect(calls).not.toContain('entryDetail');
    // The tree has it too.
    await page.getByRole('tab', { name: 'Tree' }).click();
    await page.getByRole('treeitem', { name: 'Kitchen', exact: true }).click();
    await page.getByRole('treeitem', { name: 'Pans', exact: true }).waitFor(POLL);
  });

  it('the open detail shows its entry updated in another tab, from the change report, with no read', async () => {
    await page.getByRole('treeitem', { name: 'Knives', exact: true }).click();
    const detail = page.locator('sm-entry-detail');
    await detail.getByRole('heading', { name: 'Knives', level: 2 }).waitFor(POLL);
    await detail.getByText('Hone weekly').first().waitFor(POLL);

    // A write elsewhere in memory: the detail stays as it is, without a call.
    await settled(page);
    let before = await callCount(page);
    let reports = await reportCount(page);
    await callWorker(other, 'saveMemory', 'Garden/Tulips', 'Plant the bulbs in autumn.');
    await expect.poll(() => treeHas(page, 'Garden/Tulips'), POLL).toBe(true);
    await reportArrived(page, reports, { paths: 'Garden/Tulips' });
    await settled(page);
    let calls = await callsSince(page, before);
    expect(calls).not.toContain('entryDetail');
    for (const full of FULL_READS) expect(calls).not.toContain(full);

    // Its own entry updated in the other tab: the new text shown; the report carried the detail
    // (this page's worker read it), so the page sends no read of its own.
    before = await callCount(page);
    reports = await reportCount(page);
    const updated = await callWorker<{ status: string }>(
      other,
      'saveMemory',
      'Kitchen/Knives',
      'Hone before every use; sharpen in spring.',
    );
    expect(updated.status).toBe('SUCCESS');
    await detail.getByText('Hone before every use').first().waitFor(POLL);
    await reportArrived(page, reports, { details: 'Kitchen/Knives' });
    await settled(page);
    calls = await callsSince(page, before);
    expect(calls).not.toContain('entryDetail');
    for (const full of FULL_READS) expect(calls).not.toContain(full);
  });

  it('a conversation renamed in another tab shows in the list, with no full re-read', async () => {
    const before = await callCount(page);
    const reports = await reportCount(page);
    const renamed = await callWorker<{ status: string }>(
      other,
      'renameConversation',
      conversationId,
      'After the rename',
    );
    expect(renamed.status).toBe('SUCCESS');
    const list = page.locator('sm-conversations');
    await list.getByText('After the rename').waitFor(POLL);
    expect(await list.getByText('Before the rename').count()).toBe(0);
    await reportArrived(page, reports, { conversations: 'After the rename' });
    await settled(page);
    const calls = await callsSince(page, before);
    for (const full of FULL_READS) expect(calls).not.toContain(full);
  });
});
