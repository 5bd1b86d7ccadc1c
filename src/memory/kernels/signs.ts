// Sign codes for the first pass of a large index (docs/search.md, "Two stages"): one bit per
// dimension, set where the vector exceeds the index's centre in that dimension, padded with zero
// bits to a multiple of 128. The Hamming distance of two codes counts the dimensions where they
// fall on different sides of the centre: a coarse measure of their angle around it, cheap to
// scan (48 bytes a 384-d vector, an eighth of its int8 form).
import { MAX_CODE_BYTES } from './dot-kernel';

/** Bytes of a sign code of `dims` dimensions (a multiple of 16). */
export const signCodeBytes = (dims: number): number => Math.ceil(dims / 128) * 16;

/** Whether the Hamming kernels take codes of this many dimensions. */
export const signCodesFit = (dims: number): boolean => signCodeBytes(dims) <= MAX_CODE_BYTES;

/**
 * Writes the sign code of `v` (length = `centre.length`) into `out[at .. at + signCodeBytes)`:
 * bit `i % 8` of byte `i >> 3` is set where `v[i] > centre[i]`.
 */
export function signCode(
  v: ArrayLike<number>,
  centre: Float32Array,
  out: Uint8Array,
  at: number,
): void {
  const dims = centre.length;
  const bytes = signCodeBytes(dims);
  out.fill(0, at, at + bytes);
  for (let i = 0; i < dims; i += 8) {
    let b = 0;
    const e = Math.min(8, dims - i);
    for (let j = 0; j < e; j++) if (v[i + j] > centre[i + j]) b |= 1 << j;
    out[at + (i >> 3)] = b;
  }
}
