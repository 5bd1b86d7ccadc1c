// The lexical-index library measurement (issue 9, "measure before choosing"): our Bm25Index
// against MiniSearch, FlexSearch and Orama on the same synthetic English sentences
// (core/text.ts), every library fed the engine's own tokenizer so that all index the same terms.
// Per library and size: build time, heap retained (heapUsed + arrayBuffers after gc, texts
// excluded), query p50/p95 (20 queries of 3–8 words, OR, top 10 by the library's ranking),
// serialised size and save/load time where the library can serialise.
//
//   npx tsx bench/lexical-libraries.ts [--sizes=100k,1m] [--libs=bm25,minisearch,flexsearch,orama]
//
// Each (library, size) runs in its own Node process (--expose-gc, --max-old-space-size=6000) so
// that one library's garbage never counts against another; a run that runs out of heap or time
// is reported as such. FlexSearch and Orama are not dependencies of the project: install them
// for the run with `npm install --no-save flexsearch @orama/orama`; without them they are
// skipped. Prints a table and writes bench/results-lexical.json.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import MiniSearch from 'minisearch';
import { Bm25Index } from '../src/memory/lexical/bm25-index';
import { tokenize } from '../src/memory/lexical/tokenize';
import { summarise } from './core/report';
import { SyntheticText } from './core/text';

const LIBS = ['bm25', 'minisearch', 'flexsearch', 'orama'] as const;
type Lib = (typeof LIBS)[number];
const SIZES: Record<string, number> = { '10k': 10_000, '100k': 100_000, '1m': 1_000_000 };
const QUERIES = 20;
const WARMUP = 10;
const HEAP_MB = 6000;
/** Wall-clock limit of one (library, size) process. */
const CHILD_LIMIT_MS = { small: 10 * 60_000, large: 25 * 60_000 };

const arg = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

interface LibResult {
  lib: Lib;
  n: number;
  version: string;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  buildMs?: number;
  /** CPU time of the build (user + system): the wall time an idle core would take. */
  buildCpuMs?: number;
  heapMb?: number;
  queryP50Ms?: number;
  queryP95Ms?: number;
  queryMs?: number[];
  queryCpuP50Ms?: number;
  queryCpuP95Ms?: number;
  /** The top 10 keys of each timed query. */
  tops?: number[][];
  /** Mean share of the BM25 index's top 10 that this library's top 10 holds (same run). */
  agreement?: number;
  /** Mean documents matched per query (before the top 10 is taken), where the library says. */
  matchesPerQuery?: number;
  serialisedMb?: number;
  saveMs?: number;
  loadMs?: number;
  /** Why saving or loading failed (e.g. a JSON string over the engine's length limit). */
  saveError?: string;
  note?: string;
}

/** What the run needs of a library: build, query (top 10 keys), optional save/load. */
interface Adapter {
  version: string;
  note: string;
  build(texts: readonly string[]): Promise<void>;
  query(text: string): Promise<{ top: number[]; matches?: number }>;
  save?(): Promise<{ bytes: number; load: () => Promise<void> }>;
}

