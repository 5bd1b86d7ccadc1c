// The chat controls people expect (docs/chat.md), in Debian Chromium against the production
// build and a fake llama.cpp: the recalled note and its links, a chat named from its first
// message, regenerate with alternatives (buttons, keys, a reload), continue a reply cut by the
// length limit (not one stopped at the round limit), edit and resend, delete with a confirmation that starts on Cancel, an unreadable
// tool call shown as a failed card; axe finds nothing at desktop and phone size; screenshots.
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
import { connectApp, axeScan, ROOT, buildAndServe, focused, seed } from './explorer-fixture';
import type { StaticServer } from './static-server';

const SHOTS = join(ROOT, 'test-results', 'screenshots');
const POLL = { timeout: 30_000, interval: 50 };
const STORY =
  'Once upon a time three bears lived in a small house deep in the forest, near a river that sang at night, and every morning they walked to the water.';

interface Sent {
  role: string;
  content: string | null;
}

let coffee = 0;
let tea = 0;

/** The fake model: answers by the user's last words; goes on with a reply sent as the assistant. */
function reply(req: RecordedRequest): FakeReply {
  const messages = ((req.body as { messages?: Sent[] }).messages ?? []).filter(
    (m) => m.role !== 'system',
  );
  const last = messages.at(-1);
  const said = messages.findLast((m) => m.role === 'user')?.content ?? '';
  if (/keep looking/i.test(said)) {
    const words = /say so/i.test(said) ? { text: 'Let me look once more.' } : {};
    return { ...words, toolCalls: [{ name: 'listMemory', arguments: {} }] };
  }
  if (last?.role === 'assistant') return { text: ' THE END.' };
  if (last?.role === 'tool') return { text: 'Sorry, my tool call was broken.' };
  if (/save badly/i.test(said))
    return { text: '<tool_call>{"name": "saveMemory", "arguments": {"path": </tool_call>' };
  if (/think it over/i.test(said)) {
    // A reasoning model on llama.cpp: its thinking comes apart (`reasoning_content`), at length.
    const musing = 'Let me go over what she said. '.repeat(80);
    return {
      reasoning: `Ana might live in Lisbon, or was it Porto? ${musing}`,
      text: 'She lives in **Porto**.',
    };
  }
  if (/story/i.test(said)) return { text: STORY };
  if (/coffee/i.test(said)) return { text: `Coffee answer ${++coffee}: a flat white.` };
  // The first answer has words; a regeneration has none.
  if (/tea/i.test(said)) return { text: ++tea === 1 ? 'Tea answer: green.' : '' };
  return { text: `You said: ${said}` };
}

