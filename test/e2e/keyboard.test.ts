// The shell from the first moment and by keyboard alone, in Debian Chromium against the
// production build and a fake llama.cpp: Settings opens when clicked in the very frame its button
// first shows (before the stored settings are read); in a 5-turn chat the memory explorer is at
// most 10 Tab presses from load, each pane has a skip link and a landmark, a message is one Tab
// stop whose controls the arrow keys reach and Enter runs; a message's hover toolbar never covers
// its words; axe finds nothing at desktop and phone size; screenshots.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startFakeServer,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
} from '../fixtures/fake-llm';
import { launchChromium } from './chromium';
import { ROOT, axeScan, buildAndServe, callWorker, connectApp, seed } from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = join(ROOT, 'test-results', 'screenshots');

const POLL = { timeout: 30_000, interval: 50 };

/**
 * Installed before the app loads: clicks Settings in the first animation frame in which its
 * button is in the page, and notes whether the stored settings had been read by then.
 */
const CLICK_SETTINGS_AT_ONCE = `(() => {
  const look = () => {
    const app = document.querySelector('sm-app');
    const button = app && app.shadowRoot && app.shadowRoot.querySelector('button.settings');
    if (!button) return requestAnimationFrame(look);
    window.__settingsLoadedAtClick = !!(app.app && app.app.state.settingsLoaded);
    button.click();
  };
  requestAnimationFrame(look);
})();`;

/** Where focus is, through shadow roots: the element, its name, and the elements it is in. */
function where(
  page: Page,
): Promise<{ tag: string; label: string; text: string; within: string[] }> {
  return page.evaluate(() => {
    let el: Element | null = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    const within: string[] = [];
    for (let at: Node | null = el; at;) {
      if (at instanceof Element) within.push(at.localName);
      at = at.parentNode instanceof ShadowRoot ? at.parentNode.host : at.parentNode;
    }
    return {
      tag: el?.localName ?? '',
      label: el?.getAttribute('aria-label') ?? '',
      text: (el?.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60),
      within,
    };
  });
}

interface Sent {
  role: string;
  content: string | null;
}

/** The fake model: a memory save for "remember", else an answer by the user's last words. */
function reply(req: RecordedRequest): FakeReply {
  const messages = ((req.body as { messages?: Sent[] }).messages ?? []).filter(
    (m) => m.role !== 'system',
  );
  const last = messages.at(-1);
  const said = messages.findLast((m) => m.role === 'user')?.content ?? '';
  if (last?.role === 'tool') return { text: 'Saved it under Notes.' };
  if (/^remember/i.test(said)) {
    return {
      toolCalls: [
        {
          name: 'saveMemory',
          arguments: { path: 'Notes/Bike', content: 'The bike lock code is 4821.' },
        },
      ],
    };
  }
  return {
    text: `About “${said}”: here is a longer answer, so that the reply runs over a few lines of the chat at desktop width and the controls have words to cover, if they were to cover any at all.`,
  };
}

let browser: Browser;
let server: StaticServer;
let dispose: () => Promise<void>;

beforeAll(async () => {
  ({ server, dispose } = await buildAndServe());
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await dispose?.();
});

describe('Settings works from the moment it shows', () => {
  it('a click in the first frame opens the dialog, on a first visit and on a later one', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      await context.addInitScript(CLICK_SETTINGS_AT_ONCE);
      const page = await context.newPage();
      for (const visit of ['first', 'later']) {
        if (visit === 'first') await page.goto(server.url);
        else await page.reload();
        // The click came before the settings were read: the moment the issue is about.
        await expect
          .poll(
            () =>
              page.evaluate(
                () => (window as { __settingsLoadedAtClick?: boolean }).__settingsLoadedAtClick,
              ),
            POLL,
          )
          .toBe(false);
        await expect
          .poll(() => page.getByRole('dialog', { name: 'Settings' }).isVisible(), POLL)
          .toBe(true);
        await page.keyboard.press('Escape');
        await expect
          .poll(() => page.getByRole('dialog', { name: 'Settings' }).isVisible())
          .toBe(false);
      }
    } finally {
      await context.close();
    }
  });
});

