// Sync benchmark (docs/sync.md; results in bench/README.md, "Sync"): in headless Chromium against
// express-pouchdb in memory on 127.0.0.1.
// 1. First sync of N entries (default 10,000) from the server into an empty browser: the time
//    Sync now takes, until a word search finds the last entry, and until every entry is embedded.
// 2. Live sync: a save in one browser profile until the other reads it, p50 and p90 of 20.
// Run: npx tsx bench/sync.ts [entries]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { build } from 'vite';
import { launchChromium } from '../test/e2e/chromium';
import { serveStatic } from '../test/e2e/static-server';
import { startSyncServer } from '../test/sync-server';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const N = Number(process.argv[2] ?? 10_000);
const LIVE_ROUNDS = 20;

interface Memory {
  configureSync(c: unknown): Promise<{ error: unknown; state: string }>;
  syncNow(): Promise<{ error: unknown }>;
  queryMemory(p: string): Promise<{ status: string }>;
  queryMemoryHeading(
    p: string,
    q: string,
  ): Promise<{ status: string; children: { path: string }[] }>;
  stats(): Promise<{ entries: number; stale: number }>;
  saveMemory(p: string, c: unknown): Promise<{ status: string }>;
}

async function ready(page: Page, url: string) {
  await page.goto(url);
  await page.waitForFunction(
    () => !!(document.querySelector('sm-app') as unknown as { memory?: unknown } | null)?.memory,
    null,
    { timeout: 120_000 },
  );
}

const config = (url: string, live: boolean, database = 'bench') => ({
  url,
  database,
  username: '',
  password: '',
  encrypt: false,
  passphrase: '',
  live,
});

async function main() {
  const outDir = await mkdtemp(join(tmpdir(), 'sm-sync-bench-'));
  await build({
    root: ROOT,
    configFile: join(ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
    define: { 'import.meta.env.VITE_EMBEDDING_MODEL': JSON.stringify('bundled') },
  });
  const app = await serveStatic(outDir);
  const couch = await startSyncServer();
  const browser = await launchChromium();
  try {
    // The server's documents, as a device that synced them would have written them.
    const db = couch.database('bench');
    const t = Date.UTC(2025, 0, 1);
    await db.put({ _id: 'structured-memory-sync', format: 1, encryption: null });
    for (let i = 0; i < N; i += 1000) {
      await db.bulkDocs(
        Array.from({ length: Math.min(1000, N - i) }, (_, k) => {
          const n = i + k;
          const path = `Bench/topic-${Math.floor(n / 100)}/note-${n}`;
          return {
            _id: `entry:${path}`,
            t: 'entry',
            u: t + n,
            d: 'Bench',
            path,
            content: { text: `Benchmark note ${n} about topic ${Math.floor(n / 100)}`, n },
            chunks: [],
            created: t + n,
            modified: t + n,
            version: 1,
          };
        }),
      );
    }

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await ready(page, app.url);
    const first = await page.evaluate(
      async ([cfg, last]) => {
        const m = (document.querySelector('sm-app') as unknown as { memory: Memory }).memory;
        await m.configureSync(cfg);
        const t0 = performance.now();
        const s = await m.syncNow();
        const synced = performance.now() - t0;
        let found = -1;
        for (;;) {
          const r = await m.queryMemoryHeading('Bench', `Benchmark note ${last}`);
          if (r.status === 'SUCCESS' && r.children[0]?.path.endsWith(`note-${last}`)) {
            found = performance.now() - t0;
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        let embedded = -1;
        for (;;) {
          const st = await m.stats();
          if (st.stale === 0) {
            embedded = performance.now() - t0;
            break;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
        return {
          error: s.error,
          timings: (s as { timings?: unknown }).timings,
          synced,
          found,
          embedded,
          entries: (await m.stats()).entries,
        };
      },
      [config(couch.url, false), N - 1] as const,
    );
    console.log(
      `first sync of ${N} entries: ${(first.synced / 1000).toFixed(1)} s; ` +
        `search finds the last one after ${(first.found / 1000).toFixed(1)} s; ` +
        `all embedded after ${(first.embedded / 1000).toFixed(1)} s; ` +
        `entries ${first.entries}; steps (ms) ${JSON.stringify(first.timings)}; error ${JSON.stringify(first.error)}`,
    );
    await context.close();

    // Live: A saves, B polls until it reads it.
    const ca = await browser.newContext();
    const cb = await browser.newContext();
    const a = await ca.newPage();
    const b = await cb.newPage();
    for (const p of [a, b]) {
      await ready(p, app.url);
      await p.evaluate(
        async (cfg) => {
          const m = (document.querySelector('sm-app') as unknown as { memory: Memory }).memory;
          await m.configureSync(cfg);
        },
        config(couch.url, true, 'bench-live'),
      );
    }
    const times: number[] = [];
    for (let i = 0; i < LIVE_ROUNDS; i++) {
      const path = `Live/round-${i}`;
      const t0 = Date.now();
      await a.evaluate(async (p) => {
        const m = (document.querySelector('sm-app') as unknown as { memory: Memory }).memory;
        await m.saveMemory(p, { round: p });
      }, path);
      await b.evaluate(async (p) => {
        const m = (document.querySelector('sm-app') as unknown as { memory: Memory }).memory;
        while ((await m.queryMemory(p)).status !== 'SUCCESS')
          await new Promise((r) => setTimeout(r, 25));
      }, path);
      times.push(Date.now() - t0);
    }
    times.sort((x, y) => x - y);
    const q = (f: number) => times[Math.min(times.length - 1, Math.floor(f * times.length))];
    console.log(
      `live sync, a save on A until B reads it (${LIVE_ROUNDS} rounds): p50 ${q(0.5)} ms, p90 ${q(0.9)} ms, max ${times[times.length - 1]} ms`,
    );
    await ca.close();
    await cb.close();
  } finally {
    await browser.close();
    await couch.close();
    await app.close();
    await rm(outDir, { recursive: true, force: true });
  }
}

await main();
