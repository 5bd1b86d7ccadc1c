// The engine workloads of the first benchmark (issue 2), run by `npm run bench` after the scale
// metrics: warm heading query over 1,000 entries × 5 chunks, saveMemory with a 10,000-chunk
// index, bundled-model embedding throughput and the plain JS scoring loop over 10k vectors.
import { BUNDLED_MODEL, createEmbedder, openMemory } from '../src/memory';
import { MemoryDB } from '../src/memory/db';
import { dotRow, topK } from '../src/memory/scoring';
import type { Chunk, MemoryEntry } from '../src/memory/types';

const ENTRIES = 1000;
const CHUNKS_PER_ENTRY = 5;
const INDEX_CHUNKS = 10_000;
const SAVES = 60;

function randomUnit(dims: number, rand: () => number): Float32Array {
  const v = new Float32Array(dims);
  let n = 0;
  for (let i = 0; i < dims; i++) {
    v[i] = rand() * 2 - 1;
    n += v[i] * v[i];
  }
  n = Math.sqrt(n);
  for (let i = 0; i < dims; i++) v[i] /= n;
  return v;
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { min: s[0], p50: q(0.5), p95: q(0.95), max: s[s.length - 1], runs: s.length };
}

const round = (n: number) => Math.round(n * 100) / 100;

