// A small valid PNG (one white pixel) with the given tEXt chunks: the tests put character cards
// in images the way SillyTavern does (base64 JSON under `chara` or `ccv3`).
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** The PNG's bytes; `text` maps keyword → text (Latin-1, as tEXt holds). */
export function pngWithText(text: Record<string, string> = {}): Uint8Array {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  const idat = deflateSync(Buffer.from([0, 255, 255, 255]));
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr),
      ...Object.entries(text).map(([k, v]) =>
        chunk(
          'tEXt',
          Buffer.concat([Buffer.from(k, 'latin1'), Buffer.from([0]), Buffer.from(v, 'latin1')]),
        ),
      ),
      chunk('IDAT', idat),
      chunk('IEND', new Uint8Array(0)),
    ]),
  );
}

/** A card's JSON as SillyTavern stores it in a tEXt chunk. */
export const cardText = (card: unknown): string =>
  Buffer.from(JSON.stringify(card), 'utf8').toString('base64');
