// The memory keeper as a person meets it (docs/chat.md, "Memory keeper"), in Debian Chromium
// against the production build and a fake KoboldCPP whose model never calls a tool: once the chat
// is idle an entry appears in the tree with a card and Undo under the reply (the card survives a
// reload, Undo takes the entry out); with the setting off nothing is sent or written; a new
// message while the keeper's request runs aborts it (KoboldCPP's genkey abort) and is answered;
// a bad answer writes nothing and leaves one line in the status; a page closed before the keeper
// ran leaves its exchanges to the next visit, which keeps them. The page's clock is Playwright's,
// moved on by hand past the idle time: no test waits for real seconds. axe on the chat with a
// card; screenshots at desktop and phone size go to /tmp/keeper-shots.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEEPER_HANDOVER_KEY } from '../../src/app/keeper-handover';
import { KEEPER_IDLE_MS, KEEPER_QUIET_MS } from '../../src/chat/keeper';
import {
  startFakeServer,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
} from '../fixtures/fake-llm';
import { isKeeperRequest, keeperAnswer } from '../fixtures/fake-llm/demo';
import { launchChromium } from './chromium';
import { connectApp, axeScan, buildAndServe, callWorker } from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = process.env.SHOTS_DIR ?? '/tmp/keeper-shots';
const POLL = { timeout: 30_000, interval: 50 };
const ANA = 'My sister Ana is moving to Lisbon in May.';
const BAD_LINE =
  'The memory keeper asked to update Family/Bob, which is not one of the entries it was shown, so nothing was saved.';

/** How the fake answers the keeper: the demo's answer, not at all until aborted, or a bad one. */
let keeperMode: 'demo' | 'hang' | 'bad' = 'demo';

interface Sent {
  role: string;
  content: string | null;
}

/** The fake model: never calls a tool; the keeper's request gets what `keeperMode` says. */
function reply(req: RecordedRequest): FakeReply {
  if (isKeeperRequest(req.body)) {
    if (keeperMode === 'hang') return { hang: true, text: '{"operations": [' };
    if (keeperMode === 'bad') {
      return {
        text: JSON.stringify({
          operations: [{ op: 'update', path: 'Family/Bob', content: 'Bob is back from Oslo.' }],
        }),
      };
    }
    return { text: keeperAnswer(req.body) };
  }
  const said =
    ((req.body as { messages?: Sent[] }).messages ?? []).findLast((m) => m.role === 'user')
      ?.content ?? '';
  if (/Lisbon/.test(said)) return { text: 'How exciting! Lisbon is lovely in May.' };
  return { text: `You said: ${said}` };
}

