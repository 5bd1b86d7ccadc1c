// Import throughput in Chromium (issue 24's target, docs/import-export.md): 20 SillyTavern chat
// files of 500 messages each, picked at once through Import in the production build (real
// IndexedDB, real worker, the bundled model), timed from the pick to the report; the page's long
// tasks counted meanwhile (PerformanceObserver 'longtask': over 50 ms); then a search of one
// message. Run: `npx tsx bench/imports.ts` (writes bench/results-imports.json).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from '../test/e2e/chromium';
import { buildAndServe, callWorker } from '../test/e2e/explorer-fixture';

const FILES = 20;
const PER_FILE = 500;
const WORDS =
  'river castle lamp bridge keeper storm forest glade moon tide map letter duke inn road harbour mill orchard'.split(
    ' ',
  );

function chatFile(f: number): { name: string; buffer: Buffer } {
  const lines = [
    JSON.stringify({
      user_name: 'Mira',
      character_name: `Character ${f}`,
      create_date: '2024-7-12@01h31m37s',
      chat_metadata: {},
    }),
  ];
  for (let i = 0; i < PER_FILE; i++) {
    const words = Array.from({ length: 24 }, (_, k) => WORDS[(i * 7 + k * 3 + f) % WORDS.length]);
    const mes = `${words.join(' ')}. The token of message ${f}-${i} is q${f}x${i}z. It rained.`;
    lines.push(
      JSON.stringify({
        name: i % 2 ? `Character ${f}` : 'Mira',
        is_user: i % 2 === 0,
        is_system: false,
        send_date: 1720791300000 + i * 60_000,
        mes,
        extra: {},
      }),
    );
  }
  return { name: `chat-${f}.jsonl`, buffer: Buffer.from(lines.join('\n')) };
}

async function main(): Promise<void> {
  const { server, dispose } = await buildAndServe();
  const browser = await launchChromium();
  const dir = await mkdtemp(join(tmpdir(), 'sm-imports-'));
  try {
    const page = await (
      await browser.newContext({ viewport: { width: 1280, height: 800 } })
    ).newPage();
    await page.goto(server.url);
    await page.getByRole('button', { name: 'Import', exact: true }).waitFor();
    // The model loads before the clock starts: it is not the import's cost.
    await callWorker(page, 'modelInfo');
    await page.evaluate(() => {
      const w = window as unknown as { longTasks: number[] };
      w.longTasks = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.longTasks.push(e.duration);
      }).observe({ type: 'longtask' });
    });
    // Files on disk: Playwright hands paths to the browser as they are, where buffers would be
    // decoded by script in the page (a long task that is the test's, not the app's).
    const files: string[] = [];
    for (let f = 0; f < FILES; f++) {
      const file = chatFile(f);
      files.push(join(dir, file.name));
      await writeFile(files[f], file.buffer);
    }
    const t0 = Date.now();
    await page.locator('sm-data-menu input[type=file]').setInputFiles(files);
    await page
      .locator('sm-data-menu')
      .getByRole('heading', { name: 'Import finished' })
      .waitFor({ timeout: 600_000 });
    const seconds = (Date.now() - t0) / 1000;
    const longTasks = await page.evaluate(
      () => (window as unknown as { longTasks: number[] }).longTasks,
    );
    const stats = await callWorker<{ messages: number; chunks: number }>(page, 'stats');
    const found = await callWorker<{ results: { text: string }[] }>(
      page,
      'searchConversations',
      'q7x123z',
      3,
    );
    const result = {
      files: FILES,
      messages: FILES * PER_FILE,
      seconds,
      messagesStored: stats.messages,
      chunks: stats.chunks,
      longTasksOver50ms: longTasks.length,
      longestTaskMs: Math.max(0, ...longTasks),
      searchFindsMessage: found.results.some((r) => r.text.includes('q7x123z')),
    };
    console.log(JSON.stringify(result, null, 2));
    await writeFile(
      new URL('results-imports.json', import.meta.url),
      JSON.stringify(result, null, 2) + '\n',
    );
  } finally {
    await browser.close();
    await dispose();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
