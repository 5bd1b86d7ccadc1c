// The bundled static model without a neural runtime: its Hugging Face tokenizer (the same
// @huggingface/tokenizers code transformers.js runs), its int8 embedding table read straight out
// of the committed ONNX file, and mean pooling + L2 normalisation in plain TypeScript. Gives the
// vectors the transformers.js pipeline gives for the same files (docs/bundled-model.md,
// "Running it without the ONNX runtime"; docs/decisions/0009-static-model-without-runtime.md).
import { Tokenizer } from '@huggingface/tokenizers';

/** The files of a static model, relative to its folder. */
export const STATIC_MODEL_FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  'onnx/model.onnx',
] as const;
export type StaticModelFile = (typeof STATIC_MODEL_FILES)[number];

/** The model's files, as fetched or read. */
export interface StaticModelSources {
  tokenizerJson: unknown;
  tokenizerConfig: unknown;
  onnx: Uint8Array;
}

/** A loaded static model: one L2-normalised vector per text (a zero vector if no word is known). */
export interface StaticModel {
  dims: number;
  vocabSize: number;
  embed(text: string): Float32Array;
}

/** Thrown when a file is not what the bundled static model's build writes. */
export class StaticModelFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaticModelFormatError';
  }
}

interface Initializer {
  name: string;
  dataType: number;
  dims: number[];
  raw: Uint8Array;
}

const ONNX_INT8 = 3;
const ONNX_FLOAT = 1;

/** A protobuf reader over just what an ONNX initializer needs (varints and length-delimited). */
class Reader {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.length,
  ) {
    this.pos = start;
  }
  varint(): number {
    let result = 0;
    let shift = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new StaticModelFormatError('model.onnx ends inside a number');
      const b = this.bytes[this.pos++];
      result += (b & 0x7f) * shift;
      if (b < 0x80) return result;
      shift *= 128;
    }
    throw new StaticModelFormatError('model.onnx holds a malformed number');
  }
  /** Skips a field of wire type `wire`, or returns [start, end) of a length-delimited one. */
  field(wire: number): [number, number] | null {
    switch (wire) {
      case 0:
        this.varint();
        return null;
      case 1:
        this.pos += 8;
        break;
      case 5:
        this.pos += 4;
        break;
      case 2: {
        const length = this.varint();
        const start = this.pos;
        this.pos += length;
        if (this.pos > this.end) throw new StaticModelFormatError('model.onnx is cut short');
        return [start, this.pos];
      }
      default:
        throw new StaticModelFormatError(`model.onnx has an unknown protobuf wire type ${wire}`);
    }
    if (this.pos > this.end) throw new StaticModelFormatError('model.onnx is cut short');
    return null;
  }
}

function readTensor(bytes: Uint8Array, start: number, end: number): Initializer {
  const r = new Reader(bytes, start, end);
  const out: Initializer = { name: '', dataType: 0, dims: [], raw: new Uint8Array(0) };
  while (r.pos < end) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (field === 1 && wire === 0) out.dims.push(r.varint());
    else if (field === 1 && wire === 2) {
      const [s, e] = r.field(2)!;
      const packed = new Reader(bytes, s, e);
      while (packed.pos < e) out.dims.push(packed.varint());
    } else if (field === 2 && wire === 0) out.dataType = r.varint();
    else if ((field === 8 || field === 9) && wire === 2) {
      const [s, e] = r.field(2)!;
      if (field === 8) out.name = new TextDecoder().decode(bytes.subarray(s, e));
      else out.raw = bytes.subarray(s, e);
    } else r.field(wire);
  }
  return out;
}

/** The graph's initializers (ModelProto.graph = 7, GraphProto.initializer = 5). */
export function readOnnxInitializers(bytes: Uint8Array): Map<string, Initializer> {
  const found = new Map<string, Initializer>();
  const model = new Reader(bytes);
  while (model.pos < bytes.length) {
    const key = model.varint();
    const span = model.field(key & 7);
    if (key >>> 3 !== 7 || !span) continue;
    const graph = new Reader(bytes, span[0], span[1]);
    while (graph.pos < span[1]) {
      const gkey = graph.varint();
      const gspan = graph.field(gkey & 7);
      if (gkey >>> 3 !== 5 || !gspan) continue;
      const tensor = readTensor(bytes, gspan[0], gspan[1]);
      found.set(tensor.name, tensor);
    }
  }
  return found;
}

interface TokenizerLike {
  encode(text: string): { ids: number[] };
}

/**
 * Builds the model from its files. The table is the ONNX graph's `embeddings_q` (int8 [V, D])
 * times `row_scale` (float [V, 1]), what the graph's Gather/Cast/Mul computes per token.
 */
