// Reads the header of a GGUF file (the model format of llama.cpp and KoboldCPP): its metadata and
// the list of its tensors, without the weights, so a file can be checked and described before it
// is loaded. The layout is ggml's GGUF spec, version 2 and 3 (little-endian). Pure: bytes in,
// values out; a file that is not a GGUF gets a GgufError with a sentence.

export type GgufValue = number | bigint | boolean | string | GgufValue[];

export interface GgufTensorInfo {
  name: string;
  /** ggml order: `dims[0]` is the row length. */
  dims: number[];
  /** ggml type (0 = F32, 1 = F16, …). */
  type: number;
  /** Offset from the start of the data section. */
  offset: number;
}

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  /** Where the tensor data starts in the file. */
  dataOffset: number;
  /** Where the metadata ends and the list of tensors starts (a splitter copies what is before). */
  tensorInfoOffset: number;
}

export type GgufErrorCode = 'not-gguf' | 'unsupported-version' | 'truncated' | 'malformed';

export class GgufError extends Error {
  override readonly name = 'GgufError';
  constructor(
    readonly code: GgufErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32

class Reader {
  private at = 0;
  private readonly view: DataView;
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get offset() {
    return this.at;
  }
  private take(n: number): number {
    if (this.at + n > this.bytes.length) {
      throw new GgufError('truncated', 'The file ends inside its GGUF header.');
    }
    const at = this.at;
    this.at += n;
    return at;
  }
  u8() {
    return this.view.getUint8(this.take(1));
  }
  i8() {
    return this.view.getInt8(this.take(1));
  }
  u16() {
    return this.view.getUint16(this.take(2), true);
  }
  i16() {
    return this.view.getInt16(this.take(2), true);
  }
  u32() {
    return this.view.getUint32(this.take(4), true);
  }
  i32() {
    return this.view.getInt32(this.take(4), true);
  }
  f32() {
    return this.view.getFloat32(this.take(4), true);
  }
  f64() {
    return this.view.getFloat64(this.take(8), true);
  }
  u64(): bigint {
    return this.view.getBigUint64(this.take(8), true);
  }
  i64(): bigint {
    return this.view.getBigInt64(this.take(8), true);
  }
  /** A uint64 that must fit a JavaScript number (counts, lengths, offsets). */
  size(): number {
    const v = this.u64();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new GgufError('malformed', 'The GGUF header holds an impossible size.');
    }
    return Number(v);
  }
  string(): string {
    const n = this.size();
    const at = this.take(n);
    return this.decoder.decode(this.bytes.subarray(at, at + n));
  }
}

function readValue(r: Reader, type: number, depth = 0): GgufValue {
  switch (type) {
    case 0:
      return r.u8();
    case 1:
      return r.i8();
    case 2:
      return r.u16();
    case 3:
      return r.i16();
    case 4:
      return r.u32();
    case 5:
      return r.i32();
    case 6:
      return r.f32();
    case 7:
      return r.u8() !== 0;
    case 8:
      return r.string();
    case 9: {
      if (depth > 4) throw new GgufError('malformed', 'The GGUF header nests arrays too deeply.');
      const of = r.u32();
      const n = r.size();
      const out: GgufValue[] = [];
      for (let i = 0; i < n; i++) out.push(readValue(r, of, depth + 1));
      return out;
    }
    case 10:
      return r.u64();
    case 11:
      return r.i64();
    case 12:
      return r.f64();
    default:
      throw new GgufError('malformed', `The GGUF header holds an unknown value type (${type}).`);
  }
}

/**
 * Reads the header from the first bytes of a file (they must reach past the tensor list; a
 * GgufError `truncated` says to read more).
 */
export function readGgufHeader(bytes: Uint8Array): GgufHeader {
  const r = new Reader(bytes);
  if (bytes.length < 4 || r.u32() !== MAGIC) {
    throw new GgufError('not-gguf', 'This file is not a GGUF model (it does not start with GGUF).');
  }
  const version = r.u32();
  if (version !== 2 && version !== 3) {
    throw new GgufError(
      'unsupported-version',
      `This GGUF file is version ${version}; only versions 2 and 3 are read.`,
    );
  }
  const tensorCount = r.size();
  const kvCount = r.size();
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = r.string();
    metadata.set(key, readValue(r, r.u32()));
  }
  const tensorInfoOffset = r.offset;
  const tensors: GgufTensorInfo[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = r.string();
    const nDims = r.u32();
    if (nDims > 8) throw new GgufError('malformed', `Tensor ${name} has ${nDims} dimensions.`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(r.size());
    tensors.push({ name, dims, type: r.u32(), offset: r.size() });
  }
  const align = metadata.get('general.alignment');
  const alignment = typeof align === 'number' && align > 0 ? align : 32;
  const dataOffset = Math.ceil(r.offset / alignment) * alignment;
  return { version, metadata, tensors, dataOffset, tensorInfoOffset };
}
