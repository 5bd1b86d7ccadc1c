// The whole app as a person uses it, in Debian Chromium against the production build and a
// fake KoboldCPP: chat that saves a memory, the tree and detail, export and import, a second
// tab, offline reload, inert markup, bad input, and screenshots of every main screen.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startFakeServer,
  type FakeReply,
  type FakeServer,
  type RecordedRequest,
} from '../fixtures/fake-llm';
import { launchChromium } from './chromium';
import { serveStatic, type StaticServer } from './static-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SHOTS = join(ROOT, 'test-results', 'screenshots');
const PATH = 'User/Preferences/CodingStyle';
const XSS_MODEL =
  '<img src=x onerror="window.__xss = 1"> Saved the snippet. <script>window.__xss = 4</script>';
const XSS_CONTENT = '<script>window.__xss = 2</script><img src=x onerror="window.__xss = 3">';

/** The fake model: saves what the user asks to remember, then confirms; echoes markup when asked. */
function reply(req: RecordedRequest): FakeReply {
  const messages = (
    (req.body as { messages?: { role: string; content: string | null }[] }).messages ?? []
  ).filter((m) => m.role !== 'system');
  const last = messages[messages.length - 1];
  const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  if (last?.role === 'tool')
    return {
      text: /xss/i.test(lastUser)
        ? XSS_MODEL
        : 'Saved: you prefer **vanilla JavaScript** without build steps.',
    };
  if (/Remember this/i.test(lastUser)) {
    return {
      toolCalls: [
        {
          name: 'saveMemory',
          arguments: {
            path: PATH,
            content: { language: 'vanilla JavaScript', buildSteps: 'avoid npm build steps' },
          },
        },
      ],
    };
  }
  if (/think it over/i.test(lastUser))
    return {
      text: '<think>\nAna might live in Lisbon, or was it Porto?\n</think>\n\nShe lives in **Porto**.',
    };
  if (/long story/i.test(lastUser)) return { text: 'Once upon a time '.repeat(400) };
  if (/xss/i.test(lastUser))
    return {
      toolCalls: [{ name: 'saveMemory', arguments: { path: 'Test/Markup', content: XSS_CONTENT } }],
    };
  return { text: 'OK.' };
}

