// The sign-code first pass measured (issue 26): recall@10 of the vector search against the exact
// top 10 (f32, brute force) and its time, at 100k and 1M rows, for three kinds of vectors and
// several candidate counts, beside the one-stage int8 search on the same index. Node, one
// process; `npx tsx bench/two-stage.ts [--sizes=100k,1m] [--data=synthetic,standin,bundled]
// [--queries=40]` writes bench/results-two-stage.json. The vector data:
// - synthetic: the benchmarks' 384-d rows (bench/synthetic.ts: cluster mates differ by thousandths)
// - standin: a MiniLM-shaped stand-in (384-d, a common direction every vector shares, uneven
//   dimension scales, topics and subtopics; see `standIn`)
// - bundled: the bundled model's own 100-d embeddings of sentences made from LoCoMo's turns (the
//   first words of one sentence, the last of another), so every row is a different real text
import { readFileSync, writeFileSync } from 'node:fs';
import { BUNDLED_MODEL, createEmbedder } from '../src/memory';
import { ChunkVectors } from '../src/memory/chunk-vectors';
import { splitSentences } from '../src/memory/text';
import { summarise } from './core/report';
import { MINILM_LIKE, SyntheticVectors, mulberry32, recall } from './synthetic';

const arg = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(3 + name.length);
const SIZES = (arg('sizes') ?? '100k,1m')
  .split(',')
  .map((s) => (s === '1m' ? 1_000_000 : parseInt(s) * 1000));
const DATA = (arg('data') ?? 'synthetic,standin,bundled').split(',');
const QUERIES = Number(arg('queries') ?? 40);
const SHARES = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02];
const now = () => performance.now();

interface Source {
  dims: number;
  rows(first: number, count: number): Promise<Float32Array>;
  query(i: number): Promise<Float32Array>;
}

function synthetic(): Source {
  const gen = new SyntheticVectors({ ...MINILM_LIKE, seed: 20_251_122 });
  return { dims: 384, rows: async (f, c) => gen.rows(f, c), query: async (i) => gen.query(i) };
}

/**
 * A MiniLM-shaped stand-in: v = normalise(0.45·m + s ⊙ (topic + 0.7·subtopic + 0.9·g)), m one
 * unit direction every vector shares (unrelated texts then have cosine ≈ 0.2, as sentence
 * models give), s per-dimension scales from a log-normal (a few dimensions dominate, as in
 * MiniLM), 200 topics of 20 subtopics each.
 */
