// A growable packed Float32Array of fixed-length rows, so scoring walks one contiguous buffer.

export class PackedVectors {
  private data: Float32Array;
  private rows = 0;
  private dead = 0;

  constructor(
    readonly dims: number,
    capacityRows = 256,
  ) {
    this.data = new Float32Array(Math.max(1, capacityRows) * dims);
  }

  /** The packed buffer; rows `0..length-1` are valid (dead rows are zeroed). */
  get buffer(): Float32Array {
    return this.data;
  }

  get length(): number {
    return this.rows;
  }

  get deadRows(): number {
    return this.dead;
  }

  /** Appends `vectors` as consecutive rows and returns the first row index. */
  append(vectors: readonly Float32Array[]): number {
    const first = this.rows;
    this.reserve(this.rows + vectors.length);
    for (const v of vectors) {
      if (v.length !== this.dims) {
        throw new RangeError(`vector has ${v.length} dimensions, expected ${this.dims}`);
      }
      this.data.set(v, this.rows * this.dims);
      this.rows++;
    }
    return first;
  }

  /** Marks `count` rows from `first` as unused; they score 0 until the next compaction. */
  release(first: number, count: number): void {
    if (count <= 0) return;
    this.data.fill(0, first * this.dims, (first + count) * this.dims);
    this.dead += count;
  }

  /** A view of one row (no copy). */
  row(i: number): Float32Array {
    return this.data.subarray(i * this.dims, (i + 1) * this.dims);
  }

  /** Whether a compaction would pay off. */
  get fragmented(): boolean {
    return this.dead > 1024 && this.dead * 2 > this.rows;
  }

  /**
   * Rebuilds the buffer keeping only `live` row ranges, in the given order.
   * Returns the new first row of each range.
   */
  compact(live: readonly { first: number; count: number }[]): number[] {
    const total = live.reduce((s, r) => s + r.count, 0);
    const next = new Float32Array(Math.max(256, total * 2) * this.dims);
    const starts: number[] = [];
    let at = 0;
    for (const r of live) {
      starts.push(at);
      next.set(
        this.data.subarray(r.first * this.dims, (r.first + r.count) * this.dims),
        at * this.dims,
      );
      at += r.count;
    }
    this.data = next;
    this.rows = at;
    this.dead = 0;
    return starts;
  }

  clear(): void {
    this.rows = 0;
    this.dead = 0;
  }

  private reserve(rows: number): void {
    if (rows * this.dims <= this.data.length) return;
    let cap = this.data.length / this.dims;
    while (cap < rows) cap *= 2;
    const next = new Float32Array(cap * this.dims);
    next.set(this.data.subarray(0, this.rows * this.dims));
    this.data = next;
  }
}
