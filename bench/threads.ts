// `npx tsx bench/threads.ts`: embedding throughput with the ONNX runtime's threads, in a page that
// is cross-origin isolated and in one that is not. The hub's MiniLM cannot be downloaded here, so
// the model is a stand-in of its shape and cost: six layers of MiniLM-L6's feed-forward block
// (384 → 1536 → 384 matrix products with a residual add) over 32-token sentences, random weights,
// built with onnx-proto. The page runs onnxruntime-web (the version transformers.js uses) on its
// wasm backend, batches of 32, and reports sentences per second. bench/README.md, "Threads".
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { onnx as OnnxNamespace } from 'onnx-proto';
import { launchChromium } from '../test/e2e/chromium';
import { serveStatic } from '../test/e2e/static-server';
import { ISOLATION_HEADERS } from '../src/isolation';

const require = createRequire(import.meta.url);
const { onnx } = require('onnx-proto') as { onnx: typeof OnnxNamespace };

const HIDDEN = 384;
const FFN = 1536;
const LAYERS = 6;
const SEQ = 32;
const BATCH = 32;
const RUNS = 5;
const BATCHES_PER_RUN = 3;

function randomFloats(n: number, scale: number): Uint8Array {
  const values = new Float32Array(n);
  for (let i = 0; i < n; i++) values[i] = (Math.random() * 2 - 1) * scale;
  return new Uint8Array(values.buffer);
}

function buildModel(): Uint8Array {
  const T = onnx.TensorProto.DataType;
  const initializer: OnnxNamespace.ITensorProto[] = [];
  const node: OnnxNamespace.INodeProto[] = [];
  let x = 'hidden_0';
  for (let l = 0; l < LAYERS; l++) {
    initializer.push(
      {
        name: `w1_${l}`,
        dataType: T.FLOAT,
        dims: [HIDDEN, FFN],
        rawData: randomFloats(HIDDEN * FFN, 0.05),
      },
      {
        name: `w2_${l}`,
        dataType: T.FLOAT,
        dims: [FFN, HIDDEN],
        rawData: randomFloats(FFN * HIDDEN, 0.05),
      },
    );
    node.push(
      { opType: 'MatMul', input: [x, `w1_${l}`], output: [`up_${l}`] },
      { opType: 'Relu', input: [`up_${l}`], output: [`act_${l}`] },
      { opType: 'MatMul', input: [`act_${l}`, `w2_${l}`], output: [`down_${l}`] },
      { opType: 'Add', input: [x, `down_${l}`], output: [`hidden_${l + 1}`] },
    );
    x = `hidden_${l + 1}`;
  }
  const io = (name: string): OnnxNamespace.IValueInfoProto => ({
    name,
    type: {
      tensorType: {
        elemType: T.FLOAT,
        shape: { dim: [{ dimParam: 'batch' }, { dimParam: 'seq' }, { dimValue: HIDDEN }] },
      },
    },
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 17 }],
    graph: { name: 'ffn_stand_in', initializer, node, input: [io('hidden_0')], output: [io(x)] },
  });
  return onnx.ModelProto.encode(model).finish();
}

const PAGE = `<!doctype html><meta charset="utf-8"><title>threads</title>
<script type="module">
import * as ort from './ort.wasm.min.mjs';
window.bench = async (threads) => {
  if (threads) ort.env.wasm.numThreads = threads;
  ort.env.wasm.wasmPaths = new URL('./', location.href).href;
  const session = await ort.InferenceSession.create('./model.onnx', { executionProviders: ['wasm'] });
  const input = new ort.Tensor('float32', new Float32Array(${BATCH * SEQ * HIDDEN}).map(() => Math.random()), [${BATCH}, ${SEQ}, ${HIDDEN}]);
  await session.run({ hidden_0: input });
  const rates = [];
  for (let r = 0; r < ${RUNS}; r++) {
    const start = performance.now();
    for (let b = 0; b < ${BATCHES_PER_RUN}; b++) await session.run({ hidden_0: input });
    rates.push((${BATCH * BATCHES_PER_RUN} * 1000) / (performance.now() - start));
  }
  return { rates, isolated: crossOriginIsolated, threads: ort.env.wasm.numThreads, cores: navigator.hardwareConcurrency };
};
</script>`;

const dir = await mkdtemp(join(tmpdir(), 'sm-threads-'));
const fromTransformers = createRequire(require.resolve('@huggingface/transformers'));
const ortDir = dirname(fromTransformers.resolve('onnxruntime-web/ort-wasm-simd-threaded.wasm'));
for (const file of [
  'ort.wasm.min.mjs',
  'ort-wasm-simd-threaded.mjs',
  'ort-wasm-simd-threaded.wasm',
]) {
  await copyFile(join(ortDir, file), join(dir, file));
}
await writeFile(join(dir, 'model.onnx'), buildModel());
await writeFile(join(dir, 'index.html'), PAGE);

const browser = await launchChromium();
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
try {
  const cases: { label: string; headers: Record<string, string>; threads?: number }[] = [
    { label: 'not isolated (plain host, first load)', headers: {} },
    { label: 'isolated, 1 thread', headers: { ...ISOLATION_HEADERS }, threads: 1 },
    { label: 'isolated, 2 threads', headers: { ...ISOLATION_HEADERS }, threads: 2 },
    { label: 'isolated, 4 threads', headers: { ...ISOLATION_HEADERS }, threads: 4 },
  ];
  for (const c of cases) {
    const server = await serveStatic(dir, { headers: c.headers });
    const page = await browser.newPage();
    await page.goto(server.url);
    await page.waitForFunction(() => 'bench' in window);
    const r = (await page.evaluate(
      (t) => (window as unknown as { bench(t?: number): Promise<unknown> }).bench(t),
      c.threads,
    )) as { rates: number[]; isolated: boolean; threads: number; cores: number };
    console.log(
      `${c.label}: median ${median(r.rates).toFixed(1)} sentences/s (runs ${r.rates.map((x) => x.toFixed(1)).join(', ')}); crossOriginIsolated ${r.isolated}, numThreads ${r.threads}, ${r.cores} cores`,
    );
    await page.close();
    await server.close();
  }
} finally {
  await browser.close();
  await rm(dir, { recursive: true, force: true });
}
