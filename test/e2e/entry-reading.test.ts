// An entry as a person reads and edits it, in the built app in Chromium: right-to-left text reads
// right to left, line by line; a long name wraps instead of widening the pane; an edit over a
// text entry changed meanwhile says that Save replaces it; an old version opened in History comes
// into view with its Restore, at phone size too.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callWorker, openInTree, openSeeded } from './explorer-fixture';

const SHOTS = process.env.ENTRY_SHOTS ?? '/tmp/shots-entry-reading';
const HEBREW = 'אני גר ב-Lisbon ליד הנהר.\nמספר טלפון: 555-1234!';
const LONG_NAME = `x${'y'.repeat(127)}`;

describe('reading and editing an entry', () => {
  let page: Page;
  let errors: string[];
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ page, errors, close } = await openSeeded());
    for (const [path, content] of [
      ['Notes/Hebrew', HEBREW],
      [`Notes/${LONG_NAME}`, 'A long name.'],
      ['Notes/Phone', 'Lives in Porto.'],
    ] as const) {
      const r = await callWorker<{ status: string }>(page, 'saveMemory', path, content);
      expect(r.status).toBe('SUCCESS');
    }
  });

  afterAll(async () => {
    await close?.();
  });

  const detail = () => page.locator('sm-entry-detail');

  it('right-to-left text reads right to left, each line with its full stop at its left end', async () => {
    await openInTree(page, 'Notes/Hebrew');
    const content = detail().locator('pre.content');
    await expect.poll(() => content.textContent()).toBe(HEBREW);
    // No note to show: no empty bar under the title either.
    expect(await detail().locator('p.status').isVisible()).toBe(false);
    // Where the first letter and the last mark of each line are drawn.
    const ends = await content.evaluate((pre) => {
      const text = [...pre.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent)!;
      const at = (i: number) => {
        const r = document.createRange();
        r.setStart(text, i);
        r.setEnd(text, i + 1);
        return r.getBoundingClientRect().left;
      };
      const s = text.textContent!;
      const lineEnd = s.indexOf('\n');
      return [
        { first: at(0), last: at(lineEnd - 1) },
        { first: at(lineEnd + 1), last: at(s.length - 1) },
      ];
    });
    await page.screenshot({ path: join(SHOTS, 'hebrew.png') });
    for (const line of ends) expect(line.first).toBeGreaterThan(line.last);
  });

  it('a long name wraps in the breadcrumb: the detail pane does not scroll sideways', async () => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      if (width < 500) await page.getByRole('tab', { name: 'Memory' }).click();
      await page.getByRole('searchbox', { name: 'Filter paths' }).fill(LONG_NAME);
      await page.getByRole('treeitem', { name: LONG_NAME, exact: true }).click();
      await expect
        .poll(() => detail().evaluate((el) => (el as unknown as { path?: string }).path))
        .toBe(`Notes/${LONG_NAME}`);
      await page.getByRole('searchbox', { name: 'Filter paths' }).fill('');
      const sideways = await detail().evaluate((el) => {
        const pane = (el.shadowRoot?.firstElementChild as HTMLElement | null) ?? el;
        const crumbs = el.shadowRoot!.querySelector('.crumbs') as HTMLElement;
        return {
          pane: pane.scrollWidth - pane.clientWidth,
          crumbs: crumbs.scrollWidth - crumbs.clientWidth,
          right: crumbs.getBoundingClientRect().right - window.innerWidth,
        };
      });
      await page.screenshot({ path: join(SHOTS, `long-name-${width}.png`) });
      expect(sideways.crumbs, `${width}`).toBeLessThanOrEqual(0);
      expect(sideways.pane, `${width}`).toBeLessThanOrEqual(0);
      expect(sideways.right, `${width}`).toBeLessThanOrEqual(0);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('an edit of a text entry changed meanwhile says that Save replaces it, and what it replaces stays in History', async () => {
    await page.getByRole('searchbox', { name: 'Filter paths' }).fill('');
    await openInTree(page, 'Notes/Phone');
    await detail().getByRole('button', { name: 'Edit', exact: true }).click();
    await detail().getByRole('textbox', { name: 'Content' }).fill('Lives in Porto. Has a cat.');
    const r = await callWorker<{ status: string }>(
      page,
      'saveMemory',
      'Notes/Phone',
      'Lives in Lisbon. Phone 555-1234.',
    );
    expect(r.status).toBe('SUCCESS');
    const warning = detail().locator('p.warn');
    await expect
      .poll(async () => (await warning.textContent())?.replace(/\s+/g, ' '), { timeout: 10_000 })
      .toMatch(/changed while you were editing .*Saving replaces it with your text; .*History/);
    await page.screenshot({ path: join(SHOTS, 'edit-changed.png') });
    await detail().getByRole('button', { name: 'Save', exact: true }).click();
    await expect
      .poll(() => detail().locator('pre.content').textContent(), { timeout: 10_000 })
      .toBe('Lives in Porto. Has a cat.');
    const history = await callWorker<{ versions: { content: unknown }[] }>(
      page,
      'getHistory',
      'Notes/Phone',
    );
    expect(history.versions.map((v) => v.content)).toContain('Lives in Lisbon. Phone 555-1234.');
  });

  it('an old version opened in History comes into view with its Restore, at phone size', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('tab', { name: 'Memory' }).click();
    await openInTree(page, 'Notes/Phone');
    const version = detail().getByRole('button', { name: /^Version 1\b/ });
    await version.scrollIntoViewIfNeeded();
    await version.click();
    const restore = detail().getByRole('button', { name: 'Restore', exact: true });
    await restore.waitFor();
    await expect
      .poll(() =>
        restore.evaluate((b) => {
          const r = b.getBoundingClientRect();
          return r.top >= 0 && r.bottom <= window.innerHeight;
        }),
      )
      .toBe(true);
    await page.screenshot({ path: join(SHOTS, 'version-phone.png') });
  });

  it('on a small laptop, what is typed in the edit form stays above its Save bar', async () => {
    await page.setViewportSize({ width: 1024, height: 640 });
    try {
      await openInTree(page, 'Notes/Hebrew');
      await detail().getByRole('button', { name: 'Edit', exact: true }).click();
      await detail().getByRole('textbox', { name: 'Content' }).click();
      await page.keyboard.press('Control+End');
      for (let i = 0; i < 12; i++) await page.keyboard.type(`\nline ${i} of new words`);
      const room = await detail().evaluate((el) => {
        const root = el.shadowRoot!;
        const typed = root.querySelector('textarea')!.getBoundingClientRect();
        const bar = root.querySelector('form.edit .actions')!.getBoundingClientRect();
        return bar.top - typed.bottom;
      });
      await page.screenshot({ path: join(SHOTS, 'edit-1024.png') });
      expect(room).toBeGreaterThanOrEqual(0);
      await detail().getByRole('button', { name: 'Cancel' }).click();
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('Move says in sentences what it cannot do: no path given, the path it is at', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await openInTree(page, 'Notes/Hebrew');
    await detail().getByRole('button', { name: 'Move', exact: true }).click();
    const target = detail().getByRole('textbox', { name: 'New path' });
    const alert = detail().getByRole('alert');
    await target.fill('  ');
    await detail().locator('form').getByRole('button', { name: 'Move', exact: true }).click();
    await expect.poll(() => alert.innerText()).toMatch(/^Type the path to move it to, like /);
    await target.fill('Notes/Hebrew');
    await detail().locator('form').getByRole('button', { name: 'Move', exact: true }).click();
    await expect
      .poll(() => alert.innerText())
      .toBe(
        '"Notes/Hebrew" is already at that path; nothing moved. Give the new path to move it to.',
      );
    await detail().getByRole('button', { name: 'Cancel' }).click();
  });

  it('Export offers the selected subtree while something is saved there, and not once it was deleted', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await openInTree(page, 'Notes/Phone');
    const exportButton = page.getByRole('button', { name: 'Export' });
    const subtree = page.getByRole('button', { name: 'Markdown (selected subtree)' });
    await exportButton.click();
    await subtree.waitFor();
    await page.keyboard.press('Escape');
    const r = await callWorker<{ status: string }>(page, 'deleteMemory', 'Notes/Phone');
    expect(r.status).toBe('SUCCESS');
    await expect
      .poll(() => detail().locator('h2').getAttribute('aria-label'), { timeout: 10_000 })
      .toMatch(/nothing saved$/);
    // The note of this detail's own save ("Saved as version 3.") no longer stands.
    expect(await detail().locator('p.status').innerText()).toBe('');
    await exportButton.click();
    await page.getByRole('button', { name: 'SillyTavern lorebook' }).waitFor();
    await expect.poll(() => page.getByText('All memory, as World Info').count()).toBe(1);
    expect(await subtree.count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'export-after-delete.png') });
    await page.keyboard.press('Escape');
  });

  it('threw nothing in the page', () => {
    expect(errors).toEqual([]);
  });
});
