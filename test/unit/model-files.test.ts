// The in-page model's file check (src/llm/in-page/model-files.ts): before anything is copied
// into the browser's storage, what cannot run here is refused in a sentence that says what to do.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { modelLink, rangeStart, rangeTotal } from '../../src/llm/in-page/download';
import {
  checkModelFile,
  MAX_FILE_BYTES,
  modelsFolder,
  orderParts,
  parseSplitName,
  partNames,
  quotaRefusal,
  splitSetRefusal,
} from '../../src/llm/in-page/model-files';
import { readGgufHeader } from '../../src/llm/gguf';
import { splitGguf } from '../fixtures/split-gguf';
import { makeTinyGguf } from '../fixtures/tiny-gguf';

const named = (bytes: Uint8Array<ArrayBuffer> | string, name: string) =>
  Object.assign(new Blob([bytes]), { name });

describe('checking a model file before keeping it', () => {
  it('takes a llama GGUF', async () => {
    const header = await checkModelFile(named(makeTinyGguf(), 'tiny.gguf'));
    expect(header.metadata.get('general.architecture')).toBe('llama');
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
    await expect(checkModelFile(huge)).rejects.toThrow(
      /over 2 GB.*a model split in parts of under 2 GB \(llama-gguf-split\)/,
    );
  });
});

const file = (bytes: Uint8Array<ArrayBuffer> | string, name: string) => new File([bytes], name);

describe('split models (llama-gguf-split)', () => {
  const parts = splitGguf(makeTinyGguf(), 3);
  const names = partNames('tiny-00001-of-00003.gguf');

  it('names every part from the first', () => {
    expect(names).toEqual([
      'tiny-00001-of-00003.gguf',
      'tiny-00002-of-00003.gguf',
      'tiny-00003-of-00003.gguf',
    ]);
    expect(parseSplitName('tiny-00002-of-00003.gguf')?.no).toBe(2);
    expect(parseSplitName('tiny.gguf')).toBeUndefined();
    expect(partNames('tiny.gguf')).toEqual(['tiny.gguf']);
  });

  it('writes parts whose headers say where they belong, and hold every tensor once', () => {
    const headers = parts.map((p) => readGgufHeader(p));
    expect(headers.map((h) => h.metadata.get('split.no'))).toEqual([0, 1, 2]);
    expect(headers.every((h) => h.metadata.get('split.count') === 3)).toBe(true);
    const all = readGgufHeader(makeTinyGguf()).tensors.length;
    expect(headers.reduce((s, h) => s + h.tensors.length, 0)).toBe(all);
    expect(splitSetRefusal(headers, names[0])).toBeUndefined();
    // Only the first part carries the model's metadata.
    expect(headers[0].metadata.get('general.architecture')).toBe('llama');
    expect(headers[1].metadata.has('general.architecture')).toBe(false);
  });

  it('takes the parts in any order, and checks each is the part its name says', async () => {
    const picked = [file(parts[2], names[2]), file(parts[0], names[0]), file(parts[1], names[1])];
    const ordered = orderParts(picked);
    expect(ordered.map((f) => f.name)).toEqual(names);
    for (const [i, f] of ordered.entries()) await checkModelFile(f, { no: i + 1, count: 3 });
    // Part 2's bytes under part 3's name.
    await expect(checkModelFile(file(parts[1], names[2]), { no: 3, count: 3 })).rejects.toThrow(
      'tiny-00003-of-00003.gguf is not part 3 of 3 of a split model (its header says part 2 of 3): choose all the parts of one model, as llama-gguf-split wrote them.',
    );
  });

  it('refuses an incomplete or mixed set, and one part alone, in a sentence', async () => {
    expect(() => orderParts([file(parts[0], names[0]), file(parts[2], names[2])])).toThrow(
      'This model is split in 3 files and tiny-00002-of-00003.gguf is missing: choose all 3 parts together.',
    );
    expect(() => orderParts([file(parts[0], names[0]), file('x', 'other.gguf')])).toThrow(
      'other.gguf is not a part of a split model: choose one model file, or all the parts of one split model.',
    );
    await expect(checkModelFile(file(parts[0], 'renamed.gguf'))).rejects.toThrow(
      'renamed.gguf is one part of a model split in 3 files: choose all 3 parts together',
    );
    const other = splitGguf(makeTinyGguf({ layers: 3 }), 3).map((p) => readGgufHeader(p));
    const mixed = [readGgufHeader(parts[0]), other[1], readGgufHeader(parts[2])];
    expect(splitSetRefusal(mixed, names[0])?.message).toMatch(
      /^The parts of tiny-00001-of-00003\.gguf do not make one model/,
    );
  });
});

describe('what this site may keep', () => {
  it('refuses what does not fit, saying how much is needed and free', () => {
    expect(quotaRefusal('big.gguf', 5e9, { quota: 4e9, usage: 1e9 })?.message).toBe(
      'big.gguf needs 5.0 GB, and this browser lets this site keep only 3.0 GB more: free space on this disk, delete a model kept here, or choose a smaller model.',
    );
    expect(quotaRefusal('big.gguf', 2e9, { quota: 4e9, usage: 1e9 })).toBeUndefined();
    // A browser that does not say: no check (the write itself may still fail, with a sentence).
    expect(quotaRefusal('big.gguf', 5e9, {})).toBeUndefined();
  });
});

describe('a model link', () => {
  it('takes a Hugging Face download link, and turns a file page link into one', () => {
    const url = 'https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/q.gguf';
    expect(modelLink(url)).toEqual({ url, name: 'q.gguf' });
    expect(modelLink(url.replace('/resolve/', '/blob/')).url).toBe(url);
  });

  it('refuses what does not name a .gguf file, in a sentence', () => {
    expect(() => modelLink('not a link')).toThrow(/^This is not a link: paste the address/);
    expect(() => modelLink('https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF')).toThrow(
      /does not name a \.gguf file/,
    );
    expect(() => modelLink('ftp://example.org/m.gguf')).toThrow(
      'A model link starts with https://.',
    );
  });

  it('reads Content-Range', () => {
    expect(rangeTotal('bytes 0-99/1234')).toBe(1234);
    expect(rangeTotal('bytes 0-99/*')).toBeUndefined();
    expect(rangeStart('bytes 500-1233/1234')).toBe(500);
  });
});

describe('a page with no private file storage', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('says so in a sentence (Chromium refuses it to a file:// page)', async () => {
    vi.stubGlobal('navigator', {
      storage: {
        getDirectory: () => Promise.reject(new DOMException('unsafe', 'SecurityError')),
      },
    });
    await expect(modelsFolder()).rejects.toThrow(
      /^This browser cannot keep a model file for this page \(no private file storage/,
    );
  });
});
