// renderMarkdown with the real DOMPurify, in headless Chromium (it needs a DOM): markdown stays,
// anything active goes. Then the chat harness, which renders hostile model output and tool
// results through the real components, must hold no active content and raise no dialog.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { ALLOWED_TAGS } from '../../src/ui/markdown';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HARNESS = 'test/e2e/harness/chat.html';

/** What the page reports about one rendered string. */
interface Parsed {
  html: string;
  tags: string[];
  attributes: string[];
  hrefs: string[];
  text: string;
}

const ALLOWED = new Set(ALLOWED_TAGS);

describe('markdown rendering in Chromium', () => {
  let server: ViteDevServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let cacheDir = '';
  const dialogs: string[] = [];

  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'sm-e2e-vite-'));
    server = await createServer({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      cacheDir,
      server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false },
      // Found up front, so the dev server does not reload the page to add them mid-test.
      optimizeDeps: { entries: [HARNESS] },
    });
    await server.listen();
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.addInitScript(() => {
      const violations: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = violations;
      document.addEventListener('securitypolicyviolation', (event) => {
        // The dev server's own client is not under test.
        if (!event.sourceFile.includes('/@vite/')) violations.push(event.violatedDirective);
      });
    });
    const url = server.resolvedUrls?.local[0] ?? '';
    await page.goto(`${url}${HARNESS}`);
    await page.waitForFunction(
      () => !!document.querySelector('sm-chat')?.shadowRoot?.querySelector('sm-message'),
    );
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  /** Renders in the page and parses the result back into a DOM to inspect it. */
  async function render(markdown: string): Promise<Parsed> {
    if (!page) throw new Error('Chromium did not start');
    return page.evaluate((text) => {
      const { renderMarkdown } = (
        window as unknown as {
          harness: { renderMarkdown: (t: string) => string };
        }
      ).harness;
      const html = renderMarkdown(text);
      const template = document.createElement('template');
      template.innerHTML = html;
      const elements = [...template.content.querySelectorAll('*')];
      return {
        html,
        tags: elements.map((e) => e.localName),
        attributes: elements.flatMap((e) => [...e.attributes].map((a) => a.name)),
        hrefs: elements.flatMap((e) => (e.hasAttribute('href') ? [e.getAttribute('href')!] : [])),
        text: template.content.textContent ?? '',
      };
    }, markdown);
  }

  function expectInert(out: Parsed): void {
    for (const tag of out.tags) expect(ALLOWED, `<${tag}> in ${out.html}`).toContain(tag);
    for (const name of out.attributes) {
      expect(['href', 'title', 'start', 'align', 'target', 'rel', 'dir'], out.html).toContain(name);
    }
    for (const href of out.hrefs) expect(href, out.html).toMatch(/^(https?:|mailto:)/i);
  }

  it('keeps markdown: emphasis, code, lists, tables, quotes', async () => {
    const out = await render(
      '# Plan\n\n**bold** *em* `code` ~~old~~\n\n1. one\n2. two\n\n| a | b |\n| - | -: |\n| 1 | 2 |\n\n> quoted\n\n```js\nlet x = 1 < 2;\n```',
    );
    expectInert(out);
    for (const tag of [
      'h1',
      'strong',
      'em',
      'code',
      'del',
      'ol',
      'li',
      'table',
      'th',
      'td',
      'blockquote',
      'pre',
    ]) {
      expect(out.tags).toContain(tag);
    }
    expect(out.text).toContain('let x = 1 < 2;');
  });

  it('reads each paragraph in the direction of its own words: Hebrew right to left beside English', async () => {
    if (!page) throw new Error('Chromium did not start');
    const directions = await page.evaluate((text) => {
      const { renderMarkdown } = (
        window as unknown as { harness: { renderMarkdown: (t: string) => string } }
      ).harness;
      const box = document.createElement('div');
      box.innerHTML = renderMarkdown(text);
      document.body.append(box);
      const out = [...box.querySelectorAll('p, ul, li, blockquote')].map(
        (e) => `${e.localName} ${getComputedStyle(e).direction}`,
      );
      box.remove();
      return out;
    }, 'אני גר ב-Lisbon ליד הנהר.\n\nI live in Lisbon.\n\n- מספר טלפון: 555-1234!\n- a phone number\n\n> ציטוט קצר.');
    // A list goes the way of its first words, its items with it (their bullets on its side).
    expect(directions).toEqual([
      'p rtl',
      'p ltr',
      'ul rtl',
      'li rtl',
      'li rtl',
      'blockquote rtl',
      'p rtl',
    ]);
  });

  it('shows raw HTML as text and never as elements', async () => {
    const out = await render(
      'Hi <img src=x onerror=alert(1)> <script>alert(2)</script> <b onclick="alert(3)">b</b>\n\n<iframe src="https://example.com"></iframe>\n\n<a href="javascript:alert(4)">x</a>',
    );
    expectInert(out);
    expect(out.tags).not.toContain('img');
    expect(out.tags).not.toContain('b');
    expect(out.text).toContain('<img src=x onerror=alert(1)>');
    expect(out.text).toContain('<script>alert(2)</script>');
  });

  it('opens web links in a new tab without opener or referrer, and drops others', async () => {
    const ok = await render('[docs](https://example.com/docs "Docs") and <https://example.org>');
    expectInert(ok);
    expect(ok.hrefs).toEqual(['https://example.com/docs', 'https://example.org']);
    expect(ok.html).toContain('target="_blank"');
    expect(ok.html.match(/rel="noopener noreferrer"/g)).toHaveLength(2);

    const bad = await render(
      '[a](javascript:alert(1)) [b](data:text/html;base64,PHNjcmlwdD4=) [c](vbscript:x) [d](JaVaScRiPt:alert(1)) [e](https://e.com "t\\" onmouseover=\\"alert(1)")',
    );
    expectInert(bad);
    expect(bad.hrefs).toEqual(['https://e.com']);
    expect(bad.text).toContain('a b c d e');
  });

  it('turns images into links (no remote loads)', async () => {
    const out = await render('![tracking pixel](http://tracker.example/p.png)');
    expectInert(out);
    expect(out.tags).not.toContain('img');
    expect(out.hrefs).toEqual(['http://tracker.example/p.png']);
    expect(out.text.trim()).toBe('tracking pixel');
  });

  it('renders the chat harness (hostile messages, tool results) with nothing active', async () => {
    if (!page) throw new Error('Chromium did not start');
    const found = await page.evaluate(() => {
      const bad: string[] = [];
      let messages = 0;
      const walk = (root: Document | ShadowRoot) => {
        for (const el of root.querySelectorAll('*')) {
          if (el.localName === 'sm-message') messages++;
          if (['img', 'iframe', 'object', 'embed'].includes(el.localName)) bad.push(el.outerHTML);
          // The page's own module scripts are in the light DOM; none may appear inside components.
          if (el.localName === 'script' && root !== document) bad.push(el.outerHTML);
          for (const a of el.attributes) {
            if (a.name.startsWith('on') || /^\s*javascript:/i.test(a.value)) {
              bad.push(`${el.localName} ${a.name}`);
            }
          }
          if (el.shadowRoot) walk(el.shadowRoot);
        }
      };
      walk(document);
      const csp = (window as unknown as { cspViolations: string[] }).cspViolations;
      return { bad, messages, csp };
    });
    expect(found.messages).toBeGreaterThan(5);
    expect(found.bad).toEqual([]);
    expect(found.csp).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});
