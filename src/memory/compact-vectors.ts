// A cold start's vector search (docs/search.md, "Cold start"): the sign codes of the shards'
// compact parts, ranked by Hamming distance while the vectors are still being read. Each piece's
// codes are taken around its own centre, so the query gets a code per piece. The caller reads
// the exact cosines of the nearest few; what this misses is why such answers are not exact.
import { signCode, signCodeBytes } from './kernels/signs';
import type { ShardHead } from './shards';

interface Piece {
  ids: Float64Array;
  conversations: Float64Array;
  /** The sign codes as 32-bit words. */
  words: Uint32Array;
  centre: Float32Array;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

export class CompactVectors {
  private readonly pieces: Piece[] = [];
  private rows = 0;
  /** 32-bit words of one code. */
  private readonly span: number;

  constructor(readonly dims: number) {
    this.span = signCodeBytes(dims) / 4;
  }

  /** Chunks held. */
  get size(): number {
    return this.rows;
  }

  /** Takes a piece's codes; false (and nothing taken) when they are of another length. */
  add(h: ShardHead): boolean {
    const bytes = this.span * 4;
    if (h.centre?.length !== this.dims || h.signs?.length !== h.count * bytes) return false;
    // Stored copies start at offset 0; a view elsewhere is copied to get 32-bit alignment.
    const signs = h.signs.byteOffset % 4 ? h.signs.slice() : h.signs;
    const words = new Uint32Array(signs.buffer, signs.byteOffset, h.count * this.span);
    this.pieces.push({ ids: h.ids, conversations: h.conversations, words, centre: h.centre });
    this.rows += h.count;
    return true;
  }

  /**
   * The `want` chunks (of one conversation, or of all with `null`) whose codes are nearest the
   * query's, for which `alive` holds; ties at the cut keep the earlier pieces'.
   */
  nearest(
    conversationId: number | null,
    query: Float32Array,
    want: number,
    alive: (id: number) => boolean,
  ): number[] {
    if (query.length !== this.dims || want <= 0) return [];
    const { span } = this;
    const q = new Uint8Array(span * 4);
    const qWords = new Uint32Array(q.buffer);
    const dist = new Uint16Array(this.rows);
    const hist = new Int32Array(span * 32 + 1);
    let n = 0;
    const ids = new Float64Array(this.rows);
    for (const p of this.pieces) {
      signCode(query, p.centre, q, 0);
      const count = p.ids.length;
      for (let i = 0; i < count; i++) {
        if (conversationId !== null && p.conversations[i] !== conversationId) continue;
        const id = p.ids[i];
        if (!alive(id)) continue;
        let d = 0;
        const at = i * span;
        for (let w = 0; w < span; w++) d += popcount(p.words[at + w] ^ qWords[w]);
        dist[n] = d;
        ids[n++] = id;
        hist[d]++;
      }
    }
    let cut = 0;
    let below = 0;
    while (cut < hist.length && below + hist[cut] <= want) below += hist[cut++];
    let atCut = want - below;
    const out: number[] = [];
    for (let j = 0; j < n; j++) {
      if (dist[j] < cut) out.push(ids[j]);
      else if (dist[j] === cut && atCut > 0) {
        out.push(ids[j]);
        atCut--;
      }
    }
    return out;
  }
}
