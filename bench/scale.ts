// `npx tsx bench/scale.ts [--sizes=1m,2m,5m] [--dir=PATH] [--queries=N]`: where the limit is.
// Writes the engine's chunk shards (`packShard`: ids, conversations, f32 vectors, turns and the
// packed words, exactly as the engine stores them) for the largest size, one file per shard in
// V8's serialisation (the format Chromium's IndexedDB keeps its values in), then for each size:
// the stored bytes, a cold load of that many shards through `SemanticIndex.load()` (the real
// load: int8 vectors into the kernel memory, the word index from the packed terms), the
// process's memory after it, and the vector, word and fused chunk searches over it (searchChunks'
// code; the candidates' rows, read by key for rescoring, are generated in process as
// `npm run bench` does at 1M). Results into bench/results-scale.json. Needs `--expose-gc` and a
// large heap; run as
//   nice -n 10 node --expose-gc --max-old-space-size=16000 --import tsx bench/scale.ts
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { MemoryDB } from '../src/memory/db';
import { SemanticIndex } from '../src/memory/semantic-index';
import { SHARD_SPAN, packShard, type ChunkShard } from '../src/memory/shards';
import { summarise } from './core/report';
import { searchChunkIndex } from '../src/memory/search';
import type { Chunk } from '../src/memory/types';
import type { Table } from 'dexie';
import { BENCH_MODEL, benchText, chunkRow, generatedRows } from './core/workloads';
import { MINILM_LIKE, SyntheticVectors } from './synthetic';

const arg = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const parseSize = (s: string) => Math.round(parseFloat(s) * (s.endsWith('m') ? 1e6 : 1e3));
const SIZES = (arg('sizes') ?? '1m,2m,5m').split(',').map(parseSize);
const DIR = arg('dir') ?? join(tmpdir(), 'sm-scale-shards');
const QUERIES = Number(arg('queries') ?? 20);
const conversationOf = (id: number) => (id - 1) % 1000;
const gc = (globalThis as { gc?: () => void }).gc;

const log = (s: string) =>
  console.log(
    `[${new Date().toISOString().slice(11, 19)}] ${s} (load ${loadavg()[0].toFixed(1)}, free ${(freemem() / 2 ** 30).toFixed(1)} GiB)`,
  );
const mib = (b: number) => Math.round(b / 2 ** 20);
const cpuMs = (from?: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(from);
  return (c.user + c.system) / 1000;
};

/**
 * searchChunks' search over every conversation (k = 10, recency bias 0): fused, and with one
 * signal each, on queries of the bench's kind; wall and CPU time of each (the CPU time is what
 * an idle core would take: this machine is shared).
 */
async function queries(
  idx: SemanticIndex,
  rows: Table<Chunk, number>,
  n: number,
  gen: SyntheticVectors,
) {
  const texts = benchText();
  const out = {
    fused: { wall: [] as number[], cpu: [] as number[] },
    vectors_only: { wall: [] as number[], cpu: [] as number[] },
    words_only: { wall: [] as number[], cpu: [] as number[] },
  };
  const nowMs = Date.now();
  const WARM = 3;
  for (let i = 0; i < WARM + QUERIES; i++) {
    for (const [kind, signals] of [
      ['fused', undefined],
      ['vectors_only', 'semantic'],
      ['words_only', 'lexical'],
    ] as const) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await searchChunkIndex(
        rows,
        idx,
        null,
        {
          text: texts.query(i, n),
          vector: gen.query(i),
          info: BENCH_MODEL,
          ...(signals ? { signals } : {}),
        },
        10,
        0,
        nowMs,
      );
      if (i < WARM) continue;
      out[kind].wall.push(performance.now() - t0);
      out[kind].cpu.push(cpuMs(c0));
    }
  }
  const s = (a: { wall: number[]; cpu: number[] }) => ({
    wall: summarise(a.wall),
    cpu: summarise(a.cpu),
  });
  return { fused: s(out.fused), vectors_only: s(out.vectors_only), words_only: s(out.words_only) };
}