describe('the app in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let fake: FakeServer;
  let server: StaticServer;
  let outDir: string;
  let downloads: string;

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-app-'));
    downloads = await mkdtemp(join(tmpdir(), 'sm-dl-'));
    await mkdir(SHOTS, { recursive: true });
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true },
      define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('bundled') },
    });
    server = await serveStatic(outDir);
    fake = await startFakeServer('koboldcpp', {
      defaultReply: reply,
      firstEventDelayMs: 20,
      toolDelayMs: 20,
      tokenDelayMs: 5,
    });
    browser = await launchChromium();
    context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      acceptDownloads: true,
    });
    page = await context.newPage();
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        (window as unknown as { csp: string[] }).csp ??= [];
        (window as unknown as { csp: string[] }).csp.push(`${e.violatedDirective} ${e.blockedURI}`);
      });
    });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await fake?.close();
    await server?.close();
    await rm(outDir, { recursive: true, force: true });
    await rm(downloads, { recursive: true, force: true });
  });

  const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SHOTS, `${name}.png`) });

  it('connects to the endpoint set in Settings (and says how to fix a dead one)', async () => {
    await page.goto(server.url, { waitUntil: 'commit' });
    // Nothing listens at the default endpoint: the status says what to do. While the app opens,
    // the chat says so, never that it is not connected, nor that no chat is open or that there
    // are none (each used to show for most of a second; the app opens a chat at once).
    const chatSaid = new Set<string>();
    await expect
      .poll(
        async () => {
          const said = await page
            .evaluate(() =>
              ['sm-chat', 'sm-conversations']
                .map(
                  (tag) =>
                    document.querySelector('sm-app')?.shadowRoot?.querySelector(tag)?.shadowRoot
                      ?.textContent ?? '',
                )
                .join(' '),
            )
            .catch(() => '');
          for (const line of [
            'Not connected.',
            'Opening your chats and memory…',
            'No chat open',
            'No chats yet.',
          ])
            if (said.includes(line)) chatSaid.add(line);
          return page.getByText(/Nothing answers at http:\/\/localhost:5001/).count();
        },
        { timeout: 30_000, interval: 20 },
      )
      .toBeGreaterThan(0);
    expect(chatSaid.has('Not connected.')).toBe(false);
    expect(chatSaid.has('No chat open')).toBe(false);
    expect(chatSaid.has('No chats yet.')).toBe(false);
    expect(await page.getByText('Opening your chats and memory…').count()).toBe(0);
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await page.getByRole('textbox', { name: 'Endpoint URL' }).fill(fake.url);
    await shot('settings');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => page.getByText('fake-model').count(), { timeout: 30_000 })
      .toBeGreaterThan(0);
  });

  it('chat: the model saves the preference, the tree shows it, the detail has content and context', async () => {
    await page
      .getByRole('textbox', { name: 'Message' })
      .fill('Remember this: I prefer vanilla JavaScript and avoid npm build steps.');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.getByText('vanilla JavaScript').count(), { timeout: 60_000 })
      .toBeGreaterThan(1);
    await expect
      .poll(() => page.getByText(/without build steps/).count(), { timeout: 60_000 })
      .toBeGreaterThan(0);
    // The tree shows the new entry without a reload.
    const tree = page.getByRole('tree', { name: 'Memory' });
    await expect
      .poll(() => tree.getByRole('treeitem', { name: 'User' }).count(), { timeout: 30_000 })
      .toBe(1);
    await shot('chat-tool-cards');
    // The save's card and the header count what the entry keeps of the chat in plain words.
    await expect
      .poll(
        () =>
          page
            .locator('sm-tool-card')
            .getByText(/^Saved, version 1 · 1 chat sentence quoted$/)
            .count(),
        {
          timeout: 10_000,
        },
      )
      .toBe(1);
    await expect
      .poll(async () =>
        (await page.locator('sm-app header .stats').textContent())?.replace(/\s+/g, ' ').trim(),
      )
      .toMatch(/^1 entry · 1 quoted chat sentence · \d+ chat sentences indexed/);
    // The tool card links to the node; the detail shows content and the context chunks.
    await page.getByRole('button', { name: PATH }).first().click();
    await expect
      .poll(() => tree.getByRole('treeitem', { name: 'CodingStyle' }).count(), { timeout: 10_000 })
      .toBe(1);
    const detail = page.locator('sm-entry-detail');
    await expect
      .poll(() => detail.getByText('avoid npm build steps').count(), { timeout: 10_000 })
      .toBeGreaterThan(0);
    await expect
      .poll(() => detail.getByText(/I prefer vanilla JavaScript/).count(), { timeout: 10_000 })
      .toBeGreaterThan(0);
    await shot('tree-detail');

    // Said again, the same save writes nothing, and its card says so.
    await page
      .getByRole('textbox', { name: 'Message' })
      .fill('Remember this: I prefer vanilla JavaScript and avoid npm build steps.');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(
        () =>
          page
            .locator('sm-tool-card')
            .getByText(/^Already saved, version 1: nothing changed$/)
            .count(),
        { timeout: 60_000 },
      )
      .toBe(1);
    // The reply done, so that the next test starts from a quiet chat.
    await expect
      .poll(() => page.getByRole('button', { name: 'Stop' }).isDisabled(), { timeout: 60_000 })
      .toBe(true);
    await shot('chat-saved-again');
    const version = await page.evaluate(async (path) => {
      const app = document.querySelector('sm-app') as unknown as {
        memory: { getEntry(p: string): Promise<{ version?: number }> };
      };
      return (await app.memory.getEntry(path)).version;
    }, PATH);
    expect(version).toBe(1);
  });

  it('a second tab sees the entry and, without reload, a save made in the first; a bad JSON edit is refused and changes nothing', async () => {
    const second = await context.newPage();
    const errors: string[] = [];
    second.on('pageerror', (e) => errors.push(e.message));
    await second.goto(server.url);
    const tree = second.getByRole('tree', { name: 'Memory' });
    await expect
      .poll(() => tree.getByRole('treeitem', { name: 'User' }).count(), { timeout: 30_000 })
      .toBe(1);
    // Saved in this tab while the other one is still starting (its worker loads the model):
    // the other tab shows it without reload.
    await page.evaluate(async () => {
      const app = document.querySelector('sm-app') as unknown as {
        memory: { saveMemory(p: string, c: unknown): Promise<unknown> };
      };
      await app.memory.saveMemory('Projects/FromTabOne', 'saved in the first tab');
    });
    await expect
      .poll(() => tree.getByRole('treeitem', { name: 'Projects' }).count(), { timeout: 30_000 })
      .toBe(1);
    expect(errors).toEqual([]);
    await second.close();

    const detail = page.locator('sm-entry-detail');
    await detail.getByRole('button', { name: 'Edit' }).click();
    await detail
      .getByRole('textbox', { name: 'Content' })
      .fill('{ "language": "vanilla JavaScript", ');
    await detail.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => detail.getByRole('alert').count(), { timeout: 10_000 })
      .toBeGreaterThan(0);
    const stored = await page.evaluate(async (path) => {
      const app = document.querySelector('sm-app') as unknown as {
        memory: { queryMemory(p: string): Promise<{ content: unknown }> };
      };
      return (await app.memory.queryMemory(path)).content;
    }, PATH);
    expect(stored).toEqual({ language: 'vanilla JavaScript', buildSteps: 'avoid npm build steps' });
  });

  it('markup from the model and in memory content stays inert in chat, tree, detail and map', async () => {
    await page.getByRole('textbox', { name: 'Message' }).fill('xss test: save this snippet');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.getByText('Saved the snippet.').count(), { timeout: 60_000 })
      .toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Test/Markup' }).first().click();
    await expect
      .poll(() => page.locator('sm-entry-detail').getByText(XSS_CONTENT).count(), {
        timeout: 10_000,
      })
      .toBeGreaterThan(0);
    await page.getByRole('tab', { name: 'Map' }).click();
    await page.getByRole('application', { name: 'Memory map' }).waitFor();
    await shot('map');
    expect(
      await page.evaluate(() => (window as unknown as { __xss?: number }).__xss),
    ).toBeUndefined();
    // No element built from that markup exists anywhere (shadow roots included).
    const injected = await page.evaluate(() => {
      const found: string[] = [];
      const walk = (root: Document | ShadowRoot) => {
        root.querySelectorAll('*').forEach((el) => {
          if (
            el.getAttribute('onerror') !== null ||
            (el.tagName === 'SCRIPT' && el.textContent?.includes('__xss'))
          )
            found.push(el.outerHTML);
          if (el.shadowRoot) walk(el.shadowRoot);
        });
      };
      walk(document);
      return found;
    });
    expect(injected).toEqual([]);
  });

  it('exports Markdown and JSON; a bad import changes nothing; the JSON restores into a fresh profile', async () => {
    const download = async (name: string) => {
      await page.getByRole('button', { name: 'Export' }).click();
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name, exact: true }).click(),
      ]);
      const to = join(downloads, file.suggestedFilename());
      await file.saveAs(to);
      return to;
    };
    const md = await readFile(await download('Markdown'), 'utf8');
    expect(md).toContain('CodingStyle');
    expect(md).toContain('avoid npm build steps');
    const jsonPath = await download('JSON');
    expect(JSON.parse(await readFile(jsonPath, 'utf8'))).toMatchObject({
      format: 'structured-memory-backup',
    });

    // A bad file: nothing changes, and the reason is shown.
    const bad = join(downloads, 'broken.json');
    await writeFile(
      bad,
      '{"format":"structured-memory-backup","version":1,"entries":[{"path":"A//B"}]}',
    );
    const before = await page.evaluate(async () => {
      const app = document.querySelector('sm-app') as unknown as {
        memory: { stats(): Promise<unknown> };
      };
      return app.memory.stats();
    });
    // Refused before Merge or Replace all is asked.
    await page.locator('sm-data-menu input[type=file]').setInputFiles(bad);
    await expect
      .poll(() => page.locator('sm-data-menu').getByRole('alert').textContent(), {
        timeout: 10_000,
      })
      .toMatch(/nothing changed/);
    expect(await page.getByRole('button', { name: 'Merge' }).count()).toBe(0);
    expect(
      await page.evaluate(async () => {
        const app = document.querySelector('sm-app') as unknown as {
          memory: { stats(): Promise<unknown> };
        };
        return app.memory.stats();
      }),
    ).toEqual(before);

    // A fresh profile (new context: its own IndexedDB) gets everything back from the JSON.
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const other = await fresh.newPage();
    await other.goto(server.url);
    await other.locator('sm-data-menu input[type=file]').setInputFiles(jsonPath);
    await other.getByRole('button', { name: 'Merge' }).click();
    const tree = other.getByRole('tree', { name: 'Memory' });
    await expect
      .poll(() => tree.getByRole('treeitem', { name: 'User' }).count(), { timeout: 60_000 })
      .toBe(1);
    await fresh.close();
  });

  it('offline: the app and its memory still load, and it says the model server cannot be reached', async () => {
    // The service worker precached the app on the first visit; once it is active, a reload puts
    // the page under its control.
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
    });
    await page.reload();
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null, undefined, {
      timeout: 30_000,
    });
    await expect
      .poll(() => page.getByText('fake-model').count(), { timeout: 30_000 })
      .toBeGreaterThan(0);
    const asked = fake.requests.length;
    await context.setOffline(true);
    try {
      await page.reload();
      const tree = page.getByRole('tree', { name: 'Memory' });
      await expect
        .poll(() => tree.getByRole('treeitem', { name: 'User' }).count(), { timeout: 60_000 })
        .toBe(1);
      // The app's requests to the model server fail, and it says so (whatever the browser's
      // navigator.onLine claims: some Chromium builds keep it true under offline emulation).
      await expect
        .poll(
          () =>
            page
              .getByRole('status')
              .filter({ hasText: `Nothing answers at ${fake.url}` })
              .count(),
          { timeout: 30_000 },
        )
        .toBe(1);
      expect(fake.requests.length).toBe(asked);
    } finally {
      await context.setOffline(false);
    }
    expect(await page.evaluate(() => (window as unknown as { csp?: string[] }).csp ?? [])).toEqual(
      [],
    );
  });

  it('narrow screen: tabs instead of columns', async () => {
    const p = await context.newPage();
    await p.setViewportSize({ width: 390, height: 844 });
    await p.goto(server.url);
    await expect
      .poll(() => p.getByRole('tab', { name: 'Memory' }).count(), { timeout: 30_000 })
      .toBe(1);
    await shot('narrow-chat', p);
    await p.getByRole('tab', { name: 'Memory' }).click();
    await shot('narrow-memory', p);
    await p.close();
  });

  it('a chat deleted in another tab: this tab opens another chat and says why, and the deleted one stays deleted', async () => {
    const own = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const openChat = (p: Page) =>
        p.evaluate(
          () =>
            (
              document.querySelector('sm-app') as unknown as {
                app?: { state: { conversationId?: number } };
              }
            ).app?.state.conversationId,
        );
      const first = await own.newPage();
      await first.goto(server.url);
      await expect.poll(() => openChat(first), { timeout: 30_000 }).toBeDefined();
      const gone = (await openChat(first))!;
      // Another chat, made in this tab: the newest, so the second tab opens it.
      await first.evaluate(async () => {
        const app = document.querySelector('sm-app') as unknown as {
          memory: { createConversation(t: string): Promise<unknown> };
        };
        await app.memory.createConversation('Kept');
      });
      const second = await own.newPage();
      await second.goto(server.url);
      await expect.poll(() => openChat(second), { timeout: 30_000 }).not.toBe(gone);
      await second.evaluate(async (id) => {
        const app = document.querySelector('sm-app') as unknown as {
          memory: { deleteConversation(id: number): Promise<unknown> };
        };
        await app.memory.deleteConversation(id);
      }, gone);
      // No model server in this profile: its banner comes first, the others behind "1 more".
      const more = first.getByRole('button', { name: /^\d+ more$/ });
      await expect.poll(() => more.count(), { timeout: 30_000 }).toBe(1);
      await more.click();
      await expect
        .poll(
          () =>
            first
              .getByText(
                'The chat you had open was deleted (in another tab, on another device, or by Replace all).',
              )
              .count(),
          { timeout: 30_000 },
        )
        .toBe(1);
      const list = first.getByRole('navigation', { name: 'Chats' });
      await expect
        .poll(() => list.locator('button[aria-current="true"]').textContent(), { timeout: 10_000 })
        .toContain('Kept');
      await shot('desktop-chat-deleted-elsewhere', first);
      // A message written into the deleted chat (as a reply still streaming there would be) is
      // refused, and does not bring the chat back.
      const late = await first.evaluate(async (id) => {
        const app = document.querySelector('sm-app') as unknown as {
          memory: {
            addMessage(m: object): Promise<{ status: string; code?: string }>;
            listConversations(): Promise<{ id: number }[]>;
          };
        };
        const r = await app.memory.addMessage({
          conversationId: id,
          role: 'assistant',
          text: 'late',
        });
        return { code: r.code, ids: (await app.memory.listConversations()).map((c) => c.id) };
      }, gone);
      expect(late.code).toBe('NOT_FOUND');
      expect(late.ids).not.toContain(gone);
    } finally {
      await own.close();
    }
  });

  it("a reasoning model's thinking is folded away above its answer, and opens on a click", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'New chat' }).click();
    await page
      .getByRole('textbox', { name: 'Message' })
      .fill('Think it over: where does Ana live?');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    const answer = page.locator('sm-message').getByText('She lives in');
    await expect.poll(() => answer.count(), { timeout: 30_000 }).toBe(1);
    const thought = page.getByText('Ana might live in Lisbon, or was it Porto?');
    await expect.poll(() => thought.isVisible(), { timeout: 10_000 }).toBe(false);
    // The answer is markdown; the thinking's tags are not shown.
    expect(await page.locator('sm-message strong').filter({ hasText: 'Porto' }).count()).toBe(1);
    expect(await page.getByText('<think>').count()).toBe(0);
    await page.getByText('Thought', { exact: true }).click();
    await expect.poll(() => thought.isVisible(), { timeout: 10_000 }).toBe(true);
    await shot('desktop-thought-open');
  });

  it('one reply at a time in a chat: a second tab that sends while the first is answering is told, and keeps its words', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'New chat' }).click();
    const second = await context.newPage();
    await second.goto(server.url);
    const box = (p: Page) => p.getByRole('textbox', { name: 'Message' });
    await box(second).waitFor({ timeout: 30_000 });
    // Requests that carried `words` (the keeper of earlier chats may ask the server meanwhile).
    const carrying = (words: string) =>
      fake.generations().filter((r) => JSON.stringify(r.body).includes(words)).length;
    await box(page).fill('Tell me a long story');
    await box(page).press('Enter');
    await expect
      .poll(() => carrying('Tell me a long story'), { timeout: 30_000 })
      .toBeGreaterThan(0);
    await box(second).fill('Hello from the other tab');
    await box(second).press('Enter');
    await expect
      .poll(
        () =>
          second
            .getByText('This chat is answering in another tab of this app', { exact: false })
            .count(),
        { timeout: 30_000 },
      )
      .toBeGreaterThan(0);
    // Not the model's failure: the turn was not sent.
    expect(await second.getByText('Not sent.', { exact: true }).count()).toBe(1);
    await expect
      .poll(() => box(second).inputValue(), { timeout: 10_000 })
      .toBe('Hello from the other tab');
    // Nothing of the second tab reached the model or the chat.
    expect(carrying('Hello from the other tab')).toBe(0);
    await expect
      .poll(() => page.getByText('Once upon a time').count(), { timeout: 30_000 })
      .toBeGreaterThan(0);
    const texts = await page.evaluate(async () => {
      const app = document.querySelector('sm-app') as unknown as {
        app: { state: { conversationId: number } };
        memory: { getMessages(id: number): Promise<{ text: string }[]> };
      };
      return (await app.memory.getMessages(app.app.state.conversationId)).map((m) => m.text);
    });
    expect(texts.join(' ')).not.toContain('Hello from the other tab');
    await shot('desktop-answering-elsewhere', second);
    await second.close();
  });
});
