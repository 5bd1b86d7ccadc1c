// A long streamed reply in Chromium, as a person sees it: the chat harness with the real chat
// session and connector against a llama.cpp-like server that ignores max_tokens. The whole
// reply arrives on screen intact (markdown rendered, markup in it left as text), the turn ends,
// the composer works again; Stop ends the turn whatever the stream is doing; and a message that
// cannot be stored is not sent, its words kept in the composer.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { runawayText, startRunawayServer, type RunawayServer } from './harness/chat.server';
import { serveStatic, type StaticServer } from './static-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HARNESS = 'test/e2e/harness/chat.html';
const LONG = runawayText(256 * 1024, 7);
/** Conditions waited on get this long (a loaded machine is slow, and a pass returns at once). */
const POLL = { timeout: 30_000, interval: 50 };
const ENDLESS = 'Once upon a time there was a window that opened onto another window, and';

type Harness = {
  turns: { status: string; text: string }[];
  lastShown(): string;
  shownText(): string;
};

describe('a long streamed reply in the chat, in Chromium', () => {
  let outDir = '';
  let server: StaticServer | undefined;
  let model: RunawayServer | undefined;
  let browser: Browser | undefined;
  let page: Page;

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-stream-'));
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true, rollupOptions: { input: join(ROOT, HARNESS) } },
    });
    server = await serveStatic(outDir);
    // What the model does depends on the user's last words (a question left unanswered by a
    // stopped turn goes out in one message with the next, a blank line apart).
    model = await startRunawayServer((body) => {
      const messages = (body.messages ?? []) as { role: string; content: string | null }[];
      const last = messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
      const said = last.split('\n\n').at(-1) ?? '';
      if (/endless/.test(said)) return { kind: 'endless', text: ENDLESS, everyMs: 5 };
      if (/silent/.test(said)) return { kind: 'stall-headers' };
      if (/tool/.test(said)) return { kind: 'endless-tool', everyMs: 5 };
      return { kind: 'text', text: LONG.markdown };
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await page.goto(
      `${server.url}${HARNESS}?scenario=live&endpoint=${encodeURIComponent(model.url)}`,
    );
    await page.waitForFunction(() => 'harness' in window);
  });

  afterAll(async () => {
    await browser?.close();
    await model?.close();
    await server?.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  const box = () => page.locator('sm-chat textarea');
  const sendButton = () => page.getByRole('button', { name: 'Send' });
  const stopButton = () => page.getByRole('button', { name: 'Stop' });

  async function say(text: string): Promise<void> {
    await box().fill(text);
    await box().press('Enter');
  }

  /** Waits for the n-th turn to end and returns how it ended. */
  async function turnEnded(n: number): Promise<{ status: string; text: string }> {
    await page.waitForFunction(
      (count) => (window as unknown as { harness: Harness }).harness.turns.length >= count,
      n,
      { timeout: 120_000, polling: 100 },
    );
    return page.evaluate(
      (i) => (window as unknown as { harness: Harness }).harness.turns[i - 1],
      n,
    );
  }

  /** The last assistant bubble: its state and the text a reader sees, whitespace collapsed. */
  function lastReply(): Promise<{ state: string; text: string }> {
    return page.evaluate(() => {
      const bubbles = document
        .querySelector('sm-chat')!
        .shadowRoot!.querySelectorAll('sm-message[kind="assistant"]');
      const last = bubbles[bubbles.length - 1];
      const md = last?.shadowRoot?.querySelector<HTMLElement>('.md');
      return {
        state: last?.getAttribute('state') ?? '',
        text: (md?.innerText ?? '').replace(/\s+/g, ' ').trim(),
      };
    });
  }

  /** The composer takes words again: the box is editable, Send works once there are words. */
  async function expectComposerUsable(): Promise<void> {
    await expect.poll(() => stopButton().isDisabled(), POLL).toBe(true);
    expect(await box().isEditable()).toBe(true);
    await box().fill('and then?');
    expect(await sendButton().isEnabled()).toBe(true);
    await box().fill('');
  }

  it('shows a 256 KB reply that ignores max_tokens whole and intact, and the turn ends', async () => {
    await say('Tell me everything.');
    expect(await turnEnded(1)).toMatchObject({ status: 'answered' });
    // The server was asked for 512 tokens and sent 256 KB anyway.
    expect(model!.generations[0].maxTokens).toBe(512);
    await page.waitForFunction(
      (end) => (window as unknown as { harness: Harness }).harness.lastShown().endsWith(end),
      LONG.last,
      { timeout: 120_000, polling: 100 },
    );
    const shown = await page.evaluate(() =>
      (window as unknown as { harness: Harness }).harness.shownText(),
    );
    // Where the text shown first differs from the reply, with a little around it (none: -1).
    const at = [...LONG.visible].findIndex((c, i) => shown[i] !== c);
    const differs = at === -1 && shown.length !== LONG.visible.length ? LONG.visible.length : at;
    expect(differs === -1 ? '' : shown.slice(Math.max(0, differs - 40), differs + 40)).toBe(
      differs === -1 ? '' : LONG.visible.slice(Math.max(0, differs - 40), differs + 40),
    );
    // Markdown rendered; the markup the model wrote stayed text.
    const tags = await page.evaluate(() => {
      const md = document
        .querySelector('sm-chat')!
        .shadowRoot!.querySelector('sm-message[kind="assistant"]')!
        .shadowRoot!.querySelector('.md')!;
      return {
        strong: md.querySelectorAll('strong').length,
        code: md.querySelectorAll('pre code').length,
        b: md.querySelectorAll('b').length,
      };
    });
    expect(tags.strong).toBeGreaterThan(100);
    expect(tags.code).toBeGreaterThan(10);
    expect(tags.b).toBe(0);
    expect((await lastReply()).state).toBe('done');
    await expectComposerUsable();
  });

  it('Stop mid-stream, on a stream that never ends, ends the turn and keeps what arrived', async () => {
    await say('Now an endless story.');
    await page.waitForFunction(
      () => {
        const bubbles = document
          .querySelector('sm-chat')!
          .shadowRoot!.querySelectorAll('sm-message[kind="assistant"]');
        const text = bubbles[bubbles.length - 1]?.shadowRoot?.querySelector('.md')?.textContent;
        return (text ?? '').includes('window that opened');
      },
      null,
      { timeout: 60_000, polling: 50 },
    );
    await stopButton().click();
    const turn = await turnEnded(2);
    expect(turn.status).toBe('aborted');
    expect(turn.text.startsWith('Once upon a time')).toBe(true);
    // The stored, stopped reply is what arrived.
    await expect.poll(async () => (await lastReply()).state, POLL).toBe('stopped');
    expect((await lastReply()).text).toBe(turn.text.replace(/\s+/g, ' '));
    await expectComposerUsable();
    await expect.poll(() => model!.generations[1].clientClosed, POLL).toBe(true);
  });

  it('Stop while the server has not even sent its headers ends the turn', async () => {
    await say('Stay silent.');
    await expect.poll(() => model!.generations.length, POLL).toBe(3);
    await expect.poll(() => page.getByText('Model is thinking…').count(), POLL).toBe(1);
    await stopButton().click();
    expect(await turnEnded(3)).toMatchObject({ status: 'aborted', text: '' });
    expect(await page.getByText('Model is thinking…').count()).toBe(0);
    await expectComposerUsable();
    await expect.poll(() => model!.generations[2].clientClosed, POLL).toBe(true);
  });

  it('Stop ends the turn even when the session never winds up, keeping what arrived', async () => {
    // The demo scenario's scripted session: "hang" makes it ignore the stop for good.
    const demo = await browser!.newPage({ viewport: { width: 1100, height: 800 } });
    try {
      await demo.goto(`${server!.url}${HARNESS}?scenario=demo`);
      await demo.waitForFunction(() => 'harness' in window);
      await demo.locator('sm-chat textarea').fill('Hang on, and answer slowly.');
      await demo.locator('sm-chat textarea').press('Enter');
      await expect.poll(() => demo.getByText('Here is what I know').count(), POLL).toBe(1);
      await demo.getByRole('button', { name: 'Stop' }).click();
      await expect
        .poll(() => demo.getByRole('button', { name: 'Stop' }).isDisabled(), POLL)
        .toBe(true);
      // The last reply (the chat already holds an older stopped one) is the one stopped here.
      const reply = demo.locator('sm-chat sm-message[kind="assistant"]').last();
      await expect.poll(() => reply.getAttribute('state'), POLL).toBe('stopped');
      expect(await reply.getByText('Here is what I know').count()).toBe(1);
      expect(await reply.getByText('Stopped').count()).toBe(1);
      expect(await demo.locator('sm-chat textarea').isEditable()).toBe(true);
      await demo.locator('sm-chat textarea').fill('still here?');
      expect(await demo.getByRole('button', { name: 'Send' }).isEnabled()).toBe(true);
    } finally {
      await demo.close();
    }
  });

  it('Stop mid tool call, whose arguments never end, ends the turn', async () => {
    const before = model!.written();
    await say('Use a tool forever.');
    await expect.poll(() => model!.generations.length, POLL).toBe(4);
    await expect.poll(() => model!.written() - before, POLL).toBeGreaterThan(100);
    await stopButton().click();
    expect(await turnEnded(4)).toMatchObject({ status: 'aborted' });
    expect(await page.locator('sm-chat sm-tool-card').count()).toBe(0);
    await expectComposerUsable();
    await expect.poll(() => model!.generations[3].clientClosed, POLL).toBe(true);
  });

  it('puts the finished blocks of a streaming reply in outside animation frames, the reply shown whole', async () => {
    // A page of its own: the turns above are numbered.
    const own = await browser!.newPage({ viewport: { width: 1100, height: 800 } });
    try {
      await own.goto(
        `${server!.url}${HARNESS}?scenario=live&endpoint=${encodeURIComponent(model!.url)}`,
      );
      await own.waitForFunction(() => 'harness' in window);
      // Each frame callback runs inside a function of a known name; a box of finished blocks
      // that takes a block says whether that function is on the stack.
      await own.evaluate(() => {
        const probe = { inFrame: 0, outside: 0 };
        (window as unknown as { probe: typeof probe }).probe = probe;
        const raf = window.requestAnimationFrame.bind(window);
        window.requestAnimationFrame = (cb) =>
          raf(function smProbeFrame(t) {
            cb(t);
          });
        const append = Element.prototype.append;
        Element.prototype.append = function (this: Element, ...nodes: (Node | string)[]) {
          if (this.classList.contains('chunk')) {
            if (new Error().stack?.includes('smProbeFrame')) probe.inFrame++;
            else probe.outside++;
          }
          return append.apply(this, nodes);
        };
      });
      await own.locator('sm-chat textarea').fill('Tell me everything, once more.');
      await own.locator('sm-chat textarea').press('Enter');
      await own.waitForFunction(
        (end) => (window as unknown as { harness: Harness }).harness.lastShown().endsWith(end),
        LONG.last,
        { timeout: 120_000, polling: 100 },
      );
      const shown = await own.evaluate(() =>
        (window as unknown as { harness: Harness }).harness.shownText(),
      );
      expect(shown === LONG.visible).toBe(true);
      const probe = await own.evaluate(
        () => (window as unknown as { probe: { inFrame: number; outside: number } }).probe,
      );
      // Blocks went in (the probe saw them), none of them in a frame's own callback, where their
      // layout and paint made frames of about 30 ms CPU (bench/README.md, Streaming).
      expect(probe.outside).toBeGreaterThan(100);
      expect(probe.inFrame).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('a message that cannot be stored is not sent: the person reads why, and the words stay in the box', async () => {
    const asked = model!.generations.length;
    const words = 'Remember my new address, though there is no room left.';
    await say(words);
    await expect
      .poll(
        () => page.getByText('Your message could not be stored, so it was not sent').count(),
        POLL,
      )
      .toBe(1);
    expect(await page.getByText('Browser storage is full', { exact: false }).count()).toBe(1);
    // Not the model's failure: it was never asked.
    expect(await page.getByText('Not sent.', { exact: true }).count()).toBe(1);
    expect(await page.getByText('The model could not answer.').count()).toBe(0);
    expect(await turnEnded(5)).toMatchObject({ status: 'error' });
    expect(await box().inputValue()).toBe(words);
    // Not asked: it would have answered the message before, its history lacking this one.
    expect(model!.generations.length).toBe(asked);
  });
});
