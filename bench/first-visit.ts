// `npx tsx bench/first-visit.ts [dist]`: what a first visit downloads from a plain static host.
// Serves a build (default: a fresh `npm run build` into a temporary folder) with no special
// headers and GitHub Pages' ten-minute caching (`Cache-Control: max-age=600`), opens it in a new
// Chromium profile, waits until the app has loaded its embedding model and the service worker has
// settled (no request for 3 s), and sums the bytes the server sent: the page's own requests, its
// worker's and the service worker's. Prints each file, how often it was sent, and the total.
// bench/README.md, "First visit", has the numbers.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { launchChromium } from '../test/e2e/chromium';
import { serveStatic } from '../test/e2e/static-server';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const QUIET_MS = 3000;

const given = process.argv[2];
const outDir = given ?? (await mkdtemp(join(tmpdir(), 'sm-first-visit-')));
if (!given) {
  await build({
    root: ROOT,
    configFile: join(ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
}
const server = await serveStatic(outDir, { headers: {}, cacheControl: 'public, max-age=600' });
const browser = await launchChromium();
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  let loads = 0;
  page.on('load', () => loads++);
  await page.goto(server.url);
  // The app has loaded its embedding model (after the isolation reload, if there is one).
  for (;;) {
    const ready = await page
      .evaluate(async () => {
        const app = document.querySelector('sm-app') as unknown as {
          memory?: { modelInfo(): Promise<{ id: string }> };
        };
        if (!app?.memory) return null;
        return (await app.memory.modelInfo()).id;
      })
      .catch(() => null);
    if (ready) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  // Then until the service worker has nothing left to fetch.
  let seen = -1;
  while (seen !== server.requests.length) {
    seen = server.requests.length;
    await new Promise((r) => setTimeout(r, QUIET_MS));
  }
  const isolated = await page.evaluate(() => crossOriginIsolated);
  // A 304 (the browser asked whether its copy is current) sends no body: counted apart.
  const byUrl = new Map<string, { times: number; bytes: number; revalidated: number }>();
  for (const r of server.requests) {
    const url = r.url.replace(/\?.*$/, '');
    const row = byUrl.get(url) ?? { times: 0, bytes: 0, revalidated: 0 };
    if (r.status === 304) row.revalidated++;
    else row.times++;
    row.bytes += r.bytes ?? 0;
    byUrl.set(url, row);
  }
  const rows = [...byUrl].sort((a, b) => b[1].bytes - a[1].bytes);
  const mb = (n: number) => (n / 1e6).toFixed(2);
  for (const [url, row] of rows) {
    const checks = row.revalidated ? ` (+ ${row.revalidated}× 304)` : '';
    console.log(`${mb(row.bytes).padStart(8)} MB  ${row.times}×  ${url}${checks}`);
  }
  const total = rows.reduce((n, [, row]) => n + row.bytes, 0);
  const twice = rows.filter(([, row]) => row.times > 1).map(([url]) => url);
  const revalidated = rows.reduce((n, [, row]) => n + row.revalidated, 0);
  console.log(
    `total ${mb(total)} MB in ${server.requests.length} responses ` +
      `(${revalidated} of them 304 with no body); page loads ${loads}; ` +
      `crossOriginIsolated ${isolated}; sent more than once: ${twice.join(', ') || 'nothing'}`,
  );
} finally {
  await browser.close();
  await server.close();
  if (!given) await rm(outDir, { recursive: true, force: true });
}
