// One straight path per action (issue 14): opening an entry's detail is one call to the memory
// worker, a context chunk's Source link opens its conversation at the message directly, and a
// chat turn reaches the model server after two calls of its own (addMessage, prepareTurn).
// Calls are counted where they leave the page: Comlink's APPLY messages to the worker; the chat
// request to the model server is marked in the same log where the page sends it.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer } from '../fixtures/fake-llm';
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

/** What a chat turn asked of the worker before, and did not need since prepareTurn. */
const TURN_START_CALLS = ['recordTurn', 'recallMemory', 'memoryOutline', 'getSetting'];

describe('round trips (Chromium)', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  let fake: FakeServer | undefined;
  let messageId = 0;

  beforeAll(async () => {
    ({ server, dispose } = await buildAndServe());
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    await page.addInitScript({ content: COUNT_CALLS });
    await page.goto(server.url);
    // A conversation, then an entry saved from it: its context chunks come from that chat.
    const conv = await callWorker<{ id: number }>(page, 'createConversation', 'Trip planning');
    await callWorker(page, 'recordTurn', {
      conversationId: conv.id,
      role: 'user',
      text: 'We fly to Lisbon on the ninth. I always pack the blue umbrella.',
    });
    const turn = await callWorker<{ turnId: number }>(page, 'recordTurn', {
      conversationId: conv.id,
      role: 'assistant',
      text: 'Noted: Lisbon on the ninth, with the blue umbrella.',
    });
    messageId = turn.turnId;
    const saved = await callWorker<{ status: string }>(
      page,
      'saveMemory',
      'Travel/Lisbon',
      'Flight on the ninth; pack the blue umbrella.',
    );
    expect(saved.status).toBe('SUCCESS');
    // A fresh load, so no view is still reloading after the writes above when counting starts.
    await page.reload();
    await page.getByRole('treeitem', { name: 'Travel' }).waitFor({ timeout: 30_000 });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await fake?.close();
    await dispose?.();
  });

  it("opens an entry's detail with one call to the worker", async () => {
    await page.getByRole('treeitem', { name: 'Travel', exact: true }).click();
    const detail = page.locator('sm-entry-detail');
    await detail.getByRole('heading', { name: 'Travel', level: 2 }).waitFor();
    await settled(page);
    const before = await callCount(page);
    await page.getByRole('treeitem', { name: 'Lisbon', exact: true }).click();
    await detail.getByRole('heading', { name: /Context from the conversation/ }).waitFor();
    // Shown, and all the click set off has finished: no call in flight, none since.
    await settled(page);
    expect(await callsSince(page, before)).toEqual(['entryDetail']);
  });

  it("a context chunk's Source link opens its conversation at the message", async () => {
    const before = await callCount(page);
    const detail = page.locator('sm-entry-detail');
    await detail.getByRole('button', { name: 'Source message' }).first().click();
    const message = page.locator(`sm-chat #msg-${messageId}`);
    await message.waitFor({ timeout: 30_000 });
    await expect.poll(() => message.isVisible()).toBe(true);
    // Straight to its conversation: no walk over every conversation's messages.
    const calls = await callsSince(page, before);
    expect(calls).not.toContain('listConversations');
    expect(calls.filter((c) => c === 'getMessages').length).toBeLessThanOrEqual(1);
  });

  it("a save to the entry shown updates its detail with no read of the page's own", async () => {
    const detail = page.locator('sm-entry-detail');
    await page.getByRole('treeitem', { name: 'Lisbon', exact: true }).click();
    await detail.getByRole('heading', { name: /Context from the conversation/ }).waitFor();
    await settled(page);
    const before = await callCount(page);
    const reports = await reportCount(page);
    // As the model would save it, through the worker: the change report carries the detail.
    const saved = await callWorker<{ status: string }>(
      page,
      'saveMemory',
      'Travel/Lisbon',
      'Flight on the ninth from gate B12; pack the blue umbrella.',
    );
    expect(saved.status).toBe('SUCCESS');
    await detail
      .getByText(/gate B12/)
      .first()
      .waitFor({ timeout: 10_000 });
    // The report carried the detail; then whatever it set off has finished.
    await reportArrived(page, reports, { details: 'Travel/Lisbon' });
    await settled(page);
    const calls = await callsSince(page, before);
    // The write itself, and the header's counts (debounced); no entryDetail read.
    expect(calls.filter((c) => c !== 'stats')).toEqual(['saveMemory']);
  });

  it('a chat turn: the message stored, then one call to start the turn, then the model', async () => {
    fake = await startFakeServer('llamacpp', {
      defaultReply: { text: 'Have a good flight!' },
      tokenDelayMs: 2,
    });
    await callWorker(page, 'setSetting', 'app', { endpoint: fake.url });
    await page.reload();
    const chat = page.locator('sm-chat');
    await chat.locator('.status.connected').waitFor({ timeout: 30_000 });
    const before = await callCount(page);
    const box = chat.getByRole('textbox', { name: 'Message', exact: true });
    await box.fill('When do we fly to Lisbon?');
    await box.press('Enter');
    await chat.getByText('Have a good flight!', { exact: true }).waitFor({ timeout: 30_000 });
    const calls = await callsSince(page, before);
    const asked = calls.indexOf('(model request)');
    expect(asked).toBeGreaterThan(-1);
    const beforeModel = calls.slice(0, asked);
    // The session's own calls; the views (the chat's log, the status line) may reload meanwhile,
    // on their own schedule, so only the turn's calls are counted here (exactly:
    // test/integration/turn-calls.test.ts).
    expect(beforeModel.filter((c) => c === 'addMessage')).toHaveLength(1);
    expect(beforeModel.filter((c) => c === 'prepareTurn')).toHaveLength(1);
    expect(beforeModel.filter((c) => TURN_START_CALLS.includes(c))).toEqual([]);
  });
});
