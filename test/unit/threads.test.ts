// The ONNX runtime's thread count and the sentence the settings show for it (src/embeddings/threads.ts).
import { describe, expect, it } from 'vitest';
import { embeddingThreads } from '../../src/embeddings/threads';

describe('embeddingThreads', () => {
  it('uses half the cores, at most four, in an isolated page', () => {
    const at = (cores: number) => embeddingThreads({ isolated: true, cores, secure: true });
    expect([1, 2, 3, 4, 8, 16].map((c) => at(c).threads)).toEqual([1, 1, 2, 2, 4, 4]);
    expect(at(8).sentence).toBe(
      'Embeddings use 4 threads (half of this device’s 8 cores, at most 4): this page is cross-origin isolated.',
    );
    expect(at(2).sentence).toMatch(/^Embeddings use 1 thread \(half of this device’s 2 cores/);
  });

  it('uses one thread in a page that is not isolated, and says why', () => {
    const plain = embeddingThreads({ isolated: false, cores: 8, secure: true, controlled: false });
    expect(plain.threads).toBe(1);
    expect(plain.sentence).toBe(
      'Embeddings use 1 thread: this page is not cross-origin isolated (the server sends no COOP/COEP headers, and the app’s service worker adds them only from the next load).',
    );
    const http = embeddingThreads({ isolated: false, cores: 8, secure: false });
    expect(http.threads).toBe(1);
    expect(http.sentence).toContain('served over plain http');
    const noWorker = embeddingThreads({ isolated: false, cores: 8, secure: true });
    expect(noWorker.sentence).toContain('this browser runs no service worker here');
    const refused = embeddingThreads({ isolated: false, cores: 8, secure: true, controlled: true });
    expect(refused.sentence).toContain('did not isolate it even with the headers');
  });
});
