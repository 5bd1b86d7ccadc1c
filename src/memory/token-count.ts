// Token counts of a turn's sentences with few requests to the model server's tokenizer
// (docs/design.md, "One chat turn"): sentences are counted in groups, and each group's count
// is shared out among its sentences in proportion to their estimates.
import { estimateTokens } from './text';

/** The server's (or a test's) counter of one text; may be slow, may fail. */
export type TextCounter = (text: string) => number | Promise<number>;

/** Characters of sentences counted together in one request. */
export const COUNT_GROUP_CHARS = 16 * 1024;
/** Group requests in flight at once. */
export const COUNT_CONCURRENCY = 4;

/**
 * Token counts of `sentences`, in order. Without a counter, or where the counter fails or
 * answers nonsense for a group, that group's sentences get their estimates. A group's count
 * is split among its sentences by their estimates (largest remainders, each at least 1), so
 * the counts of a group add up to what the server said for it.
 */
export async function countSentenceTokens(
  sentences: readonly string[],
  counter: TextCounter | null,
): Promise<number[]> {
  const estimates = sentences.map(estimateTokens);
  if (!counter || sentences.length === 0) return estimates;
  const groups: [number, number][] = [];
  for (let start = 0; start < sentences.length;) {
    let end = start;
    let chars = 0;
    while (
      end < sentences.length &&
      (end === start || chars + sentences[end]!.length <= COUNT_GROUP_CHARS)
    )
      chars += sentences[end++]!.length + 1;
    groups.push([start, end]);
    start = end;
  }
  const counts = estimates.slice();
  let next = 0;
  const work = async (): Promise<void> => {
    while (next < groups.length) {
      const [start, end] = groups[next++]!;
      let total: number;
      try {
        total = await counter(sentences.slice(start, end).join(' '));
      } catch {
        continue; // the server's tokenizer is gone: these keep their estimates
      }
      if (!Number.isFinite(total) || total < 0) continue;
      share(Math.round(total), estimates, start, end, counts);
    }
  };
  await Promise.all(Array.from({ length: Math.min(COUNT_CONCURRENCY, groups.length) }, work));
  return counts;
}

/** Splits `total` over [start, end) in proportion to `weights`, each at least 1, into `out`. */
function share(total: number, weights: number[], start: number, end: number, out: number[]): void {
  const n = end - start;
  if (n === 1) {
    out[start] = Math.max(1, total);
    return;
  }
  let weight = 0;
  for (let i = start; i < end; i++) weight += weights[i]!;
  const spare = Math.max(0, total - n);
  // Everyone gets 1; the rest goes by weight, remainders to the largest fractions.
  const exact = Array.from({ length: n }, (_, k) =>
    weight > 0 ? (spare * weights[start + k]!) / weight : spare / n,
  );
  const floors = exact.map(Math.floor);
  let left = spare - floors.reduce((a, b) => a + b, 0);
  const order = exact.map((x, k) => [x - floors[k]!, k] as const).sort((a, b) => b[0] - a[0]);
  for (const [, k] of order) {
    if (left <= 0) break;
    floors[k]!++;
    left--;
  }
  for (let k = 0; k < n; k++) out[start + k] = 1 + floors[k]!;
}
