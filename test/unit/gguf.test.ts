// The repo's tiny GGUF (test/fixtures/tiny-gguf.ts) read back by the app's GGUF header reader
// (src/llm/gguf.ts): every key llama.cpp needs for llama, tensors with llama's names and shapes,
// data aligned; and what is not a GGUF is refused in a sentence.
import { describe, expect, it } from 'vitest';
import { GgufError, readGgufHeader } from '../../src/llm/gguf';
import { CHATML_TEMPLATE, TokenType, makeTinyGguf, tinyVocab } from '../fixtures/tiny-gguf';

describe('the tiny GGUF and the header reader', () => {
  const bytes = makeTinyGguf();
  const header = readGgufHeader(bytes);
  const meta = header.metadata;

  it('is GGUF v3 with the llama hyperparameters and the tokenizer', () => {
    expect(header.version).toBe(3);
    expect(meta.get('general.architecture')).toBe('llama');
    expect(meta.get('llama.embedding_length')).toBe(64);
    expect(meta.get('llama.block_count')).toBe(2);
    expect(meta.get('llama.attention.head_count')).toBe(2);
    expect(meta.get('llama.context_length')).toBe(8192);
    expect(meta.get('tokenizer.ggml.model')).toBe('llama');
    expect(meta.get('tokenizer.chat_template')).toBe(CHATML_TEMPLATE);
    expect(meta.get('tokenizer.ggml.add_space_prefix')).toBe(false);
    const vocab = tinyVocab();
    const tokens = meta.get('tokenizer.ggml.tokens') as string[];
    expect(tokens).toEqual(vocab.tokens);
    expect((meta.get('tokenizer.ggml.scores') as number[]).length).toBe(tokens.length);
    const types = meta.get('tokenizer.ggml.token_type') as number[];
    // SentencePiece's byte fallback needs all 256 byte tokens (a newline is <0x0A>).
    expect(types.filter((t) => t === TokenType.Byte)).toHaveLength(256);
    expect(tokens[meta.get('tokenizer.ggml.eos_token_id') as number]).toBe('<|im_end|>');
    expect(tokens[meta.get('tokenizer.ggml.bos_token_id') as number]).toBe('<s>');
  });

  it('holds llama tensors, shapes in ggml order, data aligned and inside the file', () => {
    const byName = new Map(header.tensors.map((t) => [t.name, t]));
    const n = (meta.get('tokenizer.ggml.tokens') as string[]).length;
    expect(byName.get('token_embd.weight')?.dims).toEqual([64, n]);
    expect(byName.get('output.weight')?.dims).toEqual([64, n]);
    expect(byName.get('blk.1.ffn_down.weight')?.dims).toEqual([128, 64]);
    expect(byName.get('blk.1.ffn_up.weight')?.dims).toEqual([64, 128]);
    expect(header.tensors).toHaveLength(3 + 2 * 9);
    expect(header.dataOffset % 32).toBe(0);
    for (const t of header.tensors) {
      expect(t.offset % 32).toBe(0);
      const size = t.dims.reduce((a, b) => a * b, 4);
      expect(header.dataOffset + t.offset + size).toBeLessThanOrEqual(bytes.length);
    }
  });

  it('is the same bytes for the same seed, other bytes for another', () => {
    expect(makeTinyGguf()).toEqual(bytes);
    expect(makeTinyGguf({ seed: 2 })).not.toEqual(bytes);
  });

  it('refuses what is not a GGUF, and a cut-off header, with a sentence', () => {
    const notGguf = new TextEncoder().encode('PK\x03\x04 a zip file');
    expect(() => readGgufHeader(notGguf)).toThrow(GgufError);
    expect(() => readGgufHeader(notGguf)).toThrow(/not a GGUF model/);
    expect(() => readGgufHeader(bytes.subarray(0, 2000))).toThrow(/ends inside its GGUF header/);
  });
});
