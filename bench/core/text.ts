// Synthetic English-like text for the lexical benchmarks: sentence-sized chunks drawn from a
// seeded vocabulary of 30,000 pseudo-words with Zipf–Mandelbrot frequencies (a quarter of them
// inflections of another word, so stemming merges some), function words at their usual share
// of running text, names (some possessive) and numbers ("1,250", "3.5", years). Sentence i and
// query i are reproducible from (seed, i) alone, so Node and the browser worker index the same
// text and any row can be regenerated without storing it.
import { mulberry32 } from '../synthetic';

export const VOCABULARY = 30_000;
const NAMES = 2_000;

/** Function words by rough frequency (the tokenizer drops them as stop words). */
const FUNCTION_WORDS = (
  'the of and to a in is that it was for on with as i he be at by you this had not are but ' +
  'from or have an they which one were her all she there would their we him been has when ' +
  'who will more no if out so said what up its about into than them can only other new some ' +
  'could these two may then do first any my now such like our over me even most after also ' +
  'did many before must through back where much your way well down should because each just ' +
  'those how too little very still own see here both few while again'
).split(' ');

const ONSETS =
  'b c d f g h j k l m n p r s t v w y z br ch cl cr dr fl gr pl pr sh sl sp st th tr wh'.split(
    ' ',
  );
const VOWELS = 'a e i o u a e i o ai ea ee oo ou ie'.split(' ');
const CODAS = ' n r s t l m nd st ck ng rt nt'.split(' ');
const SUFFIXES = ['s', 'ed', 'ing', 'er', 'ly', 'ness'];

const seedHash = (seed: number, i: number) =>
  (Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0;

/** Cumulative weights of a Zipf–Mandelbrot law p(r) ∝ 1 / (r + q)^s over ranks 1..n. */
function zipfCdf(n: number, s: number, q: number): Float64Array {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let r = 1; r <= n; r++) cdf[r - 1] = sum += 1 / Math.pow(r + q, s);
  for (let r = 0; r < n; r++) cdf[r] /= sum;
  return cdf;
}

function draw(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cdf[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class SyntheticText {
  /** Content words, most frequent first. */
  readonly words: string[];
  readonly names: string[];
  private readonly wordCdf: Float64Array;
  private readonly nameCdf: Float64Array;
  private readonly functionCdf: Float64Array;

  constructor(readonly seed = 7_340_117) {
    const rand = mulberry32(seed);
    const pick = <T>(a: readonly T[]) => a[Math.floor(rand() * a.length)];
    const seen = new Set<string>(FUNCTION_WORDS);
    const word = (syllables: number) => {
      let w = '';
      for (let i = 0; i < syllables; i++) w += pick(ONSETS) + pick(VOWELS) + pick(CODAS);
      return w;
    };
    this.words = [];
    while (this.words.length < VOCABULARY) {
      const rank = this.words.length;
      let w: string;
      if (rank > 200 && rand() < 0.25) w = this.words[Math.floor(rand() * rank)] + pick(SUFFIXES);
      else
        w = word(
          rank < 300 ? 1 : rank < 5000 ? 1 + Math.floor(rand() * 2) : 2 + (rand() < 0.3 ? 1 : 0),
        );
      if (w.length < 3 || seen.has(w)) continue;
      seen.add(w);
      this.words.push(w);
    }
    this.names = [];
    while (this.names.length < NAMES) {
      const n = word(2 + (rand() < 0.2 ? 1 : 0));
      if (seen.has(n)) continue;
      seen.add(n);
      this.names.push(n[0].toUpperCase() + n.slice(1));
    }
    // Content words after the function words: the most common about 0.5 % of content tokens.
    this.wordCdf = zipfCdf(VOCABULARY, 1, 30);
    this.nameCdf = zipfCdf(NAMES, 1, 5);
    this.functionCdf = zipfCdf(FUNCTION_WORDS.length, 1, 2);
  }

  private number(rand: () => number): string {
    const u = rand();
    if (u < 0.4) return String(1 + Math.floor(rand() * 30));
    if (u < 0.7) return String(1950 + Math.floor(rand() * 80));
    if (u < 0.9) return (1000 + Math.floor(rand() * 9000)).toLocaleString('en-US');
    return (rand() * 10).toFixed(1);
  }

  private token(rand: () => number): string {
    const u = rand();
    if (u < 0.42) return FUNCTION_WORDS[draw(this.functionCdf, rand())];
    if (u < 0.47) {
      const name = this.names[draw(this.nameCdf, rand())];
      return rand() < 0.25 ? `${name}'s` : name;
    }
    if (u < 0.5) return this.number(rand);
    return this.words[draw(this.wordCdf, rand())];
  }

  /** Sentence `i`: 6–22 words, capitalised, a comma now and then, a full stop or question mark. */
  sentence(i: number): string {
    const rand = mulberry32(seedHash(this.seed, i));
    const n = 6 + Math.floor(rand() * 17);
    const parts: string[] = [];
    for (let k = 0; k < n; k++) {
      let t = this.token(rand);
      if (k === 0) t = t[0].toUpperCase() + t.slice(1);
      if (k > 2 && k < n - 2 && rand() < 0.06) parts[parts.length - 1] += ',';
      parts.push(t);
    }
    return parts.join(' ') + (rand() < 0.12 ? '?' : '.');
  }

  /**
   * Query `i` over a corpus of `n` sentences: 3–8 words, a question about one sentence (two or
   * three of its words, often a name) with other words of the vocabulary and a function word or
   * two, the way a person asks. Ranked with OR semantics.
   */
  query(i: number, n: number): string {
    const rand = mulberry32(seedHash(this.seed ^ 0x2545f491, i));
    const length = 3 + Math.floor(rand() * 6);
    const target = this.sentence(Math.floor(rand() * n))
      .replace(/[.,?]/g, '')
      .split(' ')
      .filter((w) => !FUNCTION_WORDS.includes(w.toLowerCase()));
    const out: string[] = [rand() < 0.5 ? 'what' : 'when', 'did'].slice(0, rand() < 0.5 ? 2 : 1);
    const fromTarget = Math.min(target.length, 2 + Math.floor(rand() * 2));
    for (let k = 0; k < fromTarget && out.length < length; k++)
      out.push(target.splice(Math.floor(rand() * target.length), 1)[0]);
    while (out.length < length) out.push(this.words[draw(this.wordCdf, rand())]);
    return out.join(' ') + '?';
  }
}
