// End to end: llama.cpp in WebAssembly (`@wllama/wllama`) runs the repo's own tiny GGUF inside the
// page's worker, in headless Chromium, under the app's CSP, with every file from the app's origin:
// it loads, streams tokens, follows a grammar, and Stop ends a generation that would not end.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium';
import { serveStatic, type StaticServer } from './static-server';
import { makeTinyGguf } from '../fixtures/tiny-gguf';
import type { InPageChatRequest, InPageModelInfo } from '../../src/llm/in-page/types';
import { parseGrammarCall, toolGrammar } from '../../src/llm/in-page/grammar';
import { Validator } from '@cfworker/json-schema';
import type { ToolSpec } from '../../src/llm/types';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HARNESS = 'test/e2e/harness/in-page-model.html';
const POLL = { timeout: 60_000, interval: 20 };

type Harness = {
  pieces: string[];
  load(url: string, context: number, threads?: number): Promise<InPageModelInfo>;
  chat(request: InPageChatRequest): Promise<{ finish: string }>;
  stop(): Promise<void>;
};

describe('in-page model (wllama) in Chromium', () => {
  let outDir = '';
  let browser: Browser | undefined;
  const servers: StaticServer[] = [];
  const errors: string[] = [];
  /** Requests to anywhere but the app's own server (there must be none). */
  const outside: string[] = [];

  beforeAll(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'sm-wllama-'));
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true, rollupOptions: { input: join(ROOT, HARNESS) } },
    });
    await writeFile(join(outDir, 'tiny.gguf'), makeTinyGguf());
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  async function open(
    headers?: Record<string, string>,
  ): Promise<{ page: Page; server: StaticServer }> {
    if (!browser) throw new Error('setup failed');
    const server = await serveStatic(outDir, headers ? { headers } : {});
    servers.push(server);
    const page = await browser.newPage();
    page.on('request', (r) => {
      const url = r.url();
      if (!url.startsWith(server.url) && !url.startsWith('blob:')) outside.push(url);
    });
    page.on('console', (m) => {
      // A 404 is checked below, from the server's own record.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
        errors.push(m.text());
      }
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}${HARNESS}`);
    await page.waitForFunction(() => 'harness' in window);
    return { page, server };
  }

  const harness = (page: Page) =>
    page.evaluateHandle(() => (window as unknown as { harness: Harness }).harness);

  for (const isolated of [true, false]) {
    it(`loads the tiny GGUF and streams tokens (${isolated ? 'isolated: threads' : 'not isolated: one thread'})`, async () => {
      const { page, server } = await open(isolated ? undefined : {});
      expect(await page.evaluate(() => crossOriginIsolated)).toBe(isolated);
      const h = await harness(page);
      const info = await h.evaluate((x, url) => x.load(url, 128), `${server.url}tiny.gguf`);
      expect(info.architecture).toBe('llama');
      expect(info.chatTemplate).toContain('<|im_start|>');
      expect(info.context).toBe(128);
      expect(info.multithreaded).toBe(isolated);
      const done = await h.evaluate((x) =>
        x.chat({ messages: [{ role: 'user', content: 'hello' }], maxTokens: 8, seed: 1 }),
      );
      expect(['stop', 'length']).toContain(done.finish);
      const pieces = await h.evaluate((x) => x.pieces);
      expect(pieces.length).toBeGreaterThan(0);
      // The wasm came from the app's own server, and nothing went anywhere else.
      expect(server.requests.some((r) => r.url.endsWith('.wasm') && r.status === 200)).toBe(true);
      expect(outside).toEqual([]);
      expect(server.requests.filter((r) => r.status !== 200).map((r) => r.url)).toEqual([
        '/favicon.ico',
      ]);
      expect(errors).toEqual([]);
    });
  }

  it('follows a grammar: a forced tool call always parses', async () => {
    const { page, server } = await open();
    const h = await harness(page);
    // One thread: a seeded generation then repeats exactly (threads' sums can differ in order).
    await h.evaluate((x, url) => x.load(url, 256, 1), `${server.url}tiny.gguf`);
    const grammar = [
      // One rule per line: a newline ends a GBNF rule.
      'root ::= "{\\"name\\":\\"saveMemory\\",\\"arguments\\":{\\"path\\":\\"" word ' +
        '"\\",\\"content\\":\\"" text "\\"}}"',
      'word ::= [a-z] [a-z]? [a-z]? [a-z]? [a-z]? [a-z]?',
      'text ::= [a-z] [a-z ]? [a-z ]? [a-z ]? [a-z ]? [a-z ]? [a-z ]? [a-z ]? [a-z]',
    ].join('\n');
    for (const seed of [1, 2, 3]) {
      await h.evaluate(
        (x, [g, s]) =>
          x.chat({
            messages: [{ role: 'user', content: 'remember that I like tea' }],
            maxTokens: 120,
            seed: s as number,
            temperature: 1,
            grammar: g as string,
          }),
        [grammar, seed] as const,
      );
      const text = (await h.evaluate((x) => x.pieces)).join('');
      const call = JSON.parse(text) as {
        name: string;
        arguments: { path: string; content: string };
      };
      expect(call.name).toBe('saveMemory');
      expect(call.arguments.path).toMatch(/^[a-z]{1,6}$/);
    }
  });

  it("the chat's tool grammar: a required call always parses and fits its tool's schema; left free, a plain model writes text", async () => {
    const { page, server } = await open();
    const h = await harness(page);
    await h.evaluate((x, url) => x.load(url, 1024, 1), `${server.url}tiny.gguf`);
    // Schemas like the app's tools, with short strings (a random model closes them in time).
    const tools: ToolSpec[] = [
      {
        type: 'function',
        function: {
          name: 'saveMemory',
          description: 'Save.',
          parameters: {
            type: 'object',
            properties: {
              path: { type: 'string', maxLength: 6 },
              content: { type: ['string', 'integer', 'boolean'], maxLength: 6 },
              contextTokens: { type: 'integer', minimum: 0, maximum: 4000 },
            },
            required: ['path', 'content'],
          },
        },
      },
      {
        type: 'function',
        function: {
          name: 'queryMemoryHeading',
          description: 'Look.',
          parameters: {
            type: 'object',
            properties: {
              path: { type: 'string', maxLength: 6 },
              recencyBias: { type: 'number', minimum: 0, maximum: 1 },
            },
            required: ['path'],
          },
        },
      },
    ];
    const chat = (grammar: string, seed: number, maxTokens: number) =>
      h.evaluate(
        async (x, [g, s, n]) => {
          await x.chat({
            messages: [{ role: 'user', content: 'remember that I like tea' }],
            maxTokens: n as number,
            seed: s as number,
            temperature: 1,
            grammar: g as string,
          });
          return x.pieces.join('');
        },
        [grammar, seed, maxTokens] as const,
      );
    for (const seed of [1, 2, 3]) {
      // Room for the whole call: an unbounded integer or a number's fraction can run for a while.
      const text = await chat(toolGrammar(tools, true), seed, 2000);
      const call = parseGrammarCall(text, () => 'call_1');
      expect(call, text).not.toBeNull();
      const tool = tools.find((t) => t.function.name === call!.function.name)!;
      const args = JSON.parse(call!.function.arguments) as unknown;
      // Checked without the lengths: a random model's byte tokens can make lax UTF-8 (an
      // overlong form) that the grammar counts as one character and the page decodes as
      // several; the app's tools set no lengths.
      const schema = JSON.parse(
        JSON.stringify(tool.function.parameters).replace(/,"maxLength":6/g, ''),
      ) as never;
      const check = new Validator(schema, '7').validate(args);
      expect(check.errors, text).toEqual([]);
    }
    for (const seed of [1, 2]) {
      const text = await chat(toolGrammar(tools), seed, 24);
      expect(text.length).toBeGreaterThan(0);
      expect(text.startsWith('<')).toBe(false);
      expect(text).not.toContain('<t');
    }
  });

  it('follows a JSON schema (as structured answers ask): the answer always parses and fits', async () => {
    const { page, server } = await open();
    const h = await harness(page);
    await h.evaluate((x, url) => x.load(url, 512, 1), `${server.url}tiny.gguf`);
    const schema = {
      type: 'object',
      properties: {
        path: { type: 'string', pattern: '^[a-z]{1,8}$' },
        content: { type: 'string', maxLength: 20 },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    };
    for (const seed of [1, 2]) {
      await h.evaluate(
        (x, [sc, s]) =>
          x.chat({
            messages: [{ role: 'user', content: 'what should be remembered?' }],
            maxTokens: 120,
            seed: s as number,
            temperature: 1,
            jsonSchema: sc as Record<string, unknown>,
          }),
        [schema, seed] as const,
      );
      const answer = JSON.parse((await h.evaluate((x) => x.pieces)).join('')) as {
        path: string;
        content: string;
      };
      expect(Object.keys(answer).sort()).toEqual(['content', 'path']);
      expect(answer.path).toMatch(/^[a-z]{1,8}$/);
    }
  });

  it('Stop ends a generation that would not end, and the next one runs', async () => {
    const { page, server } = await open();
    const h = await harness(page);
    await h.evaluate((x, url) => x.load(url, 2048), `${server.url}tiny.gguf`);
    // This grammar never completes, so only the token limit or Stop can end the reply.
    const endless = h.evaluate((x) =>
      x.chat({
        messages: [{ role: 'user', content: 'hello' }],
        maxTokens: 1900,
        grammar: 'root ::= "la " root',
      }),
    );
    await page.waitForFunction(
      () => (window as unknown as { harness: Harness }).harness.pieces.length >= 3,
      undefined,
      POLL,
    );
    await h.evaluate((x) => x.stop());
    expect(await endless).toEqual({ finish: 'aborted' });
    const shown = (await h.evaluate((x) => x.pieces)).join('');
    expect(shown.length).toBeLessThan(1900 * 3);
    const next = await h.evaluate((x) =>
      x.chat({ messages: [{ role: 'user', content: 'again' }], maxTokens: 4, seed: 2 }),
    );
    expect(['stop', 'length']).toContain(next.finish);
    expect(errors).toEqual([]);
  });
});