const gc = () => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with --expose-gc');
  for (let i = 0; i < 4; i++) g();
};
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const heapBytes = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Imports an optional package by a name TypeScript does not resolve (it may be absent). */
async function optional(name: string): Promise<Record<string, unknown> | null> {
  try {
    return (await import(/* @vite-ignore */ name)) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function versionOf(name: string): string {
  try {
    const file = new URL(`../node_modules/${name}/package.json`, import.meta.url);
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

async function adapterFor(lib: Lib): Promise<Adapter | string> {
  switch (lib) {
    case 'bm25': {
      const idx = new Bm25Index();
      return {
        version: 'this repository',
        note: 'typed-array postings per term (docs/search.md); rebuilt from the shard texts on load, no serialised form',
        async build(texts) {
          for (let i = 0; i < texts.length; i++) idx.add(i + 1, texts[i], 0);
        },
        async query(text) {
          const all = idx.search(idx.prepare(text));
          all.sort((a, b) => b.score - a.score);
          return { top: all.slice(0, 10).map((m) => m.key), matches: all.length };
        },
      };
    }
    case 'minisearch': {
      const options = {
        fields: ['text'],
        tokenize: (s: string) => tokenize(s),
        processTerm: (t: string) => t,
        searchOptions: { combineWith: 'OR' as const },
      };
      let ms = new MiniSearch<{ id: number; text: string }>(options);
      return {
        version: versionOf('minisearch'),
        note: 'radix tree of terms, a Map of document → frequency per term and field; BM25+',
        async build(texts) {
          for (let i = 0; i < texts.length; i++) ms.add({ id: i + 1, text: texts[i] });
        },
        async query(text) {
          const r = ms.search(text);
          return { top: r.slice(0, 10).map((h) => h.id as number), matches: r.length };
        },
        async save() {
          const json = JSON.stringify(ms);
          return {
            bytes: json.length,
            load: async () => {
              ms = MiniSearch.loadJSON(json, options);
            },
          };
        },
      };
    }
    case 'flexsearch': {
      const mod = await optional('flexsearch');
      if (!mod) return 'not installed (npm install --no-save flexsearch)';
      type Index = {
        add(id: number, text: string): unknown;
        search(q: string, o: { limit: number; suggest: boolean }): number[];
        export(h: (key: string, data: string) => void): unknown;
        import(key: string, data: string): unknown;
      };
      const Ctor = ((mod.default as Record<string, unknown> | undefined)?.Index ?? mod.Index) as
        (new (o: object) => Index) | undefined;
      if (!Ctor) return 'no Index export';
      const options = { tokenize: 'strict', encode: (s: string) => tokenize(s), resolution: 9 };
      let idx = new Ctor(options);
      return {
        version: versionOf('flexsearch'),
        note: 'Index, tokenize "strict", resolution 9, no fastupdate; its own positional ranking (not BM25); OR via suggest',
        async build(texts) {
          for (let i = 0; i < texts.length; i++) idx.add(i + 1, texts[i]);
        },
        async query(text) {
          return { top: idx.search(text, { limit: 10, suggest: true }) };
        },
        async save() {
          const parts: [string, string][] = [];
          await idx.export((key, data) => {
            if (data !== undefined && data !== null) parts.push([key, data]);
          });
          return {
            bytes: parts.reduce((s, [k, d]) => s + k.length + d.length, 0),
            load: async () => {
              idx = new Ctor(options);
              for (const [k, d] of parts) await idx.import(k, d);
            },
          };
        },
      };
    }
    case 'orama': {
      const o = await optional('@orama/orama');
      if (!o) return 'not installed (npm install --no-save @orama/orama)';
      type Db = unknown;
      const create = o.create as (c: object) => Db;
      const insert = o.insert as (db: Db, doc: object) => unknown;
      const search = o.search as (
        db: Db,
        p: object,
      ) => Promise<{ count: number; hits: { id: string }[] }>;
      const saveDb = o.save as (db: Db) => unknown;
      const loadDb = o.load as (db: Db, raw: unknown) => void;
      const fresh = () =>
        create({
          schema: { text: 'string' },
          components: {
            tokenizer: {
              language: 'english',
              normalizationCache: new Map(),
              tokenize: (raw: string) => tokenize(raw),
            },
          },
        });
      let db = fresh();
      return {
        version: versionOf('@orama/orama'),
        note: 'radix tree + per-term document maps, keeps the documents; BM25; OR via threshold 1; matches query terms as prefixes too (its default; exact: true compares with the raw text, which stemmed terms fail)',
        async build(texts) {
          for (let i = 0; i < texts.length; i++)
            await insert(db, { id: String(i + 1), text: texts[i] });
        },
        async query(text) {
          const r = await search(db, { term: text, limit: 10, threshold: 1 });
          return { top: r.hits.map((h) => Number(h.id)), matches: r.count };
        },
        async save() {
          const json = JSON.stringify(saveDb(db));
          return {
            bytes: json.length,
            load: async () => {
              db = fresh();
              loadDb(db, JSON.parse(json));
            },
          };
        },
      };
    }
  }
}

/** One (library, size) measurement, in this process. Prints its result as the last line. */
async function child(lib: Lib, n: number): Promise<LibResult> {
  const text = new SyntheticText();
  const texts = Array.from({ length: n }, (_, i) => text.sentence(i));
  const queries = Array.from({ length: WARMUP + QUERIES }, (_, i) => text.query(i, n));
  for (const t of texts.slice(0, 1000)) tokenize(t); // the stem cache warm for everyone
  const a = await adapterFor(lib);
  if (typeof a === 'string') return { lib, n, version: '-', status: 'skipped', reason: a };
  gc();
  const before = heapBytes();
  let t0 = performance.now();
  let c0 = cpuMs();
  await a.build(texts);
  const buildMs = performance.now() - t0;
  const buildCpuMs = cpuMs() - c0;
  gc();
  const heapMb = (heapBytes() - before) / 2 ** 20;
  const queryMs: number[] = [];
  const queryCpu: number[] = [];
  const tops: number[][] = [];
  let matches = 0;
  for (let i = 0; i < queries.length; i++) {
    t0 = performance.now();
    c0 = cpuMs();
    const r = await a.query(queries[i]);
    const ms = performance.now() - t0;
    const cpu = cpuMs() - c0;
    if (i < WARMUP) continue;
    queryMs.push(ms);
    queryCpu.push(cpu);
    tops.push(r.top);
    matches += r.matches ?? NaN;
  }
  const s = summarise(queryMs);
  const sc = summarise(queryCpu);
  const out: LibResult = {
    lib,
    n,
    version: a.version,
    status: 'ok',
    buildMs,
    buildCpuMs,
    heapMb,
    queryP50Ms: s.median,
    queryP95Ms: s.p95,
    queryMs,
    queryCpuP50Ms: sc.median,
    queryCpuP95Ms: sc.p95,
    matchesPerQuery: matches / QUERIES,
    tops,
    note: a.note,
  };
  if (a.save) {
    try {
      t0 = performance.now();
      const saved = await a.save();
      out.saveMs = performance.now() - t0;
      out.serialisedMb = saved.bytes / 2 ** 20;
      t0 = performance.now();
      await saved.load();
      out.loadMs = performance.now() - t0;
    } catch (e) {
      out.saveError = String(e).slice(0, 200);
    }
  }
  return out;
}

function runChild(lib: Lib, label: string): Promise<LibResult> {
  const n = SIZES[label];
  const file = fileURLToPath(import.meta.url);
  const args = [
    '--expose-gc',
    `--max-old-space-size=${HEAP_MB}`,
    '--import',
    'tsx',
    file,
    '--child',
    `--lib=${lib}`,
    `--n=${n}`,
  ];
  const limit = n > 200_000 ? CHILD_LIMIT_MS.large : CHILD_LIMIT_MS.small;
  return new Promise((resolve) => {
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), limit);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) return resolve(JSON.parse(last) as LibResult);
      const oom = /heap out of memory|Allocation failed/i.test(stderr);
      resolve({
        lib,
        n,
        version: '-',
        status: 'failed',
        reason: oom
          ? `out of memory (heap limit ${HEAP_MB} MB)`
          : signal === 'SIGKILL'
            ? `no result within ${limit / 60_000} min`
            : `exit ${code}: ${stderr.trim().split('\n').slice(-3).join(' ')}`,
      });
    });
  });
}

