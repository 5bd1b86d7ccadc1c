// Memory that works without the model's help (issue 22), in Debian Chromium against the
// production build and a fake KoboldCPP whose model never calls a tool: a fact told in one chat
// is in the next chat's request and in its reply's "Recalled:" note, which opens that chat at
// that message; an unrelated line of the first chat is in neither. Screenshot under /tmp.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer, type RecordedRequest } from '../fixtures/fake-llm';
import { launchChromium } from './chromium';
import { connectApp, buildAndServe } from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = '/tmp/recall-shots';
const POLL = { timeout: 30_000, interval: 50 };
const FACT = 'My sister Ana is moving to Lisbon in May.';
const OTHER = 'I also need to buy a new bicycle helmet before the summer.';
const QUESTION = 'Where is my sister Ana moving to?';

/** What a KoboldCPP generation request carried: its native prompt or its messages. */
function sent(req: RecordedRequest): string {
  const body = req.body as { prompt?: string; messages?: unknown };
  return body.prompt ?? JSON.stringify(body.messages ?? '');
}

describe('recall of past chats in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  let fake: FakeServer;
  /** What the model answers next, when not its usual "I see." */
  let scripted: string | undefined;

  const chat = () => page.locator('sm-chat');
  const box = () => chat().getByRole('textbox', { name: 'Message', exact: true });
  const idle = () =>
    expect.poll(() => chat().getByRole('button', { name: 'Stop' }).isDisabled(), POLL).toBe(true);

  async function say(text: string): Promise<void> {
    await box().fill(text);
    await box().press('Enter');
    await chat().locator('sm-message[kind="user"]', { hasText: text }).waitFor(POLL);
    await idle();
  }

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ server, dispose } = await buildAndServe());
    // A model that answers but never calls a tool.
    fake = await startFakeServer('koboldcpp', {
      defaultReply: () => ({ text: scripted ?? 'I see.' }),
      firstEventDelayMs: 5,
      tokenDelayMs: 1,
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await page.goto(server.url);
    // Only auto-recall is under test: the keeper is off.
    await connectApp(page, fake.url, { maxOutputTokens: 24, memoryKeeper: false });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await fake?.close();
    await dispose?.();
  });

  it('a fact told in one chat is in the next chat’s request and its Recalled note; an unrelated line is not', async () => {
    await say(FACT);
    await say(OTHER);
    const first = fake.generations().length;
    await page.getByRole('button', { name: 'New chat' }).click();
    await expect.poll(() => chat().locator('sm-message').count(), POLL).toBe(0);
    await say(QUESTION);

    const asked = fake.generations().slice(first).map(sent).join('\n');
    expect(asked).toContain(QUESTION);
    expect(asked).toContain(FACT);
    expect(asked).not.toContain('bicycle helmet');

    const reply = chat().locator('sm-message[kind="assistant"]').last();
    const note = reply.locator('.recalled');
    await note.waitFor(POLL);
    // The note says what was recalled, in which chat (named from its first message) and when.
    const link = note.getByRole('link', {
      name: /^“My sister Ana is moving to Lisbon in May\.” \(first in its chat, /,
    });
    expect(await link.count()).toBe(1);
    expect(await link.innerText()).toMatch(/, \d{1,2} \w+ \d{4}\)$/);
    expect(await note.innerText()).not.toContain('helmet');
    await page.screenshot({ path: join(SHOTS, 'recalled-note.png') });

    // The link opens that chat at that message.
    await link.click();
    const told = chat().locator('sm-message[kind="user"]', { hasText: FACT });
    await told.waitFor(POLL);
    await expect.poll(() => told.evaluate((el) => el.hasAttribute('highlighted')), POLL).toBe(true);
    expect(await chat().locator('sm-message[kind="user"]', { hasText: QUESTION }).count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'opened-at-message.png') });
  });

  it('a chat renamed since is named in the note as it is now', async () => {
    const chats = page.locator('sm-conversations');
    await chats.locator('button.open', { hasText: QUESTION }).click();
    await chat().locator('sm-message[kind="user"]', { hasText: QUESTION }).waitFor(POLL);
    await chats.getByRole('button', { name: `Rename chat: ${FACT}` }).click();
    const title = chats.getByRole('textbox', { name: 'Chat title' });
    await title.fill('Ana’s move');
    await title.press('Enter');
    const note = chat().locator('sm-message[kind="assistant"]').last().locator('.recalled');
    await expect
      .poll(() => note.getByRole('link', { name: /\(the chat “Ana’s move”/ }).count(), POLL)
      .toBe(1);
    expect(await note.innerText()).not.toContain('the chat “My sister Ana');
    await page.screenshot({ path: join(SHOTS, 'renamed-chat-note.png') });
  });

  it('a chat deleted since is named so in the note, without its title, and is no link', async () => {
    const chats = page.locator('sm-conversations');
    await chats.locator('button.open', { hasText: QUESTION }).click();
    await chat().locator('sm-message[kind="user"]', { hasText: QUESTION }).waitFor(POLL);
    await chats.getByRole('button', { name: 'Delete chat: Ana’s move' }).click();
    await chats.getByRole('button', { name: 'Confirm delete' }).click();
    await expect
      .poll(() => chats.locator('button.open', { hasText: 'Ana’s move' }).count(), POLL)
      .toBe(0);

    const note = chat().locator('sm-message[kind="assistant"]').last().locator('.recalled');
    await expect
      .poll(() => note.innerText(), POLL)
      .toMatch(/^Recalled: a deleted chat \(\d{1,2} \w+ \d{4}\)$/);
    expect(await note.getByRole('link').count()).toBe(0);
    // The chat that was open stays open.
    expect(await chat().locator('sm-message[kind="user"]', { hasText: QUESTION }).count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'deleted-chat-note.png') });
  });

  it('a question the model asked in a past chat comes back with the answer the person gave', async () => {
    await page.getByRole('button', { name: 'New chat' }).click();
    await expect.poll(() => chat().locator('sm-message').count(), POLL).toBe(0);
    scripted = 'Congratulations! What did you call the kitten?';
    await say('I adopted a kitten last week.');
    scripted = undefined;
    // The answer names nothing the later question asks.
    await say('Mochi, after the dessert.');
    const first = fake.generations().length;
    await page.getByRole('button', { name: 'New chat' }).click();
    await expect.poll(() => chat().locator('sm-message').count(), POLL).toBe(0);
    await say('What did I call my kitten?');

    const asked = fake.generations().slice(first).map(sent).join('\n');
    expect(asked).toContain('What did you call the kitten?');
    expect(asked).toContain('Mochi, after the dessert.');
    const note = chat().locator('sm-message[kind="assistant"]').last().locator('.recalled');
    await note.waitFor(POLL);
    expect(await note.innerText()).toContain('Mochi, after the dessert.');
    await page.screenshot({ path: join(SHOTS, 'recalled-question-and-answer.png') });
  });
});
