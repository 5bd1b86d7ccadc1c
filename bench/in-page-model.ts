// The model in this browser (docs/in-page-model.md) in Chromium: load time, time to first token,
// streamed pieces (about tokens) per second and main-thread tasks over 50 ms while it generates, with the repo's tiny
// GGUF (test/fixtures/tiny-gguf.ts; a real model is far slower: see the docs for what to expect),
// on one thread (not isolated) and on several (cross-origin isolated).
// Run: `npx tsx bench/in-page-model.ts` (writes bench/results-in-page-model.json).
// To measure a real model, pass its path: `npx tsx bench/in-page-model.ts ~/models/x.gguf`.
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { launchChromium } from '../test/e2e/chromium';
import { serveStatic } from '../test/e2e/static-server';
import { makeTinyGguf } from '../test/fixtures/tiny-gguf';
import type { InPageChatRequest, InPageModelInfo } from '../src/llm/in-page/types';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HARNESS = 'test/e2e/harness/in-page-model.html';
const TOKENS = 128;

type Harness = {
  pieces: string[];
  times: { asked: number; first: number; ended: number };
  longTasks: number[];
  load(url: string, context: number): Promise<InPageModelInfo>;
  chat(request: InPageChatRequest): Promise<{ finish: string }>;
};

const outDir = await mkdtemp(join(tmpdir(), 'sm-bench-inpage-'));
const browser = await launchChromium();
const results: Record<string, unknown>[] = [];
try {
  await build({
    root: ROOT,
    configFile: join(ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true, rollupOptions: { input: join(ROOT, HARNESS) } },
  });
  const real = process.argv[2];
  if (real) await copyFile(real, join(outDir, 'model.gguf'));
  else await writeFile(join(outDir, 'model.gguf'), makeTinyGguf({ endless: true }));
  for (const isolated of [false, true]) {
    const server = await serveStatic(outDir, isolated ? {} : { headers: {} });
    const page = await browser.newPage();
    await page.goto(`${server.url}${HARNESS}`);
    await page.waitForFunction(() => 'harness' in window);
    const h = await page.evaluateHandle(() => (window as unknown as { harness: Harness }).harness);
    const info = await h.evaluate((x, url) => x.load(url, 2048), `${server.url}model.gguf`);
    const before = await h.evaluate((x) => x.longTasks.length);
    await h.evaluate(
      (x, n) => x.chat({ messages: [{ role: 'user', content: 'Tell me a story.' }], maxTokens: n }),
      TOKENS,
    );
    const m = await h.evaluate((x) => ({
      times: x.times,
      pieces: x.pieces.length,
      longTasks: x.longTasks.length,
    }));
    const row = {
      model: real ? real.split('/').at(-1) : 'tiny random llama (0.7 MB)',
      isolated,
      threads: info.threads,
      loadMs: info.loadMs,
      firstTokenMs: Math.round(m.times.first - m.times.asked),
      // A piece is one streamed chunk: a token, or a few byte tokens joined into one character.
      piecesPerSecond: Math.round((m.pieces - 1) / ((m.times.ended - m.times.first) / 1000)),
      pieces: m.pieces,
      longTasksWhileGenerating: m.longTasks - before,
    };
    console.log(row);
    results.push(row);
    await page.close();
    await server.close();
  }
  await writeFile(
    join(ROOT, 'bench/results-in-page-model.json'),
    JSON.stringify({ date: new Date().toISOString(), results }, null, 2) + '\n',
  );
} finally {
  await browser.close();
  await rm(outDir, { recursive: true, force: true });
}
