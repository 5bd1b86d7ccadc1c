// The in-page model's file check (src/llm/in-page/model-files.ts): before anything is copied
// into the browser's storage, what cannot run here is refused in a sentence that says what to do.
import { describe, expect, it } from 'vitest';
import { checkModelFile, MAX_FILE_BYTES } from '../../src/llm/in-page/model-files';
import { makeTinyGguf } from '../fixtures/tiny-gguf';

const named = (bytes: Uint8Array<ArrayBuffer> | string, name: string) =>
  Object.assign(new Blob([bytes]), { name });

describe('checking a model file before keeping it', () => {
  it('takes a llama GGUF', async () => {
    await expect(checkModelFile(named(makeTinyGguf(), 'tiny.gguf'))).resolves.toBeUndefined();
  });

  it('refuses what is not a GGUF, naming the file', async () => {
    await expect(checkModelFile(named('my notes', 'notes.gguf'))).rejects.toThrow(
      /^notes\.gguf is not a GGUF model file/,
    );
  });

  it('refuses an architecture it cannot run, and says what to choose', async () => {
    const file = named(makeTinyGguf({ architecture: 'whisper' }), 'speech.gguf');
    await expect(checkModelFile(file)).rejects.toThrow(
      'speech.gguf is a whisper model, which this page cannot run: choose a llama, Qwen, Gemma, Phi or Mistral instruct model.',
    );
  });

  it('refuses one file over 2 GB before reading it, and says to split it', async () => {
    const huge = Object.assign(new Blob([makeTinyGguf()]), { name: 'big.gguf' });
    Object.defineProperty(huge, 'size', { value: MAX_FILE_BYTES + 1 });
    await expect(checkModelFile(huge)).rejects.toThrow(/over 2 GB.*split it with llama-gguf-split/);
  });
});
