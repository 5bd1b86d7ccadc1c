// Benchmark results: min/median/max summaries, one record per metric with the project's figure,
// the baseline's (measured in the same run) and their ratio, and the printed table.

export interface Summary {
  min: number;
  median: number;
  max: number;
  /** Samples summarised. */
  runs: number;
  p95?: number;
}

export interface Metric {
  /** One of the issue's metric names, e.g. `query_100k_ms`. */
  name: string;
  unit: string;
  /** Whether a lower figure is better (times, memory) or a higher one (rates, recall). */
  better: 'lower' | 'higher';
  project: Summary | null;
  baseline: Summary | null;
  /** What the baseline is. */
  baselineIs: string;
  /** Better-by factor: baseline ÷ project when lower is better, project ÷ baseline otherwise (> 1: the project wins). */
  ratio: number | null;
  target?: { op: '<=' | '>='; value: number; judge?: 'median' | 'max' };
  /** Whether the project's median (or max, where the target says so) meets the target. */
  met?: boolean;
  note?: string;
  /** Further baselines (e.g. read-all-rows-per-query). */
  extra?: Record<string, Summary>;
}

export function summarise(samples: readonly number[]): Summary {
  const s = samples.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return { min: NaN, median: NaN, max: NaN, runs: 0 };
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { min: s[0], median, max: s[s.length - 1], runs: s.length, p95: at(0.95) };
}

export function metric(m: Omit<Metric, 'ratio' | 'met'>): Metric {
  const p = m.project?.median;
  const b = m.baseline?.median;
  const ratio =
    p === undefined || b === undefined || !Number.isFinite(p) || !Number.isFinite(b) || p === 0
      ? null
      : m.better === 'lower'
        ? b / p
        : p / b;
  const judged = m.target?.judge === 'max' ? m.project?.max : p;
  const met =
    m.target && judged !== undefined
      ? m.target.op === '<='
        ? judged <= m.target.value
        : judged >= m.target.value
      : undefined;
  return { ...m, ratio, ...(met === undefined ? {} : { met }) };
}

const fmt = (x: number | undefined): string => {
  if (x === undefined || !Number.isFinite(x)) return '–';
  const a = Math.abs(x);
  return a >= 1000 ? x.toFixed(0) : a >= 100 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toFixed(3);
};

const cell = (s: Summary | null) =>
  s ? `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)}, n=${s.runs})` : 'n/a';

/** Prints the metrics as a fixed-width table. */
export function printTable(title: string, metrics: readonly Metric[]): void {
  const rows = metrics.map((m) => [
    m.name,
    m.unit,
    cell(m.project),
    cell(m.baseline),
    m.ratio === null ? '–' : `${fmt(m.ratio)}×`,
    m.target
      ? `${m.target.judge === 'max' ? 'max ' : ''}${m.target.op} ${m.target.value} ${m.met ? 'met' : 'MISSED'}`
      : '',
  ]);
  const head = [
    'metric',
    'unit',
    'project median (min–max)',
    'baseline median (min–max)',
    'better by',
    'target',
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(`\n${title}\n`);
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
  console.log('\nBaselines:');
  for (const m of metrics) {
    console.log(`  ${m.name}: ${m.baselineIs}${m.note ? ` — ${m.note}` : ''}`);
    for (const [k, s] of Object.entries(m.extra ?? {})) console.log(`    also ${k}: ${cell(s)}`);
  }
}
