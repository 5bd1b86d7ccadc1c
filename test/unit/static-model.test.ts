// The bundled model without the ONNX runtime (src/embeddings/static-model.ts) gives the vectors
// that transformers.js gives for the same committed files: the same tokens (special tokens typed
// in the text, accents, CJK, truncation at 512 tokens), the same table, the same pooling. And a
// damaged model file is refused with a sentence that names it.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLED_MODEL,
  ModelUnavailableError,
  createEmbedder,
  defaultLocalModelPath,
  type EmbedderProgress,
} from '../../src/embeddings';
import {
  STATIC_MODEL_FILES,
  StaticModelFormatError,
  createStaticModel,
  loadStaticModel,
  readOnnxInitializers,
} from '../../src/embeddings/static-model';
import { mulberry32 } from '../../bench/synthetic';
import pairs from '../fixtures/embedding-pairs.json';

const DIR = join(defaultLocalModelPath(), BUNDLED_MODEL);
const read = (file: string) => new Uint8Array(readFileSync(join(DIR, file)));
const readJson = (file: string): unknown => JSON.parse(readFileSync(join(DIR, file), 'utf8'));

/**
 * Sentences from the model's own vocabulary (frequent and rare words, as a Zipf-like draw), with
 * capitals, accents, punctuation glued on, numbers, apostrophes, hyphens and words it lacks.
 */
function generatedSentences(vocab: string[], count: number): string[] {
  const rand = mulberry32(20_261_123);
  const words = vocab.slice(5); // after [PAD] [UNK] [CLS] [SEP] [MASK]
  const decorate = (w: string): string => {
    const r = rand();
    if (r < 0.1) return w[0].toUpperCase() + w.slice(1);
    if (r < 0.13) return w.toUpperCase();
    if (r < 0.16) return w.replace('e', 'é').replace('a', 'à');
    if (r < 0.22) return w + ',.;:!?'[Math.floor(rand() * 6)];
    if (r < 0.25) return `"${w}"`;
    if (r < 0.28) return `${w}'s`;
    if (r < 0.31) return `${w}-${words[Math.floor(rand() * 5000)]}`;
    if (r < 0.33) return String(Math.floor(rand() * 100_000));
    if (r < 0.35) return w + 'qzx'; // not in the vocabulary
    return w;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rand() * 40);
    const parts: string[] = [];
    for (let j = 0; j < n; j++) {
      // Rank ~ exp(uniform): as many draws among the first 100 words as among 10k–100k.
      const rank = Math.min(
        words.length - 1,
        Math.floor(Math.exp(rand() * Math.log(words.length))),
      );
      parts.push(decorate(words[rank]));
    }
    out.push(parts.join(rand() < 0.1 ? '  ' : ' '));
  }
  return out;
}

/** Texts a memory can hold that exercise every step of the tokenizer. */
const EDGE_CASES = [
  'I love dogs',
  'Puppies are great!',
  'HELLO WORLD',
  'Crème brûlée at the café in Zürich, naïve façade.',
  'Cafe\u0301 with a combining accent',
  '東京に住んでいます and I like 寿司',
  'Я живу в Москве',
  'مرحبا بالعالم hello',
  '🙂🎉👍',
  'I 🙂 love 🎉 parties',
  '[CLS] the user likes tea [SEP]',
  'The token [UNK] and [MASK] typed in by the user',
  '[cls] lowercase brackets are ordinary words',
  'tabs\tand\nnewlines\r\nand\u00a0non-breaking\u2003spaces',
  'zero\u200bwidth\u200cjoiners\u200dhere',
  'control\u0007characters\u0000in\u001btext',
  'replacement \ufffd character',
  'e-mail me at someone@example.com or visit https://example.org/path?q=1',
  '```ts\nconst x: number = 42; // answer\n```',
  '# Heading\n\n- item one\n- item two\n\n**bold** and _italic_',
  'Prices went from $1,250.50 to €3.5k in 2023 (+12%).',
  "don't won't can't I'm you're it's we'll they'd",
  'state-of-the-art well-known twenty-one',
  'a',
  'i',
  'x',
  '...',
  '?!',
  'The ' + 'supercalifragilisticexpialidocious'.repeat(4) + ' word is too long to know',
  'word '.repeat(600).trim(), // past 512 tokens: truncated
  'the '.repeat(509) + 'river music stone harbour', // the last two words are cut off
  Array.from({ length: 700 }, (_, i) => ['apple', 'river', 'music', 'stone'][i % 4]).join(' '),
  'SCHEMA database interface layout',
  'We decided to use PostgreSQL for the backend.',
  'Where does the user live?',
  'lgbtq aragorn mentorship whiteboard photoshoot ganache woodhaven',
  'ŞĞÜÖÇİ ısıtıcı',
  'ﬁnance ﬂight (ligatures)',
  'Ｆｕｌｌｗｉｄｔｈ letters',
];

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / Math.sqrt(aa * bb);
};
const isZero = (v: ArrayLike<number>): boolean => Array.from(v).every((x) => x === 0 || isNaN(x));

