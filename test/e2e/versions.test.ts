// Version numbers a person can follow (issue 23, walk item 8), in the built app in Chromium: an
// entry edited, rolled back, moved, moved back with Undo, deleted and saved again. At every step
// the entry's number is one above every version its History lists, History has no gaps, and no
// note about an earlier change ("Saved as version 2") outlives the next one. The rule is in
// docs/design.md (the `version` field).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callWorker, openSeeded } from './explorer-fixture';

const SHOTS = process.env.VERSION_SHOTS ?? '/tmp/shots-versions';

describe('version numbers across save, restore, move and delete', () => {
  let page: Page;
  let errors: string[];
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ page, errors, close } = await openSeeded());
  });

  afterAll(async () => {
    await close?.();
  });

  const detail = () => page.locator('sm-entry-detail');
  const notice = () => page.locator('sm-toast');
  const status = () => detail().locator('p.status');
  /** The title as it is spoken: "Lisbon, entry, version 3", or "…, nothing saved". */
  const title = () => detail().locator('h2').getAttribute('aria-label');
  /** The version numbers History lists, top to bottom. */
  async function listed(): Promise<number[]> {
    const rows = detail()
      .locator('section', { has: page.getByRole('heading', { name: /^History/ }) })
      .getByRole('button', { name: /^Version \d+/ });
    return (await rows.allTextContents()).map((t) => Number(/Version (\d+)/.exec(t)![1]));
  }
  /** Waits for the title to read `version` (a number: the live entry's; null: nothing saved). */
  async function showsVersion(version: number | null): Promise<void> {
    await expect
      .poll(title, { timeout: 10_000 })
      .toMatch(version === null ? /, nothing saved$/ : new RegExp(`, entry, version ${version}$`));
  }
  const below = (n: number) => Array.from({ length: n }, (_, i) => n - i);

  async function open(path: string): Promise<void> {
    await page.getByRole('tab', { name: 'Tree' }).click();
    const filter = page.getByRole('searchbox', { name: 'Filter paths' });
    await filter.fill(path);
    const name = path.split('/').at(-1)!;
    const item = page
      .getByRole('tree', { name: 'Memory' })
      .getByRole('treeitem', { name, exact: true });
    await expect.poll(() => item.count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await item.first().click();
    await filter.fill('');
    await expect.poll(title, { timeout: 10_000 }).toMatch(new RegExp(`^${name}, `));
  }

  it('edit, then restore: the entry is version 3, History lists 2 and 1, and no note still says version 2', async () => {
    await open('Travel/Lisbon');
    await showsVersion(1);
    await detail().getByRole('button', { name: 'Edit', exact: true }).click();
    await detail().getByRole('textbox', { name: 'Content' }).fill('Hotel in Baixa this time.');
    await detail().getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => status().textContent(), { timeout: 10_000 }).toMatch(/version 2/);
    await showsVersion(2);

    const history = detail().locator('section', { hasText: 'History' });
    await history.getByRole('button', { name: /^Version 1\b/ }).click();
    await history.getByRole('button', { name: 'Restore', exact: true }).click();
    // The restore's own report first; then nothing on the page may still speak of version 2.
    await expect
      .poll(() => notice().getByRole('status').textContent(), { timeout: 10_000 })
      .toMatch(/Restored version 1 of “Travel\/Lisbon” as version 3\./);
    await showsVersion(3);
    expect(await status().textContent()).not.toMatch(/version/);
    expect(await listed()).toEqual(below(2));
    await notice().getByRole('button', { name: 'Close notice' }).click();
  });

  it('a move keeps the number, and History at the new path lists every earlier version', async () => {
    await detail().getByRole('toolbar').getByRole('button', { name: 'Move' }).click();
    await detail().getByRole('textbox', { name: 'New path' }).fill('Trips/Lisbon');
    await detail()
      .getByRole('form', { name: 'Move or rename' })
      .getByRole('button', { name: 'Move' })
      .click();
    await expect
      .poll(() => notice().getByRole('status').textContent(), { timeout: 10_000 })
      .toMatch(/to “Trips\/Lisbon”/);
    await expect.poll(() => detail().getByText('Moved from').count(), { timeout: 10_000 }).toBe(1);
    await showsVersion(3);
    expect(await listed()).toEqual(below(2));

    // Undo: back at the old path, above the signpost the move left there.
    await notice().getByRole('button', { name: 'Undo' }).click();
    await expect
      .poll(() => notice().getByRole('status').textContent(), { timeout: 10_000 })
      .toMatch(/Moved back to “Travel\/Lisbon”/);
    await showsVersion(4);
    await expect.poll(listed, { timeout: 10_000 }).toEqual(below(3));
    await notice().getByRole('button', { name: 'Close notice' }).click();
  });

  it('a delete lists every version, and a new save there goes on from the highest', async () => {
    await detail().getByRole('toolbar').getByRole('button', { name: 'Delete' }).click();
    await detail()
      .getByRole('group', { name: 'Confirm delete' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await showsVersion(null);
    await expect.poll(listed, { timeout: 10_000 }).toEqual(below(4));
    await page.screenshot({ path: join(SHOTS, 'deleted-history-desktop.png') });

    const saved = await callWorker<{ status: string; version: number }>(
      page,
      'saveMemory',
      'Travel/Lisbon',
      'Back to Alfama.',
      0,
    );
    expect(saved).toMatchObject({ status: 'SUCCESS', version: 5 });
    await showsVersion(5);
    await expect.poll(listed, { timeout: 10_000 }).toEqual(below(4));
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('tab', { name: 'Memory' }).click();
    await detail().locator('h2').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'saved-again-phone.png'), fullPage: true });
    expect(errors).toEqual([]);
  });
});