describe('by keyboard, in a 5-turn chat', () => {
  let context: BrowserContext;
  let page: Page;
  let fake: FakeServer;

  const chat = () => page.locator('sm-chat');
  const box = () => chat().getByRole('textbox', { name: 'Message', exact: true });
  const messages = () => chat().locator('sm-message:not([kind="notice"])');
  const idle = () =>
    expect.poll(() => chat().getByRole('button', { name: 'Stop' }).isDisabled(), POLL).toBe(true);
  const shot = (p: Page, name: string) =>
    p.screenshot({ path: join(SHOTS, `keyboard-${name}.png`) });

  /** Focus on the first tool card's link: its reply, then → (links are not Tab stops). */
  async function toToolCardLink(): Promise<void> {
    const saved = chat().locator('sm-message[kind="assistant"]', {
      has: page.locator('sm-tool-card'),
    });
    await saved
      .first()
      .evaluate((el) => (el as unknown as { focusMessage(): void }).focusMessage());
    await page.keyboard.press('ArrowRight');
    expect((await where(page)).within).toContain('sm-tool-card');
  }

  /** Reloads and waits until the chat is connected and shows its messages. */
  async function fresh(): Promise<void> {
    await page.reload();
    await chat().locator('.status.connected').waitFor(POLL);
    // Five questions, five answers, and the save the second answer made first.
    await expect.poll(() => messages().count(), POLL).toBe(11);
    await page.getByRole('treeitem', { name: 'Projects' }).waitFor(POLL);
  }

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    fake = await startFakeServer('llamacpp', { defaultReply: reply, tokenDelayMs: 1 });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await page.goto(server.url);
    await seed(page);
    await connectApp(page, fake.url);
    for (const [i, text] of [
      'How do I take my coffee with oat milk?',
      'Remember that the bike lock code is 4821.',
      'What did Ana say about reviews?',
      'Plan a weekend in Lisbon.',
      'Thanks, that is all for now.',
    ].entries()) {
      await box().fill(text);
      await box().press('Enter');
      // The question shows as the turn starts (Stop on); the turn is over when Stop is off.
      await chat().locator('sm-message[kind="user"]').nth(i).waitFor(POLL);
      await chat().locator('button:disabled', { hasText: 'Stop' }).waitFor(POLL);
    }
  });

  afterAll(async () => {
    await context?.close();
    await fake?.close();
  });

  it('the memory explorer is at most 10 Tab presses from load', async () => {
    await fresh();
    const stops: string[] = [];
    for (let presses = 1; presses <= 40; presses++) {
      await page.keyboard.press('Tab');
      const at = await where(page);
      stops.push(`${at.tag} ${at.label || at.text}`);
      if (at.within.includes('sm-explorer')) break;
    }
    expect((await where(page)).within, stops.join(' | ')).toContain('sm-explorer');
    expect(stops.length, stops.join(' | ')).toBeLessThanOrEqual(10);
  });

  it('landmarks name each pane, and a skip link jumps to each', async () => {
    await fresh();
    await page.getByRole('navigation', { name: 'Chats' }).waitFor();
    await page.getByRole('main').waitFor();
    await page.getByRole('region', { name: 'Chat', exact: true }).waitFor();
    await page.getByRole('region', { name: 'Memory', exact: true }).waitFor();
    await page.keyboard.press('Tab');
    expect((await where(page)).text).toBe('Skip to chat');
    await page.keyboard.press('Enter');
    expect(await where(page)).toMatchObject({ tag: 'section', label: 'Chat' });
    // From the chat's landmark, the next stop is the conversation itself.
    await page.keyboard.press('Tab');
    expect((await where(page)).within).toContain('sm-message');

    await fresh();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect((await where(page)).text).toBe('Skip to memory');
    await page.keyboard.press('Enter');
    expect(await where(page)).toMatchObject({ tag: 'section', label: 'Memory' });
    await shot(page, 'skip-memory-desktop');
    await page.keyboard.press('Tab');
    expect((await where(page)).within).toContain('sm-explorer');
  });

  it('a message is one Tab stop: ↑ ↓ go between messages, → and Enter reach and run its controls', async () => {
    await fresh();
    await box().focus();
    // Back from the composer: one stop, the newest message.
    await page.keyboard.press('Shift+Tab');
    expect(await where(page)).toMatchObject({ tag: 'div', label: 'Reply' });
    await page.keyboard.press('Shift+Tab');
    expect((await where(page)).within).not.toContain('sm-message');
    await page.keyboard.press('Tab');
    expect(await where(page)).toMatchObject({ label: 'Reply' });

    // ↑ to the question before it; → into its controls; Enter on Remember this.
    await page.keyboard.press('ArrowUp');
    expect(await where(page)).toMatchObject({ label: 'Your message' });
    await expect
      .poll(() => where(page).then((w) => w.text))
      .toContain('Thanks, that is all for now.');
    await shot(page, 'message-focused-desktop');
    await page.keyboard.press('Enter');
    expect(await where(page)).toMatchObject({ label: 'Remember this' });
    await shot(page, 'message-controls-desktop');
    await page.keyboard.press('Enter');
    const form = chat().locator('sm-remember-form');
    await expect
      .poll(() => form.getByRole('textbox').first().inputValue(), POLL)
      .toBe('Thanks, that is all for now.');
    await page.keyboard.press('Escape');
    await expect.poll(() => form.count(), POLL).toBe(0);
    await expect.poll(() => where(page).then((w) => w.label)).toBe('Remember this');

    // → to Edit, Enter opens the edit form; Escape gives it back.
    await page.keyboard.press('ArrowRight');
    expect(await where(page)).toMatchObject({ label: 'Edit your message' });
    await page.keyboard.press('Enter');
    await expect.poll(() => where(page).then((w) => w.label)).toBe('Edit your message');
    expect((await where(page)).tag).toBe('textarea');
    await page.keyboard.press('Escape');
    await expect.poll(() => where(page).then((w) => w.tag)).toBe('button');

    // Escape to the message, ↓ to the reply, End there, and Regenerate with the keys alone.
    await page.keyboard.press('Escape');
    expect(await where(page)).toMatchObject({ label: 'Your message' });
    await page.keyboard.press('ArrowDown');
    expect(await where(page)).toMatchObject({ label: 'Reply' });
    await page.keyboard.press('ArrowRight');
    for (let i = 0; i < 6 && (await where(page)).label !== 'Regenerate reply'; i++) {
      await page.keyboard.press('ArrowRight');
    }
    expect(await where(page)).toMatchObject({ label: 'Regenerate reply' });
    const before = fake.generations().length;
    await page.keyboard.press('Enter');
    await idle();
    expect(fake.generations().length).toBe(before + 1);
    await expect.poll(() => messages().last().locator('.alts').innerText(), POLL).toMatch(/2\/2/);
    // Regenerate went with the reply it sat on: the keys go on from the message box.
    await expect
      .poll(() => where(page))
      .toMatchObject({ tag: 'textarea', within: expect.arrayContaining(['sm-chat']) });

    // A tool card's links are reached the same way: in the message, not as Tab stops of their own.
    await toToolCardLink();
  });

  it('focus stays where the keys are: Test connection, and an export chosen from the Export menu', async () => {
    await fresh();
    const settings = page.getByRole('button', { name: 'Settings' });
    await settings.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    const test = dialog.getByRole('button', { name: 'Test connection' });
    await test.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => dialog.locator('#test-result').innerText(), POLL).toMatch(/llama\.cpp/);
    expect(await where(page)).toMatchObject({ tag: 'button', text: 'Test connection' });
    await page.keyboard.press('Escape');
    await expect.poll(() => where(page).then((w) => w.text)).toBe('Settings');

    const exportButton = page.getByRole('button', { name: 'Export' });
    await exportButton.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: /^JSON/ }).waitFor(POLL);
    await expect.poll(() => where(page).then((w) => w.text)).toMatch(/^Markdown/);
    for (let i = 0; i < 4 && !/^JSON/.test((await where(page)).text); i++) {
      await page.keyboard.press('ArrowDown');
    }
    expect((await where(page)).text).toMatch(/^JSON/);
    const download = page.waitForEvent('download');
    await page.keyboard.press('Enter');
    await download;
    await expect.poll(() => where(page).then((w) => w.text)).toMatch(/^Export/);
  });

  it('on a phone, a link that opens the other tab takes the keys there, not to the page', async () => {
    await fresh();
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.getByRole('tab', { name: 'Chat', exact: true }).click();
      await toToolCardLink();
      await page.keyboard.press('Enter');
      await expect
        .poll(() => page.getByRole('tab', { name: 'Memory' }).getAttribute('aria-selected'))
        .toBe('true');
      // Focus is on something shown, in the memory pane.
      await expect
        .poll(() =>
          page.evaluate(() => {
            let el: Element | null = document.activeElement;
            while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
            return el && el !== document.body && el.checkVisibility()
              ? (el.closest('#memory, [id]')?.id ?? el.localName)
              : 'lost';
          }),
        )
        .not.toBe('lost');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it("a message's controls never cover its words, on hover or by keyboard", async () => {
    await fresh();
    const overlap = (m: Locator) =>
      m.evaluate((el) => {
        const root = el.shadowRoot!;
        const words = root.querySelector('.bubble')!.getBoundingClientRect();
        const controls = root.querySelector('.controls')!;
        const shown = [...controls.querySelectorAll('button')].filter(
          (b) => getComputedStyle(b).opacity !== '0',
        );
        const box = controls.getBoundingClientRect();
        const apart =
          box.bottom <= words.top ||
          box.top >= words.bottom ||
          box.right <= words.left ||
          box.left >= words.right;
        return { shown: shown.length, apart };
      });
    const count = await messages().count();
    for (let i = 0; i < count; i++) {
      const m = messages().nth(i);
      if (!(await m.locator('.bubble').isVisible())) continue;
      await m.locator('.bubble').hover();
      const hovered = await overlap(m);
      expect(hovered.shown, `message ${i}, hover`).toBeGreaterThan(0);
      expect(hovered.apart, `message ${i}, hover`).toBe(true);
    }
    // A reply with a recalled note, hovered: its controls under the note.
    await messages()
      .nth(count - 3)
      .locator('.bubble')
      .hover();
    await shot(page, 'hover-desktop');
    await page.mouse.move(0, 0);
    // By keyboard: focus on the newest reply's first control.
    await box().focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('ArrowRight');
    const focusedOn = await overlap(messages().last());
    expect(focusedOn.shown).toBeGreaterThan(0);
    expect(focusedOn.apart).toBe(true);
  });

  it('the chat list is one Tab stop: ↓ to another chat, Enter opens it, → reaches Rename', async () => {
    await fresh();
    const { id } = await callWorker<{ id: number }>(page, 'createConversation', 'Packing list');
    const list = page.locator('sm-conversations');
    await list.getByRole('button', { name: /^Packing list/ }).waitFor(POLL);
    await list.getByRole('button', { name: 'New chat' }).focus();
    await page.keyboard.press('Tab');
    // The open chat is the stop, whatever the order; the next Tab leaves the list.
    expect((await where(page)).text).toMatch(/^How do I take my coffee/);
    await page.keyboard.press('Tab');
    expect((await where(page)).within).toContain('sm-chat');
    await page.keyboard.press('Shift+Tab');
    expect((await where(page)).text).toMatch(/^How do I take my coffee/);
    await page.keyboard.press('Home');
    expect((await where(page)).text).toMatch(/^Packing list/);
    await page.keyboard.press('Enter');
    await expect.poll(() => messages().count(), POLL).toBe(0);
    await page.keyboard.press('ArrowRight');
    expect((await where(page)).label).toBe('Rename chat: Packing list');
    await page.keyboard.press('Enter');
    expect(await where(page)).toMatchObject({ tag: 'input', label: 'Chat title' });
    // The title is selected: End, then the words go after it.
    await page.keyboard.press('End');
    await page.keyboard.type(' for Lisbon');
    await page.keyboard.press('Enter');
    await list.getByRole('button', { name: /^Packing list for Lisbon/ }).waitFor(POLL);
    expect((await where(page)).label).toBe('Rename chat: Packing list for Lisbon');
    await page.keyboard.press('Escape');
    await page.keyboard.press('ArrowDown');
    expect((await where(page)).text).toMatch(/^How do I take my coffee/);
    await page.keyboard.press('Enter');
    await expect.poll(() => messages().count(), POLL).toBe(11);
    // The 5-turn chat opens first again after a reload.
    await callWorker(page, 'deleteConversation', id);
  });

  it('axe finds nothing at desktop and phone size; screenshots', async () => {
    await fresh();
    await box().focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('ArrowRight');
    expect.soft(await axeScan(page, server)).toEqual([]);
    await shot(page, 'chat-desktop');

    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      hasTouch: true,
      isMobile: true,
    });
    try {
      const p = await phone.newPage();
      await p.goto(server.url);
      await connectApp(p, fake.url);
      const phoneBox = p.locator('sm-chat').getByRole('textbox', { name: 'Message', exact: true });
      await phoneBox.fill('How do I take my coffee with oat milk?');
      await phoneBox.press('Enter');
      await expect
        .poll(() => p.locator('sm-chat').getByRole('button', { name: 'Stop' }).isDisabled(), POLL)
        .toBe(true);
      expect.soft(await axeScan(p, server)).toEqual([]);
      await p.screenshot({ path: join(SHOTS, 'keyboard-chat-phone.png') });
      // Skip to memory opens the Memory tab and lands there.
      await p.reload();
      await p.locator('sm-chat .status.connected').waitFor(POLL);
      await p.keyboard.press('Tab');
      await p.keyboard.press('Tab');
      expect((await where(p)).text).toBe('Skip to memory');
      await p.keyboard.press('Enter');
      expect(await where(p)).toMatchObject({ tag: 'section', label: 'Memory' });
      expect.soft(await axeScan(p, server)).toEqual([]);
      await p.screenshot({ path: join(SHOTS, 'keyboard-memory-phone.png') });
    } finally {
      await phone.close();
    }
  });
});