export function createStaticModel(sources: StaticModelSources): StaticModel {
  const inits = readOnnxInitializers(sources.onnx);
  const q = inits.get('embeddings_q');
  const s = inits.get('row_scale');
  if (!q || !s) {
    throw new StaticModelFormatError(
      'model.onnx is not a static lookup model: it has no embeddings_q and row_scale tables',
    );
  }
  if (q.dataType !== ONNX_INT8 || s.dataType !== ONNX_FLOAT || q.dims.length !== 2) {
    throw new StaticModelFormatError(
      'model.onnx: embeddings_q must be int8 [vocab, dims] and row_scale float [vocab, 1]',
    );
  }
  const [vocab, dims] = q.dims;
  if (q.raw.length !== vocab * dims || s.raw.length !== vocab * 4 || s.dims[0] !== vocab) {
    throw new StaticModelFormatError(
      `model.onnx: the tables' sizes do not match their shapes (${vocab} × ${dims})`,
    );
  }
  const table = new Int8Array(q.raw.buffer, q.raw.byteOffset, q.raw.length);
  const view = new DataView(s.raw.buffer, s.raw.byteOffset, s.raw.length);
  const scales = new Float32Array(vocab);
  for (let i = 0; i < vocab; i++) scales[i] = view.getFloat32(i * 4, true);

  const config = sources.tokenizerConfig as { model_max_length?: unknown } | null;
  if (typeof sources.tokenizerJson !== 'object' || sources.tokenizerJson === null || !config) {
    throw new StaticModelFormatError(
      'tokenizer.json or tokenizer_config.json is not a JSON object',
    );
  }
  let tokenizer: TokenizerLike;
  try {
    tokenizer = new Tokenizer(sources.tokenizerJson, config);
  } catch (err) {
    throw new StaticModelFormatError(
      `tokenizer.json could not be read: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  // The pipeline truncates to the tokenizer's model_max_length (transformers.js: `truncation:
  // true`), keeping the first tokens.
  const maxLength =
    typeof config.model_max_length === 'number' && config.model_max_length > 0
      ? config.model_max_length
      : Infinity;

  const sum = new Float64Array(dims);
  return {
    dims,
    vocabSize: vocab,
    embed(text: string): Float32Array {
      const ids = tokenizer.encode(text).ids;
      const n = Math.min(ids.length, maxLength);
      sum.fill(0);
      for (let t = 0; t < n; t++) {
        const id = ids[t];
        if (id < 0 || id >= vocab) continue; // not in the table: a zero row
        const scale = scales[id];
        if (scale === 0) continue; // special tokens and [UNK]
        const row = id * dims;
        for (let k = 0; k < dims; k++) sum[k] += Math.fround(table[row + k] * scale);
      }
      // Mean pooling then L2 normalisation: the division by the token count cancels out.
      let norm = 0;
      for (let k = 0; k < dims; k++) norm += sum[k] * sum[k];
      const out = new Float32Array(dims);
      if (norm === 0) return out; // no known token
      const inv = 1 / Math.sqrt(norm);
      for (let k = 0; k < dims; k++) out[k] = sum[k] * inv;
      return out;
    },
  };
}

function isNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof proc !== 'undefined' && !!proc.versions?.node;
}

/** How one file is read: a URL (fetch) or, in Node, a path. Reports 0..1 while it arrives. */
async function readBytes(
  location: string,
  onProgress: (fraction: number) => void,
): Promise<Uint8Array> {
  if (isNode() && !/^(https?|blob|data):/i.test(location)) {
    // Kept in a variable so that bundlers leave this Node-only import alone.
    const fsName = 'node:fs/promises';
    const urlName = 'node:url';
    const fs = (await import(/* @vite-ignore */ fsName)) as typeof import('node:fs/promises');
    const path = location.startsWith('file:')
      ? ((await import(/* @vite-ignore */ urlName)) as typeof import('node:url')).fileURLToPath(
          location,
        )
      : location;
    const bytes = new Uint8Array(await fs.readFile(path));
    onProgress(1);
    return bytes;
  }
  const response = await fetch(location);
  if (!response.ok) throw new Error(`${location}: HTTP ${response.status}`);
  const total = Number(response.headers.get('Content-Length') ?? 0);
  if (!response.body || !total) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    onProgress(1);
    return bytes;
  }
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    received += value.length;
    onProgress(Math.min(1, received / total));
  }
  if (parts.length === 1) return parts[0];
  const bytes = new Uint8Array(received);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}

/**
 * A copy stored gzip-compressed (the portable file carries the model so) is inflated; the model's
 * own files never start with gzip's magic bytes (a protobuf tag, a `{`).
 */
async function inflate(bytes: Uint8Array): Promise<Uint8Array> {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>])
    .stream()
    .pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function parseJson(bytes: Uint8Array, file: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new StaticModelFormatError(
      `${file} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/**
 * Loads a static model. `locate` gives where each file is (a URL, or a path in Node);
 * `onFile` reports each file's progress (0..1).
 */
export async function loadStaticModel(
  locate: (file: StaticModelFile) => string,
  onFile: (file: StaticModelFile, fraction: number) => void = () => {},
): Promise<StaticModel> {
  const [tokenizerBytes, configBytes, onnx] = await Promise.all(
    STATIC_MODEL_FILES.map(async (file) => {
      onFile(file, 0);
      const bytes = await readBytes(locate(file), (f) => onFile(file, f));
      return bytes;
    }),
  );
  return createStaticModel({
    tokenizerJson: parseJson(await inflate(tokenizerBytes), 'tokenizer.json'),
    tokenizerConfig: parseJson(await inflate(configBytes), 'tokenizer_config.json'),
    onnx: await inflate(onnx),
  });
}