const f = (x: number | undefined, d = 0) =>
  x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d);

async function main() {
  if (process.argv.includes('--child')) {
    const lib = arg('lib') as Lib;
    const n = Number(arg('n'));
    console.log(JSON.stringify(await child(lib, n)));
    return;
  }
  const labels = (arg('sizes') ?? '100k,1m').split(',');
  const libs = (arg('libs')?.split(',') ?? LIBS) as Lib[];
  const results: LibResult[] = [];
  for (const label of labels) {
    if (!SIZES[label]) throw new Error(`unknown size ${label}`);
    for (const lib of libs) {
      const t0 = performance.now();
      const r = await runChild(lib, label);
      results.push(r);
      console.log(
        `${lib} ${label}: ${r.status === 'ok' ? `build ${f(r.buildMs)} ms (CPU ${f(r.buildCpuMs)}), heap ${f(r.heapMb)} MiB, query p50 ${f(r.queryP50Ms, 1)} / p95 ${f(r.queryP95Ms, 1)} ms (CPU ${f(r.queryCpuP50Ms, 1)} / ${f(r.queryCpuP95Ms, 1)})` : `${r.status}: ${r.reason}`} (${Math.round((performance.now() - t0) / 1000)} s)`,
      );
    }
  }
  // Runs of other sizes or libraries stay in the file; this run replaces its own.
  const file = new URL('./results-lexical.json', import.meta.url);
  let kept: LibResult[] = [];
  try {
    kept = (JSON.parse(readFileSync(file, 'utf8')) as { results: LibResult[] }).results.filter(
      (k) => !results.some((r) => r.lib === k.lib && r.n === k.n),
    );
  } catch {
    // no earlier results
  }
  const all = [...kept, ...results].sort(
    (a, b) => a.n - b.n || LIBS.indexOf(a.lib) - LIBS.indexOf(b.lib),
  );
  for (const r of all) {
    const ref = all.find((x) => x.lib === 'bm25' && x.n === r.n)?.tops;
    if (!ref || !r.tops || ref.length !== r.tops.length) continue;
    r.agreement =
      r.tops.reduce((s, top, i) => s + top.filter((k) => ref[i].includes(k)).length / 10, 0) /
      r.tops.length;
  }
  console.log(
    '\n| library | N | build s (CPU) | heap MiB | query p50 / p95 ms (CPU) | docs matched | top 10 shared with BM25 | serialised MB | save / load s |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of all) {
    const label = Object.entries(SIZES).find(([, n]) => n === r.n)?.[0] ?? r.n;
    if (r.status !== 'ok') {
      console.log(`| ${r.lib} | ${label} | ${r.status}: ${r.reason} | | | | | | |`);
      continue;
    }
    console.log(
      `| ${r.lib} ${r.version} | ${label} | ${f(r.buildMs! / 1000, 1)} (${f(r.buildCpuMs! / 1000, 1)}) | ${f(r.heapMb)} | ${f(r.queryP50Ms, 1)} / ${f(r.queryP95Ms, 1)} (${f(r.queryCpuP50Ms, 1)} / ${f(r.queryCpuP95Ms, 1)}) | ${f(r.matchesPerQuery)} | ${f(r.agreement, 2)} | ${r.saveError ? `failed: ${r.saveError}` : r.serialisedMb === undefined ? 'n/a' : f(r.serialisedMb)} | ${r.saveMs === undefined || r.loadMs === undefined ? 'n/a' : `${f(r.saveMs / 1000, 1)} / ${f(r.loadMs / 1000, 1)}`} |`,
    );
  }
  const out = {
    date: new Date().toISOString(),
    environment: `Node ${process.version}, --max-old-space-size=${HEAP_MB}, one process per library and size`,
    data: 'Synthetic English-like sentences (bench/core/text.ts): 30k pseudo-words, Zipf–Mandelbrot (s 1, q 30), 42 % function words, 5 % names, 3 % numbers, 6–22 words; queries 3–8 words about one sentence; every library given the engine tokenizer',
    results: all,
  };
  writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  console.log('\nwrote bench/results-lexical.json');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