function standIn(): Source {
  const dims = 384;
  const rand = mulberry32(7);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const unit = () => {
    const v = Float32Array.from({ length: dims }, gauss);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  const common = unit();
  const scale = Float32Array.from({ length: dims }, () => Math.exp(0.5 * gauss()));
  const topics = Array.from({ length: 200 }, unit);
  const subs = Array.from({ length: 200 * 20 }, unit);
  const point = (seed: number, out: Float32Array) => {
    const r = mulberry32(seed);
    const g = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
    const sub = Math.floor(r() * subs.length);
    const t = topics[Math.floor(sub / 20)];
    const u = subs[sub];
    const noise = 0.9 / Math.sqrt(dims);
    for (let i = 0; i < dims; i++) out[i] = scale[i] * (t[i] + 0.7 * u[i] + noise * g());
    let n = Math.hypot(...out);
    for (let i = 0; i < dims; i++) out[i] = out[i] / n + 0.45 * common[i];
    n = Math.hypot(...out);
    for (let i = 0; i < dims; i++) out[i] /= n;
    return out;
  };
  return {
    dims,
    rows: async (first, count) => {
      const out = new Float32Array(count * dims);
      for (let i = 0; i < count; i++)
        point(0x1000 + first + i, out.subarray(i * dims, (i + 1) * dims));
      return out;
    },
    query: async (i) => point(0x7fff0000 - i, new Float32Array(dims)),
  };
}

async function bundled(): Promise<Source> {
  const data = JSON.parse(
    readFileSync(new URL('../../shared/data/locomo-dev.json', import.meta.url), 'utf8'),
  ) as { conversation: Record<string, unknown> }[];
  const sentences: string[][] = [];
  for (const c of data) {
    for (const [key, turns] of Object.entries(c.conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(turns)) continue;
      for (const t of turns as { text: string }[])
        for (const s of splitSentences(t.text)) {
          const words = s.split(/\s+/).filter(Boolean);
          if (words.length >= 3) sentences.push(words);
        }
    }
  }
  const embedder = createEmbedder({ model: BUNDLED_MODEL, fallback: false });
  const info = await embedder.ready();
  const text = (seed: number) => {
    const r = mulberry32(seed);
    const a = sentences[Math.floor(r() * sentences.length)];
    const b = sentences[Math.floor(r() * sentences.length)];
    const cut = 1 + Math.floor(r() * (a.length - 1));
    return [...a.slice(0, cut), ...b.slice(Math.floor(r() * b.length))].join(' ');
  };
  const embed = async (texts: string[]) => {
    const out = new Float32Array(texts.length * info.dims);
    for (let i = 0; i < texts.length; i += 256) {
      const v = await embedder.embed(texts.slice(i, i + 256));
      v.forEach((x, j) => out.set(x, (i + j) * info.dims));
    }
    return out;
  };
  console.log(`bundled: ${info.id}, ${info.dims}-d, ${sentences.length} LoCoMo sentences`);
  return {
    dims: info.dims,
    rows: (first, count) => embed(Array.from({ length: count }, (_, i) => text(first + i))),
    query: async (i) => (await embed([text(0x7fff0000 - i)])).slice(),
  };
}

function exactTop(data: Float32Array, dims: number, n: number, q: Float32Array, k: number) {
  const scores = new Float32Array(n);
  for (let r = 0; r < n; r++) {
    let s = 0;
    const b = r * dims;
    for (let j = 0; j < dims; j++) s += q[j] * data[b + j];
    scores[r] = s;
  }
  const idx = Array.from({ length: n }, (_, i) => i);
  return idx.sort((a, b) => scores[b] - scores[a]).slice(0, k);
}

const results: Record<string, unknown>[] = [];
for (const name of DATA) {
  const src = name === 'synthetic' ? synthetic() : name === 'standin' ? standIn() : await bundled();
  const max = Math.max(...SIZES);
  const { dims } = src;
  const t0 = now();
  const data = new Float32Array(max * dims);
  for (let f = 0; f < max; f += 16_384)
    data.set(await src.rows(f, Math.min(16_384, max - f)), f * dims);
  console.log(`${name}: ${max} rows made in ${((now() - t0) / 1000).toFixed(1)} s`);
  const queries = await Promise.all(Array.from({ length: QUERIES }, (_, i) => src.query(i)));
  // Mean cosine of random pairs (how much the vectors share one direction).
  let pair = 0;
  for (let i = 0; i < 1000; i++) {
    const a = (i * 7919) % max;
    const b = (i * 104_729 + 13) % max;
    for (let j = 0; j < dims; j++) pair += data[a * dims + j] * data[b * dims + j];
  }
  for (const n of SIZES) {
    const cv = new ChunkVectors(dims);
    cv.reserve(n);
    for (let f = 0; f < n; f += 4096) {
      const c = Math.min(4096, n - f);
      cv.addMany(
        Float64Array.from({ length: c }, (_, i) => f + i + 1),
        new Float64Array(c).fill(1),
        data.subarray(f * dims, (f + c) * dims),
      );
    }
    const opts = (
      cv as unknown as { opts: { signFrom: number; signShare: number; signMin: number } }
    ).opts;
    const fetch = async (ids: number[]) => ids.map((id) => data.slice((id - 1) * dims, id * dims));
    const exact = queries.map((q) => exactTop(data, dims, n, q, 10));
    const run = async (label: string) => {
      const times: number[] = [];
      const rec: number[] = [];
      for (let w = 0; w < 3; w++) await cv.search(null, queries[w], 10, fetch);
      for (let i = 0; i < QUERIES; i++) {
        const a = now();
        const hits = await cv.search(null, queries[i], 10, fetch);
        times.push(now() - a);
        rec.push(
          recall(
            hits.map((h) => h.id - 1),
            exact[i],
          ),
        );
      }
      const r = {
        data: name,
        dims,
        n,
        mode: label,
        candidates: label === 'int8' ? n : Math.max(opts.signMin, Math.ceil(n * opts.signShare)),
        recall_at_10: rec.reduce((s, x) => s + x, 0) / rec.length,
        recall_min: Math.min(...rec),
        ms: summarise(times),
      };
      results.push(r);
      console.log(
        `${name} ${n} ${label}: recall@10 ${r.recall_at_10.toFixed(3)} (min ${r.recall_min.toFixed(1)}), ${r.candidates} candidates, median ${r.ms.median.toFixed(2)} ms`,
      );
    };
    console.log(
      `${name} ${n}: mode ${JSON.stringify(cv.mode)}, mean pair cosine ${(pair / 1000).toFixed(3)}`,
    );
    opts.signFrom = Infinity;
    await run('int8');
    opts.signFrom = 0;
    opts.signMin = 0;
    for (const share of SHARES) {
      opts.signShare = share;
      await run(`signs ${share}`);
    }
  }
  writeFileSync(
    new URL('./results-two-stage.json', import.meta.url),
    JSON.stringify({ date: new Date().toISOString(), queries: QUERIES, results }, null, 2) + '\n',
  );
}
