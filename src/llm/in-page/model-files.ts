// GGUF files for the model in this browser, kept in the origin private file system (OPFS) so
// they survive a reload and are never uploaded anywhere. A file is checked before it is copied:
// what is not a GGUF, a model llama.cpp cannot run here, an incomplete or mixed set of split
// parts, or more than this site may keep is refused in a sentence. A model chosen from disk is
// one file per part (`models/<name>`); a downloaded one is a folder per part of committed pieces
// (src/llm/in-page/download.ts). docs/in-page-model.md.
import { formatBytes } from '../../app/storage-status';
import { GgufError, readGgufHeader, type GgufHeader } from '../gguf';

const FOLDER = 'models';
/** The header of a GGUF with a large vocabulary runs to a few MB; read up to this much. */
export const HEADER_READ_LIMIT = 64 * 1024 * 1024;
/** wllama reads each file into one WebAssembly buffer: a single file over 2 GB must be split. */
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
  /** The file's name, or the first part's for a split model (the setting names it). */
  name: string;
  /** All parts together. */
  bytes: number;
  /** 1, or how many files a split model has. */
  parts: number;
  /** Held for this page's life only: the page has no private file storage (file://). */
  session?: boolean;
}

/**
 * Models chosen from disk on a page that cannot keep files (the portable file, opened from
 * disk): held until the page closes, the files themselves (nothing is copied).
 */
const sessionModels = new Map<string, File[]>();

/** Whether this page can keep model files (it cannot on a file:// page: the portable file). */
export async function canKeepModelFiles(): Promise<boolean> {
  return (await storedFolder()) !== undefined;
}

/** The models folder, or undefined when this page has no private file storage. */
async function storedFolder(): Promise<FileSystemDirectoryHandle | undefined> {
  try {
    return await modelsFolder();
  } catch (e) {
    if (e instanceof ModelFileError && e.code === 'no-storage') return undefined;
    throw e;
  }
}

export type ModelFileErrorCode =
  | 'not-gguf'
  | 'too-large'
  | 'unknown-architecture'
  | 'no-storage'
  | 'quota'
  | 'split'
  | 'link'
  | 'network'
  | 'interrupted';

