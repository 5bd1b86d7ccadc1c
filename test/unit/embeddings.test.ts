// The embedder through transformers.js with the bundled offline model (no network needed),
// the fallback when the hub is unreachable, and the calibrated relevance threshold.
import { readFileSync, statSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLED_MODEL,
  DEFAULT_MODEL,
  MODELS,
  ModelUnavailableError,
  createEmbedder,
  defaultLocalModelPath,
  modelInfo,
  type Embedder,
  type EmbedderProgress,
} from '../../src/embeddings';

const HERE = dirname(fileURLToPath(import.meta.url));

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

/** A local port nothing listens on: connecting to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('model registry', () => {
  it('knows the default and the bundled model', () => {
    expect(DEFAULT_MODEL).toBe('Xenova/all-MiniLM-L6-v2');
    expect(BUNDLED_MODEL).toBe('structured-memory/glove-100d-sif');
    expect(modelInfo(DEFAULT_MODEL)).toEqual({
      id: DEFAULT_MODEL,
      dims: 384,
      threshold: 0.5,
      calibration: { unrelated: 0.1, related: 0.6 },
      bundled: false,
    });
    const bundled = modelInfo(BUNDLED_MODEL);
    expect(bundled).toMatchObject({ id: BUNDLED_MODEL, dims: 100, bundled: true });
    expect(bundled.threshold).toBeGreaterThan(0);
    expect(bundled.threshold).toBeLessThan(1);
    expect(modelInfo('someone/other-model')).toMatchObject({ bundled: false, threshold: 0.5 });
  });

  it('ships the bundled model files (about 6 MB, at most 7 MB so a first visit stays under 8 MB; BERT-shaped for transformers.js)', () => {
    const dir = join(defaultLocalModelPath(), BUNDLED_MODEL);
    const files = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'];
    const total = files.reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
    expect(total).toBeGreaterThan(4e6);
    expect(total).toBeLessThanOrEqual(7e6);
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(config.model_type).toBe('bert');
    expect(config.hidden_size).toBe(100);
  });
});

describe('bundled model through transformers.js', () => {
  let embedder: Embedder;
  const progress: EmbedderProgress[] = [];

  beforeAll(() => {
    embedder = createEmbedder({ model: BUNDLED_MODEL, onProgress: (p) => progress.push(p) });
  });
  afterAll(async () => {
    await embedder.dispose();
  });

  it('loads lazily and reports the active model', async () => {
    expect(progress).toEqual([]); // nothing happens before the first call
    const info = await embedder.ready();
    expect(info).toEqual({ ...modelInfo(BUNDLED_MODEL) });
    expect(progress.some((p) => p.status === 'load')).toBe(true);
    expect(progress.at(-1)?.status).toBe('ready');
    expect(progress.some((p) => p.status === 'fallback')).toBe(false);
  });

  it('gives one unit-length Float32Array per text, deterministically', async () => {
    const texts = ['I love dogs', 'Puppies are great', 'The stock market fell'];
    const a = await embedder.embed(texts);
    const b = await embedder.embed(texts);
    expect(a).toHaveLength(3);
    for (const [i, v] of a.entries()) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(100);
      expect(v.buffer.byteLength).toBe(400); // own buffer, not a view of the batch output
      expect(dot(v, v)).toBeCloseTo(1, 5);
      expect(Array.from(v)).toEqual(Array.from(b[i]));
    }
    expect(await embedder.embed([])).toEqual([]);
  });

  it('does not depend on batching or padding', async () => {
    const texts = [
      'short',
      'a much longer sentence about gardening, watering the plants and the dry summer weather',
      'the meeting moved to Thursday',
      'I love dogs',
      'cats',
    ];
    const pairwise = createEmbedder({ model: BUNDLED_MODEL, batchSize: 2 });
    const one = await pairwise.embed(texts);
    await pairwise.dispose();
    const all = await embedder.embed(texts);
    const alone = await embedder.embed(['short']);
    for (let i = 0; i < texts.length; i++) {
      expect(dot(one[i], all[i])).toBeCloseTo(1, 5);
    }
    expect(dot(alone[0], all[0])).toBeCloseTo(1, 5);
  });

  it('ranks by meaning', async () => {
    const [dogs, puppies, stocks] = await embedder.embed([
      'I love dogs',
      'Puppies are great',
      'The stock market fell',
    ]);
    expect(dot(dogs, puppies)).toBeGreaterThan(dot(dogs, stocks));

    const [schema, tables, windows] = await embedder.embed([
      'database schema',
      'The tables and columns of the SQL database',
      'Open several windows side by side on the screen.',
    ]);
    expect(dot(schema, tables)).toBeGreaterThan(dot(schema, windows));

    const [q, tea, run, rent] = await embedder.embed([
      'What does he like to drink in the morning?',
      'He drinks green tea every morning instead of coffee.',
      'I jog five kilometres three times a week.',
      'The rent for the apartment went up again.',
    ]);
    expect(dot(q, tea)).toBeGreaterThan(dot(q, run));
    expect(dot(q, tea)).toBeGreaterThan(dot(q, rent));
  });

  it('gives zero vectors (no NaN) for empty, blank and unknown-only texts', async () => {
    const [empty, blank, unknown, word] = await embedder.embed(['', '  \n\t', '🙂🙂', 'hello']);
    for (const v of [empty, blank, unknown]) {
      expect(v.length).toBe(100);
      expect(v.every((x) => x === 0)).toBe(true);
    }
    expect(dot(word, word)).toBeCloseTo(1, 5);
    expect(dot(empty, word)).toBe(0);
  });

  it('honours an AbortSignal between batches', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embed(['x'], controller.signal)).rejects.toThrow();

    const small = createEmbedder({ model: BUNDLED_MODEL, batchSize: 1 });
    await small.ready();
    const late = new AbortController();
    const texts = Array.from({ length: 200 }, (_, i) => `sentence number ${i}`);
    const pending = small.embed(texts, late.signal);
    late.abort();
    await expect(pending).rejects.toThrow();
    await small.dispose();
  });

  it('separates the labelled pairs with its calibrated threshold', async () => {
    const file = join(HERE, '../fixtures/embedding-pairs.json');
    const { pairs } = JSON.parse(readFileSync(file, 'utf8')) as {
      pairs: { a: string; b: string; related: boolean }[];
    };
    expect(pairs.length).toBeGreaterThanOrEqual(40);
    const a = await embedder.embed(pairs.map((p) => p.a));
    const b = await embedder.embed(pairs.map((p) => p.b));
    const { threshold } = MODELS[BUNDLED_MODEL];
    const errors = pairs.filter((p, i) => dot(a[i], b[i]) >= threshold !== p.related);
    expect(errors.length / pairs.length).toBeLessThanOrEqual(0.1);
  });
});

describe('fallback to the bundled model', () => {
  it('uses the bundled model when the hub is unreachable, and says so', async () => {
    const port = await closedPort();
    const progress: EmbedderProgress[] = [];
    const embedder = createEmbedder({
      model: DEFAULT_MODEL,
      remoteHost: `http://127.0.0.1:${port}/`,
      onProgress: (p) => progress.push(p),
    });
    const info = await embedder.ready();
    expect(info.id).toBe(BUNDLED_MODEL);
    expect(info.bundled).toBe(true);
    const notice = progress.find((p) => p.status === 'fallback');
    expect(notice?.message).toContain(DEFAULT_MODEL);
    expect(notice?.message).toContain(BUNDLED_MODEL);
    const [v] = await embedder.embed(['still works offline']);
    expect(v.length).toBe(100);
    await embedder.dispose();
  });

  it('gives up on a hub that never answers (hubTimeoutMs) and falls back', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket)); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const progress: EmbedderProgress[] = [];
      const embedder = createEmbedder({
        model: DEFAULT_MODEL,
        remoteHost: `http://127.0.0.1:${port}/`,
        hubTimeoutMs: 300,
        onProgress: (p) => progress.push(p),
      });
      const started = Date.now();
      expect((await embedder.ready()).id).toBe(BUNDLED_MODEL);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(progress.find((p) => p.status === 'fallback')?.message).toMatch(/within 300 ms/);
      await embedder.dispose();
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('rejects with MODEL_UNAVAILABLE when fallback is off', async () => {
    const port = await closedPort();
    const embedder = createEmbedder({
      model: DEFAULT_MODEL,
      fallback: false,
      remoteHost: `http://127.0.0.1:${port}/`,
    });
    const error = await embedder.ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as ModelUnavailableError).code).toBe('MODEL_UNAVAILABLE');
    await expect(embedder.embed(['x'])).rejects.toBeInstanceOf(ModelUnavailableError);
  });

  it('rejects when even the bundled model is missing', async () => {
    const embedder = createEmbedder({
      model: BUNDLED_MODEL,
      localModelPath: join(HERE, 'no-such-models-folder') + '/',
    });
    await expect(embedder.ready()).rejects.toBeInstanceOf(ModelUnavailableError);
  });
});
