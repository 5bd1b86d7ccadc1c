// Downloads a GGUF model from a link (a Hugging Face file URL) into this browser's private file
// storage, as it arrives, so a reload loses at most a few seconds of it: each part of the model
// is a folder of pieces, each piece committed (closed) every few seconds or megabytes, and a
// download resumes with an HTTP Range request from the bytes already kept (a server that ignores
// Range starts the part over). Before anything is downloaded, the first bytes of every part are
// read with a small Range request and checked as a file from disk is (GGUF header, architecture,
// split parts), with the sizes against what WebAssembly can read and what this site may keep.
// docs/in-page-model.md.
import { formatBytes } from '../../app/storage-status';
import type { GgufHeader } from '../gguf';
import {
  MAX_FILE_BYTES,
  ModelFileError,
  SOURCE_FILE,
  headerRefusal,
  modelsFolder,
  parseSplitName,
  partNames,
  quotaRefusal,
  readDownloadedPart,
  readHeaderFrom,
  splitSetRefusal,
  storageEstimate,
  tooLargeRefusal,
  type ModelFile,
} from './model-files';

/** A piece is committed once it holds this much… */
const PIECE_BYTES = 16 * 1024 * 1024;
/** …or has been open this long, so a slow download keeps what it got before a reload. */
const PIECE_MS = 1000;
/** The first request reads this much of each part: a small model's whole header. */
const PROBE_BYTES = 256 * 1024;
/** The download under way (or stopped), in the models folder. */
const PENDING_FILE = 'download.json';

export interface DownloadProgress {
  /** The model's file name (its first part's for a split model). */
  name: string;
  /** Bytes kept so far, all parts together. */
  done: number;
  total: number;
}

/** A download that stopped before the end (a reload, a lost connection): it can resume. */
export interface PendingDownload extends DownloadProgress {
  link: string;
}

interface PendingRecord {
  link: string;
  parts: { name: string; url: string; bytes: number }[];
}

/**
 * The file a link names: an http(s) URL whose path ends in `.gguf`. A Hugging Face page link
 * (`/blob/`) becomes its download link (`/resolve/`).
 */
export function modelLink(text: string): { url: string; name: string } {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ModelFileError(
      'link',
      'This is not a link: paste the address of a .gguf file, such as https://huggingface.co/<org>/<repo>/resolve/main/<file>.gguf.',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ModelFileError('link', 'A model link starts with https://.');
  }
  if (url.hostname === 'huggingface.co') {
    url.pathname = url.pathname.replace(/^(\/[^/]+\/[^/]+)\/blob\//, '$1/resolve/');
  }
  const name = decodeURIComponent(url.pathname.split('/').pop() ?? '');
  if (!/\.gguf$/i.test(name) || /[\\/]/.test(name)) {
    throw new ModelFileError(
      'link',
      `This link does not name a .gguf file: on Hugging Face, open the model's "Files" tab and copy the link of the .gguf file (its download link, …/resolve/…/<file>.gguf).`,
    );
  }
  return { url: url.href, name };
}

/** The whole size in a `Content-Range: bytes a-b/total` header. */
export function rangeTotal(header: string | null): number | undefined {
  const m = /\/(\d+)\s*$/.exec(header ?? '');
  return m ? Number(m[1]) : undefined;
}

/** The first byte in a `Content-Range: bytes a-b/total` header. */
export function rangeStart(header: string | null): number | undefined {
  const m = /^\s*bytes\s+(\d+)-/.exec(header ?? '');
  return m ? Number(m[1]) : undefined;
}

async function get(
  url: string,
  headers: Record<string, string>,
  label: string,
  signal?: AbortSignal,
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { headers, signal, cache: 'no-store' });
  } catch (e) {
    if (signal?.aborted) throw e;
    const host = new URL(url).host;
    throw new ModelFileError(
      'network',
      `${host} could not be reached, or it does not let this page download from it (CORS): check the link and the connection, or download ${label} yourself and choose it from disk.`,
    );
  }
  if (res.ok) {
    if (/^text\/html/i.test(res.headers.get('Content-Type') ?? '')) {
      await res.body?.cancel();
      throw new ModelFileError(
        'not-gguf',
        `This link gives a web page, not the GGUF file ${label}: copy the file's download link (on Hugging Face, …/resolve/…), not its page.`,
      );
    }
    return res;
  }
  await res.body?.cancel();
  if (res.status === 404) {
    throw new ModelFileError('link', `There is no file ${label} at this link (404): check it.`);
  }
  if (res.status === 401 || res.status === 403) {
    throw new ModelFileError(
      'link',
      `The server asks you to sign in or to accept the model's license before downloading ${label} (${res.status}): download it on its page and choose it from disk.`,
    );
  }
  throw new ModelFileError(
    'network',
    `The server could not give ${label} (HTTP ${res.status}): try again later, or download it yourself and choose it from disk.`,
  );
}

