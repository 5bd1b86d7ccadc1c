// The text chunks of a PNG file (tEXt: a Latin-1 keyword, a zero byte, Latin-1 text), read by
// hand: the format is a signature and length-prefixed chunks, so no library is needed
// (docs/decisions/0013-png-text-chunks.md).

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The tEXt chunks of `bytes` by keyword (the last of a keyword wins), or why they cannot be read. */
export function pngTextChunks(
  bytes: Uint8Array,
): { ok: true; text: Map<string, string> } | { ok: false; message: string } {
  if (bytes.length < 8 || SIGNATURE.some((b, i) => bytes[i] !== b))
    return { ok: false, message: 'it is not a PNG image' };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const latin1 = new TextDecoder('latin1');
  const text = new Map<string, string>();
  let at = 8;
  while (at + 8 <= bytes.length) {
    const length = view.getUint32(at);
    const type = latin1.decode(bytes.subarray(at + 4, at + 8));
    const start = at + 8;
    const end = start + length;
    if (end + 4 > bytes.length) return { ok: false, message: 'the image is cut short' };
    if (type === 'tEXt') {
      const data = bytes.subarray(start, end);
      const zero = data.indexOf(0);
      if (zero > 0)
        text.set(latin1.decode(data.subarray(0, zero)), latin1.decode(data.subarray(zero + 1)));
    }
    if (type === 'IEND') return { ok: true, text };
    at = end + 4;
  }
  return { ok: false, message: 'the image is cut short' };
}

/** Base64 text to the UTF-8 string it encodes, or undefined. */
export function decodeBase64Utf8(b64: string): string | undefined {
  try {
    const binary = atob(b64.replace(/\s+/g, ''));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
