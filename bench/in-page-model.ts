// The model in this browser (docs/in-page-model.md) in Chromium: load time, time to first token,
// streamed pieces (about tokens) per second, Stop latency (from Stop to the end of the tokens)
// and the longest main-thread task while it generates (a PerformanceObserver for 'longtask' in
// the page), with the repo's tiny GGUF (test/fixtures/tiny-gguf.ts; a real model is far slower:
// see the docs for what to expect), on one thread (not isolated) and on several (isolated).
// Run: `npx tsx bench/in-page-model.ts` (writes bench/results-in-page-model.json), or as part of
// `npm run bench:browser` (a full run, or `--only=inpage`).
// To measure a real model, pass its path: `npx tsx bench/in-page-model.ts ~/models/x.gguf`.
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'vite';
import { launchChromium } from '../test/e2e/chromium';
import { serveStatic } from '../test/e2e/static-server';
import { makeTinyGguf } from '../test/fixtures/tiny-gguf';
import type { InPageChatRequest, InPageModelInfo } from '../src/llm/in-page/types';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HARNESS = 'test/e2e/harness/in-page-model.html';
const TOKENS = 128;
/** Stop is asked as this piece arrives (in the page: no round trip to the bench in between). */
const STOP_AFTER = 16;
/** Runs of each measure; the median is reported. */
const RUNS = 3;

type Harness = {
  pieces: string[];
  times: { asked: number; first: number; last: number; stopped: number; ended: number };
  load(url: string, context: number): Promise<InPageModelInfo>;
  chat(request: InPageChatRequest, stopAfter?: number): Promise<{ finish: string }>;
  longestTaskWhileGenerating(): number;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Measures the tiny model (or the GGUF at `model`) and writes bench/results-in-page-model.json. */
export async function inPageModelBench(
  options: { model?: string; log?: (line: string) => void } = {},
): Promise<Record<string, unknown>[]> {
  const log = options.log ?? console.log;
  const outDir = await mkdtemp(join(tmpdir(), 'sm-bench-inpage-'));
  const browser = await launchChromium();
  const results: Record<string, unknown>[] = [];
  const load = loadavg()[0]!.toFixed(1);
  try {
    await build({
      root: ROOT,
      configFile: join(ROOT, 'vite.config.ts'),
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true, rollupOptions: { input: join(ROOT, HARNESS) } },
    });
    if (options.model) await copyFile(options.model, join(outDir, 'model.gguf'));
    else await writeFile(join(outDir, 'model.gguf'), makeTinyGguf({ endless: true }));
    for (const isolated of [false, true]) {
      const server = await serveStatic(outDir, isolated ? {} : { headers: {} });
      const page = await browser.newPage();
      await page.goto(`${server.url}${HARNESS}`);
      await page.waitForFunction(() => 'harness' in window);
      const h = await page.evaluateHandle(
        () => (window as unknown as { harness: Harness }).harness,
      );
      const info = await h.evaluate((x, url) => x.load(url, 2048), `${server.url}model.gguf`);
      const runs: { first: number; perSecond: number; pieces: number; longest: number }[] = [];
      const stops: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const messages = [{ role: 'user' as const, content: `Tell me story number ${run}.` }];
        await h.evaluate((x, [m, n]) => x.chat({ messages: m, maxTokens: n }), [
          messages,
          TOKENS,
        ] as const);
        const m = await h.evaluate((x) => ({
          times: x.times,
          pieces: x.pieces.length,
          longest: x.longestTaskWhileGenerating(),
        }));
        runs.push({
          first: m.times.first - m.times.asked,
          // A piece is one streamed chunk: a token, or a few byte tokens joined into one character.
          perSecond: (m.pieces - 1) / ((m.times.last - m.times.first) / 1000),
          pieces: m.pieces,
          longest: m.longest,
        });
        // Stop: a reply that would run on (the tiny model never ends one by itself).
        await h.evaluate((x, [m2, n, after]) => x.chat({ messages: m2, maxTokens: n }, after), [
          messages,
          1900,
          STOP_AFTER,
        ] as const);
        const t = await h.evaluate((x) => x.times);
        stops.push(t.ended - t.stopped);
      }
      const row = {
        model: options.model ? options.model.split('/').at(-1) : 'tiny random llama (0.7 MB)',
        isolated,
        threads: info.threads,
        loadMs: info.loadMs,
        firstTokenMs: Math.round(median(runs.map((r) => r.first))),
        piecesPerSecond: Math.round(median(runs.map((r) => r.perSecond))),
        pieces: median(runs.map((r) => r.pieces)),
        stopMs: Math.round(median(stops)),
        stopMsMax: Math.round(Math.max(...stops)),
        longestTaskMs: Math.max(...runs.map((r) => r.longest)),
      };
      log(JSON.stringify(row));
      results.push(row);
      await page.close();
      await server.close();
    }
    await writeFile(
      join(ROOT, 'bench/results-in-page-model.json'),
      JSON.stringify(
        {
          date: new Date().toISOString(),
          machineLoad: Number(load),
          note: `median of ${RUNS} runs; first token and pieces/s over ${TOKENS} tokens; stopMs from Stop (asked as piece ${STOP_AFTER} arrives) until the engine's chat ends (no token after it); longestTaskMs: the longest main-thread task over 50 ms while generating (0: none)`,
          targets: { firstTokenMs: 1000, stopMs: 100, longestTaskMs: 50 },
          results,
        },
        null,
        2,
      ) + '\n',
    );
    log('wrote bench/results-in-page-model.json');
  } finally {
    await browser.close();
    await rm(outDir, { recursive: true, force: true });
  }
  return results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await inPageModelBench({ model: process.argv[2] });
}