/** Up to `n` bytes from the start of a body; the rest is not downloaded. */
async function readUpTo(
  res: Response,
  n: number,
  label: string,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const out = new Uint8Array(n);
  let at = 0;
  const reader = res.body!.getReader();
  try {
    while (at < n) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = Math.min(value.length, n - at);
      out.set(value.subarray(0, take), at);
      at += take;
    }
  } catch (e) {
    if (signal?.aborted) throw e;
    throw new ModelFileError(
      'network',
      `The connection was lost while reading the start of ${label}: check the connection and try again.`,
    );
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return out.subarray(0, at);
}

/** A part's size and header, from its first bytes (a Range request; the whole file is not read). */
async function probe(
  url: string,
  label: string,
  signal?: AbortSignal,
): Promise<{ bytes: number; header: GgufHeader }> {
  const range = (n: number) => get(url, { Range: `bytes=0-${n - 1}` }, label, signal);
  const first = await range(PROBE_BYTES);
  let bytes =
    first.status === 206
      ? rangeTotal(first.headers.get('Content-Range'))
      : Number(first.headers.get('Content-Length')) || undefined;
  const head = await readUpTo(first, PROBE_BYTES, label, signal);
  if (bytes === undefined) {
    // A server that hides Content-Range from this page: its size from a whole-file answer.
    const whole = await get(url, {}, label, signal);
    bytes = Number(whole.headers.get('Content-Length')) || undefined;
    await whole.body?.cancel();
  }
  if (bytes === undefined) {
    throw new ModelFileError(
      'link',
      `The server does not say how big ${label} is, so it cannot be checked before downloading: download it yourself and choose it from disk.`,
    );
  }
  if (bytes > MAX_FILE_BYTES) throw tooLargeRefusal(label);
  const size = bytes;
  const header = await readHeaderFrom(
    size,
    async (n) => {
      if (n <= head.length || head.length >= size) return head.subarray(0, n);
      return readUpTo(await range(n), n, label, signal);
    },
    label,
    PROBE_BYTES,
  );
  return { bytes, header };
}

async function readPending(models: FileSystemDirectoryHandle): Promise<PendingRecord | undefined> {
  try {
    const file = await (await models.getFileHandle(PENDING_FILE)).getFile();
    return JSON.parse(await file.text()) as PendingRecord;
  } catch {
    return undefined;
  }
}

async function writeJson(dir: FileSystemDirectoryHandle, name: string, value: unknown) {
  const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
  await w.write(JSON.stringify(value));
  await w.close();
}

async function keptOf(models: FileSystemDirectoryHandle, part: PendingRecord['parts'][number]) {
  try {
    const kept = await readDownloadedPart(await models.getDirectoryHandle(part.name));
    return kept && kept.source.url === part.url && kept.source.bytes === part.bytes ? kept.kept : 0;
  } catch {
    return 0;
  }
}

/** The download that stopped before its end, if any (it resumes with `downloadModel(link)`). */
export async function pendingDownload(): Promise<PendingDownload | undefined> {
  const models = await modelsFolder();
  const record = await readPending(models);
  if (!record) return undefined;
  let done = 0;
  for (const part of record.parts) done += await keptOf(models, part);
  return {
    link: record.link,
    name: record.parts[0].name,
    done,
    total: record.parts.reduce((s, p) => s + p.bytes, 0),
  };
}

/** Drops the stopped (or running, once aborted) download and everything it kept. */
export async function discardDownload(): Promise<void> {
  const models = await modelsFolder();
  const record = await readPending(models);
  for (const part of record?.parts ?? []) {
    await models.removeEntry(part.name, { recursive: true }).catch(() => undefined);
  }
  await models.removeEntry(PENDING_FILE).catch(() => undefined);
}

/** Writes a part as pieces, each committed when full or old enough. */
class Pieces {
  private writable: FileSystemWritableFileStream | undefined;
  private openedAt = 0;
  private size = 0;
  constructor(
    private readonly dir: FileSystemDirectoryHandle,
    private next: number,
  ) {}

  async write(bytes: Uint8Array): Promise<void> {
    if (!this.writable) {
      const name = `${String(this.next).padStart(6, '0')}.part`;
      this.writable = await (await this.dir.getFileHandle(name, { create: true })).createWritable();
      this.openedAt = Date.now();
      this.size = 0;
    }
    await this.writable.write(bytes as Uint8Array<ArrayBuffer>);
    this.size += bytes.length;
    if (this.size >= PIECE_BYTES || Date.now() - this.openedAt >= PIECE_MS) await this.commit();
  }

  async commit(): Promise<void> {
    if (!this.writable) return;
    await this.writable.close();
    this.writable = undefined;
    this.next++;
  }

  async abort(): Promise<void> {
    await this.writable?.abort().catch(() => undefined);
    this.writable = undefined;
  }
}

async function clearPart(dir: FileSystemDirectoryHandle, source: { url: string; bytes: number }) {
  for await (const key of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) {
    await dir.removeEntry(key, { recursive: true });
  }
  await writeJson(dir, SOURCE_FILE, source);
}

function isQuotaError(e: unknown): boolean {
  return e instanceof DOMException && e.name === 'QuotaExceededError';
}

