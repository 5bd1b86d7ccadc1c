// The browser benchmark's page: starts the bench workers, watches the main thread with a
// `longtask` PerformanceObserver, and offers `window.bench` to the Playwright runner.
import { wrap, type Remote } from 'comlink';
import { BUNDLED_MODEL, createEmbedder, openMemory } from '../../src/memory';
import type { BenchWorkerApi } from './bench.worker';
import { recallQueries, turnStarts } from '../core/recall';

const newWorker = (): Remote<BenchWorkerApi> =>
  wrap<BenchWorkerApi>(
    new Worker(new URL('./bench.worker.ts', import.meta.url), { type: 'module' }),
  );

const longTasks: number[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) longTasks.push(e.duration);
}).observe({ type: 'longtask', buffered: true });

const worker = newWorker();
const extra: Remote<BenchWorkerApi>[] = [];

/** A JSON backup holding `texts` as the user messages of one conversation. */
function backupOf(texts: string[]): string {
  const at = new Date(0).toISOString();
  return JSON.stringify({
    format: 'structured-memory-backup',
    version: 1,
    entries: [],
    conversations: [{ id: 1, title: 'Imported', created: at, modified: at }],
    messages: texts.map((text, i) => ({
      id: i + 1,
      conversationId: 1,
      role: 'user',
      text,
      time: at,
    })),
  });
}

/**
 * Ingests `texts` in the worker or (baselines) on this thread or as before shards: one
 * recordTurn per message ('turns', as a chat does) or one importJson of them all ('import').
 */
async function ingest(
  texts: string[],
  where: 'worker' | 'main' | 'legacy',
  how: 'turns' | 'import',
  threads = 1,
): Promise<{ chunks: number; ms: number; longTasks: number[] }> {
  const name = `bench-ingest-${where}-${how}-${threads}-${Date.now()}`;
  let turn: (text: string) => Promise<number>;
  let importAll: (json: string) => Promise<void>;
  let close: () => Promise<void>;
  if (where === 'main') {
    const embedder = createEmbedder({ model: BUNDLED_MODEL, fallback: false });
    await embedder.embed(['warm up the model']);
    const mem = openMemory({ name, embedder });
    turn = async (text) => {
      const r = await mem.recordTurn({ conversationId: 1, role: 'user', text });
      if (r.status !== 'SUCCESS') throw new Error('recordTurn failed');
      return r.chunks;
    };
    importAll = async (json) => {
      const r = await mem.importJson(json, 'merge');
      if (r.status !== 'SUCCESS') throw new Error(`import failed: ${JSON.stringify(r)}`);
    };
    close = async () => {
      await mem.close();
      await embedder.dispose();
    };
  } else {
    await worker.ingestOpen(name, where === 'legacy', threads);
    turn = (text) => worker.ingestTurn(text);
    importAll = (json) => worker.ingestImport(json);
    close = () => worker.ingestClose();
  }
  const json = how === 'import' ? backupOf(texts) : '';
  await new Promise((r) => setTimeout(r, 200)); // let set-up tasks settle before observing
  longTasks.length = 0;
  const t0 = performance.now();
  let chunks = 0;
  if (how === 'turns') for (const text of texts) chunks += await turn(text);
  else {
    await importAll(json);
    chunks = texts.length * 10;
  }
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 100)); // observer entries arrive asynchronously
  const seen = [...longTasks];
  await close();
  return { chunks, ms, longTasks: seen };
}

/** Multi-core trial: the 1M rows split over `parts` workers, searched in parallel. */
async function parallelQueries(n: number, parts: number, queries: number) {
  while (extra.length < parts) extra.push(newWorker());
  const size = Math.ceil(n / parts);
  const t0 = performance.now();
  const built = await Promise.all(
    extra.slice(0, parts).map((w, i) => w.buildPart(1 + i * size, Math.min(size, n - i * size))),
  );
  const buildMs = performance.now() - t0;
  const samples: number[] = [];
  const inWorker: number[][] = [];
  const hits: number[][] = [];
  for (let qi = 0; qi < queries + 2; qi++) {
    const a = performance.now();
    const results = await Promise.all(extra.slice(0, parts).map((w) => w.searchPart(qi, 10)));
    const merged = results
      .flatMap((r) => r.hits)
      .sort((x, y) => y.similarity - x.similarity)
      .slice(0, 10);
    if (qi < 2) continue;
    samples.push(performance.now() - a);
    inWorker.push(results.map((r) => r.ms));
    hits.push(merged.map((h) => h.id));
  }
  await Promise.all(extra.slice(0, parts).map((w) => w.dropPart()));
  return { buildMs, built, samples, inWorker, hits };
}

/**
 * Turn starts over the recall store the worker holds (`recallFill` first): `queries` user
 * messages after `warmup` more, each in every variant, timed here on the page as the chat
 * times it (the worker call, then the prompt assembled on this thread).
 */
function recallTurnStarts(queries: number, warmup: number, chats: number, n: number) {
  return turnStarts(worker, recallQueries(warmup + queries, n), chats, warmup);
}

declare global {
  interface Window {
    bench: {
      worker: Remote<BenchWorkerApi>;
      ingest: typeof ingest;
      parallelQueries: typeof parallelQueries;
      recallTurnStarts: typeof recallTurnStarts;
      ready: true;
    };
  }
}

window.bench = { worker, ingest, parallelQueries, recallTurnStarts, ready: true };
document.body.textContent = 'bench page ready';
