// GGUF files for the model in this browser, kept in the origin private file system (OPFS) so
// they survive a reload and are never uploaded anywhere. A file is checked before it is copied:
// what is not a GGUF, or a model llama.cpp cannot run here, is refused in a sentence.
// docs/in-page-model.md.
import { GgufError, readGgufHeader } from '../gguf';

const FOLDER = 'models';
/** The header of a GGUF with a large vocabulary runs to a few MB; read up to this much. */
const HEADER_READ_LIMIT = 64 * 1024 * 1024;
/** wllama reads a file into one WebAssembly buffer: a single file over 2 GB must be split. */
export const MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024;
/** Architectures this page knows llama.cpp runs; others are refused before copying. */
const KNOWN_ARCHITECTURES = new Set([
  'llama',
  'qwen2',
  'qwen3',
  'gemma',
  'gemma2',
  'gemma3',
  'phi3',
  'mistral3',
  'smollm3',
  'granite',
  'olmo',
  'olmo2',
  'stablelm',
  'gpt2',
  'starcoder2',
  'deepseek2',
  'exaone',
  'lfm2',
]);

export interface ModelFile {
  name: string;
  bytes: number;
}

export class ModelFileError extends Error {
  override readonly name = 'ModelFileError';
  constructor(
    readonly code: 'not-gguf' | 'too-large' | 'unknown-architecture' | 'no-storage',
    message: string,
  ) {
    super(message);
  }
}

async function folder(): Promise<FileSystemDirectoryHandle> {
  if (!navigator.storage?.getDirectory) {
    throw new ModelFileError(
      'no-storage',
      'This browser cannot keep a model file for this site (no private file storage); use a model server instead.',
    );
  }
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(FOLDER, { create: true });
}

/** Refuses, in a sentence, a file that cannot run here; says nothing of one that can. */
export async function checkModelFile(file: Blob & { name?: string }): Promise<void> {
  const label = file.name ? `${file.name} ` : 'This file ';
  if (file.size > MAX_FILE_BYTES) {
    throw new ModelFileError(
      'too-large',
      `${label}is over 2 GB, more than WebAssembly can read as one file: split it with llama-gguf-split, or choose a smaller quantization.`,
    );
  }
  let read = Math.min(file.size, 4 * 1024 * 1024);
  for (;;) {
    try {
      const header = readGgufHeader(new Uint8Array(await file.slice(0, read).arrayBuffer()));
      const arch = header.metadata.get('general.architecture');
      if (typeof arch !== 'string' || !KNOWN_ARCHITECTURES.has(arch)) {
        throw new ModelFileError(
          'unknown-architecture',
          `${label}is a ${String(arch)} model, which this page cannot run: choose a llama, Qwen, Gemma, Phi or Mistral instruct model.`,
        );
      }
      return;
    } catch (e) {
      if (
        e instanceof GgufError &&
        e.code === 'truncated' &&
        read < file.size &&
        read < HEADER_READ_LIMIT
      ) {
        read = Math.min(file.size, read * 4, HEADER_READ_LIMIT);
        continue;
      }
      if (e instanceof GgufError) {
        throw new ModelFileError('not-gguf', `${label}is not a GGUF model file: ${e.message}`);
      }
      throw e;
    }
  }
}

/** Copies a checked file into the browser's storage (replacing one of the same name). */
export async function saveModelFile(file: File): Promise<ModelFile> {
  await checkModelFile(file);
  const dir = await folder();
  const handle = await dir.getFileHandle(file.name, { create: true });
  const writable = await handle.createWritable();
  try {
    await file.stream().pipeTo(writable);
  } catch (e) {
    await dir.removeEntry(file.name).catch(() => undefined);
    throw e;
  }
  return { name: file.name, bytes: file.size };
}

/** The stored file, or undefined when it is not there. */
export async function openModelFile(name: string): Promise<File | undefined> {
  try {
    return await (await (await folder()).getFileHandle(name)).getFile();
  } catch (e) {
    if (e instanceof DOMException && e.name === 'NotFoundError') return undefined;
    throw e;
  }
}

export async function describeModelFile(name: string): Promise<ModelFile | undefined> {
  const file = await openModelFile(name);
  return file && { name, bytes: file.size };
}

export async function deleteModelFile(name: string): Promise<void> {
  await (await folder()).removeEntry(name).catch((e: unknown) => {
    if (!(e instanceof DOMException && e.name === 'NotFoundError')) throw e;
  });
}
