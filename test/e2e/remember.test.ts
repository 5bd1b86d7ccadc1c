// "Remember this" (docs/chat.md) in Debian Chromium against the production build and a fake
// llama.cpp: a person remembers an earlier message of a chat, is offered a path under the heading
// whose entries match it (Notes when none does), saves without changing anything, and finds the
// entry in the memory tree with that message's words and a snapshot holding that message; a
// selection is remembered on its own; Escape cancels with the focus back on the button; a bad
// path is refused in the form with nothing lost; axe finds nothing; screenshots under /tmp.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';
import { launchChromium } from './chromium';
import { connectApp, axeScan, buildAndServe, callWorker, focused, seed } from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = '/tmp/remember-shots';
const POLL = { timeout: 30_000, interval: 50 };

const DINNER = 'For dinner tomorrow: risotto with mushrooms and parmesan.';
const PLUMBER = 'The plumber comes on Thursday at nine. Bring the spare key for the shed.';
const LAST = 'Thanks, that is all for today.';

interface Stored {
  content: unknown;
  contextChunks: { turn_id: number; role: string; text: string }[];
}

describe('Remember this in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  let fake: FakeServer;

  const chat = () => page.locator('sm-chat');
  const box = () => chat().getByRole('textbox', { name: 'Message', exact: true });
  const user = (text: string) => chat().locator('sm-message[kind="user"]', { hasText: text });
  const form = () => chat().locator('sm-remember-form');
  const pathBox = () => form().getByRole('textbox', { name: 'Save at' });
  const wordsBox = () => form().getByRole('textbox', { name: 'Words to remember' });
  const idle = () =>
    expect.poll(() => chat().getByRole('button', { name: 'Stop' }).isDisabled(), POLL).toBe(true);
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

  async function say(text: string): Promise<void> {
    await box().fill(text);
    await box().press('Enter');
    await idle();
    await user(text).waitFor(POLL);
  }

  /** The id of the stored user message with `text` (its turn id). */
  async function idOf(text: string): Promise<number> {
    const id = await user(text).evaluate(
      (el) => (el as unknown as { messageId?: number }).messageId,
    );
    if (typeof id !== 'number') throw new Error(`no stored message "${text}"`);
    return id;
  }

  async function rememberWhole(message: Locator): Promise<void> {
    await message.hover();
    await message.getByRole('button', { name: 'Remember this' }).click();
    await form().waitFor(POLL);
  }

  async function entry(path: string): Promise<Stored> {
    const r = await callWorker<Stored & { status?: string; message?: string }>(
      page,
      'getEntry',
      path,
    );
    if (r.status === 'ERROR') throw new Error(r.message);
    return r;
  }

  /** Saves the open form as it is and follows the confirmation's link into the explorer. */
  async function saveAndOpen(path: string, shotName?: string): Promise<void> {
    await form().getByRole('button', { name: 'Save' }).click();
    const link = form().getByRole('button', { name: path, exact: true });
    await link.waitFor(POLL);
    expect(await form().locator('.saved').innerText()).toMatch(/^Remembered at/);
    await expect.poll(() => focused(page)).toMatchObject({ text: path });
    if (shotName) await shot(shotName);
    await link.click();
    await expect
      .poll(
        () =>
          page
            .locator('sm-entry-detail')
            .evaluate((el) => (el as unknown as { path?: string }).path),
        POLL,
      )
      .toBe(path);
    const leaf = path.split('/').at(-1)!;
    await page.getByRole('treeitem', { name: leaf }).waitFor(POLL);
    await form().getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => form().count(), POLL).toBe(0);
  }

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ server, dispose } = await buildAndServe());
    fake = await startFakeServer('llamacpp', { defaultReply: () => ({ text: 'Noted.' }) });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await page.goto(server.url);
    await seed(page);
    await connectApp(page, fake.url, { maxOutputTokens: 24 });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await fake?.close();
    await dispose?.();
  });

  it('a chat of three exchanges offers Remember this on every message', async () => {
    await say(DINNER);
    await say(PLUMBER);
    await say(LAST);
    const messages = chat().locator('sm-message:not([kind="notice"])');
    await expect.poll(() => messages.count(), POLL).toBe(6);
    for (const message of await messages.all()) {
      expect(await message.getByRole('button', { name: 'Remember this' }).count()).toBe(1);
    }
  });

  it('an earlier message goes under the heading whose entries match it, with its own exchange as the snapshot', async () => {
    await rememberWhole(user(DINNER));
    // Named from the words of its first line as a chat title takes them (cut near 48 characters).
    const path = 'Recipes/Dinner/Tomorrow Risotto Mushrooms';
    await expect.poll(() => pathBox().inputValue(), POLL).toBe(path);
    expect(await wordsBox().inputValue()).toBe(DINNER);
    expect(await form().locator('#path-note').innerText()).toBe(
      'Under Recipes/Dinner, where the memories most like it are.',
    );
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'textarea' });
    expect.soft(await axeScan(page, server)).toEqual([]);
    await shot('form-desktop');

    await saveAndOpen(path, 'saved-desktop');
    const saved = await entry(path);
    expect(saved.content).toBe(DINNER);
    const turn = await idOf(DINNER);
    expect(saved.contextChunks).toContainEqual(
      expect.objectContaining({ turn_id: turn, role: 'user', text: DINNER }),
    );
    // The snapshot is that message's exchange, not the chat's last turns.
    expect(saved.contextChunks.map((c) => c.text)).not.toContain(LAST);
  });

  it('a message that matches nothing goes under Notes', async () => {
    await rememberWhole(user(PLUMBER));
    const path = 'Notes/Plumber Comes Thursday Nine';
    await expect.poll(() => pathBox().inputValue(), POLL).toBe(path);
    expect(await form().locator('#path-note').innerText()).toBe(
      'Nothing like it in memory yet, so under Notes.',
    );
    await saveAndOpen(path);
    const saved = await entry(path);
    expect(saved.content).toBe(PLUMBER);
    const texts = saved.contextChunks.map((c) => c.text).join(' ');
    expect(texts).toContain('The plumber comes on Thursday at nine.');
    expect(texts).not.toContain(LAST);
  });

  it('words selected in a message are remembered on their own, from the button by the selection', async () => {
    const message = user(PLUMBER);
    // Drag across "Bring the spare key for the shed." as a person would.
    const ends = await message.evaluate((el) => {
      const text = [...el.shadowRoot!.querySelector('.text')!.childNodes].find(
        (n): n is Text => n instanceof Text,
      )!;
      const from = text.data.indexOf('Bring');
      const range = document.createRange();
      range.setStart(text, from);
      range.setEnd(text, from + 1);
      const start = range.getBoundingClientRect();
      range.setStart(text, text.data.length - 1);
      range.setEnd(text, text.data.length);
      const end = range.getBoundingClientRect();
      return {
        x0: start.left + 1,
        y0: start.top + start.height / 2,
        x1: end.right,
        y1: end.top + end.height / 2,
      };
    });
    await page.mouse.move(ends.x0, ends.y0);
    await page.mouse.down();
    await page.mouse.move(ends.x1, ends.y1, { steps: 5 });
    await page.mouse.up();
    const selected = await page.evaluate(() => document.getSelection()!.toString().trim());
    expect(selected).toBe('Bring the spare key for the shed.');
    const pick = message.getByRole('button', { name: 'Remember selection' });
    await pick.waitFor(POLL);
    await shot('selection-desktop');
    await pick.click();
    await expect.poll(() => wordsBox().inputValue(), POLL).toBe(selected);
    expect(await form().locator('.title').innerText()).toBe('Remember the selected words');
    const path = 'Notes/Bring Spare Key Shed';
    await expect.poll(() => pathBox().inputValue(), POLL).toBe(path);
    await saveAndOpen(path);
    expect((await entry(path)).content).toBe(selected);
    expect(await message.getByRole('button', { name: 'Remember selection' }).count()).toBe(0);
  });

  it('the toolbar action takes a selection too; Escape cancels and the focus goes back', async () => {
    const message = user(DINNER);
    await message.evaluate((el) => {
      const text = [...el.shadowRoot!.querySelector('.text')!.childNodes].find(
        (n): n is Text => n instanceof Text,
      )!;
      const from = text.data.indexOf('risotto');
      document.getSelection()!.setBaseAndExtent(text, from, text, from + 'risotto'.length);
    });
    await message.getByRole('button', { name: 'Remember this' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => wordsBox().inputValue(), POLL).toBe('risotto');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'textarea' });
    await page.keyboard.press('Escape');
    await expect.poll(() => form().count(), POLL).toBe(0);
    await expect.poll(() => focused(page)).toMatchObject({ label: 'Remember this' });
    expect(await message.evaluate((el) => el.matches(':focus-within'))).toBe(true);

    // A reply's words (rendered markdown) the same way.
    const reply = chat().locator('sm-message[kind="assistant"]').first();
    await reply.evaluate((el) => {
      const p = el.shadowRoot!.querySelector('.md p')!.firstChild as Text;
      document.getSelection()!.setBaseAndExtent(p, 0, p, 'Noted'.length);
    });
    await reply.getByRole('button', { name: 'Remember this' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => wordsBox().inputValue(), POLL).toBe('Noted');
    await page.keyboard.press('Escape');
    await expect.poll(() => form().count(), POLL).toBe(0);
  });

  it('a path the engine refuses is said in the form, and nothing typed is lost', async () => {
    await page.evaluate(() => document.getSelection()!.removeAllRanges());
    await rememberWhole(user(LAST));
    await expect.poll(() => pathBox().inputValue(), POLL).not.toBe('');
    await wordsBox().fill('Today was a good day.');
    await pathBox().fill('Diary//Today');
    await form().getByRole('button', { name: 'Save' }).click();
    const problem = form().getByRole('alert');
    await expect
      .poll(() => problem.innerText(), POLL)
      .toBe('path "Diary//Today" has an empty segment (//)');
    expect(await wordsBox().inputValue()).toBe('Today was a good day.');
    expect(await pathBox().inputValue()).toBe('Diary//Today');
    await pathBox().fill('Diary/Today');
    await form().getByRole('button', { name: 'Save' }).click();
    await form().getByRole('button', { name: 'Diary/Today', exact: true }).waitFor(POLL);
    expect((await entry('Diary/Today')).content).toBe('Today was a good day.');
    await form().getByRole('button', { name: 'Close' }).click();
  });

  it('at phone size the form fits and axe finds nothing', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('tab', { name: 'Chat', exact: true }).click();
    await rememberWhole(user(DINNER));
    await expect.poll(() => pathBox().inputValue(), POLL).not.toBe('');
    const fits = await form().evaluate((el) => {
      const r = el.getBoundingClientRect();
      return r.left >= 0 && r.right <= window.innerWidth;
    });
    expect(fits).toBe(true);
    expect.soft(await axeScan(page, server)).toEqual([]);
    await shot('form-phone');
    await page.keyboard.press('Escape');
    await expect.poll(() => form().count(), POLL).toBe(0);
  });
});