export async function engineBench() {
  const embedder = createEmbedder({ model: BUNDLED_MODEL });
  const info = await embedder.ready();
  const rand = seeded(42);
  const words =
    'project goal schema window sync budget meeting travel recipe garden music code'.split(' ');
  const sentence = (i: number) =>
    `Note ${i}: the ${words[i % words.length]} plan covers ${words[(i * 7) % words.length]} and ${words[(i * 3) % words.length]} this week.`;

  // 1. Embedding throughput of the bundled model (batches of 32).
  const texts = Array.from({ length: 2048 }, (_, i) => sentence(i));
  await embedder.embed(texts.slice(0, 64)); // warm-up
  let t0 = performance.now();
  for (let i = 0; i < texts.length; i += 32) await embedder.embed(texts.slice(i, i + 32));
  const embedSeconds = (performance.now() - t0) / 1000;
  const sentencesPerSecond = texts.length / embedSeconds;

  // 2. Raw scoring kernel: dot products over a packed matrix + top-10.
  const kernel: Record<string, ReturnType<typeof stats>> = {};
  for (const dims of [info.dims, 384]) {
    const n = 10_000;
    const packed = new Float32Array(n * dims);
    for (let r = 0; r < n; r++) packed.set(randomUnit(dims, rand), r * dims);
    const q = randomUnit(dims, rand);
    const scores = new Float32Array(n);
    const samples: number[] = [];
    for (let run = 0; run < 50; run++) {
      t0 = performance.now();
      for (let r = 0; r < n; r++) scores[r] = dotRow(q, packed, r, dims);
      topK(scores, 10);
      samples.push(performance.now() - t0);
    }
    kernel[`score_10k_${dims}d_ms`] = stats(samples.slice(5));
  }

  // 3. Warm queryMemoryHeading with a query over 1,000 entries x 5 chunks.
  const headingDb = `bench-heading-${Date.now()}`;
  {
    const db = new MemoryDB(headingDb);
    const at = new Date();
    const rows: MemoryEntry[] = Array.from({ length: ENTRIES }, (_, i) => {
      const path = `Bench/Topic${i % 20}/Entry${i}`;
      return {
        path,
        heading: `Entry${i}`,
        parent_path: `Bench/Topic${i % 20}`,
        content: sentence(i),
        contextChunks: Array.from({ length: CHUNKS_PER_ENTRY }, (_, c) => ({
          turn_id: i,
          sentence_id: c,
          role: 'user' as const,
          text: sentence(i + c),
          embedding: randomUnit(info.dims, rand),
          similarity: 0.5,
          tokenCount: 20,
        })),
        embedding: randomUnit(info.dims, rand),
        model: info.id,
        created: at,
        modified: new Date(at.getTime() - i * 3_600_000),
        accessed: at,
        version: 1,
      };
    });
    await db.structured_memory.bulkAdd(rows);
    db.close();
  }
  const mem = openMemory({ name: headingDb, embedder });
  t0 = performance.now();
  await mem.queryMemoryHeading('Bench', 'which plan covers the schema?'); // cold: fills the index
  const coldHeadingMs = performance.now() - t0;
  const headingSamples: number[] = [];
  for (let i = 0; i < 30; i++) {
    t0 = performance.now();
    const r = await mem.queryMemoryHeading(
      'Bench',
      `which plan covers the ${words[i % words.length]}?`,
    );
    headingSamples.push(performance.now() - t0);
    if (r.status !== 'SUCCESS') throw new Error(`heading query failed: ${JSON.stringify(r)}`);
  }
  await mem.close();

  // 4. saveMemory latency with a 10,000-chunk semantic index in the current conversation.
  const saveDb = `bench-save-${Date.now()}`;
  {
    const db = new MemoryDB(saveDb);
    const at = new Date();
    const chunks: Chunk[] = Array.from({ length: INDEX_CHUNKS }, (_, i) => ({
      conversationId: 1,
      turnId: Math.floor(i / 10) + 1,
      sentenceId: i % 10,
      role: i % 2 ? 'assistant' : 'user',
      text: sentence(i),
      tokenCount: 18,
      embedding: randomUnit(info.dims, rand),
      model: info.id,
      time: at,
    }));
    await db.chunks.bulkAdd(chunks);
    db.close();
  }
  const saver = openMemory({ name: saveDb, embedder });
  await saver.recordTurn({ conversationId: 1, role: 'user', text: 'Let us plan the schema.' });
  await saver.saveMemory('Warmup/Entry', 'warm-up'); // fills the index once
  const saveSamples: number[] = [];
  for (let i = 0; i < SAVES; i++) {
    t0 = performance.now();
    const r = await saver.saveMemory(`Saves/Goal${i % 20}`, { note: sentence(i), n: i });
    saveSamples.push(performance.now() - t0);
    if (r.status !== 'SUCCESS') throw new Error(`save failed: ${JSON.stringify(r)}`);
  }
  await saver.close();

  const heading = stats(headingSamples);
  const save = stats(saveSamples);
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    storage: 'fake-indexeddb (Node)',
    model: info.id,
    dims: info.dims,
    embed_sentences_per_s: round(sentencesPerSecond),
    heading_query_1000x5_warm_ms: heading,
    heading_query_1000x5_cold_ms: round(coldHeadingMs),
    save_with_10k_chunks_ms: save,
    ...kernel,
    targets: { score_10k_ms: 15, save_p50_ms: 250 },
  };
  const rows = [
    ['bundled-model embedding', `${round(sentencesPerSecond)} sentences/s`, ''],
    ...Object.entries(kernel).map(([k, st]) => [
      k,
      `p50 ${round(st.p50)} ms (min ${round(st.min)}, max ${round(st.max)})`,
      '≤ 15 ms',
    ]),
    [
      'queryMemoryHeading warm, 1000×5',
      `p50 ${round(heading.p50)} ms, p95 ${round(heading.p95)} ms (min ${round(heading.min)}, max ${round(heading.max)})`,
      '',
    ],
    ['queryMemoryHeading cold (index fill)', `${round(coldHeadingMs)} ms`, ''],
    [
      'saveMemory, 10k-chunk index',
      `p50 ${round(save.p50)} ms, p95 ${round(save.p95)} ms (min ${round(save.min)}, max ${round(save.max)})`,
      'p50 ≤ 250 ms',
    ],
  ];
  console.log('\nEngine workloads (bundled model, fake-indexeddb)\n');
  for (const [name, value, target] of rows) {
    console.log(`${name.padEnd(40)} ${value.padEnd(60)} ${target}`);
  }
  await embedder.dispose();
  return results;
}
