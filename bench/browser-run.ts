// `npm run bench:browser`: builds the benchmark page with Vite into a temporary folder, serves
// it on 127.0.0.1, drives Debian's Chromium (real IndexedDB, real worker, longtask observer)
// through the workloads, prints the table and writes bench/results-browser.json (a --quick run
// bench/results-browser-quick.json, so it never replaces a full run's).
import { mkdtemp, rm } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'vite';
import { metric, printTable, summarise, type Metric, type Summary } from './core/report';
import { ingestTexts, type ChunkSearchBenchResult, type QueryBenchResult } from './core/workloads';
import { serveDir } from './serve';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/e2e/chromium';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const QUICK = process.argv.includes('--quick');
const OUT = QUICK ? 'results-browser-quick.json' : 'results-browser.json';
/** `--only=cold`: just the 100k fill and cold loads, with a breakdown (a development aid). */
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
const N_1M = QUICK ? 200_000 : 1_000_000;
const QUERIES = QUICK ? 8 : 20;
const COLD_RUNS = QUICK ? 2 : 5;
const SAVE_RUNS = 3;
const SAVES = QUICK ? 10 : 30;
const INGEST_TURNS = QUICK ? 200 : 1000; // × 10 sentences

const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);

/**
 * Runs `fn(arg)` in the page (Playwright sends its source; it may use only `window.bench` and
 * its argument) and returns its result.
 */
function inPage<A, R>(page: Page, fn: (arg: A) => Promise<R>, arg: A): Promise<R> {
  return page.evaluate(fn as (arg: unknown) => Promise<R>, arg as unknown);
}

/** The browser's version, from its user agent (a persistent context has no Browser object). */
async function versionOf(context: BrowserContext): Promise<string> {
  const page = await context.newPage();
  const ua = await page.evaluate(() => navigator.userAgent);
  await page.close();
  return /Chrome\/([\d.]+)/.exec(ua)?.[1] ?? 'unknown';
}

function logSearch(r: ChunkSearchBenchResult): void {
  const m = (a: number[]) => summarise(a).median.toFixed(1);
  log(
    `  fused ${m(r.fused)} ms (words only ${m(r.lexicalSearch)}, vectors only ${m(r.vectorSearch)}); word index ${m(r.lexical)} ms (MiniSearch ${r.baseline.length ? m(r.baseline) : '–'}); ${Math.round(r.matches)} matches per query; words ${r.wordsMb.toFixed(0)} MiB`,
  );
}

const fusedMetric = (label: '100k' | '1m', r: ChunkSearchBenchResult, target: number): Metric =>
  metric({
    name: `query_fused_${label}_ms`,
    unit: 'ms',
    better: 'lower',
    project: summarise(r.fused),
    baseline: null,
    baselineIs: 'none; the same search with one signal each below',
    target: { op: '<=', value: target },
    note: `searchChunkIndex (searchChunks’ search) over ${r.n} chunks of synthetic sentences, all conversations, k = 10, recency bias 0; rows and rescoring vectors read from IndexedDB; ${Math.round(r.matches)} chunks match a query’s words on average`,
    extra: {
      words_only_search: summarise(r.lexicalSearch),
      vectors_only_search: summarise(r.vectorSearch),
    },
  });

const lexicalMetric = (label: '100k' | '1m', r: ChunkSearchBenchResult): Metric =>
  metric({
    name: `query_lexical_${label}_ms`,
    unit: 'ms',
    better: 'lower',
    project: summarise(r.lexical),
    baseline: summarise(r.baseline),
    baselineIs:
      'MiniSearch over the same sentences (the engine tokenizer, OR, its BM25+ ranking), best 64',
    note: `Bm25Index: the query prepared, every match scored, ranked by relevance, best 64; ${Math.round(r.matches)} matches per query`,
  });

const searchDetails = (r: ChunkSearchBenchResult) => ({
  n: r.n,
  matches_per_query: Math.round(r.matches),
  fused_hits_with_words: r.fusedWithWords,
  words_mb_own_count: r.wordsMb,
  minisearch_build_ms: r.baselineBuildMs === null ? null : Math.round(r.baselineBuildMs),
});