function memory() {
  for (let i = 0; i < 3; i++) gc?.();
  const m = process.memoryUsage();
  return {
    rss_mib: mib(m.rss),
    heap_used_mib: mib(m.heapUsed),
    array_buffers_mib: mib(m.arrayBuffers),
    external_mib: mib(m.external),
  };
}

/** The shard files for ids 1..n (one per SHARD_SPAN range), written unless already there. */
async function writeShards(gen: SyntheticVectors, n: number): Promise<number[]> {
  await mkdir(DIR, { recursive: true });
  const bytes: number[] = [];
  const t0 = performance.now();
  for (let range = 0; range * SHARD_SPAN <= n; range++) {
    const first = Math.max(1, range * SHARD_SPAN);
    const last = Math.min(n, (range + 1) * SHARD_SPAN - 1);
    if (last < first) break;
    const file = join(DIR, `${range}.v8`);
    const have = await stat(file).catch(() => null);
    if (have) {
      bytes.push(have.size);
      continue;
    }
    const vectors = gen.rows(first - 1, last - first + 1);
    const d = gen.spec.dims;
    const rows = Array.from({ length: last - first + 1 }, (_, i) =>
      chunkRow(first + i, conversationOf(first + i), vectors.subarray(i * d, (i + 1) * d)),
    );
    const data = serialize(packShard(BENCH_MODEL.id, range, rows));
    await writeFile(file, data);
    bytes.push(data.length);
    if (range % 128 === 0) log(`  shards: ${last} rows written`);
  }
  log(`shards for ${n} written in ${Math.round((performance.now() - t0) / 1000)} s`);
  return bytes;
}

/**
 * What `SemanticIndex.load()` reads, over the shard files: the shard table's key index (range,
 * count) and its rows by key, the chunk table's newest id. Each read goes to disk and is
 * deserialised, as a cold start's does.
 */
function shardDb(n: number): MemoryDB {
  const ranges = Math.floor(n / SHARD_SPAN) + 1;
  const count = (r: number) =>
    Math.min(n, (r + 1) * SHARD_SPAN - 1) - Math.max(1, r * SHARD_SPAN) + 1;
  const read = async (key: number) => {
    const s = deserialize(await readFile(join(DIR, `${key - 1}.v8`))) as ChunkShard;
    if (s.range === ranges - 1 && s.count > count(s.range)) {
      // The largest size's last full shard cut down to this size.
      const c = count(s.range);
      const d = s.vectors.length / s.count;
      const w = s.words!;
      return {
        ...s,
        count: c,
        ids: s.ids.slice(0, c),
        conversations: s.conversations.slice(0, c),
        turns: s.turns?.slice(0, c),
        vectors: s.vectors.slice(0, c * d),
        words: {
          ...w,
          offsets: w.offsets.slice(0, c + 1),
          terms: w.terms.slice(0, w.offsets[c]),
          freqs: w.freqs.slice(0, w.offsets[c]),
        },
      } as ChunkShard;
    }
    return s;
  };
  const shards = {
    where: () => ({
      between: () => ({
        eachKey: async (cb: (key: unknown, cursor: { primaryKey: number }) => void) => {
          for (let r = 0; r < ranges; r++)
            if (count(r) > 0) cb([BENCH_MODEL.id, r, count(r)], { primaryKey: r + 1 });
        },
      }),
    }),
    bulkGet: (keys: number[]) => Promise.all(keys.map(read)),
  };
  const chunks = {
    where: () => ({
      equals: () => ({ reverse: () => ({ limit: () => ({ primaryKeys: async () => [n] }) }) }),
    }),
    ...generatedRows(new SyntheticVectors({ ...MINILM_LIKE, seed: SEED }), n, conversationOf),
  };
  return {
    shards,
    chunks,
    transaction: (_m: string, _a: unknown, _b: unknown, fn: () => Promise<unknown>) => fn(),
  } as unknown as MemoryDB;
}