describe('the memory keeper in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  let fake: FakeServer;

  const chat = (p: Page = page) => p.locator('sm-chat');
  const box = () => chat().getByRole('textbox', { name: 'Message', exact: true });
  const cards = (p: Page = page) => chat(p).locator('sm-keeper-card');
  const tree = (p: Page = page) => p.getByRole('tree', { name: 'Memory' });
  const keeperRequests = () =>
    fake.requests.filter((r) => r.method === 'POST' && isKeeperRequest(r.body));
  const chatRequests = () =>
    fake.generations().filter((r) => !isKeeperRequest(r.body)) as RecordedRequest[];
  const idle = () =>
    expect.poll(() => chat().getByRole('button', { name: 'Stop' }).isDisabled(), POLL).toBe(true);
  const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SHOTS, `${name}.png`) });

  /** Sends a message and waits for its reply to be stored and shown. */
  async function say(text: string, answer: string | RegExp): Promise<void> {
    await box().fill(text);
    await box().press('Enter');
    await chat()
      .locator('sm-message[kind="assistant"]')
      .filter({ hasText: answer })
      .last()
      .waitFor({ timeout: 30_000 });
    await idle();
  }

  /** Sets the keeper's setting in the Settings dialog, as a person does. */
  async function setKeeper(on: boolean): Promise<void> {
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    const box = dialog.getByRole('checkbox', { name: 'Memory keeper' });
    await box.setChecked(on);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
  }

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ server, dispose } = await buildAndServe());
    fake = await startFakeServer('koboldcpp', {
      defaultReply: reply,
      firstEventDelayMs: 20,
      toolDelayMs: 20,
      tokenDelayMs: 2,
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    // The page's timers run on Playwright's clock: the idle time passes when the test says.
    await page.clock.install();
    await page.goto(server.url);
    await connectApp(page, fake.url);
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await fake?.close();
    await dispose?.();
  });

  it('on (the default): once the chat is idle an entry appears, with a card and Undo under the reply; it survives a reload; Undo takes it out', async () => {
    await say(ANA, 'How exciting!');
    expect(keeperRequests()).toHaveLength(0);
    await page.clock.fastForward(KEEPER_IDLE_MS);
    const card = cards().first();
    await card.getByRole('button', { name: 'Undo' }).waitFor({ timeout: 30_000 });
    expect(keeperRequests()).toHaveLength(1);
    // The request went to KoboldCPP's native endpoint with the schema as its grammar.
    expect(keeperRequests()[0].path).toBe('/api/v1/generate');
    await tree().getByRole('treeitem', { name: 'Family' }).waitFor({ timeout: 30_000 });
    expect((await card.locator('li').innerText()).replace(/\s+/g, ' ')).toMatch(
      /^Saved Family\/Ana Ana is moving to Lisbon in May\.$/,
    );
    // Under the reply it kept.
    const placed = await chat().evaluate((el) => {
      const items = [...el.shadowRoot!.querySelectorAll('sm-message, sm-keeper-card')];
      const at = items.findIndex((x) => x.localName === 'sm-keeper-card');
      return items[at - 1]?.shadowRoot?.textContent ?? '';
    });
    expect(placed).toContain('How exciting!');
    // No empty reply, and no controls of its own: it is no message.
    expect(await chat().locator('sm-message[kind="assistant"]').count()).toBe(1);
    await shot('keeper-card-desktop');

    // The path is a link into the memory tree.
    await card.getByRole('button', { name: 'Family/Ana' }).click();
    await expect
      .poll(() =>
        page.locator('sm-entry-detail').evaluate((el) => (el as unknown as { path?: string }).path),
      )
      .toBe('Family/Ana');

    expect(await axeScan(page, server)).toEqual([]);

    // A phone, in another tab: the card is there too.
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(server.url);
    await cards(phone).getByRole('button', { name: 'Undo' }).waitFor({ timeout: 30_000 });
    await shot('keeper-card-phone', phone);
    expect(await axeScan(phone, server)).toEqual([]);
    await phone.close();

    await page.reload();
    await cards().getByRole('button', { name: 'Undo' }).waitFor({ timeout: 30_000 });
    await cards().getByRole('button', { name: 'Undo' }).click();
    await cards().getByText('Undone', { exact: true }).waitFor({ timeout: 30_000 });
    await expect.poll(() => tree().getByRole('treeitem', { name: 'Family' }).count(), POLL).toBe(0);
    expect(await cards().getByRole('button', { name: 'Undo' }).count()).toBe(0);
    // Each line says what became of what the keeper did.
    for (const line of await cards().locator('.ops li .op').allInnerTexts())
      expect(line).toMatch(/^(Saved|Updated), then undone$/);
    await shot('keeper-card-undone-desktop');
    // The card's message never reaches the model: the next request has the exchange only.
    await say('Thanks!', 'You said: Thanks!');
    const sent = ((chatRequests().at(-1)!.body as { messages?: Sent[] }).messages ?? []).filter(
      (m) => m.role !== 'system',
    );
    expect(sent.map((m) => m.content)).toEqual([
      ANA,
      'How exciting! Lisbon is lovely in May.',
      'Thanks!',
    ]);
  });

  it('Undo that cannot take everything says why and offers the rest again once it can', async () => {
    await say('My brother Tom is moving to Rome in June.', /You said: My brother Tom/);
    // After a run, the next waits for three exchanges or a quiet minute.
    await page.clock.fastForward(KEEPER_QUIET_MS);
    const card = cards().last();
    await card.getByRole('button', { name: 'Undo' }).waitFor({ timeout: 30_000 });
    await tree().getByRole('treeitem', { name: 'Family' }).waitFor({ timeout: 30_000 });
    // The person saves something below what the keeper saved, then presses Undo.
    await callWorker(page, 'saveMemory', 'Family/Tom/Job', 'Tom works at a bakery in Rome.', 0);
    await card.getByRole('button', { name: 'Undo' }).click();
    await card.getByText('Not undone', { exact: true }).waitFor({ timeout: 30_000 });
    expect(await card.getByRole('note').innerText()).toBe(
      'Family/Tom has entries below it now, so it was left as it is.',
    );
    await shot('keeper-card-partly-undone');
    // Once the entry below is gone, the rest can be undone.
    await callWorker(page, 'deleteMemory', 'Family/Tom/Job');
    await card.getByRole('button', { name: 'Undo the rest' }).click();
    await card.getByText('Undone', { exact: true }).waitFor({ timeout: 30_000 });
    expect(await card.getByRole('button').filter({ hasText: /^Undo/ }).count()).toBe(0);
    await expect.poll(() => tree().getByRole('treeitem', { name: 'Family' }).count(), POLL).toBe(0);
  });

  it('off in Settings: after the same exchange and the idle time nothing is sent or written', async () => {
    await setKeeper(false);
    await page.getByRole('button', { name: 'New chat' }).click();
    const asked = keeperRequests().length;
    await say(ANA, 'How exciting!');
    await page.clock.fastForward(KEEPER_QUIET_MS + KEEPER_IDLE_MS);
    // Another turn after the idle time: a keeper request, had one started, came before it.
    await say('Still there?', 'You said: Still there?');
    expect(keeperRequests()).toHaveLength(asked);
    expect(await cards().count()).toBe(0);
    expect(await tree().getByRole('treeitem', { name: 'Family' }).count()).toBe(0);
    expect(await callWorker<unknown[]>(page, 'memoryIndex')).toEqual([]);
  });

  it('a new message while the keeper’s request runs aborts it (KoboldCPP’s genkey) and is answered', async () => {
    await setKeeper(true);
    keeperMode = 'hang';
    const asked = keeperRequests().length;
    await say('My brother Rui lives in Porto.', 'You said: My brother Rui');
    await page.clock.fastForward(KEEPER_IDLE_MS);
    await chat().getByText('keeping memory…').waitFor({ timeout: 30_000 });
    await shot('keeper-running-desktop');
    await expect.poll(() => keeperRequests().length, POLL).toBe(asked + 1);
    const genkey = (keeperRequests().at(-1)!.body as { genkey?: string }).genkey;
    expect(genkey).toMatch(/^sm-/);
    await say('What is the weather like?', 'You said: What is the weather like?');
    await expect
      .poll(
        () =>
          fake.requests.filter(
            (r) =>
              r.method === 'POST' &&
              r.path === '/api/extra/abort' &&
              (r.body as { genkey?: string }).genkey === genkey,
          ).length,
        POLL,
      )
      .toBe(1);
    expect(await chat().getByText('keeping memory…').count()).toBe(0);
    expect(await cards().count()).toBe(0);
    expect(await callWorker<unknown[]>(page, 'memoryIndex')).toEqual([]);
  });

  it('a bad answer writes nothing and leaves one line in the status', async () => {
    keeperMode = 'bad';
    const before = await callWorker<string>(page, 'exportJson');
    const asked = keeperRequests().length;
    // The exchanges the aborted run had wait for this one, which comes as after any run: after
    // three more exchanges or a quiet minute.
    await page.clock.fastForward(KEEPER_QUIET_MS);
    const line = page.getByRole('status').filter({ hasText: BAD_LINE });
    await line.waitFor({ timeout: 30_000 });
    expect(keeperRequests()).toHaveLength(asked + 1);
    expect(await line.count()).toBe(1);
    expect(await cards().count()).toBe(0);
    const after = await callWorker<string>(page, 'exportJson');
    const entries = (json: string) => (JSON.parse(json) as { entries: unknown[] }).entries;
    expect(entries(after)).toEqual(entries(before));
    await shot('keeper-bad-answer-desktop');
  });

  it('a page closed before the keeper ran: the next visit keeps what was said', async () => {
    keeperMode = 'demo';
    await page.getByRole('button', { name: 'New chat' }).click();
    const asked = keeperRequests().length;
    await say(ANA, 'How exciting!');
    expect(keeperRequests()).toHaveLength(asked);
    // The person leaves before they were idle for the keeper's time, and comes back later.
    await page.goto('about:blank');
    await page.goto(server.url);
    await chat().locator('.status.connected').waitFor({ timeout: 30_000 });
    // The new page has taken what the old one left (the idle time counts from then).
    await page.waitForFunction((key) => localStorage.getItem(key) === null, KEEPER_HANDOVER_KEY);
    await page.clock.fastForward(KEEPER_IDLE_MS);
    await tree().getByRole('treeitem', { name: 'Family' }).waitFor({ timeout: 30_000 });
    expect(keeperRequests()).toHaveLength(asked + 1);
    await cards().getByRole('button', { name: 'Undo' }).waitFor({ timeout: 30_000 });
  });
});