async function main() {
  const started = performance.now();
  const outDir = await mkdtemp(join(tmpdir(), 'sm-bench-'));
  log(`building the bench page into ${outDir}`);
  await build({
    root: ROOT,
    configFile: join(ROOT, 'vite.config.ts'),
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: true,
      rollupOptions: { input: join(ROOT, 'bench/browser/index.html') },
    },
  });
  const server = await serveDir(outDir);
  // A persistent profile in a temporary folder: IndexedDB on disk with the normal quota, as
  // for a user (a Playwright context is incognito: IndexedDB in memory, a small quota).
  const profile = await mkdtemp(join(tmpdir(), 'sm-bench-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  const version = context.browser()?.version() ?? (await versionOf(context));
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') log(`page ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => log(`page error: ${e.message}`));
    await page.goto(`${server.url}bench/browser/index.html`);
    await page.waitForFunction(() => window.bench?.ready === true);
    const env = await inPage(page, () => window.bench.worker.env(), null);
    log(`Chromium ${version}: ${JSON.stringify(env)}`);
    await inPage(page, () => window.bench.worker.deleteAll(), null);

    if (ONLY === 'cold') {
      log(`fill ${JSON.stringify(await inPage(page, () => window.bench.worker.fill100k(), null))}`);
      for (let run = 0; run < COLD_RUNS; run++) {
        log(
          `parts ${JSON.stringify(await inPage(page, () => window.bench.worker.coldParts(), null))}`,
        );
        const s = await inPage(page, (k) => window.bench.worker.coldLoad(k), 'shards' as const);
        const r = await inPage(page, (k) => window.bench.worker.coldLoad(k), 'rows' as const);
        log(`cold load: shards ${Math.round(s.ms)} ms, rows ${Math.round(r.ms)} ms`);
      }
      return;
    }

    // ---- queries ------------------------------------------------------------------------
    const q: Record<string, QueryBenchResult> = {};
    for (const [label, n] of [
      ['10k', 10_000],
      ['100k', 100_000],
      ['1m', N_1M],
    ] as const) {
      log(
        `query ${label}: ${n} rows${label === '1m' ? ' (also written to IndexedDB for rescoring)' : ''}`,
      );
      q[label] = await inPage(
        page,
        ([n, queries, rows]) => window.bench.worker.queries(n, queries, rows),
        [n, QUERIES, label === '1m'] as const,
      );
      const s = summarise(q[label].project);
      log(
        `  project ${s.median.toFixed(2)} ms, baseline ${summarise(q[label].baseline).median.toFixed(1)} ms, build ${Math.round(q[label].buildMs)} ms, IndexedDB ${Math.round(q[label].sinkMs)} ms`,
      );
    }
    log(`chunk search ${N_1M}: index built as a cold load fills it, rows from IndexedDB`);
    const large = await inPage(
      page,
      ([n, queries]) => window.bench.worker.chunkSearchLarge(n, queries, true),
      [N_1M, QUERIES] as const,
    );
    logSearch(large);
    log('read-all-rows-per-query at 10k and 100k');
    const rows10k = await inPage(page, () => window.bench.worker.readAllRows(10_000, 5), null);
    const rows100k = await inPage(page, () => window.bench.worker.readAllRows(100_000, 2), null);

    // ---- cold load and saves with 100k chunks -------------------------------------------
    log('100k: filling IndexedDB with rows and shards');
    const fill = await inPage(page, () => window.bench.worker.fill100k(), null);
    log(`  ${Math.round(fill.fillMs)} ms (${Math.round(fill.rowsPerS)} rows/s with shards)`);
    const cold = { shards: [] as number[], rows: [] as number[] };
    for (let run = 0; run < COLD_RUNS; run++) {
      for (const kind of ['shards', 'rows'] as const) {
        const r = await inPage(page, (k) => window.bench.worker.coldLoad(k), kind);
        if (r.chunks !== 100_000) throw new Error(`cold load (${kind}) found ${r.chunks}`);
        cold[kind].push(r.ms);
      }
      log(
        `  cold load ${run + 1}: shards ${Math.round(cold.shards.at(-1)!)} ms, rows ${Math.round(cold.rows.at(-1)!)} ms`,
      );
    }
    log('100k: fused chunk search (cold-loaded index, rows from IndexedDB)');
    const search100k = await inPage(
      page,
      (queries) => window.bench.worker.chunkSearch100k(queries),
      QUERIES,
    );
    logSearch(search100k);
    const saves = {
      project: { p50: [] as number[], p95: [] as number[] },
      baseline: { p50: [] as number[], p95: [] as number[] },
    };
    let saveInfo: unknown;
    for (let run = 0; run < SAVE_RUNS; run++) {
      for (const kind of ['project', 'baseline'] as const) {
        const r = await inPage(page, ([k, n, tag]) => window.bench.worker.saves(k, n, tag), [
          kind,
          SAVES,
          `${kind}${run}`,
        ] as const);
        saves[kind].p50.push(r.summary.median);
        saves[kind].p95.push(r.summary.p95 ?? NaN);
        if (kind === 'project') saveInfo = r.info;
      }
      log(
        `  saves ${run + 1}: p50 project ${saves.project.p50.at(-1)!.toFixed(1)} ms, baseline ${saves.baseline.p50.at(-1)!.toFixed(1)} ms`,
      );
    }

    // ---- ingest and the main thread -----------------------------------------------------
    const texts = ingestTexts(INGEST_TURNS, 10);
    type IngestRun = { chunks: number; ms: number; longTasks: number[] };
    const ingest: Record<string, IngestRun[]> = {};
    type Step = readonly [string, 'worker' | 'main' | 'legacy', 'turns' | 'import', number];
    const plan: Step[] = [
      ...[1, 2, 3].flatMap((): Step[] => [
        ['worker', 'worker', 'turns', 1],
        ['legacy', 'legacy', 'turns', 1],
      ]),
      ...[1, 2].flatMap((): Step[] => [
        ['worker_import', 'worker', 'import', 1],
        ['main_import', 'main', 'import', 1],
        ['worker_ort2', 'worker', 'turns', 2],
      ]),
      ['main', 'main', 'turns', 1],
    ];
    for (const [key, where, how, threads] of plan) {
      log(`ingest ${texts.length * 10} chunks: ${key}`);
      const r = await inPage(page, ([t, w, h, th]) => window.bench.ingest(t, w, h, th), [
        texts,
        where,
        how,
        threads,
      ] as const);
      (ingest[key] ??= []).push(r);
      log(
        `  ${Math.round(r.chunks / (r.ms / 1000))} chunks/s, longest main-thread task ${Math.max(0, ...r.longTasks).toFixed(0)} ms (${r.longTasks.length} long tasks)`,
      );
    }

    // ---- a second core: the 1M compact index split over two workers ---------------------
    const parallel: Record<string, Awaited<ReturnType<Window['bench']['parallelQueries']>>> = {};
    for (const parts of [1, 2]) {
      log(`multi-core trial: ${N_1M} rows in ${parts} worker(s)`);
      parallel[parts] = await inPage(page, ([n, p, qs]) => window.bench.parallelQueries(n, p, qs), [
        N_1M,
        parts,
        QUERIES,
      ] as const);
      log(
        `  median ${summarise(parallel[parts].samples).median.toFixed(1)} ms (build ${Math.round(parallel[parts].buildMs)} ms)`,
      );
    }
    await inPage(page, () => window.bench.worker.deleteAll(), null);

    // ---- report ---------------------------------------------------------------------------
    const ms = 'ms';
    const big = q['1m'];
    const rates = (key: string) => summarise(ingest[key].map((r) => r.chunks / (r.ms / 1000)));
    const longest = (...keys: string[]) =>
      summarise(keys.flatMap((k) => ingest[k].map((r) => Math.max(0, ...r.longTasks))));
    const metrics: Metric[] = [
      ...(['10k', '100k', '1m'] as const).map((label) =>
        metric({
          name: `query_${label}_ms`,
          unit: ms,
          better: 'lower',
          project: summarise(q[label].project),
          baseline: summarise(q[label].baseline),
          baselineIs: 'plain JS loop over one packed Float32Array (dotRow + topK), all in RAM',
          target:
            label === '100k'
              ? { op: '<=', value: 25 }
              : label === '1m'
                ? { op: '<=', value: 100 }
                : undefined,
          note: `${q[label].kernel}, ${q[label].mode.quantised ? 'int8 first pass + exact f32 rescoring' : 'exact f32'}${q[label].mode.f32InMemory ? ' (f32 in RAM)' : ' (int8 only in RAM; the candidates’ f32 rows read from IndexedDB per query)'}`,
          ...(label === '10k'
            ? { extra: { read_all_rows_per_query: summarise(rows10k) } }
            : label === '100k'
              ? { extra: { read_all_rows_per_query: summarise(rows100k) } }
              : {}),
        }),
      ),
      metric({
        name: 'recall_at_10_1m',
        unit: 'fraction',
        better: 'higher',
        project: summarise(big.recall),
        baseline: summarise(big.recall.map(() => 1)),
        baselineIs: 'exact search (the JS loop): recall 1 by definition',
        extra: { int8_first_pass_alone: summarise(big.recallApprox) },
        target: { op: '>=', value: 0.95 },
      }),
      fusedMetric('100k', search100k, 25),
      fusedMetric('1m', large, 150),
      lexicalMetric('100k', search100k),
      lexicalMetric('1m', large),
      metric({
        name: 'cold_load_100k_ms',
        unit: ms,
        better: 'lower',
        project: summarise(cold.shards),
        baseline: summarise(cold.rows),
        baselineIs: 'one row per chunk, read by key in pages of 4096 into one packed array',
        target: { op: '<=', value: 1500 },
        note: 'fresh connection until the index answers (vectors and the word index, built from the shards’ texts); the full shard check (a count of the rows) follows in the background',
      }),
      metric({
        name: 'save_p50_ms_100k',
        unit: ms,
        better: 'lower',
        project: summarise(saves.project.p50),
        baseline: summarise(saves.baseline.p50),
        baselineIs: 'the same saveMemory with the plain JS kernel, exact f32',
        target: { op: '<=', value: 300 },
        note: `p50 of each of ${SAVE_RUNS} runs of ${SAVES} saves; all 100k chunks in the saving conversation`,
      }),
      metric({
        name: 'save_p95_ms_100k',
        unit: ms,
        better: 'lower',
        project: summarise(saves.project.p95),
        baseline: summarise(saves.baseline.p95),
        baselineIs: 'as save_p50_ms_100k',
      }),
      metric({
        name: 'ingest_chunks_per_s',
        unit: 'chunks/s',
        better: 'higher',
        project: rates('worker'),
        baseline: rates('legacy'),
        baselineIs:
          'the same turns in the same worker written as before shards (one row per chunk)',
        note: `${ingest.worker[0].chunks} chunks, bundled model, one recordTurn (10 sentences) per message from the page; runs alternate`,
        extra: {
          engine_on_main_thread: rates('main'),
          worker_with_2_ort_threads: rates('worker_ort2'),
          worker_one_importJson: rates('worker_import'),
        },
      }),
      metric({
        name: 'longest_main_thread_task_ms',
        unit: ms,
        better: 'lower',
        project: longest('worker', 'worker_import', 'worker_ort2'),
        baseline: longest('main', 'main_import'),
        baselineIs: 'the same ingests with the engine on the main thread (no worker)',
        target: { op: '<=', value: 50, judge: 'max' },
        note: `longtask PerformanceObserver on the page while the worker ingests ${ingest.worker[0].chunks} chunks, turn by turn or as one importJson; one figure per ingest run`,
        extra: {
          worker_turns: longest('worker', 'worker_ort2'),
          worker_import: longest('worker_import'),
          main_thread_turns: longest('main'),
          main_thread_import: longest('main_import'),
        },
      }),
      metric({
        name: 'worker_vector_mb_1m',
        unit: 'MiB',
        better: 'lower',
        project: summarise([big.vectorMb]),
        baseline: summarise([big.baselineMb]),
        baselineIs: 'all vectors as f32 in one packed array',
        target: { op: '<=', value: 450 },
        note: `int8 codes + scales (kernel memory ${big.kernelMb.toFixed(0)} MiB in all); plus ${big.metaMb.toFixed(1)} MiB of ids in JS`,
      }),
      metric({
        name: 'worker_lexical_mb_1m',
        unit: 'MiB',
        better: 'lower',
        project: summarise([large.wordsMb]),
        baseline: null,
        baselineIs: 'none here (no gc in the page): npm run bench measures heap against MiniSearch',
        note: 'the word index’s own count of its bytes (Bm25Index.memoryBytes)',
      }),
      metric({
        name: 'worker_memory_mb_1m',
        unit: 'MiB',
        better: 'lower',
        project: summarise([
          (large.info.kernelBytes + large.info.metaBytes) / 2 ** 20 + large.wordsMb,
        ]),
        baseline: null,
        baselineIs: 'none',
        target: { op: '<=', value: 1024 },
        note: `the chunk index at ${N_1M}: kernel memory ${(large.info.kernelBytes / 2 ** 20).toFixed(0)} MiB + ids ${(large.info.metaBytes / 2 ** 20).toFixed(0)} MiB + the word index (its own count)`,
      }),
    ];
    printTable(`Structured Memory benchmark — Chromium ${version}, real IndexedDB`, metrics);
    const second: Summary = summarise(parallel[2].samples);
    const first: Summary = summarise(parallel[1].samples);
    console.log(
      `\nSecond core: ${N_1M} compact rows in 1 worker ${first.median.toFixed(1)} ms vs split over 2 workers ${second.median.toFixed(1)} ms (median, ${second.runs} queries); ` +
        `ingest with 2 ONNX threads ${Math.round(rates('worker_ort2').median)} vs 1 thread ${Math.round(rates('worker').median)} chunks/s (median; crossOriginIsolated: ${env.crossOriginIsolated}).`,
    );
    const results = {
      date: new Date().toISOString(),
      environment: `Chromium ${version} (headless, Debian), ${env.cores} cores, crossOriginIsolated ${env.crossOriginIsolated}, ${QUICK ? 'QUICK run' : 'full run'}`,
      data: 'Synthetic 384-d unit vectors: 500 random centroids, row = normalise(centroid + 0.8 · N(0, I/384)) (bench/synthetic.ts); queries drawn the same way from another stream',
      metrics: Object.fromEntries(metrics.map((m) => [m.name, m])),
      multi_core: {
        query_1m_one_worker_ms: first,
        query_1m_two_workers_ms: second,
        per_worker_ms: parallel[2].inWorker,
        build_ms: { one: parallel[1].buildMs, two: parallel[2].buildMs },
        ingest_ort_threads_2_chunks_per_s: rates('worker_ort2'),
        ingest_ort_threads_1_chunks_per_s: rates('worker'),
      },
      details: {
        query: Object.fromEntries(
          Object.entries(q).map(([k, r]) => [
            k,
            {
              n: r.n,
              kernel: r.kernel,
              mode: r.mode,
              build_ms: Math.round(r.buildMs),
              indexeddb_write_ms: Math.round(r.sinkMs),
              vector_mb: r.vectorMb,
              kernel_mb: r.kernelMb,
              meta_mb: r.metaMb,
            },
          ]),
        ),
        chunk_search: {
          '100k': searchDetails(search100k),
          '1m': { ...searchDetails(large), build_ms: Math.round(large.buildMs) },
        },
        fill_100k: fill,
        save_index: saveInfo,
        ingest_long_tasks: Object.fromEntries(
          Object.entries(ingest).map(([k, runs]) => [k, runs.map((r) => r.longTasks)]),
        ),
        total_s: Math.round((performance.now() - started) / 1000),
      },
    };
    writeFileSync(new URL(`./${OUT}`, import.meta.url), JSON.stringify(results, null, 2) + '\n');
    log(`wrote bench/${OUT} (${results.details.total_s} s)`);
  } finally {
    await context.close();
    await server.close();
    await rm(outDir, { recursive: true, force: true });
    await rm(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