describe('static model: the same vectors as transformers.js', () => {
  let texts: string[];
  let reference: Float32Array[];

  beforeAll(async () => {
    const tokenizer = readJson('tokenizer.json') as { model: { vocab: Record<string, number> } };
    const vocab = Object.keys(tokenizer.model.vocab).sort(
      (a, b) => tokenizer.model.vocab[a] - tokenizer.model.vocab[b],
    );
    const fixtures = pairs.pairs.flatMap((p) => [p.a, p.b]);
    texts = [...EDGE_CASES, ...fixtures, ...generatedSentences(vocab, 200)];

    // transformers.js, pointed at the committed files only (no hub, no cache).
    const { env, pipeline } = await import('@huggingface/transformers');
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
    env.localModelPath = defaultLocalModelPath();
    env.useFSCache = false;
    const extractor = await pipeline('feature-extraction', BUNDLED_MODEL, { dtype: 'fp32' });
    reference = [];
    for (let i = 0; i < texts.length; i += 16) {
      const batch = texts.slice(i, i + 16);
      const out = await extractor(batch, { pooling: 'mean', normalize: true });
      const data = out.data as Float32Array;
      const dims = out.dims[1];
      batch.forEach((_, row) => reference.push(data.slice(row * dims, (row + 1) * dims)));
    }
    await extractor.dispose();
  });

  it('agrees within 1e-5 cosine on a few hundred varied texts', () => {
    const model = createStaticModel({
      tokenizerJson: readJson('tokenizer.json'),
      tokenizerConfig: readJson('tokenizer_config.json'),
      onnx: read('onnx/model.onnx'),
    });
    expect(texts.length).toBeGreaterThanOrEqual(350);
    let worst = 0;
    let zeros = 0;
    for (let i = 0; i < texts.length; i++) {
      const mine = model.embed(texts[i]);
      const theirs = reference[i];
      if (isZero(theirs)) {
        // No known token: transformers.js gives NaN (0/0), the embedder a zero vector.
        expect(isZero(mine), JSON.stringify(texts[i])).toBe(true);
        zeros++;
        continue;
      }
      const gap = 1 - cosine(mine, theirs);
      worst = Math.max(worst, gap);
      expect(gap, JSON.stringify(texts[i].slice(0, 80))).toBeLessThanOrEqual(1e-5);
      let norm = 0;
      for (const x of mine) norm += x * x;
      expect(Math.abs(Math.sqrt(norm) - 1)).toBeLessThan(1e-6);
    }
    console.info(`static model: ${texts.length} texts, ${zeros} zero, worst 1 − cos ${worst}`);
    expect(zeros).toBeLessThan(15); // the comparison is not vacuous
  });

  it('gives the same through createEmbedder', async () => {
    const progress: EmbedderProgress[] = [];
    const embedder = createEmbedder({ model: BUNDLED_MODEL, onProgress: (p) => progress.push(p) });
    const vectors = await embedder.embed(texts);
    for (let i = 0; i < texts.length; i++) {
      if (isZero(reference[i])) expect(isZero(vectors[i])).toBe(true);
      else expect(1 - cosine(vectors[i], reference[i])).toBeLessThanOrEqual(1e-5);
    }
    const files = new Set(progress.filter((p) => p.status === 'load').map((p) => p.file));
    expect(files).toEqual(new Set(['tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx']));
    expect(progress.at(-1)).toMatchObject({ status: 'ready', progress: 1 });
    await embedder.dispose();
  });
});