describe('chat controls in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let server: StaticServer;
  let dispose: () => Promise<void>;
  let fake: FakeServer;

  const chat = () => page.locator('sm-chat');
  const box = () => chat().getByRole('textbox', { name: 'Message', exact: true });
  const replies = () => chat().locator('sm-message[kind="assistant"]');
  const users = () => chat().locator('sm-message[kind="user"]');
  const lastReply = () => replies().last();
  const shot = (name: string) =>
    page.screenshot({ path: join(SHOTS, `chat-controls-${name}.png`) });
  const idle = () =>
    expect.poll(() => chat().getByRole('button', { name: 'Stop' }).isDisabled(), POLL).toBe(true);
  const textOf = (m: Locator) =>
    m.evaluate((el) => {
      const root = el.shadowRoot!;
      const t = root.querySelector<HTMLElement>('.md, .text');
      return (t?.innerText ?? '').replace(/\s+/g, ' ').trim();
    });

  async function say(text: string): Promise<void> {
    await box().fill(text);
    await box().press('Enter');
    await idle();
  }

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    ({ server, dispose } = await buildAndServe());
    fake = await startFakeServer('llamacpp', { defaultReply: reply, tokenDelayMs: 2 });
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

  it('a reply notes the memories auto-recall gave it, each a link into the explorer; the chat is named from the first message', async () => {
    await say('How do I take my coffee with oat milk?');
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Coffee answer 1: a flat white.');
    const note = lastReply().locator('.recalled');
    await expect.poll(() => note.innerText(), POLL).toMatch(/^Recalled:/);
    await note.getByRole('link', { name: 'User/Preferences/Coffee' }).click();
    await expect
      .poll(() =>
        page.locator('sm-entry-detail').evaluate((el) => (el as unknown as { path?: string }).path),
      )
      .toBe('User/Preferences/Coffee');
    const list = page.locator('sm-conversations');
    await expect
      .poll(() => list.locator('li.active .title').innerText(), POLL)
      .toBe('How do I take my coffee with oat milk?');
    await shot('recalled-desktop');
  });

  it("regenerate keeps the alternatives: ← and → (buttons, Enter on them, the composer's keys) switch, the choice survives a reload and is what the model sees next", async () => {
    await lastReply().getByRole('button', { name: 'Regenerate reply' }).click();
    await idle();
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Coffee answer 2: a flat white.');
    const alts = () => lastReply().locator('.alts');
    await expect.poll(() => alts().innerText(), POLL).toMatch(/2\/2/);
    await lastReply().getByRole('button', { name: 'Previous alternative' }).click();
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Coffee answer 1: a flat white.');
    await expect.poll(() => alts().innerText(), POLL).toMatch(/1\/2/);
    // Focus stays on the controls of the reply shown (on Next: there is none before the first);
    // the keys switch from there.
    await expect.poll(() => focused(page)).toMatchObject({ label: 'Next alternative' });
    await page.keyboard.press('Enter');
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Coffee answer 2: a flat white.');
    // ← in the empty composer.
    await box().focus();
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Coffee answer 1: a flat white.');
    await shot('alternatives-desktop');
    await page.reload();
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Coffee answer 1: a flat white.');
    await expect.poll(() => alts().innerText(), POLL).toMatch(/1\/2/);
    await say('And with sugar?');
    const sent = ((fake.generations().at(-1)!.body as { messages: Sent[] }).messages ?? [])
      .filter((m) => m.role !== 'system')
      .map((m) => m.content);
    expect(sent).toEqual([
      'How do I take my coffee with oat milk?',
      'Coffee answer 1: a flat white.',
      'And with sugar?',
    ]);
  });

  it('a reply cut by the length limit says so and continues where it stopped', async () => {
    await say('Tell me a story.');
    await expect
      .poll(() => lastReply().locator('.mark').innerText(), POLL)
      .toBe('Cut off at the length limit');
    const before = await textOf(lastReply());
    expect(STORY.startsWith(before)).toBe(true);
    expect(before.length).toBeLessThan(STORY.length);
    await shot('cut-desktop');
    await lastReply().getByRole('button', { name: 'Continue' }).click();
    await idle();
    await expect.poll(() => textOf(lastReply()), POLL).toBe(`${before} THE END.`);
    expect(await lastReply().locator('.mark').count()).toBe(0);
    // The fake saw the reply so far as the assistant's start.
    const messages = (fake.generations().at(-1)!.body as { messages: Sent[] }).messages;
    expect(messages.at(-1)).toEqual({ role: 'assistant', content: before });
  });

  it('an unreadable tool call shows as a failed card, and the model is told', async () => {
    await say('Save badly, please.');
    await expect
      .poll(
        () =>
          chat()
            .locator('sm-tool-card')
            .last()
            .evaluate((el) => el.shadowRoot!.textContent!.replace(/\s+/g, ' ')),
        POLL,
      )
      .toMatch(/saveMemory[\s\S]*Refused: Your tool call could not be read/);
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Sorry, my tool call was broken.');
    await shot('failed-call-desktop');
  });

  it('delete asks first, starts on Cancel, Escape keeps the message; Delete removes it', async () => {
    const count = await replies().count();
    const target = lastReply();
    await target.hover();
    await target.getByRole('button', { name: 'Delete reply' }).click();
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'button', text: 'Cancel' });
    expect.soft(await axeScan(page, server)).toEqual([]);
    await shot('delete-confirm-desktop');
    await page.keyboard.press('Escape');
    await expect.poll(() => focused(page)).toMatchObject({ label: 'Delete reply' });
    expect(await replies().count()).toBe(count);
    await target.getByRole('button', { name: 'Delete reply' }).click();
    await target.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => replies().count(), POLL).toBe(count - 1);
    expect(await chat().getByText('Sorry, my tool call was broken.').count()).toBe(0);
  });

  it('edit and resend says what it drops, drops it, and asks again', async () => {
    const first = users().first();
    await first.hover();
    await first.getByRole('button', { name: 'Edit your message' }).click();
    const edit = first.getByRole('textbox', { name: 'Edit your message' });
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'textarea' });
    // The form is in view: the log does not pull it away to follow the bottom.
    await expect
      .poll(() =>
        page.evaluate(() => {
          const chatRoot = document
            .querySelector('sm-app')!
            .shadowRoot!.querySelector('sm-chat')!.shadowRoot!;
          const log = chatRoot.querySelector('.log')!.getBoundingClientRect();
          const first = chatRoot.querySelector('sm-message[kind="user"]')!;
          const form = first.shadowRoot!.querySelector('form.edit')!.getBoundingClientRect();
          return form.top >= log.top && form.bottom <= log.bottom;
        }),
      )
      .toBe(true);
    expect(await first.locator('#edit-note').innerText()).toMatch(
      /^Sending deletes the \d+ messages after this one/,
    );
    expect.soft(await axeScan(page, server)).toEqual([]);
    await shot('edit-desktop');
    // Escape leaves it as it was.
    await page.keyboard.press('Escape');
    await expect.poll(() => focused(page)).toMatchObject({ label: 'Edit your message' });
    await first.getByRole('button', { name: 'Edit your message' }).click();
    await edit.fill('Hello again');
    await edit.press('Enter');
    await idle();
    await expect.poll(() => users().count(), POLL).toBe(1);
    await expect.poll(() => textOf(users().first()), POLL).toBe('Hello again');
    await expect.poll(() => textOf(lastReply()), POLL).toBe('You said: Hello again');
    expect(await replies().count()).toBe(1);
    // Reloaded from the database, the same.
    await page.reload();
    await expect.poll(() => textOf(lastReply()), POLL).toBe('You said: Hello again');
    expect(await users().count()).toBe(1);
  });

  it('a turn stopped at the round limit says so, and its reply can still be regenerated', async () => {
    await say('Keep looking through my memory.');
    await chat()
      .getByText('The model kept calling memory tools without answering', { exact: false })
      .waitFor(POLL);
    const again = lastReply().getByRole('button', { name: 'Regenerate reply' });
    expect(await again.count()).toBe(1);
    await lastReply().hover();
    expect(await again.isVisible()).toBe(true);
    await shot('round-limit-desktop');
  });

  it('a reply with words stopped at the round limit offers Regenerate, not Continue', async () => {
    await say('Keep looking, and say so.');
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Let me look once more.');
    expect(await lastReply().getByRole('button', { name: 'Regenerate reply' }).count()).toBe(1);
    // The model never reads a notice back, so it could not go on from these words.
    expect(await lastReply().getByRole('button', { name: 'Continue' }).count()).toBe(0);
  });

  it('a regeneration that answers with nothing says so, and the earlier reply is a click away on the question', async () => {
    await say('Which tea do I like?');
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Tea answer: green.');
    await lastReply().getByRole('button', { name: 'Regenerate reply' }).click();
    await idle();
    await chat().getByText('The model answered with nothing', { exact: false }).waitFor(POLL);
    const question = users().last();
    await expect.poll(() => question.locator('.alts').innerText(), POLL).toMatch(/2\/2/);
    await shot('empty-regeneration');
    await question.getByRole('button', { name: 'Previous alternative' }).click();
    await expect.poll(() => textOf(lastReply()), POLL).toBe('Tea answer: green.');
    await expect.poll(() => lastReply().locator('.alts').innerText(), POLL).toMatch(/1\/2/);
  });

  it('a renamed chat keeps its name; axe finds nothing at phone size', async () => {
    const list = page.locator('sm-conversations');
    await list
      .locator('li.active')
      .getByRole('button', { name: /^Rename chat/ })
      .click();
    await list.getByRole('textbox', { name: 'Chat title' }).fill('Coffee talk');
    await list.getByRole('textbox', { name: 'Chat title' }).press('Enter');
    await say('One more thing.');
    await expect.poll(() => list.locator('li.active .title').innerText(), POLL).toBe('Coffee talk');
    expect.soft(await axeScan(page, server)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('tab', { name: 'Chat', exact: true }).click();
    await lastReply().scrollIntoViewIfNeeded();
    expect.soft(await axeScan(page, server)).toEqual([]);
    await shot('phone');
    await lastReply().getByRole('button', { name: 'Regenerate reply' }).click();
    await idle();
    await expect.poll(() => lastReply().locator('.alts').innerText(), POLL).toMatch(/2\/2/);
    await shot('alternatives-phone');
  });

  it("a reasoning model's thinking shows apart as it comes, open, then folds away above its answer", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    // Room for its thinking, which counts against the output tokens as on a real server.
    await connectApp(page, fake.url, { maxOutputTokens: 2048 });
    await box().fill('Think it over: where does Ana live?');
    await box().press('Enter');
    const thought = lastReply().getByText('Ana might live in Lisbon, or was it Porto?');
    const thinking = lastReply().locator('details.thought[open] summary', { hasText: 'Thinking…' });
    // Open while it thinks, its first words there (tokens come every 2 ms; it thinks for ~1 s).
    await expect
      .poll(async () => (await thinking.isVisible()) && (await thought.isVisible()), POLL)
      .toBe(true);
    expect(await chat().getByText('<think>').count()).toBe(0);
    await shot('thinking-live');
    await idle();
    // Stored, the answer shows (markdown), the thinking folded away above it, its tags not shown.
    await expect.poll(() => textOf(lastReply()), POLL).toBe('She lives in Porto.');
    expect(await lastReply().locator('strong', { hasText: 'Porto' }).count()).toBe(1);
    expect(await thought.isVisible()).toBe(false);
    expect(await chat().getByText('<think>').count()).toBe(0);
    await lastReply().getByText('Thought', { exact: true }).click();
    await expect.poll(() => thought.isVisible(), POLL).toBe(true);
    await shot('thought-open');
  });
});