export class ModelFileError extends Error {
  override readonly name = 'ModelFileError';
  constructor(
    readonly code: ModelFileErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** The models folder of this site's private file storage. */
export async function modelsFolder(): Promise<FileSystemDirectoryHandle> {
  const refuse = () =>
    new ModelFileError(
      'no-storage',
      'This browser cannot keep a model file for this page (no private file storage: a private window, or a file opened from disk); use a model server instead, or open the app from a web server.',
    );
  if (!navigator.storage?.getDirectory) throw refuse();
  let root: FileSystemDirectoryHandle;
  try {
    root = await navigator.storage.getDirectory();
  } catch (e) {
    // Chromium refuses it to a file:// page with a SecurityError.
    if (e instanceof DOMException && e.name === 'SecurityError') throw refuse();
    throw e;
  }
  return root.getDirectoryHandle(FOLDER, { create: true });
}

const SPLIT_NAME = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;

export interface SplitName {
  /** 1-based part number. */
  no: number;
  count: number;
  /** The name of part `i` (1-based). */
  part(i: number): string;
}

/** `name-00002-of-00003.gguf` (llama-gguf-split's names) → its place in the set. */
export function parseSplitName(name: string): SplitName | undefined {
  const m = SPLIT_NAME.exec(name);
  if (!m) return undefined;
  const no = Number(m[2]);
  const count = Number(m[3]);
  if (no < 1 || count < 2 || no > count) return undefined;
  return {
    no,
    count,
    part: (i) => `${m[1]}-${String(i).padStart(5, '0')}-of-${m[3]}.gguf`,
  };
}

/** The names of every file of a model named by its file (or its first part). */
export function partNames(name: string): string[] {
  const split = parseSplitName(name);
  if (!split) return [name];
  return Array.from({ length: split.count }, (_, i) => split.part(i + 1));
}

/**
 * Refuses, in a sentence, a header that cannot run here (`label` starts the sentence: a file
 * name or "This file"); for part `no` of a split model, one that is not that part.
 */
export function headerRefusal(
  header: GgufHeader,
  label: string,
  split?: { no: number; count: number },
): ModelFileError | undefined {
  const meta = header.metadata;
  const splitCount = Number(meta.get('split.count') ?? 0);
  if (split) {
    const no = Number(meta.get('split.no') ?? -1) + 1;
    if (splitCount !== split.count || no !== split.no) {
      return new ModelFileError(
        'split',
        `${label} is not part ${split.no} of ${split.count} of a split model (its header says ${splitCount ? `part ${no} of ${splitCount}` : 'it is a whole model'}): choose all the parts of one model, as llama-gguf-split wrote them.`,
      );
    }
  } else if (splitCount > 1) {
    return new ModelFileError(
      'split',
      `${label} is one part of a model split in ${splitCount} files: choose all ${splitCount} parts together (their names end in -00001-of-${String(splitCount).padStart(5, '0')}.gguf and so on).`,
    );
  }
  // Only the first part of a split model carries the model's metadata.
  if (split && split.no > 1) return undefined;
  const arch = meta.get('general.architecture');
  if (typeof arch !== 'string' || !KNOWN_ARCHITECTURES.has(arch)) {
    return new ModelFileError(
      'unknown-architecture',
      `${label} is a ${String(arch)} model, which this page cannot run: choose a llama, Qwen, Gemma, Phi or Mistral instruct model.`,
    );
  }
  return undefined;
}

export function tooLargeRefusal(label: string): ModelFileError {
  return new ModelFileError(
    'too-large',
    `${label} is over 2 GB, more than WebAssembly can read as one file: choose a smaller quantization, or a model split in parts of under 2 GB (llama-gguf-split).`,
  );
}

/** A sentence when `needed` more bytes do not fit in what this site may still keep. */
export function quotaRefusal(
  label: string,
  needed: number,
  estimate: { quota?: number; usage?: number },
): ModelFileError | undefined {
  if (estimate.quota === undefined) return undefined;
  const free = Math.max(0, estimate.quota - (estimate.usage ?? 0));
  if (needed <= free) return undefined;
  return new ModelFileError(
    'quota',
    `${label} needs ${formatBytes(needed)}, and this browser lets this site keep only ${formatBytes(free)} more: free space on this disk, delete a model kept here, or choose a smaller model.`,
  );
}

/** Reads the GGUF header from `read(n)` (the first n bytes), reading more while it is cut off. */
export async function readHeaderFrom(
  size: number,
  read: (n: number) => Promise<Uint8Array>,
  label: string,
  first = 4 * 1024 * 1024,
): Promise<GgufHeader> {
  let n = Math.min(size, first);
  for (;;) {
    try {
      return readGgufHeader(await read(n));
    } catch (e) {
      if (e instanceof GgufError && e.code === 'truncated' && n < size && n < HEADER_READ_LIMIT) {
        n = Math.min(size, n * 4, HEADER_READ_LIMIT);
        continue;
      }
      if (e instanceof GgufError) {
        throw new ModelFileError('not-gguf', `${label} is not a GGUF model file: ${e.message}`);
      }
      throw e;
    }
  }
}

type Named = Blob & { name?: string };

/** Refuses, in a sentence, a file that cannot run here; says nothing of one that can. */
export async function checkModelFile(
  file: Named,
  split?: { no: number; count: number },
): Promise<GgufHeader> {
  const label = file.name ?? 'This file';
  if (file.size > MAX_FILE_BYTES) throw tooLargeRefusal(label);
  const header = await readHeaderFrom(
    file.size,
    async (n) => new Uint8Array(await file.slice(0, n).arrayBuffer()),
    label,
  );
  const refusal = headerRefusal(header, label, split);
  if (refusal) throw refusal;
  return header;
}

/**
 * Refuses parts that are not one set: each says how many tensors the whole model has
 * (`split.tensors.count`), and together they must hold exactly that many.
 */
export function splitSetRefusal(headers: GgufHeader[], label: string): ModelFileError | undefined {
  if (headers.length < 2) return undefined;
  const counts = headers.map((h) => Number(h.metadata.get('split.tensors.count') ?? -1));
  const held = headers.reduce((s, h) => s + h.tensors.length, 0);
  if (counts.some((c) => c !== counts[0]) || held !== counts[0]) {
    return new ModelFileError(
      'split',
      `The parts of ${label} do not make one model (they hold ${held} tensors, their headers say ${counts[0]}): choose the parts llama-gguf-split wrote together, from one download.`,
    );
  }
  return undefined;
}

/**
 * The files chosen in the picker, in part order: one model file, or every part of a split one
 * (any order). Refuses a mixed or incomplete set in a sentence.
 */
export function orderParts(files: File[]): File[] {
  if (files.length === 1 && !parseSplitName(files[0].name)) return files;
  const splits = files.map((f) => ({ file: f, split: parseSplitName(f.name) }));
  const whole = splits.find((s) => !s.split);
  if (whole) {
    throw new ModelFileError(
      'split',
      `${whole.file.name} is not a part of a split model: choose one model file, or all the parts of one split model.`,
    );
  }
  const first = splits[0].split!;
  const names = partNames(first.part(1));
  const byName = new Map(files.map((f) => [f.name, f]));
  const missing = names.filter((n) => !byName.has(n));
  const extra = files.filter((f) => !names.includes(f.name));
  if (extra.length) {
    throw new ModelFileError(
      'split',
      `${extra[0].name} is not a part of ${names[0]}: choose the parts of one model only.`,
    );
  }
  if (missing.length) {
    throw new ModelFileError(
      'split',
      `This model is split in ${first.count} files and ${missing.length === 1 ? `${missing[0]} is missing` : `${missing.length} are missing (${missing[0]}…)`}: choose all ${first.count} parts together.`,
    );
  }
  return names.map((n) => byName.get(n)!);
}

/** What this site may still keep, as the browser estimates it (nothing known: no check). */
export async function storageEstimate(): Promise<{ quota?: number; usage?: number }> {
  try {
    return (await navigator.storage?.estimate?.()) ?? {};
  } catch {
    return {};
  }
}

/**
 * Copies checked files into the browser's storage (replacing those of the same names): one
 * model file, or all the parts of a split one. Nothing is copied when any part is refused.
 */
export async function saveModelFiles(picked: File[]): Promise<ModelFile> {
  const files = orderParts(picked);
  const headers: GgufHeader[] = [];
  for (const [i, f] of files.entries()) {
    headers.push(
      await checkModelFile(f, files.length > 1 ? { no: i + 1, count: files.length } : undefined),
    );
  }
  const mixed = splitSetRefusal(headers, files[0].name);
  if (mixed) throw mixed;
  const total = files.reduce((sum, f) => sum + f.size, 0);
  const dir = await storedFolder();
  if (!dir) {
    sessionModels.set(files[0].name, files);
    return { name: files[0].name, bytes: total, parts: files.length, session: true };
  }
  let kept = 0;
  for (const f of files) kept += (await entrySize(dir, f.name)) ?? 0;
  const refusal = quotaRefusal(files[0].name, total - kept, await storageEstimate());
  if (refusal) throw refusal;
  const written: string[] = [];
  try {
    for (const f of files) {
      await dir.removeEntry(f.name, { recursive: true }).catch(ignoreMissing);
      written.push(f.name);
      const handle = await dir.getFileHandle(f.name, { create: true });
      const writable = await handle.createWritable();
      await f.stream().pipeTo(writable);
    }
  } catch (e) {
    for (const name of written) await dir.removeEntry(name).catch(() => undefined);
    throw e;
  }
  return { name: files[0].name, bytes: total, parts: files.length };
}

/** Copies one checked file (kept for callers that pick a single file). */
export async function saveModelFile(file: File): Promise<ModelFile> {
  return saveModelFiles([file]);
}

function ignoreMissing(e: unknown): void {
  if (!(e instanceof DOMException && e.name === 'NotFoundError')) throw e;
}

/** A downloaded part: its committed pieces, in order, and the size it will have. */
export interface DownloadedPart {
  dir: FileSystemDirectoryHandle;
  /** The URL it comes from and its whole size, as the download began. */
  source: { url: string; bytes: number };
  pieces: File[];
  /** Bytes committed so far. */
  kept: number;
}

export const SOURCE_FILE = 'source.json';
const PIECE = /^\d{6}\.part$/;

/** A downloaded part's folder, read (undefined when there is none, or it has no source yet). */
export async function readDownloadedPart(
  dir: FileSystemDirectoryHandle,
): Promise<DownloadedPart | undefined> {
  let source: DownloadedPart['source'];
  try {
    source = JSON.parse(
      await (await (await dir.getFileHandle(SOURCE_FILE)).getFile()).text(),
    ) as DownloadedPart['source'];
  } catch {
    return undefined;
  }
  const names: string[] = [];
  for await (const key of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) {
    if (PIECE.test(key)) names.push(key);
  }
  names.sort();
  const pieces: File[] = [];
  for (const n of names) pieces.push(await (await dir.getFileHandle(n)).getFile());
  return { dir, source, pieces, kept: pieces.reduce((s, p) => s + p.size, 0) };
}

/** A kept file (from disk) or a complete downloaded part; undefined when not there (yet). */
async function openPart(dir: FileSystemDirectoryHandle, name: string): Promise<File | undefined> {
  try {
    return await (await dir.getFileHandle(name)).getFile();
  } catch (e) {
    if (!(e instanceof DOMException)) throw e;
    if (e.name === 'NotFoundError') return undefined;
    if (e.name !== 'TypeMismatchError') throw e;
  }
  const part = await readDownloadedPart(await dir.getDirectoryHandle(name));
  if (!part || part.kept !== part.source.bytes) return undefined;
  // One file made of the pieces: read from disk as it is needed, never copied.
  return new File(part.pieces, name);
}

async function entrySize(
  dir: FileSystemDirectoryHandle,
  name: string,
): Promise<number | undefined> {
  try {
    return (await openPart(dir, name))?.size;
  } catch {
    return undefined;
  }
}

/** The stored model's files in part order, or undefined when any is not there. */
export async function openModelFiles(name: string): Promise<File[] | undefined> {
  const dir = await storedFolder();
  if (!dir) return sessionModels.get(name);
  const files: File[] = [];
  for (const part of partNames(name)) {
    const file = await openPart(dir, part);
    if (!file) return undefined;
    files.push(file);
  }
  return files;
}

/** The stored file (the first part of a split model), or undefined when it is not there. */
export async function openModelFile(name: string): Promise<File | undefined> {
  return (await openModelFiles(name))?.[0];
}

export async function describeModelFile(name: string): Promise<ModelFile | undefined> {
  const files = await openModelFiles(name);
  return (
    files && {
      name,
      bytes: files.reduce((s, f) => s + f.size, 0),
      parts: files.length,
      session: sessionModels.get(name) === files,
    }
  );
}

/** Deletes a model's files (every part), kept from disk or downloaded. */
export async function deleteModelFile(name: string): Promise<void> {
  sessionModels.delete(name);
  const dir = await storedFolder();
  if (!dir) return;
  for (const part of partNames(name)) {
    await dir.removeEntry(part, { recursive: true }).catch(ignoreMissing);
  }
}