describe('static model: damaged files', () => {
  const sources = () => ({
    tokenizerJson: readJson('tokenizer.json'),
    tokenizerConfig: readJson('tokenizer_config.json'),
    onnx: read('onnx/model.onnx'),
  });
  let good: ReturnType<typeof sources>;
  beforeAll(() => {
    good = sources();
  });
  afterAll(() => {
    good = undefined as never;
  });

  it('reads the two tables of the committed graph', () => {
    const inits = readOnnxInitializers(good.onnx);
    expect(inits.get('embeddings_q')?.dims).toEqual([50_005, 100]);
    expect(inits.get('row_scale')?.dims).toEqual([50_005, 1]);
  });

  it('refuses a cut-short model file, naming it', () => {
    const cut = good.onnx.subarray(0, Math.floor(good.onnx.length / 2));
    expect(() => createStaticModel({ ...good, onnx: cut })).toThrow(StaticModelFormatError);
    expect(() => createStaticModel({ ...good, onnx: cut })).toThrow(/model\.onnx/);
  });

  it('refuses a file that is not a lookup model', () => {
    const text = new TextEncoder().encode('<!doctype html><title>Not found</title>');
    expect(() => createStaticModel({ ...good, onnx: text })).toThrow(/model\.onnx/);
    expect(() => createStaticModel({ ...good, onnx: new Uint8Array(0) })).toThrow(
      /no embeddings_q and row_scale/,
    );
  });

  it('refuses a tokenizer that is not one, naming it', () => {
    expect(() => createStaticModel({ ...good, tokenizerJson: null })).toThrow(/tokenizer\.json/);
    expect(() => createStaticModel({ ...good, tokenizerJson: { model: {} } })).toThrow(
      /tokenizer\.json/,
    );
  });

  it('reads gzip-compressed copies of its files (as the portable file carries them)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sm-static-gz-'));
    try {
      for (const file of STATIC_MODEL_FILES) {
        mkdirSync(dirname(join(dir, file)), { recursive: true });
        writeFileSync(join(dir, file), gzipSync(readFileSync(join(DIR, file))));
      }
      const packed = await loadStaticModel((file) => join(dir, file));
      const plain = createStaticModel(good);
      for (const text of ['I love dogs', 'The stock market fell sharply on Monday.']) {
        expect(Array.from(packed.embed(text))).toEqual(Array.from(plain.embed(text)));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says which file is missing or not JSON', async () => {
    await expect(
      loadStaticModel((file) =>
        file === 'tokenizer.json' ? '/nonexistent/tokenizer.json' : join(DIR, file),
      ),
    ).rejects.toThrow(/tokenizer\.json/);
    await expect(
      loadStaticModel((file) =>
        join(DIR, file === 'tokenizer_config.json' ? 'onnx/model.onnx' : file),
      ),
    ).rejects.toThrow(/tokenizer_config\.json is not valid JSON/);
  });

  it('makes the embedder reject with MODEL_UNAVAILABLE, naming the file', async () => {
    const embedder = createEmbedder({
      model: BUNDLED_MODEL,
      bundledFiles: { 'onnx/model.onnx': join(DIR, 'tokenizer.json') },
    });
    const err = await embedder.embed(['hello']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toMatch(
      /structured-memory\/glove-100d-sif could not be loaded: .*model\.onnx/,
    );
    await embedder.dispose();
  });
});