const SEED = 20_251_122;

async function main() {
  const gen = new SyntheticVectors({ ...MINILM_LIKE, seed: SEED });
  const largest = Math.max(...SIZES);
  log(
    `scale run to ${largest} chunks: ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, node ${process.version}`,
  );
  benchText();
  const shardBytes = await writeShards(gen, largest);
  const results: Record<string, unknown>[] = [];
  for (const n of SIZES) {
    const shardsUsed = Math.floor(n / SHARD_SPAN) + 1;
    const stored = shardBytes.slice(0, shardsUsed).reduce((a, b) => a + b, 0);
    // A chunk row holds its f32 vector (dims × 4 bytes), its sentence and a few fields: V8's
    // serialisation of one generated row, times n.
    const rowBytes = serialize(chunkRow(n, conversationOf(n), gen.row(n - 1))).length;
    const before = memory();
    log(`${n}: cold load of ${shardsUsed} shards (${mib(stored)} MiB on disk)`);
    const db = shardDb(n);
    const idx = new SemanticIndex(db, BENCH_MODEL.id, BENCH_MODEL.dims);
    let loadMs: number;
    let loadCpuMs: number;
    try {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await idx.load();
      loadMs = performance.now() - t0;
      loadCpuMs = cpuMs(c0);
    } catch (e) {
      log(`${n}: the load failed: ${(e as Error).message}`);
      results.push({ n, failed: String((e as Error).message), memory_before: before });
      break;
    }
    const after = memory();
    const info = idx.info();
    log(
      `  loaded in ${Math.round(loadMs)} ms (${Math.round(loadCpuMs)} ms CPU); ${info.chunks} chunks, kernel ${mib(info.kernelBytes)} MiB, rss ${after.rss_mib} MiB`,
    );
    const q = await queries(idx, db.chunks as unknown as Table<Chunk, number>, n, gen);
    const r = {
      n,
      shards: shardsUsed,
      shard_bytes_mib: mib(stored),
      chunk_row_bytes: rowBytes,
      chunk_rows_mib: mib(rowBytes * n),
      load_ms: Math.round(loadMs),
      load_cpu_ms: Math.round(loadCpuMs),
      memory: after,
      memory_added_mib: after.rss_mib - before.rss_mib,
      index: {
        kernel_mib: mib(info.kernelBytes),
        vector_mib: mib(info.vectorBytes),
        ids_mib: mib(info.metaBytes),
        words_own_count_mib: mib(idx.words.memoryBytes()),
        mode: { quantised: info.quantised, f32InMemory: info.f32InMemory },
      },
      query_ms: q,
      load_average: loadavg()[0],
    };
    results.push(r);
    log(
      `  fused ${q.fused.wall.median.toFixed(1)} ms, ${q.fused.cpu.median.toFixed(1)} CPU (vectors ${q.vectors_only.wall.median.toFixed(1)}, ${q.vectors_only.cpu.median.toFixed(1)} CPU; words ${q.words_only.wall.median.toFixed(1)}, ${q.words_only.cpu.median.toFixed(1)} CPU); words ${r.index.words_own_count_mib} MiB; heap ${after.heap_used_mib} MiB`,
    );
    writeFileSync(
      new URL('./results-scale.json', import.meta.url),
      JSON.stringify(
        {
          date: new Date().toISOString(),
          environment: `Node ${process.version}, ${cpus().length} cores (shared), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
          data: 'bench/synthetic.ts MiniLM-shaped 384-d vectors and bench/core/text.ts sentences, 1,000 conversations',
          results,
        },
        null,
        2,
      ) + '\n',
    );
  }
  if (!process.argv.includes('--keep')) await rm(DIR, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