async function downloadPart(
  models: FileSystemDirectoryHandle,
  part: PendingRecord['parts'][number],
  signal: AbortSignal | undefined,
  onBytes: (n: number) => void,
): Promise<void> {
  let dir: FileSystemDirectoryHandle;
  try {
    dir = await models.getDirectoryHandle(part.name, { create: true });
  } catch (e) {
    // A file of that name chosen from disk earlier: the download replaces it.
    if (!(e instanceof DOMException && e.name === 'TypeMismatchError')) throw e;
    await models.removeEntry(part.name);
    dir = await models.getDirectoryHandle(part.name, { create: true });
  }
  const source = { url: part.url, bytes: part.bytes };
  let kept = await readDownloadedPart(dir);
  if (!kept || kept.source.url !== part.url || kept.source.bytes !== part.bytes) {
    await clearPart(dir, source);
    kept = { dir, source, pieces: [], kept: 0 };
  }
  let offset = kept.kept;
  let next = kept.pieces.length;
  if (offset === part.bytes) return;
  const res = await get(part.url, offset ? { Range: `bytes=${offset}-` } : {}, part.name, signal);
  if (offset && (res.status !== 206 || rangeStart(res.headers.get('Content-Range')) !== offset)) {
    // The server sent the file from its start (it ignores Range): start this part over with it.
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new ModelFileError(
        'network',
        `The server did not resume ${part.name} where it stopped: choose Cancel, then download it again.`,
      );
    }
    onBytes(-offset);
    await clearPart(dir, source);
    offset = 0;
    next = 0;
  }
  const pieces = new Pieces(dir, next);
  const reader = res.body!.getReader();
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (offset + received + value.length > part.bytes) {
        throw new ModelFileError(
          'interrupted',
          `The server sent more of ${part.name} than it said it holds: choose Cancel, then download it again.`,
        );
      }
      await pieces.write(value);
      received += value.length;
      onBytes(value.length);
    }
    await pieces.commit();
  } catch (e) {
    await pieces.abort();
    await reader.cancel().catch(() => undefined);
    if (signal?.aborted || e instanceof ModelFileError) throw e;
    if (isQuotaError(e)) {
      throw new ModelFileError(
        'quota',
        `This browser would not let this site keep more of ${part.name}: free space on this disk or delete a model kept here, then choose Resume.`,
      );
    }
    throw new ModelFileError(
      'interrupted',
      `The download of ${part.name} stopped (the connection was lost): choose Resume to go on from where it stopped.`,
    );
  }
  if (offset + received !== part.bytes) {
    throw new ModelFileError(
      'interrupted',
      `The download of ${part.name} stopped at ${formatBytes(offset + received)} of ${formatBytes(part.bytes)} (the server closed the connection): choose Resume to go on from where it stopped.`,
    );
  }
}

/**
 * Downloads the model a link names (every part, given the first of a split model) into this
 * browser, or resumes the download of that link that stopped. Refuses in a sentence, before
 * anything is downloaded, what cannot run here or does not fit.
 */
export async function downloadModel(
  link: string,
  options: { signal?: AbortSignal; onProgress?: (p: DownloadProgress) => void } = {},
): Promise<ModelFile> {
  const { signal, onProgress } = options;
  const { url, name } = modelLink(link);
  // A page that cannot keep files (a private window, a file opened from disk) fetches nothing.
  const models = await modelsFolder();
  const split = parseSplitName(name);
  if (split && split.no !== 1) {
    throw new ModelFileError(
      'link',
      `${name} is part ${split.no} of a split model: paste the link of its first part (${split.part(1)}); the others are downloaded with it.`,
    );
  }
  const names = partNames(name);
  const parts: PendingRecord['parts'] = [];
  const headers: GgufHeader[] = [];
  for (const [i, partName] of names.entries()) {
    const partUrl = new URL(encodeURIComponent(partName), url).href;
    const { bytes, header } = await probe(partUrl, partName, signal);
    const refusal = headerRefusal(
      header,
      partName,
      split ? { no: i + 1, count: names.length } : undefined,
    );
    if (refusal) throw refusal;
    headers.push(header);
    parts.push({ name: partName, url: partUrl, bytes });
  }
  const mixed = splitSetRefusal(headers, name);
  if (mixed) throw mixed;

  const total = parts.reduce((s, p) => s + p.bytes, 0);
  const previous = await readPending(models);
  if (previous && previous.link !== link) await discardDownload();
  let done = 0;
  for (const part of parts) done += await keptOf(models, part);
  const refusal = quotaRefusal(name, total - done, await storageEstimate());
  if (refusal) throw refusal;

  const record: PendingRecord = { link, parts };
  await writeJson(models, PENDING_FILE, record);
  onProgress?.({ name, done, total });
  for (const part of parts) {
    await downloadPart(models, part, signal, (n) => {
      done += n;
      onProgress?.({ name, done, total });
    });
  }
  await models.removeEntry(PENDING_FILE).catch(() => undefined);
  return { name, bytes: total, parts: parts.length };
}
