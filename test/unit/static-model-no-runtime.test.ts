// The bundled model never loads transformers.js (and so never the ONNX runtime): with the module
// made to fail on import, the embedder still loads the bundled model and embeds, while a hub
// model fails to load and falls back to it.
import { describe, expect, it, vi } from 'vitest';
import { BUNDLED_MODEL, DEFAULT_MODEL, createEmbedder } from '../../src/embeddings';

const imports = vi.hoisted(() => ({ count: 0 }));
vi.mock('@huggingface/transformers', () => {
  imports.count++;
  return {
    env: { backends: { onnx: {} } },
    pipeline: () => Promise.reject(new Error('no runtime in this test')),
  };
});

describe('bundled model without the runtime', () => {
  it('embeds without importing transformers.js', async () => {
    const embedder = createEmbedder({ model: BUNDLED_MODEL });
    const [a, b, c] = await embedder.embed([
      'I love dogs',
      'Puppies are great',
      'The stock market fell',
    ]);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i], 0);
    expect(dot(a, b)).toBeGreaterThan(dot(a, c));
    expect(a).toHaveLength(100);
    expect(imports.count).toBe(0);
    await embedder.dispose();
  });

  it('imports transformers.js only for a transformer model', async () => {
    const messages: string[] = [];
    const embedder = createEmbedder({
      model: DEFAULT_MODEL,
      onProgress: (p) => p.message && messages.push(p.message),
    });
    const info = await embedder.ready();
    expect(info.id).toBe(BUNDLED_MODEL);
    expect(imports.count).toBe(1);
    expect(messages[0]).toMatch(/no runtime in this test/);
    await embedder.dispose();
  });
  it('asks a model function for the id only when the model is first needed', async () => {
    let asked = 0;
    const importsBefore = imports.count;
    const embedder = createEmbedder({
      model: () => {
        asked++;
        return Promise.resolve(BUNDLED_MODEL);
      },
    });
    expect(asked).toBe(0);
    const [v] = await embedder.embed(['I love dogs']);
    expect(v).toHaveLength(100);
    expect(asked).toBe(1);
    expect(imports.count).toBe(importsBefore);
    await embedder.dispose();
  });
});
